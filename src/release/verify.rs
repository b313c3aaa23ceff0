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

use std::collections::BTreeMap;

use super::binding::{Expected, ReleaseIdentity};
use super::checksums::ChecksumFile;
use super::hash::{hash_bytes, hash_file, Digests};
use super::keys::KeyId;
use super::names::{cosigned_file, signature_path, SIGNATURE_SUFFIX};
use super::trust::{
    check_signature_set, verify_signature_set, Checks, Judged, Rejected, SignatureFiles, SignedName,
};
pub(crate) use super::trust::{Cause, SignerEntry};
use super::trusted_keys::TrustedKeys;
use crate::error::{Error, Reason, Result};
use crate::files::guarded;
use crate::util::{cores_to_spare, parallel_map};

/// A `SHA256SUMS` is read whole (it is hashed and parsed); 256 MiB is over two million entries.
const SUMS_CAP: u64 = 256 << 20;

use crate::release::names::PROOF_SUFFIX;

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
    /// `-x FILE`: the signature of the one file verified, where it is not `<file>.minisig`.
    pub signature_file: Option<PathBuf>,
    /// Bytes hashed so far, for a progress display.
    pub progress: Option<super::hash::Progress>,
    /// `--require-log`: every counted signature of the checksum list must be in this log.
    pub log: Option<super::tlog::LogRequirement>,
}

impl VerifyOptions {
    /// What every signature must hold, from these options.
    pub(crate) fn checks(&self) -> Checks<'_> {
        Checks {
            allow_legacy: self.allow_legacy,
            allow_dry_run: self.allow_dry_run,
            allow_unbound: self.allow_unbound,
            expected: Expected {
                tag: self.expect_tag.as_deref(),
                repo: self.expect_repo.as_deref(),
                commit: self.expect_commit.as_deref(),
            },
            release: self.release.as_ref(),
        }
    }
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

    pub(crate) fn is_match(&self, name: &str) -> bool {
        self.set.is_match(name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ArtifactStatus {
    /// Signature and/or checksum verified.
    Ok,
    /// A verification failed: altered, swapped, unsigned, untrusted key, wrong tag, dry-run.
    Failed,
    /// The input could not be read or parsed.
    Error,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ArtifactResult {
    pub(crate) name: String,
    pub(crate) status: ArtifactStatus,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_display"
    )]
    pub(crate) key_id: Option<KeyId>,
    /// The trusted key file that holds `key_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) key_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) repo: Option<String>,
    /// The trusted comment's `file:` and `path:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    /// The trusted comment's `timestamp:` (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) timestamp: Option<u64>,
    /// The workflow run the (first) signature binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<super::provenance::RunBinding>,
    /// What was checked: "signature", "sha256" or both.
    pub(crate) checked: Vec<&'static str>,
    /// Every signature found (the first, and co-signatures `<file>.<KEYID>.minisig`), and
    /// whether it counted toward the threshold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) signers: Vec<SignerEntry>,
    /// The keys folder's threshold, when it asks for more than one signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) required_signatures: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// Why it failed, as a type (`Cause::None` when it verified).
    #[serde(skip)]
    pub(crate) cause: Cause,
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
    pub(crate) results: Vec<ArtifactResult>,
    /// Entries that were not verified, each with the reason; never dropped silently.
    pub(crate) skipped: Vec<SkippedEntry>,
    pub warnings: Vec<String>,
    /// Facts, not cautions (what a published release is).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
}

/// A path `verify` passed over, and why.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SkippedEntry {
    pub(crate) name: String,
    pub(crate) reason: String,
}

impl VerifyReport {
    /// Names results and reasons after the release's assets instead of `dir`, a temporary
    /// folder that is gone once the command ends.
    pub(crate) fn strip_folder(&mut self, dir: &Path) {
        self.rename_folder(dir, "");
    }

    /// Says `dir/` (a temporary folder) as `name` in every line of the report.
    pub(crate) fn rename_folder(&mut self, dir: &Path, name: &str) {
        let prefix = format!("{}/", dir.display());
        let rename = |s: &mut String| *s = s.replace(&prefix, name);
        for r in &mut self.results {
            rename(&mut r.name);
            if let Some(reason) = r.reason.as_mut() {
                rename(reason);
            }
        }
        for s in &mut self.skipped {
            rename(&mut s.name);
        }
        self.warnings.iter_mut().for_each(rename);
        self.notes.iter_mut().for_each(rename);
    }

