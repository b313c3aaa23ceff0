//! `warden sign`: one `.minisig` per artifact plus a signed `SHA256SUMS`.
//!
//! Order of work, so that a failure loses nothing: collect and validate every input and refuse
//! existing outputs first; hash and sign every artifact (in parallel, one read each); stage every
//! output as a temp file; only then rename them all into place.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::files::atomic::{self, DirLock, StagedFile};
use crate::files::paths::{parent_dir, with_resolved_folder};
use crate::minisign::checksums::ChecksumFile;
use crate::minisign::comment::{ReleaseMeta, TrustedComment};
use crate::minisign::hash::{hash_bytes, hash_file, Digests};
use crate::minisign::keys::{KeyId, PublicKey, SecretKey};
use crate::minisign::names::{
    is_release_candidate, signature_path, CHECKSUMS_NAME, SIGNATURE_SUFFIX,
};
use crate::minisign::signature::SignatureFile;
use crate::util::{cores_to_spare, parallel_map};

/// Where the checksum file goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChecksumsTarget {
    /// `SHA256SUMS` in the artifacts' directory.
    Default,
    Path(PathBuf),
    Skip,
}

#[derive(Clone, Debug)]
pub struct SignOptions {
    pub inputs: Vec<PathBuf>,
    pub recursive: bool,
    pub checksums: ChecksumsTarget,
    pub force: bool,
    pub meta: ReleaseMeta,
    /// Unix time written into every trusted comment of this run.
    pub timestamp: u64,
    /// Bytes hashed so far, for a progress display.
    pub progress: Option<crate::minisign::hash::Progress>,
    /// The bytes of every artifact, set once they are known (before hashing starts).
    pub total: Option<crate::minisign::hash::Progress>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct SignedFile {
    pub(crate) path: PathBuf,
    pub(crate) signature: PathBuf,
    #[serde(serialize_with = "hex_digest")]
    pub(crate) sha256: [u8; 32],
    pub(crate) size: u64,
}

fn hex_digest<S: serde::Serializer>(d: &[u8; 32], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&crate::util::to_hex(d))
}

#[derive(Clone, Debug, Serialize)]
pub struct SignReport {
    #[serde(serialize_with = "display")]
    pub(crate) key_id: KeyId,
    pub(crate) artifacts: Vec<SignedFile>,
    pub(crate) checksums: Option<SignedFile>,
    /// Directory entries that were not signed, with the reason (symlinks, special files,
    /// signatures and checksum lists).
    pub(crate) skipped: Skipped,
    /// What the user should know: same-named files in different folders, temp files of an
    /// interrupted run that were removed.
    pub(crate) warnings: Vec<String>,
}

fn display<T: std::fmt::Display, S: serde::Serializer>(
    v: &T,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(v)
}

impl SignReport {
    /// The checksum list this run wrote, if any.
    pub fn checksums_path(&self) -> Option<&Path> {
        self.checksums.as_ref().map(|c| c.path.as_path())
    }
}

/// Directory entries passed over by a walk, with the reason.
pub(crate) type Skipped = Vec<(PathBuf, String)>;

fn file_name_str(path: &Path) -> Result<&str> {
    path.file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::Usage(format!("{}: file name is not valid UTF-8", path.display())))
}

