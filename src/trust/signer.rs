//! Which signatures of a file count, decided once for every consumer (`verify` of a folder or a
//! file, a published release for `verify --release` and the audit, `sign --cosign`): each
//! signature is checked before the signed bytes are read (format, algorithm, the key it claims
//! and whether it verifies under that key's bytes, revocation, validity, bindings, the run
//! policy), then over the bytes, and distinct keys are counted against the threshold.
//!
//! The first signature (`<file>.minisig`) is the pipeline's: by a key that is unknown here,
//! expired or revoked, it fails the file, whatever co-signatures sit beside it. Every counted
//! signature must meet the run policy (offline: a binding present and consistent with it).

use crate::error::Reason;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::minisign::comment::DRY_RUN_MARKER;
use crate::minisign::hash::Digests;
use crate::minisign::keys::{KeyId, PublicKey};
use crate::minisign::names::cosignature_path;
use crate::minisign::run::RunBinding;
use crate::minisign::signature::{SignatureAlgorithm, SignatureFile};
use crate::trust::binding::{
    binding_mismatch, is_full_commit, BoundField, Expected, ReleaseIdentity, SignedRelease,
};
use crate::trust::keys::TrustedKeys;
use crate::trust::lineage::Tally;

/// One signature of a file and what it counted for.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SignerEntry {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: KeyId,
    pub(crate) signature: PathBuf,
    /// The key's name in `keys/policy.toml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    pub(crate) counted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// The workflow run its trusted comment binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<RunBinding>,
    /// Its trusted comment's `timestamp:` and `commit:`, which a bound run is checked against.
    #[serde(skip)]
    pub(crate) timestamp: Option<u64>,
    #[serde(skip)]
    pub(crate) commit: Option<String>,
}

/// Why a file (or one of its signatures) is not verified, as a type: what each consumer's
/// words and the audit's rules are chosen by. Every reason comes with its text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) enum Cause {
    /// Verified, or not decided yet.
    #[default]
    None,
    /// No signed checksum list, or no signature where one is needed.
    Unsigned,
    /// Not verified because the checksum list that covers it does not verify.
    ListFailed,
    /// It cannot be read or parsed (exit 2, not a failed check).
    Unreadable,
    /// A co-signature by a key that does not count here (unknown, or past its `valid_until`):
    /// others may still reach the threshold.
    NotCounted,
    /// It does not verify, or is refused (legacy, dry-run, an untrusted first signer, a bad
    /// file binding, too few signers).
    Invalid,
    /// Signed by a revoked key.
    Revoked,
    /// It verifies, but binds another release (tag, repository or commit).
    Binding,
    /// A counted signature binds no run where the policy requires one, or another workflow or
    /// environment than it names.
    RunPolicy,
    /// GitHub's records contradict the run a signature names.
    Provenance,
    /// GitHub's digest of an asset is not what the signed list says (replaced after signing).
    Replaced,
    /// An asset was uploaded by someone other than the run that signed, or outside it.
    Upload,
    /// The bytes are not what the signed list says.
    Mismatch,
    /// An entry the signed list does not name.
    Unlisted,
    /// A file the list names is not there.
    Missing,
    /// A record the judgement needs is not there (the API leaves out who uploaded an asset).
    Unverifiable,
    /// A counted signature is not in the transparency log the verifier requires, or the log
    /// does not prove it (`verify --require-log`).
    Unlogged,
    /// GitHub's release attestation or build provenance does not verify, contradicts the
    /// release or its signatures, or is missing where required (issue 48).
    Attestation,
}

pub(crate) type Rejected = (Cause, String);

/// What every signature of a file must hold besides verifying: the caller's expectations and
/// what it allows.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Checks<'a> {
    pub(crate) allow_legacy: bool,
    pub(crate) allow_dry_run: bool,
    pub(crate) expected: Expected<'a>,
    /// A published release: its tag, repository and the commit its tag names.
    pub(crate) release: Option<&'a ReleaseIdentity>,
}

