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

use super::checksums::{self, ChecksumFile};
use super::comment::DRY_RUN_MARKER;
use super::hash::{cores_to_spare, hash_bytes, hash_file, parallel_map, Digests};
use super::keys::{KeyId, PublicKey};
use super::names::{is_release_candidate, signature_path, SIGNATURE_SUFFIX};
use super::signature::{SignatureAlgorithm, SignatureFile};
use super::trusted_keys::TrustedKeys;
use crate::error::{Error, Result};
use crate::files::guarded::{self, CappedReadError, SMALL_FILE_CAP};

/// A `SHA256SUMS` is read whole (it is hashed and parsed); 256 MiB is over two million entries.
const SUMS_CAP: u64 = 256 << 20;

#[derive(Clone, Debug)]
pub struct VerifyOptions {
    pub inputs: Vec<PathBuf>,
    pub expect_tag: Option<String>,
    pub allow_legacy: bool,
    pub allow_dry_run: bool,
    /// Name of the checksum file inside a release directory.
    pub checksums_name: String,
    /// Bytes hashed so far, for a progress display.
    pub progress: Option<super::hash::Progress>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// What was checked: "signature", "sha256" or both.
    pub checked: Vec<&'static str>,
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
    pub warnings: Vec<String>,
}

impl VerifyReport {
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
    tag: Option<String>,
    commit: Option<String>,
    checked: Vec<&'static str>,
}

impl Verdict {
    fn new() -> Self {
        Verdict {
            status: ArtifactStatus::Ok,
            reason: None,
            key_id: None,
            tag: None,
            commit: None,
            checked: Vec::new(),
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
            tag: self.tag,
            commit: self.commit,
            checked: self.checked,
            reason: self.reason,
        }
    }
}

/// A signature that passed every check that does not need the artifact's bytes.
struct CheckedSignature<'k> {
    sig: SignatureFile,
    key: &'k PublicKey,
}