/// Artifacts named by the inputs, in a stable order, plus what a directory walk passed over.
pub(crate) fn collect_artifacts(
    inputs: &[PathBuf],
    recursive: bool,
) -> Result<(Vec<PathBuf>, Skipped)> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for input in inputs {
        let meta = fs::metadata(input).map_err(|e| Error::io("reading", input, e))?;
        if meta.is_file() {
            let name = file_name_str(input)?;
            if name.ends_with(SIGNATURE_SUFFIX) {
                return Err(Error::Usage(format!(
                    "{}: refusing to sign a signature file",
                    input.display()
                )));
            }
            files.push(input.clone());
        } else if meta.is_dir() {
            let mut walker = walkdir::WalkDir::new(input)
                .min_depth(1)
                .max_depth(if recursive { usize::MAX } else { 1 })
                .sort_by_file_name()
                .into_iter();
            // Everything passed over is named: `warden verify` fails on whatever the checksum
            // list does not account for, so the signer should know before publishing.
            while let Some(entry) = walker.next() {
                let entry = entry.map_err(|e| {
                    let path = e.path().unwrap_or(input).to_path_buf();
                    Error::io("reading", path, e.into())
                })?;
                let ft = entry.file_type();
                let name = file_name_str(entry.path())?;
                if name.starts_with(crate::files::atomic::TEMP_PREFIX) {
                    continue; // an interrupted run's: removed under the lock
                }
                if name.starts_with('.') {
                    if ft.is_dir() {
                        walker.skip_current_dir();
                    }
                    let what = if ft.is_dir() { "folder" } else { "file" };
                    skipped.push((entry.into_path(), format!("a hidden {what}: not signed")));
                    continue;
                }
                if ft.is_dir() {
                    if !recursive {
                        skipped.push((
                            entry.into_path(),
                            "a folder (pass --recursive to sign its files)".into(),
                        ));
                    }
                    continue;
                }
                if name.ends_with(SIGNATURE_SUFFIX) {
                    skipped.push((entry.into_path(), "a signature: never signed".into()));
                    continue;
                }
                if name == CHECKSUMS_NAME {
                    skipped.push((entry.into_path(), "a checksum list: never signed".into()));
                    continue;
                }
                if !is_release_candidate(name) {
                    continue;
                }
                if ft.is_symlink() {
                    skipped.push((
                        entry.path().to_path_buf(),
                        "symbolic link (name it explicitly to sign its target)".into(),
                    ));
                } else if !ft.is_file() {
                    skipped.push((entry.path().to_path_buf(), "not a regular file".into()));
                } else {
                    files.push(entry.into_path());
                }
            }
        } else {
            return Err(Error::Usage(format!(
                "{}: not a file or directory",
                input.display()
            )));
        }
    }
    // The same file named twice (directly and through its directory) is signed once.
    let mut seen = BTreeSet::new();
    let mut unique = Vec::new();
    for f in files {
        let key = absolute_path(&f)?;
        if seen.insert(key) {
            unique.push(f);
        }
    }
    Ok((unique, skipped))
}

/// The file's path with its directory resolved (symlinks in the name itself are kept).
fn absolute_path(path: &Path) -> Result<PathBuf> {
    with_resolved_folder(path).map_err(|e| Error::io("resolving", parent_dir(path), e))
}

/// Picks the checksum file path: `SHA256SUMS` in the one directory all artifacts share.
fn checksums_path(opts: &SignOptions, artifacts: &[PathBuf]) -> Result<Option<PathBuf>> {
    match &opts.checksums {
        ChecksumsTarget::Skip => Ok(None),
        ChecksumsTarget::Path(p) => Ok(Some(p.clone())),
        ChecksumsTarget::Default => {
            if let [only] = opts.inputs.as_slice() {
                if only.is_dir() {
                    return Ok(Some(only.join(CHECKSUMS_NAME)));
                }
            }
            let dirs: BTreeSet<PathBuf> = artifacts
                .iter()
                .map(|a| {
                    absolute_path(a).map(|p| p.parent().map(Path::to_path_buf).unwrap_or_default())
                })
                .collect::<Result<_>>()?;
            if dirs.len() > 1 {
                return Err(Error::Usage(
                    "the artifacts are in several directories: choose where the checksum file goes with --checksums PATH, or pass --no-checksums".into(),
                ));
            }
            Ok(Some(parent_dir(&artifacts[0]).join(CHECKSUMS_NAME)))
        }
    }
}

/// The name of `artifact` as listed in a checksum file located in `dir`.
fn name_relative_to(dir: &Path, artifact: &Path) -> Result<String> {
    let dir = fs::canonicalize(dir).map_err(|e| Error::io("resolving", dir, e))?;
    let abs = absolute_path(artifact)?;
    let rel = abs.strip_prefix(&dir).map_err(|_| {
        Error::Usage(format!(
            "{} is outside {}, the directory of the checksum file: choose another --checksums PATH or pass --no-checksums",
            artifact.display(),
            dir.display()
        ))
    })?;
    let parts: Vec<&str> = rel
        .components()
        .map(|c| {
            c.as_os_str().to_str().ok_or_else(|| {
                Error::Usage(format!(
                    "{}: file name is not valid UTF-8",
                    artifact.display()
                ))
            })
        })
        .collect::<Result<_>>()?;
    Ok(parts.join("/"))
}