/// What the signatures of a file say, as a verification reports it: the first signature's key
/// and trusted comment, and every signer.
#[derive(Clone, Debug, Default)]
pub(crate) struct Judged {
    pub(crate) key_id: Option<KeyId>,
    pub(crate) key_file: Option<PathBuf>,
    pub(crate) tag: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) repo: Option<String>,
    pub(crate) file: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) timestamp: Option<u64>,
    pub(crate) run: Option<RunBinding>,
    pub(crate) signers: Vec<SignerEntry>,
    pub(crate) required_signatures: Option<usize>,
    /// The trusted comment in full, when it is not warden's own (what it binds is shown as
    /// written: someone else's release).
    pub(crate) comment: Option<String>,
    /// The comment binds no file and no release: accepted, as minisign accepts it, and said.
    pub(crate) unbound: bool,
    /// The comment binds no file name (a release, perhaps): said too.
    pub(crate) no_file: bool,
}

impl Judged {
    fn not_counted(&mut self, key_id: Option<KeyId>, signature: &Path, why: String) {
        if let Some(key_id) = key_id {
            self.signers.push(SignerEntry {
                key_id,
                signature: signature.to_path_buf(),
                name: None,
                counted: false,
                reason: Some(why),
                run: None,
                timestamp: None,
                commit: None,
            });
        }
    }
}

/// A signature that passed every check that does not need the signed bytes.
pub(crate) struct Candidate<'k> {
    pub(crate) sig: SignatureFile,
    pub(crate) key: &'k PublicKey,
    /// The run its trusted comment binds, if any.
    pub(crate) run: Option<RunBinding>,
}

/// The name a signature must bind: the file name, and the path it ends with (for `path:`).
pub(crate) struct SignedName {
    pub(crate) file_name: String,
    /// The file's path with its folders resolved, when they resolve.
    pub(crate) resolved: Option<PathBuf>,
}

impl SignedName {
    /// A file named `file_name` whose path resolves to `resolved` (its folders followed), when
    /// its reader could resolve it.
    pub(crate) fn new(file_name: &str, resolved: Option<PathBuf>) -> Self {
        SignedName {
            file_name: file_name.to_string(),
            resolved,
        }
    }
}

/// The signature files (and log proofs) of a folder as its reader read them, by path: a path
/// not here does not exist.
#[derive(Clone, Copy)]
pub(crate) struct SignatureFiles<'a>(
    pub(crate) &'a std::collections::BTreeMap<PathBuf, Result<String, Rejected>>,
);

impl SignatureFiles<'_> {
    pub(crate) fn exists(&self, path: &Path) -> bool {
        self.0.contains_key(path)
    }

    /// The file's text, or why it cannot be had (`Cause::Unsigned`: it is not there).
    pub(crate) fn read(&self, path: &Path) -> Result<String, Rejected> {
        match self.0.get(path) {
            Some(Ok(text)) => Ok(text.clone()),
            Some(Err(why)) => Err(why.clone()),
            None => Err((
                Cause::Unsigned,
                format!("missing signature {}", path.display()),
            )),
        }
    }
}

/// A legacy signature signs the bytes themselves, and its algorithm bytes are not covered by the
/// global signature: relabelling a prehashed `ED` signature as `Ed` makes a 64-byte file equal to
/// the original's BLAKE2b-512 verify as the original. No legacy signature over 64 bytes is taken.
fn legacy_size_check(sig: &SignatureFile, size: u64) -> Result<(), Reason> {
    if !sig.is_prehashed() && size == 64 {
        return Err("a legacy signature over exactly 64 bytes: refused, as it may be a relabelled prehashed signature (see SECURITY.md)".into());
    }
    Ok(())
}

