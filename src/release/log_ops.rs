//! The log commands as library calls: `log init` and `log witness-key`, appending a release's
//! signatures (`sign --log`, `log append`), checking a whole log (`log verify`) and cosigning
//! its checkpoint as a witness (`log witness`).

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::files::{atomic, guarded, paths};
use crate::log::entry::Entry;
use crate::log::note::{CheckpointPolicy, KeyRole, NoteSigner};
use crate::log::proof::proof_path;
use crate::log::proof::{LogProof, MAX_PROOF_BYTES};
use crate::log::tiles::DirStore;
use crate::log::tree::{self, LogError};
use crate::minisign::names::{signs, SIGNATURE_SUFFIX};
use crate::minisign::SignatureFile;
use crate::trust::log::{LogTrust, VerifierKeyArg};
use crate::trust::TrustedKeys;

/// A log's secret key (`PRIVATE+KEY+…`), read from a file or an environment variable. Never
/// printed; its seed is wiped on drop.
#[derive(Debug)]
pub struct LogKey(pub(crate) NoteSigner);

impl LogKey {
    /// Parses the key's text; `origin` names where it came from (a path, `$VAR`).
    pub fn parse(text: &str, origin: &str) -> Result<LogKey> {
        NoteSigner::parse(text, KeyRole::Log)
            .map(LogKey)
            .map_err(|e| Error::input(origin, None, e.to_string()))
    }
}

/// A witness's secret key, as [`LogKey`].
#[derive(Debug)]
pub struct WitnessKey(pub(crate) NoteSigner);

impl WitnessKey {
    pub fn parse(text: &str, origin: &str) -> Result<WitnessKey> {
        NoteSigner::parse(text, KeyRole::Witness)
            .map(WitnessKey)
            .map_err(|e| Error::input(origin, None, e.to_string()))
    }
}

/// What `log init` (and `log witness-key`) made.
#[derive(Debug, Serialize)]
pub struct InitReport {
    pub(crate) log: Option<PathBuf>,
    pub(crate) origin: String,
    /// The verifier key to give to `verify --log-vkey` (or a witness's to `--witness`).
    pub(crate) vkey: String,
    /// The secret key file, when this run created it.
    pub(crate) created_key: Option<PathBuf>,
    /// Where the verifier key was written (`--vkey FILE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) vkey_file: Option<PathBuf>,
}

/// Writes a new secret key for `name` to `path`: never over a file, never inside a git work
/// tree, readable by its owner only.
fn create_key(path: &Path, name: &str, role: KeyRole) -> Result<NoteSigner> {
    let dir = paths::parent_dir(path);
    let existing = dir
        .ancestors()
        .find(|d| d.is_dir())
        .unwrap_or(Path::new("."));
    if let Some(tree) = paths::enclosing_git_work_tree(existing) {
        return Err(Error::Refused(format!(
            "{}: inside the git work tree {}: a secret key is never written where it could be committed (choose a path outside it)",
            path.display(),
            tree.display()
        )));
    }
    let (signer, text): (NoteSigner, Zeroizing<String>) =
        NoteSigner::generate(name, role).map_err(|e| Error::Usage(format!("--origin: {e}")))?;
    fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
    atomic::write_atomic(path, text.as_bytes(), 0o600, false)?;
    Ok(signer)
}

fn read_key(path: &Path, role: KeyRole) -> Result<NoteSigner> {
    let text = Zeroizing::new(guarded::read_small_file(
        path,
        4096,
        "a log or witness secret key",
    )?);
    NoteSigner::parse(&text, role)
        .map_err(|e| Error::input(path.display().to_string(), None, e.to_string()))
}

