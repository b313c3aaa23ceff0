//! `warden verify`: artifacts against their `.minisig`, and release directories against their
//! signed `SHA256SUMS`.
//!
//! Cheap checks come first: the signature file is parsed, legacy signatures are refused, the key
//! id is looked up, the trusted comment's signature and its bindings (file name, tag, dry-run)
//! are checked, all before a byte of the artifact is read. Each artifact is then read once for
//! both SHA-256 and the BLAKE2b-512 prehash.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::binding::{binding_mismatch, Expected, ReleaseIdentity, SignedRelease};
use super::checksums::ChecksumFile;
use super::comment::DRY_RUN_MARKER;
use super::hash::{hash_bytes, hash_file, Digests};
use super::keys::{KeyId, PublicKey};
use super::names::{cosignature_path, cosigned_file, signature_path, SIGNATURE_SUFFIX};
use super::signature::{SignatureAlgorithm, SignatureFile};
use super::trusted_keys::TrustedKeys;
use crate::error::{Error, Result};
use crate::files::guarded::{self, CappedReadError, SMALL_FILE_CAP};
use crate::util::{cores_to_spare, parallel_map};

/// A `SHA256SUMS` is read whole (it is hashed and parsed); 256 MiB is over two million entries.
const SUMS_CAP: u64 = 256 << 20;

#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    pub inputs: Vec<PathBuf>,
    pub expect_tag: Option<String>,
    /// Require `repo:` equal to this (`OWNER/NAME`, without case).
    pub expect_repo: Option<String>,
    /// Require `commit:` (a full SHA) to begin with this (12 to 40 hex digits).
    pub expect_commit: Option<String>,
    /// A published release (`verify --release`): its tag, repository and the commit the tag
    /// names, all required in addition to the caller's `expect_*`, never instead of them.
    pub release: Option<ReleaseIdentity>,
    pub allow_legacy: bool,
    pub allow_dry_run: bool,
    /// Entries of a release directory that its checksum list does not name are skipped (and
    /// named) instead of failing the run.
    pub allow_unlisted: bool,
    /// A release directory without a checksum list is verified file by file.
    pub allow_no_checksums: bool,
    /// Signatures whose trusted comment binds no file name are accepted.
    pub allow_unbound: bool,
    /// `--only`: in a release directory, verify just the listed files whose names match one of
    /// these globs (the others are named as skipped).
    pub only: Option<Only>,
    /// Name of the checksum file inside a release directory.
    pub checksums_name: String,
    /// Digests already computed (as a release downloaded): these files are not read again.
    pub known_digests: std::collections::BTreeMap<PathBuf, Digests>,
    /// `-x FILE`: the signature of the one file verified, where it is not `<file>.minisig`.
    pub signature_file: Option<PathBuf>,
    /// Files already known to fail, with why (a release asset GitHub's digest shows replaced):
    /// their entry fails with that reason, unread.
    pub preset_failures: std::collections::BTreeMap<PathBuf, String>,
    /// Bytes hashed so far, for a progress display.
    pub progress: Option<super::hash::Progress>,
}

/// The `--only` patterns, as given and compiled: each must match a listed file (a pattern that
/// matches none fails the run).
#[derive(Clone, Debug)]
pub struct Only {
    patterns: Vec<String>,
    set: globset::GlobSet,
}