    /// Adds the result of a check made outside the folder (a release's provenance): `name`,
    /// what was checked, and the failure if any.
    pub(crate) fn add_check(
        &mut self,
        name: String,
        what: &'static str,
        failure: Option<Rejected>,
    ) {
        let v = Verdict::new();
        let mut v = match failure {
            Some(rejected) => v.rejected(rejected),
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

    pub(crate) fn count(&self, status: ArtifactStatus) -> usize {
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
    /// The checksum list that names the file and did not verify: a missing signature of the
    /// file's own is then the list's failure, said so.
    failed_list: Option<PathBuf>,
    expected_sha256: Option<[u8; 32]>,
    /// Why the file cannot be trusted even before it is read, e.g. a path leaving the release.
    preset_failure: Option<Rejected>,
}

struct Verdict {
    status: ArtifactStatus,
    reason: Option<String>,
    cause: Cause,
    checked: Vec<&'static str>,
    judged: Judged,
}

impl Verdict {
    fn new() -> Self {
        Verdict {
            status: ArtifactStatus::Ok,
            reason: None,
            cause: Cause::None,
            checked: Vec::new(),
            judged: Judged::default(),
        }
    }
    fn fail(self, reason: impl Into<String>) -> Self {
        self.rejected((Cause::Invalid, reason.into()))
    }
    fn error(self, reason: impl Into<String>) -> Self {
        self.rejected((Cause::Unreadable, reason.into()))
    }
    /// The file fails for `cause` (an unreadable input is an error, not a failed check).
    fn rejected(mut self, (cause, why): Rejected) -> Self {
        self.status = if cause == Cause::Unreadable {
            ArtifactStatus::Error
        } else {
            ArtifactStatus::Failed
        };
        self.reason = Some(why);
        self.cause = cause;
        self
    }
    fn into_result(self, name: String) -> ArtifactResult {
        let j = self.judged;
        ArtifactResult {
            name,
            status: self.status,
            key_id: j.key_id,
            key_file: j.key_file,
            tag: j.tag,
            commit: j.commit,
            repo: j.repo,
            file: j.file,
            path: j.path,
            timestamp: j.timestamp,
            run: j.run,
            checked: self.checked,
            signers: j.signers,
            required_signatures: j.required_signatures,
            reason: self.reason,
            cause: self.cause,
        }
    }
}

/// What is known of a published release's asset's bytes (nothing, when it is not in
/// [`Published::bytes`]).
#[derive(Clone, Debug)]
pub(crate) enum AssetBytes {
    /// Read (downloaded, or streamed): both digests, from one read.
    Read(Digests),
    /// Its SHA-256 alone: GitHub's, computed at upload (the asset was not read), or one a
    /// snapshot recorded by an older warden keeps.
    Sha256Only([u8; 32]),
}

/// A published release's assets as they were read: every asset's name, the texts of the small
/// files read (the checksum list and the signatures), what is known of each asset's bytes, and
/// the failures decided from GitHub's records before any read. Each asset's path is
/// `dir/<name>`: results are named so, and a download keeps the files there.
#[derive(Clone, Debug, Default)]
pub(crate) struct Published {
    pub(crate) dir: PathBuf,
    /// Whether the assets were downloaded into `dir` (a legacy signature needs their bytes).
    pub(crate) on_disk: bool,
    pub(crate) assets: BTreeSet<String>,
    /// The checksum list's bytes, when it was read (`Err`: why it could not be).
    pub(crate) list: Option<std::result::Result<Vec<u8>, Reason>>,
    /// The text of every signature asset read, by path (`Err`: why it could not be).
    pub(crate) signatures: BTreeMap<PathBuf, std::result::Result<String, Reason>>,
    pub(crate) bytes: BTreeMap<PathBuf, AssetBytes>,
    /// Signature assets that were not read (an artifact's own signature, to the default audit).
    pub(crate) unread: BTreeSet<PathBuf>,
    /// Files that fail before they are judged (an asset GitHub's digest shows replaced).
    pub(crate) preset: BTreeMap<PathBuf, Rejected>,
    /// Whether the assets are being downloaded: one the list's failure leaves unread is "not
    /// downloaded", else "not checked".
    pub(crate) downloading: bool,
    /// The checksum list's verdict once made ([`judge_list`]): it decides what is read next,
    /// and is not made again.
    pub(crate) judged_list: Option<(ArtifactResult, std::result::Result<ChecksumFile, Reason>)>,
}

/// Where a release directory's files are: on disk (`warden verify DIR`), or a published
/// release's assets as read (`release::verdict`). Every check below is the same for both.
#[derive(Clone, Copy)]
pub(crate) enum Folder<'a> {
    Disk(&'a Path),
    Published(&'a Published),
}

impl<'a> Folder<'a> {
    fn dir(&self) -> &'a Path {
        match self {
            Folder::Disk(d) => d,
            Folder::Published(p) => &p.dir,
        }
    }

    fn exists(&self, path: &Path) -> bool {
        match self {
            Folder::Disk(_) => fs::symlink_metadata(path).is_ok(),
            Folder::Published(p) => {
                path.parent() == Some(p.dir.as_path())
                    && path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| p.assets.contains(n))
            }
        }
    }

    fn signatures(&self) -> SignatureFiles<'a> {
        match self {
            Folder::Disk(_) => SignatureFiles::Disk,
            Folder::Published(p) => SignatureFiles::Memory(&p.signatures),
        }
    }

    /// The checksum list's bytes: `Ok(None)` when larger than it may be.
    fn read_list(&self, path: &Path) -> std::io::Result<Option<Vec<u8>>> {
        match self {
            Folder::Disk(_) => {
                guarded::open_regular(path).and_then(|f| guarded::read_at_most(f, SUMS_CAP))
            }
            Folder::Published(p) => match &p.list {
                Some(Ok(bytes)) if bytes.len() as u64 > SUMS_CAP => Ok(None),
                Some(Ok(bytes)) => Ok(Some(bytes.clone())),
                Some(Err(why)) => Err(std::io::Error::other(why.clone())),
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not read",
                )),
            },
        }
    }

    /// Where a listed file really is, when that is outside the release (a link out of it).
    fn escapes(&self, root: Option<&Path>, path: &Path) -> Option<PathBuf> {
        let root = root?;
        fs::canonicalize(path)
            .ok()
            .filter(|real| !real.starts_with(root))
    }

    fn preset(&self, path: &Path) -> Option<Rejected> {
        match self {
            Folder::Disk(_) => None,
            Folder::Published(p) => p.preset.get(path).cloned(),
        }
    }

    /// Whether nothing is known of an asset's bytes (not read, and no digest from GitHub),
    /// and nothing decided of it before.
    fn bytes_unknown(&self, path: &Path) -> bool {
        matches!(self, Folder::Published(p)
            if self.exists(path) && !p.bytes.contains_key(path) && !p.preset.contains_key(path))
    }

    /// Whether the signature at `path` exists but was not read (so its check is not made).
    fn unread(&self, path: &Path) -> bool {
        matches!(self, Folder::Published(p) if p.unread.contains(path))
    }
}