/// Signs the artifacts named by `opts` with `key`. With `expected`, refuses unless the secret key
/// belongs to that public key (checked before anything is read or written).
pub fn sign(
    opts: &SignOptions,
    key: &SecretKey,
    expected: Option<(&PublicKey, &Path)>,
) -> Result<SignReport> {
    if let Some((pk, path)) = expected {
        if key.public_key() != *pk {
            return Err(Error::Refused(format!(
                "the secret key (key id {}) does not belong to the public key {} (key id {}): refusing to sign",
                key.key_id,
                path.display(),
                pk.key_id
            )));
        }
    }
    opts.meta.validate().map_err(|e| Error::Usage(e.into()))?;
    let (artifacts, checksums_path, skipped, other_file_at_checksums) = plan_outputs(opts)?;
    // Validate every name and refuse clashing or existing outputs before any hashing.
    let mut names = Vec::with_capacity(artifacts.len());
    for a in &artifacts {
        let listed = match &checksums_path {
            Some(cp) => Some(name_relative_to(parent_dir(cp), a)?),
            None => None,
        };
        // A name with folders in the checksum list is bound as it is listed; otherwise the path
        // below the input folder the file was found in.
        let bound_path = match listed.as_ref().filter(|l| l.contains('/')) {
            Some(l) => Some(l.clone()),
            None => bound_path(&opts.inputs, a)?,
        };
        let name = ArtifactNames {
            base: file_name_str(a)?.to_string(),
            listed,
            bound_path,
        };
        TrustedComment::for_release(
            opts.timestamp,
            &name.base,
            name.bound_path.as_deref(),
            &opts.meta,
        )
        .map_err(|e| Error::Usage(e.into()))?;
        names.push(name);
    }
    refuse_clashing_outputs(&artifacts, checksums_path.as_deref())?;
    if let Some(cp) = checksums_path.as_deref() {
        // `--force` replaces an earlier run's list, never some other file.
        if other_file_at_checksums {
            return Err(Error::Refused(format!(
                "{} exists and is not a checksum list: refusing to replace it, even with --force",
                cp.display()
            )));
        }
    }
    let mut report = SignReport {
        key_id: key.key_id,
        artifacts: Vec::new(),
        checksums: None,
        skipped,
        warnings: same_name_warnings(&artifacts, &names),
    };
    // Held until every output is in place: a second run on the same release waits its turn.
    let _locks = lock_output_dirs(opts, &artifacts, checksums_path.as_deref(), &mut report)?;
    if !opts.force {
        refuse_existing_outputs(&artifacts, checksums_path.as_deref())?;
    }
    let signed = hash_and_sign(opts, key, &artifacts, &names)?;
    let staged = stage_outputs(
        opts,
        key,
        &artifacts,
        &names,
        &signed,
        checksums_path,
        &mut report,
    )?;
    // In staging order: the signatures, `SHA256SUMS`, and `SHA256SUMS.minisig` last, so an
    // interrupted commit leaves a list without a valid signature, which verify fails.
    for file in staged {
        file.commit(opts.force)?;
    }
    Ok(report)
}

/// The names one artifact is known by: its base name (`file:`), its line in the checksum list,
/// and its path below the signed folder when it has folders (`path:`).
struct ArtifactNames {
    base: String,
    listed: Option<String>,
    bound_path: Option<String>,
}

/// The artifact's path below the input folder it was found in, when it is in a subfolder.
fn bound_path(inputs: &[PathBuf], artifact: &Path) -> Result<Option<String>> {
    for input in inputs.iter().filter(|i| i.is_dir()) {
        if let Ok(rel) = artifact.strip_prefix(input) {
            if rel.components().count() > 1 {
                return name_relative_to(input, artifact).map(Some);
            }
            return Ok(None);
        }
    }
    Ok(None)
}

/// A warning for each base name several artifacts share (`linux/ethrex`, `macos/ethrex`).
fn same_name_warnings(artifacts: &[PathBuf], names: &[ArtifactNames]) -> Vec<String> {
    let mut by_name: std::collections::BTreeMap<&str, Vec<&Path>> = Default::default();
    for (a, n) in artifacts.iter().zip(names) {
        by_name.entry(&n.base).or_default().push(a);
    }
    by_name
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(name, paths)| {
            format!(
                "{} files are named {name} ({}): each signature binds its folder (path:), which `warden verify` checks and `minisign -V` does not",
                paths.len(),
                paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            )
        })
        .collect()
}