/// `warden log init DIR --origin NAME --log-key FILE`: an empty log signed by the key in FILE,
/// which is created when it does not exist.
pub fn init(
    dir: &Path,
    origin: &str,
    key_file: &Path,
    vkey_file: Option<&Path>,
) -> Result<InitReport> {
    crate::log::note::check_name(origin).map_err(|e| Error::Usage(format!("--origin: {e}")))?;
    if let Some(f) = vkey_file.filter(|f| fs::symlink_metadata(f).is_ok()) {
        return Err(Error::Refused(format!(
            "{} already exists; nothing was changed",
            f.display()
        )));
    }
    if fs::symlink_metadata(dir.join(tree::CHECKPOINT)).is_ok() {
        return Err(Error::Refused(format!(
            "{}: a log is here already; nothing was changed",
            dir.join(tree::CHECKPOINT).display()
        )));
    }
    let (key, created) = if fs::symlink_metadata(key_file).is_ok() {
        (read_key(key_file, KeyRole::Log)?, None)
    } else {
        (
            create_key(key_file, origin, KeyRole::Log)?,
            Some(key_file.to_path_buf()),
        )
    };
    if key.public().name != origin {
        return Err(Error::Usage(format!(
            "{}: the key is named {:?}, the log's origin is {origin:?}: a log's key carries the log's name",
            key_file.display(),
            key.public().name
        )));
    }
    tree::init(dir, &key)?;
    if let Some(f) = vkey_file {
        if let Some(parent) = f.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(|e| Error::io("creating", parent, e))?;
        }
        atomic::write_atomic(f, format!("{}\n", key.public()).as_bytes(), 0o644, false)?;
    }
    Ok(InitReport {
        log: Some(dir.to_path_buf()),
        origin: origin.to_string(),
        vkey: key.public().to_string(),
        created_key: created,
        vkey_file: vkey_file.map(Path::to_path_buf),
    })
}

/// `warden log witness-key FILE --name NAME`: a witness's key, its verifier key printed.
pub fn witness_key(key_file: &Path, name: &str) -> Result<InitReport> {
    crate::log::note::check_name(name).map_err(|e| Error::Usage(format!("--name: {e}")))?;
    if fs::symlink_metadata(key_file).is_ok() {
        return Err(Error::Refused(format!(
            "{} already exists; nothing was changed",
            key_file.display()
        )));
    }
    let key = create_key(key_file, name, KeyRole::Witness)?;
    Ok(InitReport {
        log: None,
        origin: name.to_string(),
        vkey: key.public().to_string(),
        created_key: Some(key_file.to_path_buf()),
        vkey_file: None,
    })
}

/// One signature the append logged, or passed over.
#[derive(Debug, Serialize)]
pub(crate) struct AppendedEntry {
    pub(crate) signature: PathBuf,
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: crate::minisign::KeyId,
    pub(crate) index: u64,
    pub(crate) proof: PathBuf,
    /// Logged before (its proof verified against this log): not appended again.
    pub(crate) already: bool,
}

/// What an append did.
#[derive(Debug, Serialize)]
pub struct AppendReport {
    pub(crate) log: PathBuf,
    pub(crate) size: u64,
    pub(crate) entries: Vec<AppendedEntry>,
    /// Signatures beside the list that were not logged, with the reason.
    pub(crate) skipped: Vec<(PathBuf, String)>,
}

/// Checks, before anything is signed, that `dir` is a log this key signs.
pub fn check_log_key(dir: &Path, key: &LogKey) -> Result<()> {
    tree::check_appendable(dir, &key.0).map_err(|e| match e {
        LogError::Input(e) => e,
        LogError::Failed(why) => Error::Refused(format!("{why}: --log-key is not this log's key")),
    })
}

fn own_policy(key: &LogKey) -> CheckpointPolicy {
    CheckpointPolicy {
        log: key.0.public().clone(),
        witnesses: Vec::new(),
        threshold: 0,
    }
}