impl Only {
    /// The patterns compiled; `None` when there are none.
    pub fn new(patterns: &[String]) -> Result<Option<Only>> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut set = globset::GlobSetBuilder::new();
        for p in patterns {
            let glob =
                globset::Glob::new(p).map_err(|e| Error::Usage(format!("--only {p:?}: {e}")))?;
            set.add(glob);
        }
        let set = set
            .build()
            .map_err(|e| Error::Usage(format!("--only: {e}")))?;
        Ok(Some(Only {
            patterns: patterns.to_vec(),
            set,
        }))
    }

    pub fn is_match(&self, name: &str) -> bool {
        self.set.is_match(name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactStatus {
    /// Signature and/or checksum verified.
    Ok,
    /// A verification failed: altered, swapped, unsigned, untrusted key, wrong tag, dry-run.
    Failed,
    /// The input could not be read or parsed.
    Error,
}

#[derive(Clone, Debug, Serialize)]
pub struct ArtifactResult {
    pub name: String,
    pub status: ArtifactStatus,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_display"
    )]
    pub key_id: Option<KeyId>,
    /// The trusted key file that holds `key_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The trusted comment's `file:` and `path:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The trusted comment's `timestamp:` (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
    /// The workflow run the (first) signature binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<super::provenance::RunBinding>,
    /// What was checked: "signature", "sha256" or both.
    pub checked: Vec<&'static str>,
    /// Every signature found (the first, and co-signatures `<file>.<KEYID>.minisig`), and
    /// whether it counted toward the threshold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signers: Vec<SignerEntry>,
    /// The keys folder's threshold, when it asks for more than one signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_signatures: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One signature of a file and what it counted for.
#[derive(Clone, Debug, Serialize)]
pub struct SignerEntry {
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub key_id: KeyId,
    pub signature: PathBuf,
    /// The key's name in `keys/policy.toml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub counted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn opt_display<S: serde::Serializer>(
    v: &Option<KeyId>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(id) => s.collect_str(id),
        None => s.serialize_none(),
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifyReport {
    pub results: Vec<ArtifactResult>,
    /// Entries that were not verified, each with the reason; never dropped silently.
    pub skipped: Vec<SkippedEntry>,
    pub warnings: Vec<String>,
    /// Facts, not cautions (what a published release is).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A path `verify` passed over, and why.
#[derive(Clone, Debug, Serialize)]
pub struct SkippedEntry {
    pub name: String,
    pub reason: String,
}

impl VerifyReport {
    /// Names results and reasons after the release's assets instead of `dir`, a temporary
    /// folder that is gone once the command ends.
    pub fn strip_folder(&mut self, dir: &Path) {
        let prefix = format!("{}/", dir.display());
        let strip = |s: &mut String| *s = s.replace(&prefix, "");
        for r in &mut self.results {
            strip(&mut r.name);
            if let Some(reason) = r.reason.as_mut() {
                strip(reason);
            }
        }
        for s in &mut self.skipped {
            strip(&mut s.name);
        }
    }

    /// Adds the result of a check made outside the folder (a release's provenance): `name`,
    /// what was checked, and the failure if any.
    pub fn add_check(&mut self, name: String, what: &'static str, failure: Option<String>) {
        let v = Verdict::new();
        let mut v = match failure {
            Some(why) => v.fail(why),
            None => v,
        };
        v.checked.push(what);
        self.results.push(v.into_result(name));
    }

    fn skip(&mut self, path: &Path, reason: String) {
        self.skipped.push(SkippedEntry {
            name: path.display().to_string(),
            reason,
        });
    }

    pub fn count(&self, status: ArtifactStatus) -> usize {
        self.results.iter().filter(|r| r.status == status).count()
    }

    /// 0 all verified, 1 a verification failed, 2 an input could not be read or parsed.
    pub fn exit_code(&self) -> u8 {
        if self.count(ArtifactStatus::Error) > 0 {
            2
        } else if self.count(ArtifactStatus::Failed) > 0 || self.results.is_empty() {
            1
        } else {
            0
        }
    }
}

/// One file to check.
struct Job {
    path: PathBuf,
    name: String,
    /// The signature to check, when one exists or is required.
    signature: Option<PathBuf>,
    /// Whether a missing signature is a failure (not when a verified SHA256SUMS covers the file).
    require_signature: bool,
    expected_sha256: Option<[u8; 32]>,
    /// Why the file cannot be trusted even before it is read, e.g. a path leaving the release.
    preset_failure: Option<String>,
}

struct Verdict {
    status: ArtifactStatus,
    reason: Option<String>,
    key_id: Option<KeyId>,
    key_file: Option<PathBuf>,
    tag: Option<String>,
    commit: Option<String>,
    repo: Option<String>,
    file: Option<String>,
    path: Option<String>,
    timestamp: Option<u64>,
    run: Option<super::provenance::RunBinding>,
    checked: Vec<&'static str>,
    signers: Vec<SignerEntry>,
    required_signatures: Option<usize>,
}

impl Verdict {
    fn new() -> Self {
        Verdict {
            status: ArtifactStatus::Ok,
            reason: None,
            key_id: None,
            key_file: None,
            tag: None,
            commit: None,
            repo: None,
            file: None,
            path: None,
            timestamp: None,
            run: None,
            checked: Vec::new(),
            signers: Vec::new(),
            required_signatures: None,
        }
    }
    fn fail(mut self, reason: impl Into<String>) -> Self {
        self.status = ArtifactStatus::Failed;
        self.reason = Some(reason.into());
        self
    }
    fn error(mut self, reason: impl Into<String>) -> Self {
        self.status = ArtifactStatus::Error;
        self.reason = Some(reason.into());
        self
    }
    fn into_result(self, name: String) -> ArtifactResult {
        ArtifactResult {
            name,
            status: self.status,
            key_id: self.key_id,
            key_file: self.key_file,
            tag: self.tag,
            commit: self.commit,
            repo: self.repo,
            file: self.file,
            path: self.path,
            timestamp: self.timestamp,
            run: self.run,
            checked: self.checked,
            signers: self.signers,
            required_signatures: self.required_signatures,
            reason: self.reason,
        }
    }
}

/// Why a signature is not taken: the file cannot be read or parsed (`Error`), it fails a check
/// (`Failed`: the whole file fails), or it is by a key that does not count here (`NotCounted`:
/// unknown or past its `valid_until`; other signatures may still reach the threshold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rejection {
    Error,
    Failed,
    NotCounted,
}

type Rejected = (Rejection, String);

/// A signature that passed every check that does not need the artifact's bytes.
struct CheckedSignature<'k> {
    sig: SignatureFile,
    key: &'k PublicKey,
}

/// The name a signature must bind: the file name, and the path it ends with (for `path:`).
struct SignedName {
    file_name: String,
    /// The file's path with its folders resolved, when they resolve.
    resolved: Option<PathBuf>,
}

impl SignedName {
    fn of(path: &Path, file_name: &str) -> Self {
        let resolved = fs::canonicalize(crate::files::paths::parent_dir(path))
            .ok()
            .map(|dir| dir.join(file_name));
        SignedName {
            file_name: file_name.to_string(),
            resolved,
        }
    }
}

/// A legacy signature signs the bytes themselves, and its algorithm bytes are not covered by the
/// global signature: relabelling a prehashed `ED` signature as `Ed` makes a 64-byte file equal to
/// the original's BLAKE2b-512 verify as the original. No legacy signature over 64 bytes is taken.
fn legacy_size_check(sig: &SignatureFile, size: u64) -> std::result::Result<(), String> {
    if !sig.is_prehashed() && size == 64 {
        return Err("a legacy signature over exactly 64 bytes: refused, as it may be a relabelled prehashed signature (see SECURITY.md)".into());
    }
    Ok(())
}

/// `file:` must appear exactly once and name the file; `path:`, when present, must be how the
/// file's path ends (so `linux/ethrex` cannot stand in for `macos/ethrex`).
fn check_bindings(
    comment: &super::comment::TrustedComment,
    name: &SignedName,
    opts: &VerifyOptions,
) -> std::result::Result<(), String> {
    let files: Vec<&str> = comment.values("file").collect();
    match files.as_slice() {
        [signed] if *signed != name.file_name => {
            return Err(format!(
                "the signature is for file:{signed}, not {} (renamed or swapped artifact)",
                name.file_name
            ))
        }
        [_] => {}
        _ if opts.allow_unbound => {
            if let Some(signed) = comment.value("file")? {
                if signed != name.file_name {
                    return Err(format!("the signature is for file:{signed}, not {}", name.file_name));
                }
            }
        }
        [] => return Err("the trusted comment has no file: field, so the signature could be for any file; pass --allow-unbound to accept it".into()),
        _ => return Err(format!("the trusted comment has {} file: fields, not one; pass --allow-unbound to accept it", files.len())),
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
            ));
        }
    }
    Ok(())
}