fn run_job(
    job: &Job,
    keys: &TrustedKeys,
    (opts, folder): (&VerifyOptions, Folder<'_>),
    split: bool,
) -> Verdict {
    let out = Verdict::new();
    if let Some(preset) = &job.preset_failure {
        return out.rejected(preset.clone());
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
        Some(sig_path) if !folder.exists(sig_path) && job.failed_list.is_some() => {
            let list = job.failed_list.as_deref().unwrap_or(sig_path);
            return out.rejected((
                Cause::Unsigned,
                format!(
                    "not verified: {} did not verify, and there is no {}",
                    list.display(),
                    sig_path.display()
                ),
            ));
        }
        Some(sig_path) if job.require_signature || folder.exists(sig_path) => {
            // The threshold applies to the signatures that trust the file; an artifact's own
            // signature beside a verified checksum list is an extra check (it must verify).
            let need = if job.expected_sha256.is_some() {
                1
            } else {
                keys.threshold()
            };
            let checks = (&opts.checks(), &folder.signatures());
            let paths = (job.path.as_path(), sig_path.as_path());
            match check_signature_set(paths, &name, (keys, need), checks, &mut out.judged) {
                Ok(set) => Some((sig_path, set, need)),
                Err(rejected) => return out.rejected(rejected),
            }
        }
        _ => None,
    };
    if set.is_none() && job.expected_sha256.is_none() {
        return out.fail("no signature and no checksum cover this file");
    }
    // The log holds checksum lists' signatures: a file trusted by its own signature alone would
    // let an unlogged signature through.
    if !log_requirements(opts, keys).is_empty() && job.expected_sha256.is_none() {
        let key = set
            .as_ref()
            .and_then(|(_, s, _)| s.first())
            .map(|(_, c)| c.key.key_id.to_string())
            .unwrap_or_default();
        return out.rejected((
            Cause::Unlogged,
            format!(
                "signature by key {key} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds {})",
                opts.checksums_name
            ),
        ));
    }
    let legacy = set
        .as_ref()
        .is_some_and(|(_, s, _)| s.iter().any(|(_, c)| !c.sig.is_prehashed()));
    let (digests, whole) = match file_bytes(job, folder, (legacy, split), opts) {
        Ok(read) => read,
        Err(rejected) => return out.rejected(rejected),
    };
    if let Some(expected) = job.expected_sha256 {
        if expected != digests.sha256 {
            return out.rejected((
                Cause::Mismatch,
                format!(
                    "SHA-256 mismatch: {} listed, {} found",
                    crate::util::to_hex(&expected),
                    crate::util::to_hex(&digests.sha256)
                ),
            ));
        }
        out.checked.push("sha256");
    }
    if let Some((main, set, need)) = set {
        let bytes = (&digests, whole.as_deref());
        if let Err(e) = verify_signature_set(&set, main, bytes, (keys, need), &mut out.judged) {
            return out.fail(e);
        }
        out.checked.insert(0, "signature");
    }
    out
}

/// The logs every counted signature must be in: `--require-log`'s and the keys folder's
/// `require_log`, each in full (a flag adds a requirement; it never lifts the policy's
/// witnesses).
pub(crate) fn log_requirements<'a>(
    opts: &'a VerifyOptions,
    keys: &'a TrustedKeys,
) -> Vec<&'a super::tlog::LogRequirement> {
    opts.log.iter().chain(&keys.policy().log).collect()
}

