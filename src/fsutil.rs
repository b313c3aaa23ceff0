//! Writing files without ever leaving half of one: write to a temp file in the target's
//! directory, fsync, then rename over the target.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{Error, Result};

/// Prefix of warden's temp files; directory walks skip them.
pub const TEMP_PREFIX: &str = ".warden-";

/// A fully written temp file waiting to be renamed onto its target. Dropping it without
/// `commit` removes the temp file.
#[derive(Debug)]
pub struct StagedFile {
    temp: NamedTempFile,
    target: PathBuf,
}

/// The directory a path lives in (`.` for a bare file name).
pub fn parent_dir(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes `contents` to a temp file next to `target` with the given unix mode.
pub fn stage(target: &Path, contents: &[u8], mode: u32) -> Result<StagedFile> {
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
        temp,
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
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temp file onto the target. Without `overwrite` an existing target is kept
    /// and the call fails (the check is atomic: no window between test and rename).
    pub fn commit(self, overwrite: bool) -> Result<()> {
        let target = self.target;
        let result = if overwrite {
            self.temp.persist(&target).map(|_| ())
        } else {
            self.temp.persist_noclobber(&target).map(|_| ())
        };
        result.map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Refused(format!(
                    "{} already exists (use --force to replace it)",
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

/// Stages and commits one file.
pub fn write_atomic(target: &Path, contents: &[u8], mode: u32, overwrite: bool) -> Result<()> {
    stage(target, contents, mode)?.commit(overwrite)
}

/// The most a key or signature file may hold: minisign's comments are at most about 1 KiB.
pub const SMALL_FILE_CAP: u64 = 64 * 1024;

/// Reads a file that must be small (a key, a signature, a checksum list) without trusting its
/// size: more than `cap` bytes is an error naming `what` the file should have been, never an
/// unbounded allocation. The buffer starts large enough that a key is never reallocated (which
/// would leave unwiped copies behind).
pub fn read_capped(
    reader: impl std::io::Read,
    origin: &str,
    cap: u64,
    what: &str,
) -> std::result::Result<String, CappedReadError> {
    let Some(bytes) = read_at_most(reader, cap).map_err(CappedReadError::Io)? else {
        return Err(CappedReadError::Input(Error::input(
            origin,
            None,
            match cap {
                0..1024 => format!("larger than {cap} bytes: not {what}"),
                _ => format!("larger than {} KiB: not {what}", cap / 1024),
            },
        )));
    };
    String::from_utf8(bytes).map_err(|e| {
        // Wipe what was read: it may be a secret key with one bad byte.
        let mut bytes = e.into_bytes();
        zeroize::Zeroize::zeroize(&mut bytes);
        CappedReadError::Input(Error::input(
            origin,
            None,
            format!("not UTF-8 text: not {what}"),
        ))
    })
}

/// All of `reader` if it holds at most `cap` bytes, else `None`; never reads past `cap + 1`.
/// The buffer starts at 4 KiB, so a key is read without a reallocation.
pub fn read_at_most(reader: impl std::io::Read, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    let mut bytes = Vec::with_capacity(4096);
    reader.take(cap + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= cap).then_some(bytes))
}

/// Why `read_capped` failed: the reader, or what it read.
#[derive(Debug)]
pub enum CappedReadError {
    Io(std::io::Error),
    Input(Error),
}

/// `read_capped` on a file, with the file named in every error.
pub fn read_small_file(path: &Path, cap: u64, what: &str) -> Result<String> {
    let file = fs::File::open(path).map_err(|e| Error::io("reading", path, e))?;
    read_capped(file, &path.display().to_string(), cap, what).map_err(|e| match e {
        CappedReadError::Io(e) => Error::io("reading", path, e),
        CappedReadError::Input(e) => e,
    })
}

/// Opens `path` only if it is a regular file. A FIFO named in a hostile `SHA256SUMS` would block
/// the open forever, and a device would never end.
pub fn open_regular(path: &Path) -> std::io::Result<fs::File> {
    let not_regular = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (FIFOs, devices and directories are never read)",
        )
    };
    if !fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = fs::File::open(path)?;
    // Swapped between the two looks: check what was opened.
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// A non-empty relative path with no `..`, root or prefix component: it names something under
/// whatever directory it is joined to (before links are resolved).
pub fn is_plain_relative(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The text of a regular file that resolves inside `root`. For files a pull request controls
/// (workflows, registry paths): a committed link could point anywhere, and a FIFO would block.
pub fn read_text_inside(root: &Path, path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let real = fs::canonicalize(path)?;
    if !fs::canonicalize(root).is_ok_and(|r| real.starts_with(r)) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "resolves outside the repository",
        ));
    }
    let mut text = String::new();
    open_regular(&real)?.read_to_string(&mut text)?;
    Ok(text)
}

/// The git work tree containing `dir` (an existing directory), if any.
pub fn enclosing_git_work_tree(dir: &Path) -> Option<PathBuf> {
    let dir = fs::canonicalize(dir).ok()?;
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_reads_take_exactly_the_cap_and_no_more() {
        let read = |n: usize| read_capped(&vec![b'a'; n][..], "x", 8, "a thing");
        assert_eq!(read(8).unwrap(), "aaaaaaaa");
        match read(9) {
            Err(CappedReadError::Input(e)) => {
                assert_eq!(e.to_string(), "x: larger than 8 bytes: not a thing")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_capped(&b"\xff"[..], "x", 8, "a thing"),
            Err(CappedReadError::Input(_))
        ));
    }

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

    #[test]
    fn finds_the_enclosing_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
        fs::create_dir_all(dir.path().join("repo/sub")).unwrap();
        let root = fs::canonicalize(dir.path().join("repo")).unwrap();
        assert_eq!(
            enclosing_git_work_tree(&dir.path().join("repo/sub")),
            Some(root)
        );
    }
}