fn check_signature_file<'k>(
    sig_path: &Path,
    name: &SignedName,
    keys: &'k TrustedKeys,
    opts: &VerifyOptions,
    out: &mut Verdict,
) -> std::result::Result<CheckedSignature<'k>, Rejected> {
    let io_error = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            (
                Rejection::Failed,
                format!("missing signature {}", sig_path.display()),
            )
        } else {
            (
                Rejection::Error,
                format!("reading {}: {e}", sig_path.display()),
            )
        }
    };
    let file = guarded::open_regular(sig_path).map_err(io_error)?;
    let origin = sig_path.display().to_string();
    let text = guarded::read_capped(file, &origin, SMALL_FILE_CAP, "a minisign signature")
        .map_err(|e| match e {
            CappedReadError::Io(e) => io_error(e),
            CappedReadError::Input(e) => (Rejection::Error, e.to_string()),
        })?;
    check_signature_text(&text, sig_path, name, keys, opts, out)
}

/// Every check of a signature (its text, read from `sig_path`) that does not need the signed
/// bytes: format, algorithm, trusted key, global signature, bindings, tag, dry-run.
fn check_signature_text<'k>(
    text: &str,
    sig_path: &Path,
    name: &SignedName,
    keys: &'k TrustedKeys,
    opts: &VerifyOptions,
    out: &mut Verdict,
) -> std::result::Result<CheckedSignature<'k>, Rejected> {
    let sig = SignatureFile::parse(text)
        .map_err(|e| (Rejection::Error, format!("{}: {e}", sig_path.display())))?;
    out.key_id = Some(sig.key_id);
    match sig.algorithm {
        SignatureAlgorithm::Prehashed => {}
        SignatureAlgorithm::Legacy if opts.allow_legacy => {}
        SignatureAlgorithm::Legacy => {
            return Err((
                Rejection::Failed,
                "legacy (non-prehashed) signature rejected; pass --allow-legacy to accept it"
                    .into(),
            ))
        }
        SignatureAlgorithm::Unknown(b) => {
            return Err((
                Rejection::Failed,
                format!(
                    "unsupported signature algorithm {:?}",
                    String::from_utf8_lossy(&b)
                ),
            ))
        }
    }
    // A relabelled `ED` signature says `hashed` in its (signed) trusted comment.
    if !sig.is_prehashed() && sig.trusted_comment.has_marker("hashed") {
        return Err((
            Rejection::Failed,
            "a legacy signature whose trusted comment says `hashed`: its algorithm was relabelled; refused".into(),
        ));
    }
    if let Some(r) = keys.revoked(sig.key_id) {
        return Err((
            Rejection::Failed,
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
            Rejection::NotCounted,
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
            Rejection::NotCounted,
            format!(
                "signed by key {}, which is not trusted (trusted: {})",
                sig.key_id,
                keys.ids()
            ),
        )
    })?;
    out.key_file = Some(key_file.to_path_buf());
    sig.verify_comment(key)
        .map_err(|e| (Rejection::Failed, e.to_string()))?;
    let comment = &sig.trusted_comment;
    let field = |k: &'static str| comment.value(k).map_err(|e| (Rejection::Failed, e));
    out.tag = field("tag")?.map(str::to_string);
    out.commit = field("commit")?.map(str::to_string);
    out.repo = field("repo")?.map(str::to_string);
    out.file = field("file")?.map(str::to_string);
    out.path = field("path")?.map(str::to_string);
    out.timestamp = field("timestamp")?.and_then(|t| t.parse().ok());
    out.run = comment.run().map_err(|e| (Rejection::Failed, e))?;
    check_bindings(comment, name, opts).map_err(|e| (Rejection::Failed, e))?;
    let expected = Expected {
        tag: opts.expect_tag.as_deref(),
        repo: opts.expect_repo.as_deref(),
        commit: opts.expect_commit.as_deref(),
    };
    let signed = SignedRelease {
        tag: out.tag.clone(),
        repo: out.repo.clone(),
        commit: out.commit.clone(),
    };
    if let Some(mismatch) = binding_mismatch(&signed, &expected) {
        return Err((Rejection::Failed, mismatch.to_string()));
    }
    if let Some(release) = &opts.release {
        if let Some(mismatch) = binding_mismatch(&signed, &release.expected()) {
            return Err((Rejection::Failed, mismatch.to_string()));
        }
    }
    if comment.has_marker(DRY_RUN_MARKER) && !opts.allow_dry_run {
        return Err((
            Rejection::Failed,
            "dry-run (rehearsal) signature; pass --allow-dry-run to accept it".into(),
        ));
    }
    Ok(CheckedSignature { sig, key })
}