/// What the file's bytes are (its digests, and the bytes themselves for a legacy signature), as
/// the folder knows them: read from disk once, or as the release's assets were read.
fn file_bytes(
    job: &Job,
    folder: Folder<'_>,
    (legacy, split): (bool, bool),
    opts: &VerifyOptions,
) -> std::result::Result<(Digests, Option<Vec<u8>>), Rejected> {
    let on_disk = match folder {
        Folder::Disk(_) => true,
        Folder::Published(p) => legacy && p.on_disk,
    };
    if on_disk && legacy {
        let mut bytes = Vec::new();
        return match guarded::open_regular(&job.path).and_then(|mut f| f.read_to_end(&mut bytes)) {
            Ok(_) => Ok((hash_bytes(&bytes), Some(bytes))),
            Err(e) => Err(read_failure(&job.path, e)),
        };
    }
    if let Folder::Disk(_) = folder {
        return hash_file(&job.path, split, opts.progress.as_ref())
            .map(|d| (d, None))
            .map_err(|e| read_failure(&job.path, e));
    }
    let Folder::Published(p) = folder else {
        unreachable!("a disk folder returned above")
    };
    match (p.bytes.get(&job.path), legacy) {
        (_, true) => Err((
            Cause::Invalid,
            "a legacy signature is checked over the file's bytes, which were not downloaded".into(),
        )),
        (Some(AssetBytes::Read(d)), false) => Ok((*d, None)),
        (Some(AssetBytes::Sha256Only(sha256)), false) if job.signature_unneeded(folder) => Ok((
            Digests {
                sha256: *sha256,
                blake2b512: [0; 64],
                size: 0,
            },
            None,
        )),
        (_, false) if !p.assets.contains(&file_name_of(&job.path)) => Err((
            Cause::Missing,
            format!(
                "missing: {} is not an asset of the release",
                job.path.display()
            ),
        )),
        _ => Err((
            Cause::Unverifiable,
            format!(
                "{}: its bytes were not read and GitHub gives no digest of it",
                job.path.display()
            ),
        )),
    }
}

impl Job {
    /// Whether the file's bytes are only compared with the list (no signature of it is checked
    /// over them): GitHub's SHA-256 is then all the check needs.
    fn signature_unneeded(&self, folder: Folder<'_>) -> bool {
        self.expected_sha256.is_some()
            && self
                .signature
                .as_ref()
                .is_none_or(|s| !folder.exists(s) || folder.unread(s))
    }
}

fn file_name_of(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string()
}

fn read_failure(path: &Path, e: std::io::Error) -> Rejected {
    if e.kind() == std::io::ErrorKind::NotFound {
        (
            Cause::Missing,
            format!("missing: {} does not exist", path.display()),
        )
    } else if e.kind() == std::io::ErrorKind::InvalidInput {
        (Cause::Invalid, e.to_string())
    } else {
        (
            Cause::Unreadable,
            format!("reading {}: {e}", path.display()),
        )
    }
}