/// The file the comment binds, when it binds one, must be the file's name (`file:` of warden's
/// and minisign's comments, or the file name a free-form comment starts with); `path:`, when
/// present, must be how the file's path ends (so `linux/ethrex` cannot stand in for
/// `macos/ethrex`). A comment that binds no file is not refused here: what it binds nothing of is
/// said by the verdict.
fn check_bindings(
    comment: &crate::minisign::comment::TrustedComment,
    binds: &crate::minisign::comment::Binds,
    name: &SignedName,
) -> Result<(), Reason> {
    use crate::minisign::comment::CommentForm;
    if let Some(signed) = binds.file.as_deref().filter(|f| *f != name.file_name) {
        let shown = match binds.form {
            CommentForm::Fields => format!("file:{signed}"),
            CommentForm::Words => signed.to_string(),
        };
        return Err(format!(
            "the signature is for {shown}, not {} (renamed or swapped artifact)",
            name.file_name
        )
        .into());
    }
    if binds.form != CommentForm::Fields {
        return Ok(());
    }
    if let Some(bound) = comment.value("path")? {
        let ends = crate::files::paths::is_plain_relative(bound)
            && name
                .resolved
                .as_ref()
                .is_some_and(|p| p.ends_with(Path::new(bound)));
        if !ends {
            return Err(format!(
                "the signature is for path:{bound}, not {} (a file of the same name from another folder)",
                name.resolved
                    .as_ref()
                    .map_or(name.file_name.clone(), |p| p.display().to_string())
            ).into());
        }
    }
    Ok(())
}

/// What a published release's identity asks of a signature: every field when the comment is
/// warden's own (its pipeline binds them all), else the fields the comment binds, each held
/// against the release (a comment that binds no tag cannot be held to one; the verdict says so).
fn release_expects<'r>(
    release: &'r ReleaseIdentity,
    binds: &crate::minisign::comment::Binds,
) -> Expected<'r> {
    let all = release.expected();
    if binds.is_wardens() {
        return all;
    }
    Expected {
        tag: all.tag.filter(|_| binds.tag.is_some()),
        repo: all.repo.filter(|_| binds.repo.is_some()),
        commit: all.commit.filter(|_| binds.commit.is_some()),
    }
}

/// The format and algorithm checks of a parsed signature.
fn check_algorithm(sig: &SignatureFile, checks: &Checks<'_>) -> Result<(), Rejected> {
    let failed = |why: String| Err((Cause::Invalid, why));
    match &sig.algorithm {
        SignatureAlgorithm::Prehashed => {}
        SignatureAlgorithm::Legacy if checks.allow_legacy => {}
        SignatureAlgorithm::Legacy => {
            return failed(
                "legacy (non-prehashed) signature rejected; pass --allow-legacy to accept it"
                    .into(),
            )
        }
        SignatureAlgorithm::Unknown(b) => {
            return failed(format!(
                "unsupported signature algorithm {:?}",
                String::from_utf8_lossy(b)
            ))
        }
    }
    // A relabelled `ED` signature says `hashed` in its (signed) trusted comment.
    if !sig.is_prehashed() && sig.trusted_comment.has_marker("hashed") {
        return failed("a legacy signature whose trusted comment says `hashed`: its algorithm was relabelled; refused".into());
    }
    Ok(())
}