/// The signatures of `file`, checked before its bytes are read: `main` (`<file>.minisig`, which
/// must exist) and each co-signature `<file>.<KEYID>.minisig` by a key the verifier knows of
/// (trusted or revoked). A signature that fails a check fails the file; one by an unknown or
/// expired key is recorded as not counted.
fn check_signature_set<'k>(
    file: &Path,
    main: &Path,
    name: &SignedName,
    (keys, need): (&'k TrustedKeys, usize),
    opts: &VerifyOptions,
    out: &mut Verdict,
) -> std::result::Result<Vec<(PathBuf, CheckedSignature<'k>)>, Rejected> {
    let mut set = Vec::new();
    match check_signature_file(main, name, keys, opts, out) {
        Ok(c) => {
            // The first signature is the pipeline's: the policy's run requirements apply to it.
            let policy = keys.policy();
            if let Some(why) = policy
                .run
                .offline_problem(out.run.as_ref(), &policy.origin())
            {
                return Err((Rejection::Failed, why));
            }
            set.push((main.to_path_buf(), c))
        }
        Err((Rejection::NotCounted, why)) => {
            out.not_counted(out.key_id, main, why);
        }
        Err(e) => return Err(e),
    }
    for id in keys.known_ids() {
        let path = cosignature_path(file, id);
        if fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let mut scratch = Verdict::new();
        let checked = check_signature_file(&path, name, keys, opts, &mut scratch);
        if let Some(signer) = scratch.key_id.filter(|k| *k != id) {
            return Err((
                Rejection::Failed,
                format!(
                    "{}: named for key {id} but signed by key {signer} (a renamed co-signature)",
                    path.display()
                ),
            ));
        }
        match checked {
            Ok(c) => set.push((path, c)),
            Err((Rejection::NotCounted, why)) => out.not_counted(Some(id), &path, why),
            Err((kind, why)) => return Err((kind, format!("{}: {why}", path.display()))),
        }
    }
    let distinct: BTreeSet<KeyId> = set.iter().map(|(_, c)| c.sig.key_id).collect();
    if distinct.len() < need {
        return Err((
            Rejection::Failed,
            below_threshold(distinct.len(), need, keys, out),
        ));
    }
    Ok(set)
}