fn check_signature_file<'k>(
    sig_path: &Path,
    file_name: &str,
    keys: &'k TrustedKeys,
    opts: &VerifyOptions,
    out: &mut Verdict,
) -> std::result::Result<CheckedSignature<'k>, (ArtifactStatus, String)> {
    let io_error = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            (
                ArtifactStatus::Failed,
                format!("missing signature {}", sig_path.display()),
            )
        } else {
            (
                ArtifactStatus::Error,
                format!("reading {}: {e}", sig_path.display()),
            )
        }
    };
    let file = fs::File::open(sig_path).map_err(io_error)?;
    let origin = sig_path.display().to_string();
    let text = guarded::read_capped(file, &origin, SMALL_FILE_CAP, "a minisign signature")
        .map_err(|e| match e {
            CappedReadError::Io(e) => io_error(e),
            CappedReadError::Input(e) => (ArtifactStatus::Error, e.to_string()),
        })?;
    let sig = SignatureFile::parse(&text).map_err(|e| {
        (
            ArtifactStatus::Error,
            format!("{}: {e}", sig_path.display()),
        )
    })?;
    out.key_id = Some(sig.key_id);
    match sig.algorithm {
        SignatureAlgorithm::Prehashed => {}
        SignatureAlgorithm::Legacy if opts.allow_legacy => {}
        SignatureAlgorithm::Legacy => {
            return Err((
                ArtifactStatus::Failed,
                "legacy (non-prehashed) signature rejected; pass --allow-legacy to accept it"
                    .into(),
            ))
        }
        SignatureAlgorithm::Unknown(b) => {
            return Err((
                ArtifactStatus::Failed,
                format!(
                    "unsupported signature algorithm {:?}",
                    String::from_utf8_lossy(&b)
                ),
            ))
        }
    }
    let key = keys.find(sig.key_id).ok_or_else(|| {
        (
            ArtifactStatus::Failed,
            format!(
                "signed by key {}, which is not trusted (trusted: {})",
                sig.key_id,
                keys.ids()
            ),
        )
    })?;
    sig.verify_comment(key)
        .map_err(|e| (ArtifactStatus::Failed, e.to_string()))?;
    let comment = &sig.trusted_comment;
    let field = |k: &'static str| comment.value(k).map_err(|e| (ArtifactStatus::Failed, e));
    out.tag = field("tag")?.map(str::to_string);
    out.commit = field("commit")?.map(str::to_string);
    if let Some(signed_name) = field("file")? {
        if signed_name != file_name {
            return Err((
                ArtifactStatus::Failed,
                format!("the signature is for file:{signed_name}, not {file_name} (renamed or swapped artifact)"),
            ));
        }
    }
    if let Some(expected) = &opts.expect_tag {
        match field("tag")? {
            Some(tag) if tag == expected => {}
            Some(tag) => {
                return Err((
                    ArtifactStatus::Failed,
                    format!("signed for tag {tag}, expected {expected}"),
                ))
            }
            None => {
                return Err((
                    ArtifactStatus::Failed,
                    format!("the trusted comment has no tag: field, expected tag {expected}"),
                ))
            }
        }
    }
    if comment.has_marker(DRY_RUN_MARKER) && !opts.allow_dry_run {
        return Err((
            ArtifactStatus::Failed,
            "dry-run (rehearsal) signature; pass --allow-dry-run to accept it".into(),
        ));
    }
    Ok(CheckedSignature { sig, key })
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
    let checked = match &job.signature {
        Some(sig_path) if job.require_signature || sig_path.exists() => {
            match check_signature_file(sig_path, &file_name, keys, opts, &mut out) {
                Ok(c) => Some(c),
                Err((ArtifactStatus::Error, why)) => return out.error(why),
                Err((_, why)) => return out.fail(why),
            }
        }
        _ => None,
    };
    if checked.is_none() && job.expected_sha256.is_none() {
        return out.fail("no signature and no checksum cover this file");
    }
    let legacy = checked.as_ref().is_some_and(|c| !c.sig.is_prehashed());
    let (digests, whole): (Digests, Option<Vec<u8>>) = if legacy {
        let mut bytes = Vec::new();
        match guarded::open_regular(&job.path).and_then(|mut f| f.read_to_end(&mut bytes)) {
            Ok(_) => (hash_bytes(&bytes), Some(bytes)),
            Err(e) => return read_failure(out, &job.path, e),
        }
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
                checksums::to_hex(&expected),
                checksums::to_hex(&digests.sha256)
            ));
        }
        out.checked.push("sha256");
    }
    if let Some(c) = checked {
        let message: &[u8] = whole.as_deref().unwrap_or(&digests.blake2b512);
        if let Err(e) = c.sig.verify_data(c.key, message) {
            return out.fail(e.to_string());
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

/// Verifies files and release directories. Returns `Err` only for usage errors; per-file
/// problems are results in the report.
pub fn verify(opts: &VerifyOptions, keys: &TrustedKeys) -> Result<VerifyReport> {
    if keys.is_empty() {
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
    let mut report = VerifyReport::default();
    let mut jobs = Vec::new();
    let given: BTreeSet<&Path> = opts.inputs.iter().map(PathBuf::as_path).collect();
    for input in &opts.inputs {
        if input.is_dir() {
            directory_jobs(input, keys, opts, &mut jobs, &mut report)?;
        } else if !input.exists() {
            report.results.push(
                Verdict::new()
                    .error("no such file or directory")
                    .into_result(input.display().to_string()),
            );
        } else {
            let name = input.to_string_lossy();
            if name.ends_with(SIGNATURE_SUFFIX) {
                let artifact =
                    PathBuf::from(name.strip_suffix(SIGNATURE_SUFFIX).unwrap_or_default());
                if !given.contains(artifact.as_path()) {
                    report.warnings.push(format!(
                        "{}: a signature file; name the artifact it signs instead",
                        input.display()
                    ));
                }
                continue;
            }
            jobs.push(Job {
                path: input.clone(),
                name: input.display().to_string(),
                signature: Some(signature_path(input)),
                require_signature: true,
                expected_sha256: None,
                preset_failure: None,
            });
        }
    }
    let split = cores_to_spare(jobs.len());
    let outcomes = parallel_map(&jobs, |job| run_job(job, keys, opts, split));
    for (job, o) in jobs.iter().zip(outcomes) {
        report.results.push(o.into_result(job.name.clone()));
    }
    Ok(report)
}

/// Verifies the checksum file of a release directory (in memory: it is small) and turns its
/// lines into jobs; falls back to per-file signatures when there is no checksum file.
fn directory_jobs(
    dir: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<()> {
    let sums_path = dir.join(&opts.checksums_name);
    let has_sums = sums_path.exists();
    let listed = if has_sums {
        checksum_list_jobs(dir, &sums_path, keys, opts, jobs, report)?
    } else {
        report.warnings.push(format!(
            "{}: no {} in this directory; checking each file's own signature",
            dir.display(),
            opts.checksums_name
        ));
        BTreeSet::new()
    };
    let before = jobs.len();
    unlisted_jobs(dir, has_sums, &listed, opts, jobs, report)?;
    if !has_sums && jobs.len() == before {
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
    for (name, digest) in list.entries() {
        listed.insert(name.to_string());
        let path = dir.join(name);
        let escapes = fs::canonicalize(&path)
            .ok()
            .filter(|real| !real.starts_with(&root));
        jobs.push(Job {
            name: path.display().to_string(),
            signature: Some(signature_path(&path)),
            // Without a verified checksum file, only the artifact's own signature counts.
            require_signature: !trusted_list,
            expected_sha256: trusted_list.then_some(*digest),
            preset_failure: escapes.map(|real| {
                format!(
                    "resolves to {}, outside the release directory",
                    real.display()
                )
            }),
            path,
        });
    }
    Ok(listed)
}

/// The checksum list's own verdict (its signature over its bytes), and the list when it parses.
fn verify_checksum_list(
    sums_path: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> Result<(Verdict, std::result::Result<ChecksumFile, String>)> {
    let mut out = Verdict::new();
    let checked = check_signature_file(
        &signature_path(sums_path),
        &opts.checksums_name,
        keys,
        opts,
        &mut out,
    );
    let text = fs::File::open(sums_path)
        .and_then(|f| guarded::read_at_most(f, SUMS_CAP))
        .map_err(|e| Error::io("reading", sums_path, e))?;
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
        (Err((ArtifactStatus::Error, why)), _) => out.error(why.clone()),
        (Err((_, why)), _) => out.fail(why.clone()),
        (Ok(c), Ok(_)) => {
            let digests = hash_bytes(&text);
            let message: &[u8] = if c.sig.is_prehashed() {
                &digests.blake2b512
            } else {
                &text
            };
            match c.sig.verify_data(c.key, message) {
                Ok(()) => {
                    let mut o = out;
                    o.checked.push("signature");
                    o
                }
                Err(e) => out.fail(e.to_string()),
            }
        }
    };
    Ok((out, parsed))
}

/// Files of the directory the checksum list does not name: a warning each when there is a
/// list; otherwise a job each that has a signature, and a warning for each that has none.
fn unlisted_jobs(
    dir: &Path,
    has_sums: bool,
    listed: &BTreeSet<String>,
    opts: &VerifyOptions,
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> Result<()> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io("reading", dir, e))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !is_release_candidate(name) || name == opts.checksums_name || listed.contains(name) {
            continue;
        }
        let sig = signature_path(&path);
        if has_sums {
            report.warnings.push(format!(
                "{}: present but not listed in {}",
                path.display(),
                opts.checksums_name
            ));
        }
        if sig.exists() {
            jobs.push(Job {
                name: path.display().to_string(),
                signature: Some(sig),
                require_signature: true,
                expected_sha256: None,
                preset_failure: None,
                path,
            });
        } else if !has_sums {
            report.warnings.push(format!(
                "{}: not signed (no {})",
                path.display(),
                signature_path(Path::new(name)).display()
            ));
        }
    }
    Ok(())
}
