//! `warden verify` of files and release folders on disk: the folder's reader. It reads what the
//! verdict looks at first (the entries, the checksum list, every signature and log proof, where
//! each listed path resolves), asks `verdict::folder` for its judgement, and reads what that
//! still needs (each artifact's bytes, once, for both digests, the files in parallel; the log's
//! records) until the verdict is made. The reader never judges; the verdict never reads.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Reason, Result};
use crate::files::guarded::{self, CappedReadError, SMALL_FILE_CAP};
use crate::minisign::checksums::ChecksumFile;
use crate::minisign::hash::{hash_bytes_sha512, hash_file};
use crate::minisign::names::{cosigned_file, file_kind, PROOF_SUFFIX, SIGNATURE_SUFFIX};
use crate::trust::signer::{Cause, Rejected};
use crate::trust::TrustedKeys;
use crate::util::{cores_to_spare, parallel_map};
use crate::verdict::evidence::{ByteNeed, Entry, Evidence, FileBytes, InputKind, Judgement, Needs};
use crate::verdict::file::log_requirements;
use crate::verdict::folder::{signature_of, SUMS_CAP};
use crate::verdict::layout::{choose, list_rank, sidecar_names, sidecar_subject, signature_names};
use crate::verdict::{VerifyOptions, VerifyReport};

/// Verifies files and release folders. Returns `Err` only for usage errors and what could not
/// be read at all; per-file problems are results in the report.
pub fn verify(opts: &VerifyOptions, keys: &TrustedKeys) -> Result<VerifyReport> {
    let mut ev = Evidence::default();
    for input in &opts.inputs {
        let kind = if input.is_dir() {
            InputKind::Folder
        } else if fs::symlink_metadata(input).is_err() {
            InputKind::Missing
        } else {
            InputKind::File
        };
        ev.inputs.push((input.clone(), kind));
    }
    crate::verdict::folder::precheck(&ev, opts, keys)?;
    refuse_trust_from_inputs(opts, keys)?;
    ev.attestations.sources = crate::attest::bundle::read_files(&opts.attest.files)?;
    for (input, kind) in ev.inputs.clone() {
        match kind {
            InputKind::Folder => read_folder(&input, opts, &mut ev)?,
            InputKind::File => read_file(&input, opts, &mut ev),
            InputKind::Missing => {}
        }
    }
    let mut logs = super::log_reader::LogReader::new(log_requirements(opts, keys));
    loop {
        let needs = match crate::verdict::folder::judge(&ev, opts, keys)? {
            Judgement::Done(report) => return Ok(report),
            Judgement::Needs(needs) => needs,
        };
        read_needs(&needs, opts, &mut logs, &mut ev)?;
    }
}

/// Reads what the verdict asked for: the files' bytes (in parallel) and the logs' records.
fn read_needs(
    needs: &Needs,
    opts: &VerifyOptions,
    logs: &mut super::log_reader::LogReader<'_>,
    ev: &mut Evidence,
) -> Result<()> {
    let wanted: Vec<(&PathBuf, &ByteNeed)> = needs.bytes.iter().collect();
    let split = cores_to_spare(wanted.len());
    let read = parallel_map(&wanted, |(path, need)| {
        read_bytes(path, **need, split, opts.progress.as_ref())
    });
    for ((path, _), bytes) in wanted.into_iter().zip(read) {
        ev.bytes.insert(path.clone(), bytes);
    }
    logs.read(&needs.logs, ev)
}

/// A file's bytes read once for both digests (and kept, for a legacy signature).
fn read_bytes(
    path: &Path,
    need: ByteNeed,
    split: bool,
    progress: Option<&crate::minisign::hash::Progress>,
) -> FileBytes {
    if need.whole {
        let mut bytes = Vec::new();
        return match guarded::open_regular(path).and_then(|mut f| f.read_to_end(&mut bytes)) {
            Ok(_) => FileBytes::Read(hash_bytes_sha512(&bytes), Some(bytes)),
            Err(e) => FileBytes::Failed(read_failure(path, e)),
        };
    }
    match hash_file(path, (split, need.sha512), progress) {
        Ok(d) => FileBytes::Read(d, None),
        Err(e) => FileBytes::Failed(read_failure(path, e)),
    }
}

/// Why a file's bytes could not be read, as the verdict says it.
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