/// Checks each signature of the set over the file's bytes (`digests`, or `whole` for a legacy
/// one), records the signers, and counts distinct keys against the threshold.
fn verify_signature_set(
    set: &[(PathBuf, CheckedSignature<'_>)],
    main: &Path,
    (digests, whole): (&Digests, Option<&[u8]>),
    (keys, need): (&TrustedKeys, usize),
    out: &mut Verdict,
) -> std::result::Result<(), String> {
    let mut counted: Vec<KeyId> = Vec::new();
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
        legacy_size_check(&c.sig, digests.size).map_err(prefix)?;
        c.sig
            .verify_data(c.key, message)
            .map_err(|e| prefix(e.to_string()))?;
        let twice = counted.contains(&c.sig.key_id);
        if !twice {
            counted.push(c.sig.key_id);
        }
        entries.push(SignerEntry {
            key_id: c.sig.key_id,
            signature: path.clone(),
            name: keys.policy().key(c.sig.key_id).and_then(|p| p.name.clone()),
            counted: !twice,
            reason: twice.then(|| "the same key signed twice: counted once".to_string()),
        });
    }
    // Signers in file order: the first signature, then the co-signatures.
    entries.append(&mut out.signers);
    out.signers = entries;
    if need > 1 {
        out.required_signatures = Some(need);
    }
    if counted.len() < need {
        return Err(below_threshold(counted.len(), need, keys, out));
    }
    Ok(())
}

/// Why `counted` distinct signers are not enough. With no policy and a single signature by a
/// key that does not count, its own reason (as before co-signatures existed).
fn below_threshold(counted: usize, need: usize, keys: &TrustedKeys, out: &Verdict) -> String {
    let not_counted: Vec<&SignerEntry> = out.signers.iter().filter(|s| !s.counted).collect();
    if let ([only], 0, 1) = (not_counted.as_slice(), counted, need) {
        return only.reason.clone().unwrap_or_default();
    }
    let mut why = format!(
        "{counted} of {need} required signatures ({})",
        keys.policy().origin()
    );
    for s in not_counted {
        why.push_str(&format!(
            "; {} not counted: {}",
            s.signature.display(),
            s.reason.as_deref().unwrap_or_default()
        ));
    }
    why
}

impl Verdict {
    fn not_counted(&mut self, key_id: Option<KeyId>, signature: &Path, why: String) {
        if let Some(key_id) = key_id {
            self.signers.push(SignerEntry {
                key_id,
                signature: signature.to_path_buf(),
                name: None,
                counted: false,
                reason: Some(why),
            });
        }
    }
}

fn run_job(job: &Job, keys: &TrustedKeys, opts: &VerifyOptions, split: bool) -> Verdict {
    let out = Verdict::new();
    if let Some(why) = &job.preset_failure {
        return out.fail(why.clone());
    }
    let file_name = job
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let mut out = out;
    let name = SignedName::of(&job.path, &file_name);
    let set = match &job.signature {
        Some(sig_path) if job.require_signature || fs::symlink_metadata(sig_path).is_ok() => {
            // The threshold applies to the signatures that trust the file; an artifact's own
            // signature beside a verified checksum list is an extra check (it must verify).
            let need = if job.expected_sha256.is_some() {
                1
            } else {
                keys.threshold()
            };
            match check_signature_set(&job.path, sig_path, &name, (keys, need), opts, &mut out) {
                Ok(set) => Some((sig_path, set, need)),
                Err((Rejection::Error, why)) => return out.error(why),
                Err((_, why)) => return out.fail(why),
            }
        }
        _ => None,
    };
    if set.is_none() && job.expected_sha256.is_none() {
        return out.fail("no signature and no checksum cover this file");
    }
    let legacy = set
        .as_ref()
        .is_some_and(|(_, s, _)| s.iter().any(|(_, c)| !c.sig.is_prehashed()));
    let (digests, whole): (Digests, Option<Vec<u8>>) = if legacy {
        let mut bytes = Vec::new();
        match guarded::open_regular(&job.path).and_then(|mut f| f.read_to_end(&mut bytes)) {
            Ok(_) => (hash_bytes(&bytes), Some(bytes)),
            Err(e) => return read_failure(out, &job.path, e),
        }
    } else if let Some(d) = opts.known_digests.get(&job.path) {
        (*d, None)
    } else {
        match hash_file(&job.path, split, opts.progress.as_ref()) {
            Ok(d) => (d, None),
            Err(e) => return read_failure(out, &job.path, e),
        }
    };
    if let Some(expected) = job.expected_sha256 {
        if expected != digests.sha256 {
            return out.fail(format!(
                "SHA-256 mismatch: {} listed, {} found",
                crate::util::to_hex(&expected),
                crate::util::to_hex(&digests.sha256)
            ));
        }
        out.checked.push("sha256");
    }
    if let Some((main, set, need)) = set {
        let bytes = (&digests, whole.as_deref());
        if let Err(e) = verify_signature_set(&set, main, bytes, (keys, need), &mut out) {
            return out.fail(e);
        }
        out.checked.insert(0, "signature");
    }
    out
}

fn read_failure(out: Verdict, path: &Path, e: std::io::Error) -> Verdict {
    if e.kind() == std::io::ErrorKind::NotFound {
        out.fail(format!("missing: {} does not exist", path.display()))
    } else if e.kind() == std::io::ErrorKind::InvalidInput {
        out.fail(e.to_string())
    } else {
        out.error(format!("reading {}: {e}", path.display()))
    }
}

/// Whether `name` is the checksum list `list`, its signature, or one of its co-signatures: the
/// files a release's signers made.
pub fn is_signed_list_file(name: &str, list: &str) -> bool {
    name == list
        || name.strip_suffix(SIGNATURE_SUFFIX) == Some(list)
        || cosigned_file(name).is_some_and(|(f, _)| f == list)
}

/// Verifies files and release directories. Returns `Err` only for usage errors; per-file
/// problems are results in the report.
pub fn verify(opts: &VerifyOptions, keys: &TrustedKeys) -> Result<VerifyReport> {
    // Every key revoked is not a usage error: each signature fails, naming its revocation.
    if keys.is_empty() && keys.revocations().is_empty() {
        return Err(Error::Usage(
            "no trusted public keys: pass --public-key FILE or a --keys-dir with *.pub files"
                .into(),
        ));
    }
    if opts.inputs.is_empty() {
        return Err(Error::Usage(
            "nothing to verify: name files or a release directory".into(),
        ));
    }
    refuse_trust_from_inputs(opts, keys)?;
    if opts.signature_file.is_some() && (opts.inputs.len() != 1 || opts.inputs[0].is_dir()) {
        return Err(Error::Usage(
            "-x names the signature of one file: give exactly one file to verify".into(),
        ));
    }
    let mut report = VerifyReport::default();
    if let Some(c) = &opts.expect_commit {
        if !(12..=40).contains(&c.len()) || !c.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::Usage(format!(
                "--expect-commit {c:?}: give the commit as 12 to 40 hex digits"
            )));
        }
        if c.len() < 40 {
            report.warnings.push(format!(
                "--expect-commit {c} is a prefix: any signed commit that begins with it is accepted"
            ));
        }
    }
    let mut jobs = Vec::new();
    let given: BTreeSet<&Path> = opts.inputs.iter().map(PathBuf::as_path).collect();
    for input in &opts.inputs {
        if input.is_dir() {
            directory_jobs(input, opts, keys, &mut jobs, &mut report)?;
        } else if fs::symlink_metadata(input).is_err() {
            report.results.push(
                Verdict::new()
                    .error("no such file or directory")
                    .into_result(input.display().to_string()),
            );
        } else if let Some(artifact) = input
            .to_str()
            .and_then(|n| n.strip_suffix(SIGNATURE_SUFFIX))
        {
            if !given.contains(Path::new(artifact)) {
                return Err(Error::Usage(format!(
                    "{}: give the artifact, not its signature (warden verify {artifact})",
                    input.display()
                )));
            }
            report.skip(
                input,
                format!("the signature of {artifact}, checked with it"),
            );
        } else {
            let mut job = Job::signed_file(input.clone(), input.display().to_string());
            if let Some(sig) = &opts.signature_file {
                job.signature = Some(sig.clone());
            }
            jobs.push(job);
        }
    }
    let split = cores_to_spare(jobs.len());
    let outcomes = parallel_map(&jobs, |job| run_job(job, keys, opts, split));
    for (job, o) in jobs.iter().zip(outcomes) {
        report.results.push(o.into_result(job.name.clone()));
    }
    if opts.release.is_none() {
        let runs: BTreeSet<String> = report
            .results
            .iter()
            .filter_map(|r| r.run.as_ref().map(|b| b.to_string()))
            .collect();
        if !runs.is_empty() {
            report.warnings.push(format!(
                "signed by {}: the run itself was not checked (offline); `warden verify --release` checks it against GitHub's records",
                runs.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(report)
}

/// The trust root must not come from what is verified: `cd release && warden verify .` would
/// otherwise trust a `keys/evil.pub` shipped in the release.
fn refuse_trust_from_inputs(opts: &VerifyOptions, keys: &TrustedKeys) -> Result<()> {
    for input in opts.inputs.iter().filter(|i| i.is_dir()) {
        let Ok(verified) = fs::canonicalize(input) else {
            continue;
        };
        for source in keys.sources() {
            let inside = fs::canonicalize(source).is_ok_and(|s| s.starts_with(&verified));
            if inside {
                return Err(Error::Usage(format!(
                    "the trusted keys {} lie inside {}, which is being verified: a release cannot vouch for itself; pass --keys-dir or --public-key outside it",
                    source.display(),
                    input.display()
                )));
            }
        }
    }
    Ok(())
}

/// The jobs for a release directory: against its signed checksum list when it has one, else
/// (only with `--allow-no-checksums`) against each file's own signature. Every other entry is a
/// failure or, when allowed, a named skip.
fn directory_jobs(
    dir: &Path,
    opts: &VerifyOptions,
    keys: &TrustedKeys,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<()> {
    let sums_path = dir.join(&opts.checksums_name);
    let sums_sig = signature_path(&sums_path);
    if fs::symlink_metadata(&sums_path).is_ok() {
        let listed = checksum_list_jobs(dir, &sums_path, keys, opts, jobs, report)?;
        return unlisted_entries(dir, &listed, opts, jobs, report);
    }
    if fs::symlink_metadata(&sums_sig).is_ok() {
        report.results.push(
            Verdict::new()
                .fail(format!(
                    "missing: {} is here but {} is not (deleted, or an interrupted `warden sign`)",
                    sums_sig.display(),
                    opts.checksums_name
                ))
                .into_result(sums_path.display().to_string()),
        );
    } else if !opts.allow_no_checksums {
        report.results.push(
            Verdict::new()
                .fail(format!(
                    "no {}: a release directory is verified against its signed checksum list; pass --allow-no-checksums to check each file's own signature instead",
                    opts.checksums_name
                ))
                .into_result(dir.display().to_string()),
        );
        return Ok(());
    }
    let before = jobs.len();
    signed_entries(dir, opts, jobs, report)?;
    if jobs.len() == before {
        report.results.push(
            Verdict::new()
                .fail(format!(
                    "no {} and no .minisig files: nothing here is signed",
                    opts.checksums_name
                ))
                .into_result(dir.display().to_string()),
        );
    }
    Ok(())
}

impl Job {
    /// A file checked against its own `.minisig`, which must exist.
    fn signed_file(path: PathBuf, name: String) -> Job {
        Job {
            signature: Some(signature_path(&path)),
            require_signature: true,
            expected_sha256: None,
            preset_failure: None,
            path,
            name,
        }
    }
}

/// Checks `SHA256SUMS` and its signature (a result of its own), then adds a job per listed
/// file: checked against its digest when the list verified, else against its own signature.
/// Returns the listed names.
fn checksum_list_jobs(
    dir: &Path,
    sums_path: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<BTreeSet<String>> {
    let (result, parsed) = verify_checksum_list(sums_path, keys, opts)?;
    let trusted_list = result.status == ArtifactStatus::Ok;
    report
        .results
        .push(result.into_result(sums_path.display().to_string()));
    let mut listed = BTreeSet::new();
    let Ok(list) = parsed else {
        return Ok(listed);
    };
    let root = fs::canonicalize(dir).map_err(|e| Error::io("resolving", dir, e))?;
    let mut selected_by = BTreeSet::new();
    for (name, digest) in list.entries() {
        listed.insert(name.to_string());
        let path = dir.join(name);
        if let Some(only) = &opts.only {
            let matches = only.set.matches(name);
            if matches.is_empty() {
                report.skip(&path, "not selected by --only".into());
                continue;
            }
            selected_by.extend(matches);
        }
        let escapes = fs::canonicalize(&path)
            .ok()
            .filter(|real| !real.starts_with(&root));
        jobs.push(Job {
            name: path.display().to_string(),
            signature: Some(signature_path(&path)),
            // Without a verified checksum file, only the artifact's own signature counts.
            require_signature: !trusted_list,
            expected_sha256: trusted_list.then_some(*digest),
            preset_failure: escapes
                .map(|real| {
                    format!(
                        "resolves to {}, outside the release directory",
                        real.display()
                    )
                })
                .or_else(|| opts.preset_failures.get(&path).cloned()),
            path,
        });
    }
    // A pattern that selects nothing is a mistake (or a release without that artifact): never a
    // silent pass over nothing.
    let patterns = opts.only.iter().flat_map(|only| only.patterns.iter());
    for (i, pattern) in patterns.enumerate() {
        if !selected_by.contains(&i) {
            report.results.push(
                Verdict::new()
                    .fail(format!("matches no file {} lists", opts.checksums_name))
                    .into_result(format!("--only {pattern}")),
            );
        }
    }
    Ok(listed)
}

/// Verifies a signature (its text) over `data` named `file_name` with `keys`, with every check a
/// file gets (`check_signature_text`, default options: no legacy, no dry-run, exactly one
/// `file:` equal to the name), and returns what the trusted comment binds. For the judgement of
/// published releases (`published::judge`), which downloads only `SHA256SUMS` and its signature.
pub(crate) fn verify_bytes(
    signature: &str,
    data: &[u8],
    file_name: &str,
    keys: &TrustedKeys,
) -> std::result::Result<SignedRelease, String> {
    let opts = VerifyOptions::default();
    let mut out = Verdict::new();
    let sig_path = PathBuf::from(format!("{file_name}{SIGNATURE_SUFFIX}"));
    let name = SignedName {
        file_name: file_name.to_string(),
        resolved: None,
    };
    let checked = check_signature_text(signature, &sig_path, &name, keys, &opts, &mut out)
        .map_err(|(_, why)| why)?;
    let digests = hash_bytes(data);
    checked
        .sig
        .verify_data(checked.key, &digests.blake2b512)
        .map_err(|e| e.to_string())?;
    Ok(SignedRelease {
        tag: out.tag,
        repo: out.repo,
        commit: out.commit,
    })
}

/// The checksum list's own verdict (its signatures over its bytes), and the list when it parses.
fn verify_checksum_list(
    sums_path: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> Result<(Verdict, std::result::Result<ChecksumFile, String>)> {
    let mut out = Verdict::new();
    let main = signature_path(sums_path);
    let need = keys.threshold();
    let checked = check_signature_set(
        sums_path,
        &main,
        &SignedName::of(sums_path, &opts.checksums_name),
        (keys, need),
        opts,
        &mut out,
    );
    let text =
        match guarded::open_regular(sums_path).and_then(|f| guarded::read_at_most(f, SUMS_CAP)) {
            Ok(text) => text,
            Err(e) => {
                return Ok((
                    out.error(format!("reading {}: {e}", sums_path.display())),
                    Err(e.to_string()),
                ))
            }
        };
    let parsed = text
        .as_deref()
        .ok_or_else(|| {
            format!(
                "{}: larger than {} MiB: not a checksum list",
                sums_path.display(),
                SUMS_CAP >> 20
            )
        })
        .and_then(|t| {
            std::str::from_utf8(t).map_err(|_| format!("{}: not valid UTF-8", sums_path.display()))
        })
        .and_then(|t| ChecksumFile::parse(t).map_err(|e| format!("{}: {e}", sums_path.display())));
    // Past the size check: parsed is an error whenever text is None.
    let text = text.unwrap_or_default();
    let out = match (&checked, &parsed) {
        (_, Err(why)) => out.error(why.clone()),
        (Err((Rejection::Error, why)), _) => out.error(why.clone()),
        (Err((_, why)), _) => out.fail(why.clone()),
        (Ok(set), Ok(_)) => {
            let digests = hash_bytes(&text);
            let bytes = (&digests, Some(text.as_slice()));
            match verify_signature_set(set, &main, bytes, (keys, need), &mut out) {
                Ok(()) => {
                    out.checked.push("signature");
                    out
                }
                Err(e) => out.fail(e),
            }
        }
    };
    Ok((out, parsed))
}

/// What a directory entry is, for the reason it is not verified.
fn entry_kind(entry: &walkdir::DirEntry) -> &'static str {
    let ft = entry.file_type();
    let name = entry.file_name().to_str();
    if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_dir() {
        "a directory"
    } else if !ft.is_file() {
        "not a regular file"
    } else if name.is_none() {
        "a file whose name is not UTF-8"
    } else if name.is_some_and(|n| n.starts_with(crate::files::atomic::TEMP_PREFIX)) {
        "a temp file of an interrupted `warden sign`"
    } else if name.is_some_and(|n| n.starts_with('.')) {
        "a hidden file"
    } else if name.is_some_and(|n| n.ends_with(SIGNATURE_SUFFIX)) {
        "a signature of no listed file"
    } else {
        "a file"
    }
}

/// The entry's path below `dir`, `/`-separated as a checksum list names it (`None` if not UTF-8).
fn listed_name(dir: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Every entry of a release directory that the verified list does not account for (a listed
/// file, its signature, the list and its signature, a folder holding listed files) fails the
/// run, or with `--allow-unlisted` is a named skip.
fn unlisted_entries(
    dir: &Path,
    listed: &BTreeSet<String>,
    opts: &VerifyOptions,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<()> {
    let mut accounted: BTreeSet<String> = BTreeSet::new();
    let mut folders: BTreeSet<String> = BTreeSet::new();
    for name in listed {
        accounted.insert(name.clone());
        accounted.insert(format!("{name}{SIGNATURE_SUFFIX}"));
        let mut parts: Vec<&str> = name.split('/').collect();
        while parts.len() > 1 {
            parts.pop();
            folders.insert(parts.join("/"));
        }
    }
    accounted.insert(opts.checksums_name.clone());
    accounted.insert(format!("{}{SIGNATURE_SUFFIX}", opts.checksums_name));
    let mut walker = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            Error::io("reading", path, e.into())
        })?;
        let name = listed_name(dir, entry.path());
        if entry.file_type().is_dir() {
            if name.as_ref().is_some_and(|n| folders.contains(n)) {
                continue;
            }
            walker.skip_current_dir();
        } else if name.as_ref().is_some_and(|n| {
            accounted.contains(n)
                || cosigned_file(n)
                    .is_some_and(|(file, _)| file == opts.checksums_name || listed.contains(file))
        }) {
            continue;
        }
        let why = format!(
            "{}, not listed in {}",
            entry_kind(&entry),
            opts.checksums_name
        );
        if opts.allow_unlisted {
            report.skip(entry.path(), why);
        } else {
            // A job that fails before reading anything, so it reports in walk order.
            jobs.push(Job {
                path: entry.path().to_path_buf(),
                name: entry.path().display().to_string(),
                signature: None,
                require_signature: false,
                expected_sha256: None,
                preset_failure: Some(format!(
                    "{why}: unverified content in the release (pass --allow-unlisted to accept it)"
                )),
            });
        }
    }
    Ok(())
}

/// Without a checksum list: a job for every file that may be an artifact (each must carry a
/// valid signature), a failure for a signature whose artifact is gone, and a named skip for
/// everything else (links, hidden files, special files).
fn signed_entries(
    dir: &Path,
    opts: &VerifyOptions,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<()> {
    let sums_sig = format!("{}{SIGNATURE_SUFFIX}", opts.checksums_name);
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            Error::io("reading", path, e.into())
        })?;
        let path = entry.path();
        let ft = entry.file_type();
        if ft.is_dir() {
            continue;
        }
        let name = entry.file_name().to_str();
        if !ft.is_file() || name.is_none_or(|n| n.starts_with('.')) {
            report.skip(path, format!("{}: not an artifact", entry_kind(&entry)));
        } else if let Some(artifact) = name.and_then(|n| n.strip_suffix(SIGNATURE_SUFFIX)) {
            if name == Some(sums_sig.as_str()) {
                continue;
            }
            // A co-signature is checked with the file it signs.
            let cosigned = name.and_then(cosigned_file).map(|(file, _)| file);
            if cosigned.is_some_and(|f| {
                f == opts.checksums_name || fs::symlink_metadata(path.with_file_name(f)).is_ok()
            }) {
                continue;
            }
            if fs::symlink_metadata(path.with_file_name(artifact)).is_err() {
                jobs.push(Job {
                    path: path.to_path_buf(),
                    name: path.display().to_string(),
                    signature: None,
                    require_signature: false,
                    expected_sha256: None,
                    preset_failure: Some(format!(
                        "a signature without its artifact: {artifact} is missing"
                    )),
                });
            }
        } else {
            jobs.push(Job::signed_file(
                path.to_path_buf(),
                path.display().to_string(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::comment::TrustedComment;
    use crate::release::keys::{generate, SecretKey, SecretKeyText};

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
        opts: &VerifyOptions,
    ) -> std::result::Result<(Option<String>, Option<String>), Rejected> {
        let mut out = Verdict::new();
        let name = SignedName {
            file_name: name.to_string(),
            resolved: None,
        };
        check_signature_text(text, Path::new("app.minisig"), &name, keys, opts, &mut out)
            .map(|_| (out.tag, out.commit))
    }

    fn failed(why: &str) -> std::result::Result<(Option<String>, Option<String>), Rejected> {
        Err((Rejection::Failed, why.to_string()))
    }

    #[test]
    fn a_good_signature_binds_its_fields_and_its_bytes() {
        let s = signer();
        let comment = format!("timestamp:1\tfile:app\thashed\ttag:v1\tcommit:{COMMIT}\trepo:o/r");
        let sig = signature(&s, b"app bytes", &comment).to_string();
        let opts = VerifyOptions::default();
        assert_eq!(
            check(&sig, "app", &s.keys, &opts),
            Ok((Some("v1".into()), Some(COMMIT.into())))
        );
        let bound = verify_bytes(&sig, b"app bytes", "app", &s.keys).unwrap();
        assert_eq!(bound.repo.as_deref(), Some("o/r"));
        assert!(verify_bytes(&sig, b"other bytes", "app", &s.keys).is_err());
    }

    #[test]
    fn a_swapped_file_an_untrusted_key_or_an_edited_comment_fails() {
        let (s, other) = (signer(), signer());
        let opts = VerifyOptions::default();
        let sig = signature(&s, b"x", "timestamp:1\tfile:app\thashed");
        assert_eq!(
            check(&sig.to_string(), "tool", &s.keys, &opts),
            failed("the signature is for file:app, not tool (renamed or swapped artifact)")
        );
        let foreign = signature(&other, b"x", "timestamp:1\tfile:app\thashed");
        assert_eq!(
            check(&foreign.to_string(), "app", &s.keys, &opts),
            Err((
                Rejection::NotCounted,
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
        assert_eq!(status, Rejection::Failed);
        let unbound = signature(&s, b"x", "timestamp:1\thashed");
        assert_eq!(
            check(&unbound.to_string(), "app", &s.keys, &opts),
            failed("the trusted comment has no file: field, so the signature could be for any file; pass --allow-unbound to accept it")
        );
    }

    #[test]
    fn legacy_relabelled_and_dry_run_signatures_are_refused() {
        let s = signer();
        let mut legacy = signature(&s, b"x", "timestamp:1\tfile:app\thashed");
        legacy.algorithm = SignatureAlgorithm::Legacy;
        let opts = VerifyOptions::default();
        assert_eq!(
            check(&legacy.to_string(), "app", &s.keys, &opts),
            failed("legacy (non-prehashed) signature rejected; pass --allow-legacy to accept it")
        );
        let allow_legacy = VerifyOptions {
            allow_legacy: true,
            ..VerifyOptions::default()
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
        let expect = |tag: &str, repo: &str, commit: Option<&str>| VerifyOptions {
            expect_tag: Some(tag.into()),
            expect_repo: Some(repo.into()),
            expect_commit: commit.map(str::to_string),
            ..VerifyOptions::default()
        };
        let text = sig.to_string();
        assert!(check(&text, "app", &s.keys, &expect("v1", "O/R", None)).is_ok());
        assert_eq!(
            check(&text, "app", &s.keys, &expect("v2", "o/r", None)),
            failed("signed for tag v1, expected v2")
        );
        assert_eq!(
            check(&text, "app", &s.keys, &expect("v1", "o/r", Some(COMMIT))),
            failed(&format!(
                "the trusted comment has no commit: field, expected commit {COMMIT}"
            ))
        );
    }
}