/// Appends the signatures of the checksum list `sums` (its `.minisig` and co-signatures) to the
/// log in `log_dir`, and writes each one's proof beside it. A signature whose proof already
/// verifies against this log is not appended again; one that a verification with `keys` would
/// not count (an unknown, revoked or expired key, a rehearsal, a signature of another file, one
/// the run policy refuses) is not logged, and said.
pub fn append_release(
    log_dir: &Path,
    key: &LogKey,
    sums: &Path,
    keys: &TrustedKeys,
) -> Result<AppendReport> {
    let text = guarded::read_small_file(sums, 16 << 20, "a checksum list")?;
    let digests = crate::minisign::hash::hash_bytes(text.as_bytes());
    let name = sums
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::Usage(format!("{}: not a file name", sums.display())))?;
    let dir = paths::parent_dir(sums);
    let store = DirStore {
        root: log_dir.to_path_buf(),
    };
    let policy = own_policy(key);
    let mut report = AppendReport {
        log: log_dir.to_path_buf(),
        size: 0,
        entries: Vec::new(),
        skipped: Vec::new(),
    };
    let mut todo: Vec<(PathBuf, Entry)> = Vec::new();
    let resolved = std::fs::canonicalize(paths::parent_dir(sums))
        .ok()
        .map(|d| d.join(name));
    let signed_name = crate::trust::signer::SignedName::new(name, resolved);
    let checks = crate::trust::signer::Checks::default();
    for sig_path in signature_files(dir, name)? {
        let sig_text = guarded::read_small_file(&sig_path, 64 * 1024, "a minisign signature")?;
        let sig = SignatureFile::parse(&sig_text)
            .map_err(|e| e.in_origin(sig_path.display().to_string()))?;
        let judged = crate::trust::signer::signer_of(
            (&sig_text, &sig_path),
            &signed_name,
            (&digests, Some(text.as_bytes())),
            keys,
            &checks,
        );
        let signer = match judged {
            Ok(k) => k.clone(),
            Err((_, why)) => {
                report
                    .skipped
                    .push((sig_path, format!("{why}: not logged")));
                continue;
            }
        };
        let entry = Entry::new(&signer, name, digests.sha256, &sig)
            .map_err(|e| Error::input(sig_path.display().to_string(), None, e.to_string()))?;
        let proof = proof_path(&sig_path);
        if let Some(index) = already_logged(&store, &policy, &proof, &entry)? {
            report.entries.push(AppendedEntry {
                signature: sig_path,
                key_id: signer.key_id,
                index,
                proof,
                already: true,
            });
            continue;
        }
        todo.push((sig_path, entry));
    }
    if report.entries.is_empty() && todo.is_empty() {
        return Err(nothing_to_log(sums, &report.skipped));
    }
    let entries: Vec<Entry> = todo.iter().map(|(_, e)| e.clone()).collect();
    let appended = if entries.is_empty() {
        None
    } else {
        Some(
            tree::append(log_dir, &key.0, &entries).map_err(|e| match e {
                LogError::Input(e) => e,
                LogError::Failed(why) => Error::Refused(why.to_string()),
            })?,
        )
    };
    if let Some(appended) = appended {
        report.size = appended.checkpoint.size;
        let placed = appended.proofs.into_iter().zip(appended.already);
        for ((sig_path, entry), (proof, already)) in todo.into_iter().zip(placed) {
            let path = proof_path(&sig_path);
            atomic::write_atomic(&path, proof.to_string().as_bytes(), 0o644, true)?;
            report.entries.push(AppendedEntry {
                signature: sig_path,
                key_id: entry.key.key_id,
                index: proof.index,
                proof: path,
                already,
            });
        }
    }
    renew_proofs(&store, &policy, &mut report)?;
    report.entries.sort_by_key(|e| e.index);
    Ok(report)
}

/// Why nothing beside `sums` was logged: each signature and why it does not count.
fn nothing_to_log(sums: &Path, skipped: &[(PathBuf, String)]) -> Error {
    let why: Vec<String> = skipped
        .iter()
        .map(|(p, why)| format!("{}: {why}", p.display()))
        .collect();
    Error::Refused(format!(
        "{}: no signature beside it that a verification would count, so nothing was logged{}",
        sums.display(),
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        }
    ))
}

/// Proofs of signatures logged before are renewed against the log's checkpoint as it is now
/// (with the witnesses' cosignatures it has gathered since).
fn renew_proofs(
    store: &DirStore,
    policy: &CheckpointPolicy,
    report: &mut AppendReport,
) -> Result<()> {
    let current =
        tree::read_checkpoint(store, policy).map_err(|e| Error::Refused(e.to_string()))?;
    report.size = current.size;
    for e in report.entries.iter().filter(|e| e.already) {
        let hashes = tree::prove_inclusion(store, &current, e.index)
            .map_err(|e| Error::Refused(e.to_string()))?;
        let proof = LogProof {
            index: e.index,
            hashes,
            checkpoint: current.note.clone(),
        };
        let text = proof.to_string();
        if fs::read(&e.proof).ok().as_deref() != Some(text.as_bytes()) {
            atomic::write_atomic(&e.proof, text.as_bytes(), 0o644, true)?;
        }
    }
    Ok(())
}

/// `<name>.minisig` and every `<name>.<KEYID>.minisig` in `dir`, in name order.
fn signature_files(dir: &Path, name: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let read = fs::read_dir(dir).map_err(|e| Error::io("reading", dir, e))?;
    for entry in read {
        let entry = entry.map_err(|e| Error::io("reading", dir, e))?;
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        if signs(file, name) && entry.file_type().is_ok_and(|t| t.is_file()) {
            found.push(entry.path());
        }
    }
    // The first signature first, then the co-signatures by name: entries in the order signed.
    found.sort_by_key(|p| {
        let main =
            p.file_name().and_then(|n| n.to_str()) != Some(&format!("{name}{SIGNATURE_SUFFIX}"));
        (main, p.clone())
    });
    Ok(found)
}