/// Whether `name` is the checksum list `list`, its signature, or one of its co-signatures: the
/// files a release's signers made.
pub(crate) fn is_signed_list_file(name: &str, list: &str) -> bool {
    name == list
        || name.strip_suffix(SIGNATURE_SUFFIX) == Some(list)
        || cosigned_file(name).is_some_and(|(f, _)| f == list)
}

/// Verifies files and release directories. Returns `Err` only for usage errors; per-file
/// problems are results in the report.
pub fn verify(opts: &VerifyOptions, keys: &TrustedKeys) -> Result<VerifyReport> {
    refuse_without_keys(keys)?;
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
    check_expected_commit(opts, &mut report)?;
    let mut jobs = Vec::new();
    let given: BTreeSet<&Path> = opts.inputs.iter().map(PathBuf::as_path).collect();
    for input in &opts.inputs {
        if input.is_dir() {
            folder_jobs(Folder::Disk(input), opts, keys, &mut jobs, &mut report)?;
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
    run_jobs(&jobs, keys, (opts, None), &mut report);
    note_offline_runs(&mut report);
    Ok(report)
}

/// A published release's assets as they were read, verified as a release directory: the one
/// judgement of its checksum list, its signatures and each file (`release::verdict` adds what
/// GitHub's records say).
pub(crate) fn verify_published(
    published: &Published,
    opts: &VerifyOptions,
    keys: &TrustedKeys,
) -> Result<VerifyReport> {
    refuse_without_keys(keys)?;
    let mut report = VerifyReport::default();
    check_expected_commit(opts, &mut report)?;
    let mut jobs = Vec::new();
    let folder = Folder::Published(published);
    folder_jobs(folder, opts, keys, &mut jobs, &mut report)?;
    run_jobs(&jobs, keys, (opts, Some(published)), &mut report);
    Ok(report)
}

/// The checksum list of a published release judged alone (its signatures over its bytes), and
/// the list when it parses: what decides which runs and assets are read next. Kept in
/// [`Published::judged_list`], it is not judged again.
pub(crate) fn judge_list(
    published: &Published,
    opts: &VerifyOptions,
    keys: &TrustedKeys,
) -> (ArtifactResult, std::result::Result<ChecksumFile, Reason>) {
    let sums = published.dir.join(&opts.checksums_name);
    let (verdict, parsed) = verify_checksum_list(Folder::Published(published), &sums, keys, opts);
    (verdict.into_result(sums.display().to_string()), parsed)
}

/// Every key revoked is not a usage error: each signature fails, naming its revocation.
fn refuse_without_keys(keys: &TrustedKeys) -> Result<()> {
    if keys.is_empty() && keys.revocations().is_empty() {
        return Err(Error::Usage(
            "no trusted public keys: pass --public-key FILE or a --keys-dir with *.pub files"
                .into(),
        ));
    }
    Ok(())
}

fn check_expected_commit(opts: &VerifyOptions, report: &mut VerifyReport) -> Result<()> {
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
    Ok(())
}

/// Runs the jobs (files in parallel), their results in job order.
fn run_jobs(
    jobs: &[Job],
    keys: &TrustedKeys,
    (opts, published): (&VerifyOptions, Option<&Published>),
    report: &mut VerifyReport,
) {
    let split = cores_to_spare(jobs.len());
    let outcomes = parallel_map(jobs, |job| {
        let folder = match published {
            Some(p) => Folder::Published(p),
            None => Folder::Disk(crate::files::paths::parent_dir(&job.path)),
        };
        run_job(job, keys, (opts, folder), split)
    });
    for (job, o) in jobs.iter().zip(outcomes) {
        report.results.push(o.into_result(job.name.clone()));
    }
}

/// Offline, a bound run is a claim: said, with the command that checks it.
fn note_offline_runs(report: &mut VerifyReport) {
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

/// The trust root must not come from what is verified: `cd release && warden verify .` would
/// otherwise trust a `keys/evil.pub` shipped in the release, and `cd download && warden verify
/// app` the `minisign.pub` (or `keys/`) that came with the download, beside the file. A key the
/// user named beside a file is their word (`minisign -Vm app -p app.pub`); one warden found
/// there by itself is not.
fn refuse_trust_from_inputs(opts: &VerifyOptions, keys: &TrustedKeys) -> Result<()> {
    let sources: Vec<(&Path, PathBuf)> = keys
        .sources()
        .filter_map(|s| Some((s, fs::canonicalize(s).ok()?)))
        .collect();
    for input in &opts.inputs {
        let Ok(verified) = fs::canonicalize(input) else {
            continue;
        };
        if verified.is_dir() {
            if let Some((source, s)) = sources.iter().find(|(_, s)| s.starts_with(&verified)) {
                return Err(Error::Usage(format!(
                    "the {} {} lies inside {}, which is being verified: a release cannot vouch for itself; pass --keys-dir or --public-key outside it",
                    source_kind(s),
                    source.display(),
                    input.display()
                )));
            }
            continue;
        }
        let folder = verified.parent();
        if !keys.unnamed() {
            continue;
        }
        if let Some((source, s)) = sources.iter().find(|(_, s)| s.parent() == folder) {
            return Err(Error::Usage(format!(
                "the {} {} is beside {}, in the folder it came in: a download cannot vouch for itself; name the key you trust (-P KEY, or --public-key FILE)",
                source_kind(s),
                source.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// What a trust source is, for a message: a keys folder or a key file.
fn source_kind(canonical: &Path) -> &'static str {
    if canonical.is_dir() {
        "keys folder"
    } else {
        "key"
    }
}

/// The jobs for a release directory: against its signed checksum list when it has one, else
/// (only with `--allow-no-checksums`) against each file's own signature. Every other entry is a
/// failure or, when allowed, a named skip.
fn folder_jobs(
    folder: Folder<'_>,
    opts: &VerifyOptions,
    keys: &TrustedKeys,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<()> {
    let dir = folder.dir();
    let sums_path = dir.join(&opts.checksums_name);
    let sums_sig = signature_path(&sums_path);
    if folder.exists(&sums_path) {
        let listed = checksum_list_jobs(folder, &sums_path, keys, (opts, jobs), report)?;
        return unlisted_entries(folder, &listed, opts, jobs, report);
    }
    if folder.exists(&sums_sig) {
        report.results.push(
            Verdict::new()
                .rejected(unsigned(format!(
                    "missing: {} is here but {} is not (deleted, or an interrupted `warden sign`)",
                    sums_sig.display(),
                    opts.checksums_name
                )))
                .into_result(sums_path.display().to_string()),
        );
    } else if !opts.allow_no_checksums {
        report.results.push(
            Verdict::new()
                .rejected(unsigned(format!(
                    "no {}: a release directory is verified against its signed checksum list; pass --allow-no-checksums to check each file's own signature instead",
                    opts.checksums_name
                )))
                .into_result(dir.display().to_string()),
        );
        return Ok(());
    }
    let before = jobs.len();
    signed_entries(folder, opts, jobs, report)?;
    if jobs.len() == before {
        report.results.push(
            Verdict::new()
                .rejected(unsigned(format!(
                    "no {} and no .minisig files: nothing here is signed",
                    opts.checksums_name
                )))
                .into_result(dir.display().to_string()),
        );
    }
    Ok(())
}

fn unsigned(why: String) -> Rejected {
    (Cause::Unsigned, why)
}

impl Job {
    /// A file checked against its own `.minisig`, which must exist.
    fn signed_file(path: PathBuf, name: String) -> Job {
        Job {
            signature: Some(signature_path(&path)),
            require_signature: true,
            failed_list: None,
            expected_sha256: None,
            preset_failure: None,
            path,
            name,
        }
    }

    /// A file that fails before anything of it is read.
    fn failing(path: &Path, why: Rejected) -> Job {
        Job {
            path: path.to_path_buf(),
            name: path.display().to_string(),
            signature: None,
            require_signature: false,
            failed_list: None,
            expected_sha256: None,
            preset_failure: Some(why),
        }
    }
}

/// Checks `SHA256SUMS` and its signature (a result of its own), then adds a job per listed
/// file: checked against its digest when the list verified, else against its own signature.
/// Returns the listed names.
fn checksum_list_jobs(
    folder: Folder<'_>,
    sums_path: &Path,
    keys: &TrustedKeys,
    (opts, jobs): (&VerifyOptions, &mut Vec<Job>),
    report: &mut VerifyReport,
) -> Result<BTreeSet<String>> {
    let (result, parsed) = list_verdict(folder, sums_path, keys, opts);
    let trusted_list = result.status == ArtifactStatus::Ok;
    let list_failed = list_failure(folder, &result, opts);
    report.results.push(result);
    let mut listed = BTreeSet::new();
    let Ok(list) = parsed else {
        return Ok(listed);
    };
    let dir = folder.dir();
    let root = match folder {
        Folder::Disk(d) => Some(fs::canonicalize(d).map_err(|e| Error::io("resolving", d, e))?),
        Folder::Published(_) => None,
    };
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
        let escapes = folder.escapes(root.as_deref(), &path).map(|real| {
            (
                Cause::Invalid,
                format!(
                    "resolves to {}, outside the release directory",
                    real.display()
                ),
            )
        });
        if folder.bytes_unknown(&path) && trusted_list && !folder.unread(&signature_path(&path)) {
            report.skip(
                &path,
                "not read, and GitHub gives no digest of it (`--deep` reads every asset)".into(),
            );
            continue;
        }
        let signature = signature_path(&path);
        jobs.push(Job {
            name: path.display().to_string(),
            // An artifact's own signature the reader did not read is not checked (said once).
            signature: (!folder.unread(&signature)).then_some(signature),
            // Without a verified checksum file, only the artifact's own signature counts.
            require_signature: !trusted_list,
            failed_list: (!trusted_list).then(|| sums_path.to_path_buf()),
            expected_sha256: trusted_list.then_some(*digest),
            preset_failure: escapes
                .or_else(|| folder.preset(&path))
                .or_else(|| list_failed.clone()),
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

/// The list's verdict: the one a published release's reader made already, or made now.
fn list_verdict(
    folder: Folder<'_>,
    sums_path: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> (ArtifactResult, std::result::Result<ChecksumFile, Reason>) {
    if let Folder::Published(Published {
        judged_list: Some(judged),
        ..
    }) = folder
    {
        return judged.clone();
    }
    let (verdict, parsed) = verify_checksum_list(folder, sums_path, keys, opts);
    (verdict.into_result(sums_path.display().to_string()), parsed)
}

/// What a published release's listed files fail with when the list does not verify: they are
/// not judged further (nor downloaded), the list's failure is theirs.
fn list_failure(
    folder: Folder<'_>,
    list: &ArtifactResult,
    opts: &VerifyOptions,
) -> Option<Rejected> {
    match folder {
        Folder::Published(p) if list.status != ArtifactStatus::Ok => Some((
            Cause::ListFailed,
            format!(
                "{}: {} does not verify ({})",
                if p.downloading {
                    "not downloaded"
                } else {
                    "not checked"
                },
                opts.checksums_name,
                list.reason.as_deref().unwrap_or_default()
            ),
        )),
        _ => None,
    }
}

/// The checksum list's own verdict (its signatures over its bytes), and the list when it parses.
fn verify_checksum_list(
    folder: Folder<'_>,
    sums_path: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> (Verdict, std::result::Result<ChecksumFile, Reason>) {
    let mut out = Verdict::new();
    let main = signature_path(sums_path);
    let need = keys.threshold();
    let name = match folder {
        Folder::Disk(_) => SignedName::of(sums_path, &opts.checksums_name),
        Folder::Published(_) => SignedName::bare(&opts.checksums_name),
    };
    let checked = check_signature_set(
        (sums_path, &main),
        &name,
        (keys, need),
        (&opts.checks(), &folder.signatures()),
        &mut out.judged,
    );
    let text = match folder.read_list(sums_path) {
        Ok(text) => text,
        Err(e) => {
            return (
                out.error(format!("reading {}: {e}", sums_path.display())),
                Err(e.to_string().into()),
            )
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
    let out = match (checked, &parsed) {
        (_, Err(why)) => out.error(why.clone()),
        (Err(rejected), _) => out.rejected(rejected),
        (Ok(set), Ok(_)) => {
            let digests = hash_bytes(&text);
            let bytes = (&digests, Some(text.as_slice()));
            match verify_signature_set(&set, &main, bytes, (keys, need), &mut out.judged) {
                Ok(()) => {
                    out.checked.push("signature");
                    let reqs = log_requirements(opts, keys);
                    if reqs.is_empty() {
                        return (out, parsed.map_err(Reason::from));
                    }
                    let listed = (opts.checksums_name.as_str(), digests.sha256);
                    let logged = reqs.iter().try_for_each(|req| {
                        super::logged::check_logged(req, &set, listed, &folder.signatures())
                    });
                    match logged {
                        Ok(()) => {
                            out.checked.push("log");
                            out
                        }
                        Err(rejected) => out.rejected(rejected),
                    }
                }
                Err(e) => out.fail(e),
            }
        }
    };
    (out, parsed.map_err(Reason::from))
}

/// An entry of a release folder, as the list's accounting sees it.
struct Entry {
    path: PathBuf,
    /// Its path below the folder, `/`-separated (`None` if not UTF-8).
    name: Option<String>,
    is_dir: bool,
    kind: &'static str,
}

/// Every entry of the folder, in name order: walked on disk (a folder that holds no listed file
/// is not descended into), or the release's assets.
fn entries(folder: Folder<'_>, keep_descending: &dyn Fn(&str) -> bool) -> Result<Vec<Entry>> {
    let dir = match folder {
        Folder::Published(p) => {
            return Ok(p
                .assets
                .iter()
                .map(|name| Entry {
                    path: p.dir.join(name),
                    name: Some(name.clone()),
                    is_dir: false,
                    kind: asset_kind(name),
                })
                .collect())
        }
        Folder::Disk(dir) => dir,
    };
    let mut out = Vec::new();
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
        let is_dir = entry.file_type().is_dir();
        if is_dir && !name.as_deref().is_some_and(keep_descending) {
            walker.skip_current_dir();
        }
        out.push(Entry {
            path: entry.path().to_path_buf(),
            name,
            is_dir,
            kind: entry_kind(&entry),
        });
    }
    Ok(out)
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
    } else {
        name.map_or("a file whose name is not UTF-8", asset_kind)
    }
}

/// What a regular file of the release is, by its name.
fn asset_kind(name: &str) -> &'static str {
    if name.starts_with(crate::files::atomic::TEMP_PREFIX) {
        "a temp file of an interrupted `warden sign`"
    } else if name.starts_with('.') {
        "a hidden file"
    } else if name.ends_with(SIGNATURE_SUFFIX) {
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

/// Every entry of a release folder that the verified list does not account for (a listed
/// file, its signature, the list and its signature, a folder holding listed files) fails the
/// run, or with `--allow-unlisted` is a named skip.
fn unlisted_entries(
    folder: Folder<'_>,
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
    // The list's signatures' log proofs (`--require-log` checks them; they sign nothing).
    accounted.insert(format!("{}{PROOF_SUFFIX}", opts.checksums_name));
    let cosignature_proof = |n: &str| {
        n.strip_suffix(PROOF_SUFFIX)
            .and_then(|stem| {
                cosigned_file(&format!("{stem}{SIGNATURE_SUFFIX}"))
                    .map(|(f, _)| f == opts.checksums_name)
            })
            .unwrap_or(false)
    };
    for entry in entries(folder, &|n| folders.contains(n))? {
        let name = entry.name.as_deref();
        if entry.is_dir && name.is_some_and(|n| folders.contains(n)) {
            continue;
        }
        let accounted_for = name.is_some_and(|n| {
            accounted.contains(n)
                || cosignature_proof(n)
                || cosigned_file(n)
                    .is_some_and(|(file, _)| file == opts.checksums_name || listed.contains(file))
        });
        if !entry.is_dir && accounted_for {
            continue;
        }
        let why = format!("{}, not listed in {}", entry.kind, opts.checksums_name);
        if opts.allow_unlisted {
            report.skip(&entry.path, why);
        } else {
            // A job that fails before reading anything, so it reports in walk order.
            jobs.push(Job::failing(
                &entry.path,
                (
                    Cause::Unlisted,
                    format!("{why}: unverified content in the release (pass --allow-unlisted to accept it)"),
                ),
            ));
        }
    }
    Ok(())
}

/// Without a checksum list: a job for every file that may be an artifact (each must carry a
/// valid signature), a failure for a signature whose artifact is gone, and a named skip for
/// everything else (links, hidden files, special files).
fn signed_entries(
    folder: Folder<'_>,
    opts: &VerifyOptions,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<()> {
    let sums_sig = format!("{}{SIGNATURE_SUFFIX}", opts.checksums_name);
    for entry in entries(folder, &|_| true)? {
        if entry.is_dir {
            continue;
        }
        let path = entry.path.as_path();
        let name = path.file_name().and_then(|n| n.to_str());
        let plain = matches!(entry.kind, "a file" | "a signature of no listed file");
        if !plain || name.is_none_or(|n| n.starts_with('.')) {
            report.skip(path, format!("{}: not an artifact", entry.kind));
        } else if let Some(artifact) = name.and_then(|n| n.strip_suffix(SIGNATURE_SUFFIX)) {
            if name == Some(sums_sig.as_str()) {
                continue;
            }
            // A co-signature is checked with the file it signs.
            let cosigned = name.and_then(cosigned_file).map(|(file, _)| file);
            if cosigned
                .is_some_and(|f| f == opts.checksums_name || folder.exists(&path.with_file_name(f)))
            {
                continue;
            }
            if !folder.exists(&path.with_file_name(artifact)) {
                jobs.push(Job::failing(
                    path,
                    (
                        Cause::Missing,
                        format!("a signature without its artifact: {artifact} is missing"),
                    ),
                ));
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
