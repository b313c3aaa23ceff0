//! Reading files warden does not control: never more than a cap, never a FIFO or a device, never
//! through a link out of the tree the file must be in.

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};

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
pub(crate) fn read_at_most(
    reader: impl std::io::Read,
    cap: u64,
) -> std::io::Result<Option<Vec<u8>>> {
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

/// `read_capped` on a file, with the file named in every error. Only a regular file is read.
pub fn read_small_file(path: &Path, cap: u64, what: &str) -> Result<String> {
    let file = open_regular(path).map_err(|e| Error::io("reading", path, e))?;
    read_capped(file, &path.display().to_string(), cap, what).map_err(|e| match e {
        CappedReadError::Io(e) => Error::io("reading", path, e),
        CappedReadError::Input(e) => e,
    })
}

fn not_regular() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "not a regular file (FIFOs, devices and directories are never read)",
    )
}

/// Opens `path` only if it is a regular file, with no window between the check and the open:
/// the open itself cannot block (`O_NONBLOCK`: a FIFO with no writer would wait forever), and the
/// check is made on the opened handle (`fstat`), so a file swapped for a FIFO or a link to a
/// device after a look at its name is still refused.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// The bytes of a regular file that resolves inside `root`, at most `cap` of them. For files a
/// pull request controls (workflows, registry files, the doc): a committed link could point
/// anywhere, a FIFO would block and `/dev/zero` would never end.
pub(crate) fn read_bytes_inside(root: &Path, path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let real = fs::canonicalize(path)?;
    if !fs::canonicalize(root).is_ok_and(|r| real.starts_with(r)) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "resolves outside the repository",
        ));
    }
    read_at_most(open_regular(&real)?, cap)?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("larger than {} KiB", cap / 1024),
        )
    })
}

/// `read_bytes_inside`, as UTF-8 text.
pub(crate) fn read_text_inside(root: &Path, path: &Path, cap: u64) -> std::io::Result<String> {
    String::from_utf8(read_bytes_inside(root, path, cap)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
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
}