/// No output may be another output or an input, with or without `--force`: `--checksums
/// dist/b.minisig` would be half the signatures, `--checksums dist/a` would replace artifact `a`.
/// Refused before anything is read or written.
fn refuse_clashing_outputs(artifacts: &[PathBuf], checksums_path: Option<&Path>) -> Result<()> {
    let mut taken: std::collections::BTreeMap<PathBuf, String> = Default::default();
    for a in artifacts {
        let what = format!("the artifact {}", a.display());
        taken.insert(absolute_path(a)?, what.clone());
        if let Ok(real) = fs::canonicalize(a) {
            taken.insert(real, what);
        }
    }
    let mut outputs: Vec<(PathBuf, String)> = artifacts
        .iter()
        .map(|a| {
            (
                signature_path(a),
                format!("the signature of {}", a.display()),
            )
        })
        .collect();
    if let Some(cp) = checksums_path {
        outputs.push((cp.to_path_buf(), "the checksum list".into()));
        outputs.push((signature_path(cp), "the checksum list's signature".into()));
    }
    for (path, what) in outputs {
        if let Some(other) = taken.insert(absolute_path(&path)?, what.clone()) {
            return Err(Error::Usage(format!(
                "{} would be both {other} and {what}: refusing before anything is written (choose another --checksums PATH)",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Locks every folder the outputs go to (the checksum list's, each input folder, each named
/// file's) and removes temp files a killed run left there.
fn lock_output_dirs(
    opts: &SignOptions,
    artifacts: &[PathBuf],
    checksums_path: Option<&Path>,
    report: &mut SignReport,
) -> Result<Vec<DirLock>> {
    let mut dirs = BTreeSet::new();
    for input in &opts.inputs {
        let dir = if input.is_dir() {
            input.as_path()
        } else {
            parent_dir(input)
        };
        dirs.insert(fs::canonicalize(dir).map_err(|e| Error::io("resolving", dir, e))?);
    }
    if let Some(cp) = checksums_path {
        let dir = parent_dir(cp);
        dirs.insert(fs::canonicalize(dir).map_err(|e| Error::io("resolving", dir, e))?);
    }
    let mut locks = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        locks.push(DirLock::acquire(dir)?);
    }
    let mut output_dirs: BTreeSet<PathBuf> = dirs;
    for a in artifacts {
        if let Some(dir) = absolute_path(a)?.parent() {
            output_dirs.insert(dir.to_path_buf());
        }
    }
    let mut removed = Vec::new();
    for dir in &output_dirs {
        removed.extend(locks[0].remove_stale_temp_files(dir));
    }
    if !removed.is_empty() {
        report.warnings.push(format!(
            "removed {} temp file{} an interrupted run left behind: {}",
            removed.len(),
            if removed.len() == 1 { "" } else { "s" },
            removed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(locks)
}

/// The artifacts to sign, where the checksum file goes, and what a directory walk passed over.
/// An existing checksum list at that path (a re-sign) is not an artifact; any other file there
/// stays one, and `refuse_clashing_outputs` refuses to write over it.
/// Also says whether the checksum path holds a regular file that is not a checksum list (which
/// `--force` must not replace), so the file is read once.
fn plan_outputs(opts: &SignOptions) -> Result<(Vec<PathBuf>, Option<PathBuf>, Skipped, bool)> {
    let (mut artifacts, mut skipped) = collect_artifacts(&opts.inputs, opts.recursive)?;
    let checksums_path = if artifacts.is_empty() {
        None
    } else {
        checksums_path(opts, &artifacts)?
    };
    let mut other_file_at_checksums = false;
    if let Some(cp) = &checksums_path {
        let is_list = cp.exists() && is_checksum_list(cp);
        let regular = fs::symlink_metadata(cp).is_ok_and(|m| m.is_file());
        other_file_at_checksums = regular && !is_list;
        if is_list {
            let cp_abs = absolute_path(cp)?;
            let mut kept = Vec::new();
            for a in artifacts {
                if absolute_path(&a)? == cp_abs {
                    skipped.push((a, "the checksum list this run replaces".into()));
                } else {
                    kept.push(a);
                }
            }
            artifacts = kept;
        }
    }
    // This run's own outputs (an artifact's signature, the checksum list and its signature)
    // found in a folder are what it writes or, without --force, refuses to replace: not news.
    let own: std::collections::BTreeSet<PathBuf> = artifacts
        .iter()
        .map(|a| signature_path(a))
        .chain(
            checksums_path
                .iter()
                .flat_map(|c| [c.clone(), signature_path(c)]),
        )
        .collect();
    skipped.retain(|(p, _)| !own.contains(p));
    if artifacts.is_empty() {
        return Err(Error::Usage(format!(
            "nothing to sign: no artifacts found in {}",
            opts.inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok((artifacts, checksums_path, skipped, other_file_at_checksums))
}

/// Whether the file parses as a checksum list (a previous run's `--checksums` output).
fn is_checksum_list(path: &Path) -> bool {
    crate::files::guarded::read_small_file(path, 256 << 20, "a checksum list")
        .is_ok_and(|text| ChecksumFile::parse(&text).is_ok())
}

/// Without `--force`, no output may exist yet: refused before anything is hashed.
fn refuse_existing_outputs(artifacts: &[PathBuf], checksums_path: Option<&Path>) -> Result<()> {
    let mut outputs: Vec<PathBuf> = artifacts.iter().map(|a| signature_path(a)).collect();
    if let Some(cp) = checksums_path {
        outputs.push(cp.to_path_buf());
        outputs.push(signature_path(cp));
    }
    let existing: Vec<String> = outputs
        .iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if existing.is_empty() {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "{} already exist{}: {}{} (use --force to replace)",
        if existing.len() == 1 {
            "an output file"
        } else {
            "output files"
        },
        if existing.len() == 1 { "s" } else { "" },
        existing
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        if existing.len() > 3 {
            format!(" and {} more", existing.len() - 3)
        } else {
            String::new()
        }
    )))
}

/// An artifact's digests and its signature, by index into the artifact list.
type Signed = (usize, Digests, SignatureFile);

/// Hashes and signs every artifact, largest first on both cores; in artifact order.
fn hash_and_sign(
    opts: &SignOptions,
    key: &SecretKey,
    artifacts: &[PathBuf],
    names: &[ArtifactNames],
) -> Result<Vec<Signed>> {
    // Largest first keeps both cores busy until the end.
    let mut order: Vec<usize> = (0..artifacts.len()).collect();
    let sizes: Vec<u64> = artifacts
        .iter()
        .map(|a| fs::metadata(a).map(|m| m.len()).unwrap_or(0))
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    if let Some(total) = &opts.total {
        total.store(sizes.iter().sum(), std::sync::atomic::Ordering::Relaxed);
    }
    let split = cores_to_spare(order.len());
    let hashed = parallel_map(&order, |&i| {
        let path = &artifacts[i];
        let digests = hash_file(path, (split, false), opts.progress.as_ref())
            .map_err(|e| Error::io("reading", path, e))?;
        let n = &names[i];
        let comment = TrustedComment::for_release(
            opts.timestamp,
            &n.base,
            n.bound_path.as_deref(),
            &opts.meta,
        )
        .map_err(|e| Error::Usage(e.into()))?;
        let sig = SignatureFile::sign_prehashed(key, &digests.blake2b512, comment);
        Ok::<_, Error>((i, digests, sig))
    });
    let mut results: Vec<Signed> = hashed.into_iter().collect::<Result<_>>()?;
    results.sort_by_key(|(i, _, _)| *i);
    Ok(results)
}

/// Stages every signature and the signed checksum list as temp files, recording each in the
/// report; nothing is in place until the caller commits them all.
fn stage_outputs(
    opts: &SignOptions,
    key: &SecretKey,
    artifacts: &[PathBuf],
    names: &[ArtifactNames],
    signed: &[Signed],
    checksums_path: Option<PathBuf>,
    report: &mut SignReport,
) -> Result<Vec<StagedFile>> {
    let self_check = key.public_key();
    let mut staged: Vec<StagedFile> = Vec::new();
    for (i, digests, sig) in signed {
        // Cheap insurance against a signing bug: every signature must verify before it is written.
        sig.verify_comment(&self_check)
            .and_then(|_| sig.verify_data(&self_check, &digests.blake2b512))
            .map_err(|e| {
                Error::Refused(format!(
                    "internal error: fresh signature does not verify: {e}"
                ))
            })?;
        let sig_path = signature_path(&artifacts[*i]);
        staged.push(atomic::stage(&sig_path, sig.to_string().as_bytes(), 0o644)?);
        report.artifacts.push(SignedFile {
            path: artifacts[*i].clone(),
            signature: sig_path,
            sha256: digests.sha256,
            size: digests.size,
        });
    }
    let Some(cp) = checksums_path else {
        return Ok(staged);
    };
    let list = ChecksumFile::new(
        signed
            .iter()
            .map(|(i, d, _)| (names[*i].listed.clone().unwrap_or_default(), d.sha256)),
    )
    .map_err(|e| Error::Usage(e.into()))?;
    let text = list.to_string();
    let digests = hash_bytes(text.as_bytes());
    let comment =
        TrustedComment::for_release(opts.timestamp, file_name_str(&cp)?, None, &opts.meta)
            .map_err(|e| Error::Usage(e.into()))?;
    let sig = SignatureFile::sign_prehashed(key, &digests.blake2b512, comment);
    let sig_path = signature_path(&cp);
    staged.push(atomic::stage(&cp, text.as_bytes(), 0o644)?);
    staged.push(atomic::stage(&sig_path, sig.to_string().as_bytes(), 0o644)?);
    report.checksums = Some(SignedFile {
        path: cp,
        signature: sig_path,
        sha256: digests.sha256,
        size: digests.size,
    });
    Ok(staged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(inputs: Vec<PathBuf>) -> SignOptions {
        SignOptions {
            inputs,
            recursive: false,
            checksums: ChecksumsTarget::Default,
            force: false,
            meta: ReleaseMeta::default(),
            timestamp: 0,
            progress: None,
            total: None,
        }
    }

    fn files(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
        names
            .iter()
            .map(|n| {
                let p = dir.join(n);
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(&p, n.as_bytes()).unwrap();
                p
            })
            .collect()
    }

    #[test]
    fn an_output_that_is_another_output_or_an_input_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let a = files(t.path(), &["dist/a", "dist/b"]);
        assert!(refuse_clashing_outputs(&a, Some(&t.path().join("dist/SHA256SUMS"))).is_ok());
        // The checksum list would replace artifact `a`.
        let e = refuse_clashing_outputs(&a, Some(&a[0]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{0} would be both the artifact {0} and the checksum list: refusing before anything is written (choose another --checksums PATH)",
                a[0].display()
            )
        );
        // The checksum list would be `b`'s signature.
        let sig = signature_path(&a[1]);
        let e = refuse_clashing_outputs(&a, Some(&sig))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the signature of") && e.contains("the checksum list"),
            "{e}"
        );
    }

    #[test]
    fn listed_names_are_relative_to_the_checksum_folder_and_stay_inside_it() {
        let t = tempfile::tempdir().unwrap();
        let a = files(t.path(), &["dist/linux/app", "other/app"]);
        let dist = t.path().join("dist");
        assert_eq!(name_relative_to(&dist, &a[0]).unwrap(), "linux/app");
        let e = name_relative_to(&dist, &a[1]).unwrap_err().to_string();
        assert!(e.contains("is outside"), "{e}");
        // A file in a subfolder of an input folder binds its path; one at the top does not.
        let top = files(t.path(), &["dist/top"]);
        assert_eq!(
            bound_path(std::slice::from_ref(&dist), &a[0]).unwrap(),
            Some("linux/app".to_string())
        );
        assert_eq!(bound_path(&[dist], &top[0]).unwrap(), None);
    }

    #[test]
    fn artifacts_in_several_folders_need_a_checksums_path() {
        let t = tempfile::tempdir().unwrap();
        let a = files(t.path(), &["x/a", "y/b"]);
        let opts = options(a.clone());
        let e = checksums_path(&opts, &a).unwrap_err().to_string();
        assert!(e.contains("several directories"), "{e}");
        let one = options(vec![t.path().join("x")]);
        assert_eq!(
            checksums_path(&one, &a[..1]).unwrap(),
            Some(t.path().join("x").join(CHECKSUMS_NAME))
        );
    }

    #[test]
    fn artifacts_sharing_a_name_are_warned_about() {
        let a = vec![PathBuf::from("linux/app"), PathBuf::from("macos/app")];
        let names: Vec<ArtifactNames> = a
            .iter()
            .map(|_| ArtifactNames {
                base: "app".into(),
                listed: None,
                bound_path: None,
            })
            .collect();
        assert_eq!(
            same_name_warnings(&a, &names),
            ["2 files are named app (linux/app, macos/app): each signature binds its folder (path:), which `warden verify` checks and `minisign -V` does not"]
        );
    }
}