/// The key a signature counts for: usable here, and the one whose bytes its global signature
/// verifies under. By a revoked key (it verifies under the revoked key's bytes) it fails; by a
/// key unknown here or past its `valid_until` it does not count.
fn signing_key<'k>(
    sig: &SignatureFile,
    keys: &'k TrustedKeys,
) -> Result<(&'k PublicKey, &'k Path), Rejected> {
    let revocation = keys
        .revocation_with_id(sig.key_id)
        .filter(|r| sig.verify_comment(&r.public_key).is_ok());
    if let Some(r) = revocation {
        return Err((
            Cause::Revoked,
            format!(
                "signed by key {}, revoked at {} ({}; {}): not trusted",
                sig.key_id,
                crate::markup::text_value(&r.revoked_at),
                crate::markup::text_value(&r.reason),
                r.file.display()
            ),
        ));
    }
    if let Some(p) = keys.expired(sig.key_id) {
        return Err((
            Cause::NotCounted,
            format!(
                "signed by key {}, trusted until {} ({}): expired",
                sig.key_id,
                p.valid_until.as_deref().unwrap_or_default(),
                keys.policy().origin()
            ),
        ));
    }
    let (key, key_file) = keys.find(sig.key_id).ok_or_else(|| {
        (
            Cause::NotCounted,
            format!(
                "signed by key {}, which is not trusted (trusted: {})",
                sig.key_id,
                keys.ids()
            ),
        )
    })?;
    sig.verify_comment(key)
        .map_err(|e| (Cause::Invalid, e.to_string()))?;
    Ok((key, key_file))
}

/// Every check of a signature (its text, read from `sig_path`) that does not need the signed
/// bytes: format, algorithm, trusted key, global signature, bindings, tag, dry-run. What the
/// trusted comment says goes into `out`.
pub(crate) fn check_signature_text<'k>(
    text: &str,
    sig_path: &Path,
    name: &SignedName,
    keys: &'k TrustedKeys,
    checks: &Checks<'_>,
    out: &mut Judged,
) -> Result<Candidate<'k>, Rejected> {
    let sig = SignatureFile::parse(text)
        .map_err(|e| (Cause::Unreadable, format!("{}: {e}", sig_path.display())))?;
    out.key_id = Some(sig.key_id);
    check_algorithm(&sig, checks)?;
    let (key, key_file) = signing_key(&sig, keys)?;
    out.key_file = Some(key_file.to_path_buf());
    let comment = &sig.trusted_comment;
    let binds = comment
        .binds()
        .map_err(|e| (Cause::Invalid, e.to_string()))?;
    let field = |k: &'static str| comment.value(k).map_err(|e| (Cause::Invalid, e.into()));
    out.tag = binds.tag.clone();
    out.commit = binds.commit.clone();
    out.repo = binds.repo.clone();
    out.file = binds.file.clone();
    if binds.form == crate::minisign::comment::CommentForm::Fields {
        out.path = field("path")?.map(str::to_string);
        out.timestamp = field("timestamp")?.and_then(|t| t.parse().ok());
        out.run = comment.run().map_err(|e| (Cause::Invalid, e.into()))?;
    }
    if !binds.is_wardens() {
        out.comment = Some(comment.as_str().to_string());
    }
    out.unbound = binds.nothing();
    out.no_file = binds.file.is_none();
    check_bindings(comment, &binds, name).map_err(|e| (Cause::Invalid, e.into()))?;
    let signed = SignedRelease {
        tag: out.tag.clone(),
        repo: out.repo.clone(),
        commit: out.commit.clone(),
        loose: !binds.is_wardens(),
    };
    if let Some(mismatch) = binding_mismatch(&signed, &checks.expected) {
        return Err((Cause::Binding, mismatch.to_string()));
    }
    if let Some(release) = checks.release {
        if let Some(mismatch) = binding_mismatch(&signed, &release_expects(release, &binds)) {
            let moved = mismatch.field == BoundField::Commit
                && mismatch.signed.as_deref().is_some_and(is_full_commit);
            let why = match (&mismatch.signed, moved) {
                (Some(signed), true) => format!(
                    "tag {} now points at {}; the signatures bind {signed}: the tag was moved after signing",
                    release.tag, mismatch.expected
                ),
                _ => mismatch.to_string(),
            };
            return Err((Cause::Binding, why));
        }
    }
    if (comment.has_marker(DRY_RUN_MARKER) || binds.dry_run) && !checks.allow_dry_run {
        return Err((
            Cause::Invalid,
            "dry-run (rehearsal) signature; pass --allow-dry-run to accept it".into(),
        ));
    }
    Ok(Candidate {
        sig,
        key,
        run: out.run.clone(),
    })
}