/// A signature or log proof's text, read capped; `None` when it does not exist.
fn read_text(
    path: &Path,
    (cap, what): (u64, &str),
) -> Option<std::result::Result<String, Rejected>> {
    let io_error = |e: std::io::Error| {
        (
            Cause::Unreadable,
            format!("reading {}: {e}", path.display()),
        )
    };
    let file = match guarded::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(io_error(e))),
    };
    let origin = path.display().to_string();
    Some(
        guarded::read_capped(file, &origin, cap, what).map_err(|e| match e {
            CappedReadError::Io(e) => io_error(e),
            CappedReadError::Input(e) => (Cause::Unreadable, e.to_string()),
        }),
    )
}

/// Reads the signature or log proof at `path` into `ev`, when there is one.
fn read_signature_file(path: &Path, ev: &mut Evidence) {
    let limits = if path.to_string_lossy().ends_with(PROOF_SUFFIX) {
        (crate::log::proof::MAX_PROOF_BYTES, "a log proof")
    } else {
        (SMALL_FILE_CAP, "a minisign signature")
    };
    if let Some(text) = read_text(path, limits) {
        ev.present.insert(path.to_path_buf());
        ev.texts.insert(path.to_path_buf(), text);
    }
}

/// Where `path` resolves with its folders followed (what `path:` in a signature must end with).
fn resolved(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    fs::canonicalize(crate::files::paths::parent_dir(path))
        .ok()
        .map(|dir| dir.join(name))
}

/// A file given on its own: its signature (`-x`, `<file>.minisig`, or a minisign `<file>.sig`)
/// and co-signatures; without one, the signed checksum list beside it (found by its name, or
/// `--checksums`), read in its place: one downloaded file of a release signed by its list.
fn read_file(input: &Path, opts: &VerifyOptions, ev: &mut Evidence) {
    ev.present.insert(input.to_path_buf());
    if let Some(r) = resolved(input) {
        ev.resolved.insert(input.to_path_buf(), r);
    }
    let own: Vec<PathBuf> = match &opts.signature_file {
        Some(x) => vec![x.clone()],
        None => signature_names(&input.display().to_string())
            .into_iter()
            .map(PathBuf::from)
            .collect(),
    };
    for sig in &own {
        if fs::symlink_metadata(sig).is_ok() {
            ev.present.insert(sig.clone());
        }
        read_signature_file(sig, ev);
    }
    let Some(name) = input.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let dir = crate::files::paths::parent_dir(input);
    let Ok(read) = fs::read_dir(dir) else { return };
    let names: Vec<String> = read
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    for file in names
        .iter()
        .filter(|f| cosigned_file(f).is_some_and(|(f, _)| f == name))
    {
        read_signature_file(&input.with_file_name(file), ev);
    }
    if opts.signature_file.is_some() || signature_of(ev, input).is_some() {
        return;
    }
    read_list_beside(input, (&names, opts), ev);
}

/// The signed checksum list beside a file that has no signature of its own, read with its
/// signatures, for the file to be judged by.
fn read_list_beside(input: &Path, (names, opts): (&[String], &VerifyOptions), ev: &mut Evidence) {
    let dir = crate::files::paths::parent_dir(input);
    let explicit = opts.checksums_name.as_deref();
    for name in names {
        if list_rank(name).is_some() || Some(name.as_str()) == explicit {
            for sig in signature_names(name) {
                read_signature_file(&dir.join(sig), ev);
            }
        }
    }
    let layout = choose(names.iter().map(String::as_str), explicit, |n| {
        signature_of(ev, &dir.join(n)).is_some()
    });
    let file = input
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    // Else a signed checksum of this one file (`<file>.sha256` and its signature).
    let sidecar = || {
        sidecar_names(file).map(|s| dir.join(s)).find(|s| {
            for sig in signature_names(&s.display().to_string()) {
                read_signature_file(Path::new(&sig), ev);
            }
            signature_of(ev, s).is_some()
        })
    };
    let Some(list) = layout.list.map(|l| dir.join(l)).or_else(sidecar) else {
        return;
    };
    if fs::symlink_metadata(&list).is_err() {
        return;
    }
    read_list(&list, ev);
    let proofs = names.iter().filter(|n| n.ends_with(PROOF_SUFFIX));
    for proof in proofs {
        read_signature_file(&dir.join(proof), ev);
    }
    ev.file_lists.insert(input.to_path_buf(), list);
}

