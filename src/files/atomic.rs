//! Writing files without ever leaving half of one: write to a temp file in the target's
//! directory, fsync, then rename over the target.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use super::paths::parent_dir;
use crate::error::{Error, Result};

/// Prefix of warden's temp files; directory walks skip them.
pub(crate) const TEMP_PREFIX: &str = ".warden-";

/// A fully written (and closed) temp file waiting to be renamed onto its target. Dropping it
/// without `commit` removes the temp file. It holds a path, not an open handle, so a release of
/// thousands of artifacts does not run out of file descriptors.
#[derive(Debug)]
pub(crate) struct StagedFile {
    temp: TempPath,
    target: PathBuf,
}

/// Writes `contents` to a temp file next to `target` with the given unix mode.
pub(crate) fn stage(target: &Path, contents: &[u8], mode: u32) -> Result<StagedFile> {
    // Renaming over a device, a directory or a socket (as root: /dev/full) would replace it.
    if let Ok(meta) = fs::symlink_metadata(target) {
        if !meta.is_file() {
            return Err(Error::Refused(format!(
                "{} exists and is not a regular file: refusing to replace it",
                target.display()
            )));
        }
    }
    let dir = parent_dir(target);
    let temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io("creating a temp file in", dir, e))?;
    set_mode(temp.as_file(), mode)
        .map_err(|e| Error::io("setting permissions on", temp.path(), e))?;
    // Through the plain `File`: NamedTempFile's own `Write` appends the temp path to errors,
    // and that path means nothing to the user.
    let mut file = temp.as_file();
    file.write_all(contents)
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io("writing", target, e))?;
    Ok(StagedFile {
        temp: temp.into_temp_path(),
        target: target.to_path_buf(),
    })
}

#[cfg(unix)]
fn set_mode(file: &fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_file: &fs::File, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

impl StagedFile {
    /// Renames the temp file onto the target. Without `overwrite` an existing target is kept
    /// and the call fails (the check is atomic: no window between test and rename).
    pub(crate) fn commit(self, overwrite: bool) -> Result<()> {
        let target = self.target;
        let result = if overwrite {
            self.temp.persist(&target).map(|_| ())
        } else {
            self.temp.persist_noclobber(&target).map(|_| ())
        };
        result.map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                // Commands with --force say so before staging; here the file appeared since.
                Error::Refused(format!(
                    "{} already exists: it was kept as it is, and nothing was replaced",
                    target.display()
                ))
            } else {
                Error::io("writing", &target, e.error)
            }
        })?;
        // Make the rename itself durable.
        if let Ok(dir) = fs::File::open(parent_dir(&target)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

/// An exclusive lock on a directory that a command writes into, held until dropped: a second
/// `warden sign` on the same release refuses instead of interleaving its renames. The lock is
/// the directory's own (`flock` on its handle), so no lock file is left in the release.
#[derive(Debug)]
pub(crate) struct DirLock {
    /// `None` on a file system without locks (some network mounts): the run goes on unlocked.
    _dir: Option<fs::File>,
}

impl DirLock {
    /// Locks `dir`, or refuses at once when another process holds it.
    pub(crate) fn acquire(dir: &Path) -> Result<DirLock> {
        let handle = fs::File::open(dir).map_err(|e| Error::io("opening", dir, e))?;
        match handle.try_lock() {
            Ok(()) => Ok(DirLock { _dir: Some(handle) }),
            Err(fs::TryLockError::WouldBlock) => Err(Error::Refused(format!(
                "{}: another warden command is writing here; wait for it to finish",
                dir.display()
            ))),
            Err(fs::TryLockError::Error(e)) if no_locks_here(&e) => Ok(DirLock { _dir: None }),
            Err(fs::TryLockError::Error(e)) => Err(Error::io("locking", dir, e)),
        }
    }

    /// Removes warden temp files a killed run left in `dir`. Only under the lock: a running
    /// command's own temp files are never taken.
    pub(crate) fn remove_stale_temp_files(&self, dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        for entry in entries.filter_map(|e| e.ok()) {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let stale = name.starts_with(TEMP_PREFIX)
                && name.ends_with(".tmp")
                && entry.file_type().is_ok_and(|t| t.is_file());
            if stale && fs::remove_file(entry.path()).is_ok() {
                removed.push(entry.path());
            }
        }
        removed.sort();
        removed
    }
}

/// Whether a lock error means the file system has no locks (NFS without lockd: `ENOLCK`).
fn no_locks_here(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ENOLCK) {
        return true;
    }
    e.kind() == std::io::ErrorKind::Unsupported
}

/// Stages and commits one file.
pub fn write_atomic(target: &Path, contents: &[u8], mode: u32, overwrite: bool) -> Result<()> {
    stage(target, contents, mode)?.commit(overwrite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_file_is_invisible_until_commit_and_removed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.txt");
        let staged = stage(&target, b"hello", 0o644).unwrap();
        assert!(!target.exists());
        drop(staged);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomic(&target, b"one", 0o644, false).unwrap();
        let err = write_atomic(&target, b"two", 0o644, false).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(fs::read(&target).unwrap(), b"one");
        write_atomic(&target, b"two", 0o644, true).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn refuses_to_replace_what_is_not_a_regular_file() {
        let err = stage(Path::new("/dev/null"), b"x", 0o644).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = stage(dir.path(), b"x", 0o644).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