/// One signature file checked: its text read from `files`, then [`check_signature_text`].
fn check_signature_file<'k>(
    sig_path: &Path,
    name: &SignedName,
    (keys, checks): (&'k TrustedKeys, &Checks<'_>),
    files: &SignatureFiles<'_>,
    out: &mut Judged,
) -> Result<Candidate<'k>, Rejected> {
    let text = files.read(sig_path)?;
    check_signature_text(&text, sig_path, name, keys, checks, out)
}

/// Who made one signature (its `text`, read from `sig_path`) of the file `name` whose bytes are
/// `message` (the BLAKE2b-512 prehash, with the bytes themselves for a legacy signature), and
/// whether it counts here: every check a verification makes of a signature (format, key by its
/// bytes, revocation, validity, bindings, dry-run, the run policy, a co-signature's name), for a
/// caller that judges signatures one at a time (the log append). The threshold is the caller's.
pub(crate) fn signer_of<'k>(
    (text, sig_path): (&str, &Path),
    name: &SignedName,
    (digests, whole): (&Digests, Option<&[u8]>),
    keys: &'k TrustedKeys,
    checks: &Checks<'_>,
) -> Result<&'k PublicKey, Rejected> {
    let mut out = Judged::default();
    let c = check_signature_text(text, sig_path, name, keys, checks, &mut out)?;
    let named = sig_path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(crate::minisign::names::cosigned_file);
    if let Some((_, id)) = named.filter(|(_, id)| *id != c.sig.key_id) {
        return Err((
            Cause::Invalid,
            format!(
                "named for key {id} but signed by key {} (a renamed co-signature)",
                c.sig.key_id
            ),
        ));
    }
    if let Some(why) = run_policy_problem(keys, c.run.as_ref()) {
        return Err((Cause::RunPolicy, why));
    }
    let message: &[u8] = if c.sig.is_prehashed() {
        &digests.blake2b512
    } else {
        whole.unwrap_or_default()
    };
    legacy_size_check(&c.sig, digests.size).map_err(|e| (Cause::Invalid, e.to_string()))?;
    c.sig
        .verify_data(c.key, message)
        .map_err(|e| (Cause::Invalid, e.to_string()))?;
    Ok(c.key)
}

/// Which of `candidates` made the signature in `text` over the bytes whose BLAKE2b-512 prehash
/// is `prehash`: found by the signature's key id, proved by the key's bytes (its trusted comment
/// and its signature both verify). Attribution only (the inventory's "who signed this release"):
/// whether the signature counts is [`signer_of`]'s.
pub(crate) fn made_by<'k>(
    text: &str,
    prehash: &[u8; 64],
    candidates: &'k [PublicKey],
) -> Option<&'k PublicKey> {
    let sig = SignatureFile::parse(text).ok()?;
    candidates.iter().find(|k| {
        k.key_id == sig.key_id
            && sig.verify_comment(k).is_ok()
            && sig.verify_data(k, prehash).is_ok()
    })
}

/// What the run policy says of a counted signature (offline: a binding present and consistent),
/// naming the signature when it is not the first.
fn run_policy_problem(keys: &TrustedKeys, run: Option<&RunBinding>) -> Option<String> {
    let policy = keys.policy();
    policy.run.offline_problem(run, &policy.origin())
}