/// The index of `entry` when `proof` exists and proves it in this log.
fn already_logged(
    store: &DirStore,
    policy: &CheckpointPolicy,
    proof: &Path,
    entry: &Entry,
) -> Result<Option<u64>> {
    if fs::symlink_metadata(proof).is_err() {
        return Ok(None);
    }
    let text = guarded::read_small_file(proof, MAX_PROOF_BYTES, "a log proof")?;
    let parsed = LogProof::parse(&text).map_err(|e| e.in_origin(proof.display().to_string()))?;
    let name = proof.display().to_string();
    let cp = tree::checked_checkpoint(&parsed.checkpoint, &name, policy).map_err(|e| {
        Error::Refused(format!(
            "{e}: it is not a proof of this log; remove it to log the signature here"
        ))
    })?;
    // A proof of this log for another signature: the signature beside it was replaced (`sign
    // --force`), so the proof is stale and the new signature is logged (the proof rewritten).
    if tree::check_inclusion(&cp, parsed.index, entry.leaf_hash(), &parsed.hashes).is_err() {
        return Ok(None);
    }
    let current =
        tree::read_checkpoint(store, policy).map_err(|e| Error::Refused(e.to_string()))?;
    tree::check_consistency(store, &cp, &current).map_err(|e| match e {
        LogError::Input(e) => e,
        LogError::Failed(why) => Error::Refused(format!(
            "{name}: {why}: it is not a proof of this log; remove it to log the signature here"
        )),
    })?;
    Ok(Some(parsed.index))
}

/// What `log verify` found.
#[derive(Debug, Serialize)]
pub struct LogVerifyReport {
    pub(crate) log: String,
    pub(crate) summary: Option<tree::LogSummary>,
    pub(crate) cosigned: Vec<String>,
    pub(crate) problem: Option<String>,
}

impl LogVerifyReport {
    pub fn exit_code(&self) -> u8 {
        u8::from(self.problem.is_some())
    }
}

/// `warden log verify DIR`: every entry and tile against the checkpoint.
pub fn verify_log(location: &str, trust: &LogTrust) -> Result<LogVerifyReport> {
    let store = crate::log::http::open(location, "the log")?;
    let store = store.as_ref();
    let mut report = LogVerifyReport {
        log: location.to_string(),
        summary: None,
        cosigned: Vec::new(),
        problem: None,
    };
    let result = tree::read_checkpoint(store, &trust.policy).and_then(|cp| {
        report.cosigned = cp.cosigned.iter().map(|(n, _)| n.clone()).collect();
        tree::verify_all(store, &cp)
    });
    match result {
        Ok(summary) => report.summary = Some(summary),
        Err(LogError::Input(e)) => return Err(e),
        Err(LogError::Failed(why)) => report.problem = Some(why.to_string()),
    }
    Ok(report)
}

/// What `log witness` did.
#[derive(Debug, Serialize)]
pub struct WitnessReport {
    pub(crate) log: String,
    pub(crate) origin: String,
    pub(crate) size: u64,
    /// The size this witness cosigned before (0 when never).
    pub(crate) previous: u64,
    /// The cosignature line added, when the checkpoint was cosigned.
    pub(crate) cosignature: Option<String>,
    /// Why it was refused: a fork or a bad log signature (exit 1).
    pub(crate) problem: Option<String>,
    /// Where a refused checkpoint was kept as evidence.
    pub(crate) evidence: Option<PathBuf>,
}

impl WitnessReport {
    pub fn exit_code(&self) -> u8 {
        u8::from(self.problem.is_some())
    }
}