/// A release folder: its layout (found from the names at its top and the signatures of the
/// checksum lists among them), its list (read, and parsed to know which folders hold listed
/// files), every entry (a folder without a listed file is not descended into), every signature
/// and proof, and where each listed path resolves.
fn read_folder(dir: &Path, opts: &VerifyOptions, ev: &mut Evidence) -> Result<()> {
    let top: Vec<String> = fs::read_dir(dir)
        .map_err(|e| Error::io("reading", dir, e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    let explicit = opts.checksums_name.as_deref();
    for name in &top {
        if list_rank(name).is_some() || Some(name.as_str()) == explicit {
            for sig in signature_names(name) {
                read_signature_file(&dir.join(sig), ev);
            }
        }
    }
    let layout = choose(top.iter().map(String::as_str), explicit, |n| {
        signature_of(ev, &dir.join(n)).is_some()
    });
    let sums = layout.list.as_ref().map(|l| dir.join(l));
    let has_list = sums
        .as_ref()
        .is_some_and(|s| fs::symlink_metadata(s).is_ok());
    let listed: Vec<String> = match sums.filter(|_| has_list) {
        Some(sums) => {
            let read = guarded::open_regular(&sums)
                .and_then(|f| guarded::read_at_most(f, SUMS_CAP))
                .map_err(|e| Reason::from(e.to_string()));
            let names = match &read {
                Ok(Some(bytes)) => std::str::from_utf8(bytes)
                    .ok()
                    .and_then(|t| ChecksumFile::parse(t).ok())
                    .map(|l| l.names().map(str::to_string).collect())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            ev.lists.insert(sums.clone(), read);
            if let Some(r) = resolved(&sums) {
                ev.resolved.insert(sums, r);
            }
            names
        }
        None => Vec::new(),
    };
    let mut folders: BTreeSet<String> = BTreeSet::new();
    for name in &listed {
        let mut parts: Vec<&str> = name.split('/').collect();
        while parts.len() > 1 {
            parts.pop();
            folders.insert(parts.join("/"));
        }
    }
    let keep_descending = |n: &str| !has_list || folders.contains(n);
    let entries = walk(dir, &keep_descending)?;
    for e in &entries {
        ev.present.insert(e.path.clone());
        let signature = e.name.as_deref().is_some_and(|n| {
            n.ends_with(SIGNATURE_SUFFIX) || n.ends_with(".sig") || n.ends_with(PROOF_SUFFIX)
        });
        if !e.is_dir && signature {
            read_signature_file(&e.path, ev);
        }
    }
    if !has_list {
        read_signed_sidecars(&entries, ev);
    }
    ev.entries.insert(dir.to_path_buf(), entries);
    if has_list && !listed.is_empty() {
        let root = fs::canonicalize(dir).map_err(|e| Error::io("resolving", dir, e))?;
        for name in &listed {
            let path = dir.join(name);
            if let Ok(real) = fs::canonicalize(&path) {
                if !real.starts_with(&root) {
                    ev.escapes.insert(path.clone(), real);
                }
            }
            if let Some(r) = resolved(&path) {
                ev.resolved.insert(path, r);
            }
        }
    }
    Ok(())
}

/// A signature beside each file: the per-file checksums (`app.tar.gz.sha256`) that are signed
/// are read, each a list of one file standing in for its file's own signature.
fn read_signed_sidecars(entries: &[Entry], ev: &mut Evidence) {
    for e in entries.iter().filter(|e| !e.is_dir) {
        let Some(name) = e.name.as_deref() else {
            continue;
        };
        if sidecar_subject(name).is_some() && signature_of(ev, &e.path).is_some() {
            read_list(&e.path, ev);
        }
    }
}

/// A checksum list's bytes (capped), and where it resolves.
fn read_list(list: &Path, ev: &mut Evidence) {
    let read = guarded::open_regular(list)
        .and_then(|f| guarded::read_at_most(f, SUMS_CAP))
        .map_err(|e| Reason::from(e.to_string()));
    ev.present.insert(list.to_path_buf());
    ev.lists.insert(list.to_path_buf(), read);
    if let Some(r) = resolved(list) {
        ev.resolved.insert(list.to_path_buf(), r);
    }
}

/// Every entry of `dir`, in name order; a folder is descended into when `keep_descending` says
/// so of its path below `dir`.
fn walk(dir: &Path, keep_descending: &dyn Fn(&str) -> bool) -> Result<Vec<Entry>> {
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
        name.map_or("a file whose name is not UTF-8", file_kind)
    }
}

/// The entry's path below `dir`, `/`-separated as a checksum list names it (`None` if not UTF-8).
fn listed_name(dir: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
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