/// The signatures of `file`, checked before its bytes are read: `main` (`<file>.minisig`, which
/// must exist) and each co-signature `<file>.<KEYID>.minisig` by a key the verifier knows of
/// (trusted or revoked). The first signature, or any signature that fails a check, decides the
/// file; a co-signature by an unknown or expired key is recorded as not counted. Every counted
/// signature must meet the run policy.
pub(crate) fn check_signature_set<'k>(
    (file, main): (&Path, &Path),
    name: &SignedName,
    (keys, need): (&'k TrustedKeys, usize),
    (checks, files): (&Checks<'_>, &SignatureFiles<'_>),
    out: &mut Judged,
) -> Result<Vec<(PathBuf, Candidate<'k>)>, Rejected> {
    let mut set = Vec::new();
    let first = check_signature_file(main, name, (keys, checks), files, out);
    let first = first.map_err(|(kind, why)| match kind {
        // The pipeline's signature by a key that does not count: nothing beside it can stand in.
        Cause::NotCounted => (Cause::Invalid, why),
        _ => (kind, why),
    })?;
    if let Some(why) = run_policy_problem(keys, first.run.as_ref()) {
        return Err((Cause::RunPolicy, why));
    }
    set.push((main.to_path_buf(), first));
    for id in keys.known_ids() {
        let path = cosignature_path(file, id);
        if !files.exists(&path) {
            continue;
        }
        let mut scratch = Judged::default();
        let checked = check_signature_file(&path, name, (keys, checks), files, &mut scratch);
        if let Some(signer) = scratch.key_id.filter(|k| *k != id) {
            return Err((
                Cause::Invalid,
                format!(
                    "{}: named for key {id} but signed by key {signer} (a renamed co-signature)",
                    path.display()
                ),
            ));
        }
        match checked {
            Ok(c) => {
                if let Some(why) = run_policy_problem(keys, c.run.as_ref()) {
                    return Err((Cause::RunPolicy, format!("{}: {why}", path.display())));
                }
                set.push((path, c))
            }
            Err((Cause::NotCounted, why)) => out.not_counted(Some(id), &path, why),
            Err((kind, why)) => return Err((kind, format!("{}: {why}", path.display()))),
        }
    }
    // Counted before the bytes are read: too few signers need not read them.
    let mut tally = Tally::new(keys.lineages());
    let mut judged = out.clone();
    for (path, c) in &set {
        if let Err(why) = tally.count(c.key) {
            judged.not_counted(Some(c.sig.key_id), path, why);
        }
    }
    if tally.len() < need {
        *out = judged;
        return Err((
            Cause::Invalid,
            below_threshold(tally.len(), need, keys, out),
        ));
    }
    Ok(set)
}