/// `warden log witness DIR`: cosigns the log's checkpoint when the log key signed it and it
/// extends the last checkpoint this witness cosigned (kept in `state`); a fork is refused, kept
/// as evidence, and never cosigned. The cosigned checkpoint replaces the log's when the log has
/// not moved on meanwhile.
pub fn witness(
    location: &str,
    log_key: &VerifierKeyArg,
    key: WitnessKey,
    state: &Path,
    now: u64,
) -> Result<WitnessReport> {
    let policy = CheckpointPolicy {
        log: log_key.0.clone(),
        witnesses: Vec::new(),
        threshold: 0,
    };
    let boxed = crate::log::http::open(location, "the log")?;
    let store = boxed.as_ref();
    // A folder gets the cosigned checkpoint back; a URL's operator gets the line.
    let dir = (!location.starts_with("https://") && !location.starts_with("http://"))
        .then(|| Path::new(location));
    fs::create_dir_all(state).map_err(|e| Error::io("creating", state, e))?;
    let _lock = atomic::DirLock::acquire(state)?;
    let origin = policy.log.name.clone();
    let state_file = crate::log::witness::state_file(state, &origin);
    let mut report = WitnessReport {
        log: location.to_string(),
        origin,
        size: 0,
        previous: 0,
        cosignature: None,
        problem: None,
        evidence: None,
    };
    let cp = match tree::read_checkpoint(store, &policy) {
        Ok(cp) => cp,
        Err(LogError::Input(e)) => return Err(e),
        Err(LogError::Failed(why)) => {
            report.problem = Some(format!("{why}: not cosigned"));
            return Ok(report);
        }
    };
    report.size = cp.size;
    let last = crate::log::witness::last_cosigned(state, &policy)?;
    report.previous = last.as_ref().map_or(0, |l| l.size);
    if let Some(last) = &last {
        match tree::check_consistency(store, last, &cp) {
            Ok(()) => {}
            Err(LogError::Input(e)) => return Err(e),
            Err(LogError::Failed(why)) => {
                let evidence = state.join(format!(
                    "refused-{}-{}",
                    cp.size,
                    crate::util::to_hex(&cp.root.0[..8])
                ));
                atomic::write_atomic(&evidence, &cp.note, 0o644, true)?;
                report.problem = Some(format!(
                    "{why}: not cosigned; the checkpoint is kept as evidence"
                ));
                report.evidence = Some(evidence);
                return Ok(report);
            }
        }
    }
    let signer = key.0.at(now.max(1));
    let line = crate::log::note::cosignature_line(&cp.note, &signer)
        .map_err(|e| Error::Refused(e.to_string()))?;
    let cosigned =
        crate::log::note::cosign(&cp.note, &signer).map_err(|e| Error::Refused(e.to_string()))?;
    atomic::write_atomic(&state_file, &cosigned, 0o644, true)?;
    // Back into the log, unless an append moved it on meanwhile (its checkpoint is then newer,
    // and this witness cosigns it on its next run).
    if let Some(dir) = dir {
        if let Ok(_log_lock) = atomic::DirLock::acquire(dir) {
            let path = dir.join(tree::CHECKPOINT);
            if fs::read(&path).is_ok_and(|now| now == cp.note) {
                atomic::write_atomic(&path, &cosigned, 0o644, true)?;
            }
        }
    }
    report.cosignature = Some(line.trim_end().to_string());
    Ok(report)
}

/// For the benchmark: appends `n` entries signed by a fresh release key (one append per 1,000
/// entries), so a log of 100,000 entries is built in seconds. Not a command.
#[doc(hidden)]
pub fn append_synthetic(dir: &Path, key: &LogKey, n: u64) -> Result<u64> {
    use crate::minisign::comment::TrustedComment;
    let pair = crate::minisign::keys::generate(None).map_err(|e| Error::Usage(e.to_string()))?;
    let secret = crate::minisign::SecretKey::load(
        &crate::minisign::SecretKeyText::new(pair.secret_box.to_string()),
        None,
    )
    .map_err(|e| Error::Usage(e.to_string()))?;
    let mut done = 0;
    while done < n {
        let batch = (n - done).min(1000);
        let entries: Vec<Entry> = (done..done + batch)
            .map(|i| {
                let sums = format!("{:064x}  app-{i}\n", i);
                let digests = crate::minisign::hash::hash_bytes(sums.as_bytes());
                let comment = TrustedComment::parse(&format!(
                    "timestamp:{i}\tfile:SHA256SUMS\thashed\ttag:v{i}"
                ))
                .expect("a plain comment");
                let sig = SignatureFile::sign_prehashed(&secret, &digests.blake2b512, comment);
                Entry::new(&pair.public, "SHA256SUMS", digests.sha256, &sig).expect("a short entry")
            })
            .collect();
        tree::append(dir, &key.0, &entries).map_err(|e| Error::Refused(e.to_string()))?;
        done += batch;
    }
    Ok(done)
}

/// For the benchmark: the inclusion proof of entry `index` of the log in `dir`, read from its
/// tiles against its verified checkpoint; returns the proof's length.
#[doc(hidden)]
pub fn prove_entry(dir: &Path, trust: &LogTrust, index: u64) -> Result<usize> {
    let store = DirStore {
        root: dir.to_path_buf(),
    };
    let cp =
        tree::read_checkpoint(&store, &trust.policy).map_err(|e| Error::Refused(e.to_string()))?;
    let hashes =
        tree::prove_inclusion(&store, &cp, index).map_err(|e| Error::Refused(e.to_string()))?;
    Ok(hashes.len())
}