/// Checks each signature of the set over the file's bytes (`digests`, or `whole` for a legacy
/// one), records the signers, and counts distinct keys against the threshold.
pub(crate) fn verify_signature_set(
    set: &[(PathBuf, Candidate<'_>)],
    main: &Path,
    (digests, whole): (&Digests, Option<&[u8]>),
    (keys, need): (&TrustedKeys, usize),
    out: &mut Judged,
) -> Result<(), Reason> {
    let mut tally = Tally::new(keys.lineages());
    let mut entries = Vec::new();
    for (path, c) in set {
        let prefix = |e: String| {
            if path == main {
                e
            } else {
                format!("{}: {e}", path.display())
            }
        };
        let message: &[u8] = if c.sig.is_prehashed() {
            &digests.blake2b512
        } else {
            whole.unwrap_or_default()
        };
        legacy_size_check(&c.sig, digests.size).map_err(|e| prefix(e.into()))?;
        c.sig
            .verify_data(c.key, message)
            .map_err(|e| prefix(e.to_string()))?;
        let not_counted = tally.count(c.key).err();
        entries.push(SignerEntry {
            key_id: c.sig.key_id,
            signature: path.clone(),
            name: keys.policy().key(c.sig.key_id).and_then(|p| p.name.clone()),
            counted: not_counted.is_none(),
            reason: not_counted,
            run: c.run.clone(),
            timestamp: c
                .sig
                .trusted_comment
                .value("timestamp")
                .ok()
                .flatten()
                .and_then(|t| t.parse().ok()),
            commit: c
                .sig
                .trusted_comment
                .value("commit")
                .ok()
                .flatten()
                .map(str::to_string),
        });
    }
    // Signers in file order: the first signature, then the co-signatures.
    entries.append(&mut out.signers);
    out.signers = entries;
    if need > 1 {
        out.required_signatures = Some(need);
    }
    if tally.len() < need {
        return Err(below_threshold(tally.len(), need, keys, out).into());
    }
    Ok(())
}

/// Why `counted` distinct signers are not enough.
fn below_threshold(counted: usize, need: usize, keys: &TrustedKeys, out: &Judged) -> String {
    let mut why = format!(
        "{counted} of {need} required signatures ({})",
        keys.policy().origin()
    );
    for s in out.signers.iter().filter(|s| !s.counted) {
        why.push_str(&format!(
            "; {} not counted: {}",
            s.signature.display(),
            s.reason.as_deref().unwrap_or_default()
        ));
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minisign::comment::TrustedComment;
    use crate::minisign::hash::hash_bytes;
    use crate::minisign::keys::{generate, SecretKey, SecretKeyText};
    use std::fs;

    const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

    /// A fresh key pair, its public half trusted from a file of its own.
    struct Signer {
        key: SecretKey,
        keys: TrustedKeys,
        _dir: tempfile::TempDir,
    }

    fn signer() -> Signer {
        let pair = generate(None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let public = dir.path().join("k.pub");
        fs::write(&public, pair.public.to_string()).unwrap();
        Signer {
            key: SecretKey::load(&SecretKeyText::new(pair.secret_box.to_string()), None).unwrap(),
            keys: TrustedKeys::load_files(&[public]).unwrap(),
            _dir: dir,
        }
    }

    fn signature(s: &Signer, data: &[u8], comment: &str) -> SignatureFile {
        let prehash = hash_bytes(data).blake2b512;
        SignatureFile::sign_prehashed(&s.key, &prehash, TrustedComment::parse(comment).unwrap())
    }

    /// The signature check of `text` for a file named `name`: the failure, or the fields bound.
    fn check(
        text: &str,
        name: &str,
        keys: &TrustedKeys,
        checks: &Checks<'_>,
    ) -> Result<(Option<String>, Option<String>), Rejected> {
        let mut out = Judged::default();
        let name = SignedName::new(name, None);
        check_signature_text(
            text,
            Path::new("app.minisig"),
            &name,
            keys,
            checks,
            &mut out,
        )
        .map(|_| (out.tag, out.commit))
    }

    fn failed(why: &str) -> Result<(Option<String>, Option<String>), Rejected> {
        Err((Cause::Invalid, why.to_string()))
    }

    #[test]
    fn a_good_signature_binds_its_fields_and_its_bytes() {
        let s = signer();
        let comment = format!("timestamp:1\tfile:app\thashed\ttag:v1\tcommit:{COMMIT}\trepo:o/r");
        let sig = signature(&s, b"app bytes", &comment).to_string();
        let checks = Checks::default();
        assert_eq!(
            check(&sig, "app", &s.keys, &checks),
            Ok((Some("v1".into()), Some(COMMIT.into())))
        );
        // Over its bytes, and only them.
        let mut out = Judged::default();
        let name = SignedName::new("app", None);
        let c = check_signature_text(
            &sig,
            Path::new("app.minisig"),
            &name,
            &s.keys,
            &checks,
            &mut out,
        )
        .unwrap();
        let set = vec![(PathBuf::from("app.minisig"), c)];
        let main = Path::new("app.minisig");
        let good = hash_bytes(b"app bytes");
        assert!(verify_signature_set(&set, main, (&good, None), (&s.keys, 1), &mut out).is_ok());
        assert_eq!(out.repo.as_deref(), Some("o/r"));
        let other = hash_bytes(b"other bytes");
        assert!(verify_signature_set(&set, main, (&other, None), (&s.keys, 1), &mut out).is_err());
    }

    #[test]
    fn a_swapped_file_an_untrusted_key_or_an_edited_comment_fails() {
        let (s, other) = (signer(), signer());
        let opts = Checks::default();
        let sig = signature(&s, b"x", "timestamp:1\tfile:app\thashed");
        assert_eq!(
            check(&sig.to_string(), "tool", &s.keys, &opts),
            failed("the signature is for file:app, not tool (renamed or swapped artifact)")
        );
        let foreign = signature(&other, b"x", "timestamp:1\tfile:app\thashed");
        assert_eq!(
            check(&foreign.to_string(), "app", &s.keys, &opts),
            Err((
                Cause::NotCounted,
                format!(
                    "signed by key {}, which is not trusted (trusted: {})",
                    foreign.key_id,
                    s.keys.ids()
                )
            ))
        );
        let mut edited = sig.clone();
        edited.trusted_comment =
            TrustedComment::parse("timestamp:1\tfile:app\thashed\ttag:v9").unwrap();
        let (status, _) = check(&edited.to_string(), "app", &s.keys, &opts).unwrap_err();
        assert_eq!(status, Cause::Invalid);
        // A comment that binds nothing is accepted (as minisign accepts it) and marked.
        let unbound = signature(&s, b"x", "timestamp:1\thashed");
        assert_eq!(
            check(&unbound.to_string(), "app", &s.keys, &opts),
            Ok((None, None))
        );
        // A free-form comment's file name is held like `file:`.
        let renamed = signature(&s, b"x", "guest-v1.elf tag:v1");
        assert_eq!(
            check(&renamed.to_string(), "guest.elf", &s.keys, &opts),
            failed(
                "the signature is for guest-v1.elf, not guest.elf (renamed or swapped artifact)"
            )
        );
    }

    #[test]
    fn legacy_relabelled_and_dry_run_signatures_are_refused() {
        let s = signer();
        let mut legacy = signature(&s, b"x", "timestamp:1\tfile:app\thashed");
        legacy.algorithm = SignatureAlgorithm::Legacy;
        let opts = Checks::default();
        assert_eq!(
            check(&legacy.to_string(), "app", &s.keys, &opts),
            failed("legacy (non-prehashed) signature rejected; pass --allow-legacy to accept it")
        );
        let allow_legacy = Checks {
            allow_legacy: true,
            ..Checks::default()
        };
        assert_eq!(
            check(&legacy.to_string(), "app", &s.keys, &allow_legacy),
            failed("a legacy signature whose trusted comment says `hashed`: its algorithm was relabelled; refused")
        );
        let rehearsal = signature(
            &s,
            b"x",
            &format!("timestamp:1\tfile:app\thashed\t{DRY_RUN_MARKER}"),
        );
        assert_eq!(
            check(&rehearsal.to_string(), "app", &s.keys, &opts),
            failed("dry-run (rehearsal) signature; pass --allow-dry-run to accept it")
        );
    }

    #[test]
    fn expected_bindings_are_required_fields() {
        let s = signer();
        let sig = signature(&s, b"x", "timestamp:1\tfile:app\thashed\ttag:v1\trepo:o/r");
        let expect = |tag: &'static str, repo: &'static str, commit: Option<&'static str>| Checks {
            expected: Expected {
                tag: Some(tag),
                repo: Some(repo),
                commit,
            },
            ..Checks::default()
        };
        let text = sig.to_string();
        assert!(check(&text, "app", &s.keys, &expect("v1", "O/R", None)).is_ok());
        assert_eq!(
            check(&text, "app", &s.keys, &expect("v2", "o/r", None)),
            Err((Cause::Binding, "signed for tag v1, expected v2".to_string()))
        );
        assert_eq!(
            check(&text, "app", &s.keys, &expect("v1", "o/r", Some(COMMIT))),
            Err((
                Cause::Binding,
                format!("the trusted comment has no commit: field, expected commit {COMMIT}")
            ))
        );
    }
}
