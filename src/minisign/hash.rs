//! One read per artifact: SHA-256 (for SHA256SUMS) and BLAKE2b-512 (the minisign prehash) are fed
//! from the same buffer, so a multi-GB artifact is read once and memory stays constant.

use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use blake2::{Blake2b512, Digest};
use sha2::{Sha256, Sha512};

/// Read buffer: large enough to amortise syscalls, small enough to keep RSS flat.
const BUFFER_BYTES: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Digests {
    pub(crate) sha256: [u8; 32],
    pub(crate) blake2b512: [u8; 64],
    pub(crate) size: u64,
    /// SHA-512 too, when a SHA-512 checksum list asked for it (from the same read).
    pub(crate) sha512: Option<[u8; 64]>,
}

/// Bytes hashed so far, shared with whoever draws progress (the library never prints).
pub type Progress = Arc<AtomicU64>;

/// A reader that counts what passes through it into a [`Progress`].
struct Counted<'p, R> {
    inner: R,
    progress: Option<&'p AtomicU64>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(p) = self.progress {
            p.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// Both hashes, fed as bytes arrive (a download): the same digests `hash_reader` gives.
pub(crate) struct StreamHasher {
    sha: Sha256,
    blake: Blake2b512,
    sha512: Option<Sha512>,
    size: u64,
}

impl Default for StreamHasher {
    fn default() -> Self {
        StreamHasher {
            sha: Sha256::new(),
            blake: Blake2b512::new(),
            sha512: None,
            size: 0,
        }
    }
}

impl StreamHasher {
    /// With SHA-512 as well.
    pub(crate) fn with_sha512() -> Self {
        StreamHasher {
            sha512: Some(Sha512::new()),
            ..StreamHasher::default()
        }
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.sha.update(bytes);
        self.blake.update(bytes);
        if let Some(h) = self.sha512.as_mut() {
            h.update(bytes);
        }
        self.size += bytes.len() as u64;
    }

    pub(crate) fn finish(self) -> Digests {
        Digests {
            sha256: self.sha.finalize().into(),
            blake2b512: self.blake.finalize().into(),
            size: self.size,
            sha512: self.sha512.map(|h| h.finalize().into()),
        }
    }
}

/// Streams `reader` once through both hashes.
pub(crate) fn hash_reader(reader: impl Read) -> io::Result<Digests> {
    hash_reader_with(reader, StreamHasher::default())
}

/// Streams `reader` once through `hasher`.
fn hash_reader_with(mut reader: impl Read, mut hasher: StreamHasher) -> io::Result<Digests> {
    let mut buf = vec![0u8; BUFFER_BYTES];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finish())
}

/// Hashes a file (with SHA-512 too when `sha512`). With `split`, SHA-256 (and SHA-512) run on a
/// second thread beside BLAKE2b-512 (still one read): worth it when cores would otherwise sit
/// idle, e.g. a single large artifact.
pub(crate) fn hash_file(
    path: &Path,
    (split, sha512): (bool, bool),
    progress: Option<&Progress>,
) -> io::Result<Digests> {
    let file = Counted {
        inner: crate::files::guarded::open_regular(path)?,
        progress: progress.map(|p| &**p),
    };
    match (split, sha512) {
        (true, _) => hash_reader_split(file, sha512),
        (false, false) => hash_reader(file),
        (false, true) => hash_reader_with(file, StreamHasher::with_sha512()),
    }
}

/// Chunk size of the split hasher: two chunks are in memory at once.
const SPLIT_CHUNK_BYTES: usize = 2 << 20;

/// Fills `buf` as far as the reader allows; returns the bytes read (0 at end of input).
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Pipelined: while this thread feeds chunk k to BLAKE2b, a helper feeds it to SHA-256 and then
/// reads chunk k+1 into the other buffer.
pub(crate) fn hash_reader_split(
    mut reader: impl Read + Send,
    with_sha512: bool,
) -> io::Result<Digests> {
    let mut sha = Sha256::new();
    let mut sha512 = with_sha512.then(Sha512::new);
    let mut blake = Blake2b512::new();
    let mut current = vec![0u8; SPLIT_CHUNK_BYTES];
    let mut next = vec![0u8; SPLIT_CHUNK_BYTES];
    let mut n = read_full(&mut reader, &mut current)?;
    let mut size = 0u64;
    while n > 0 {
        size += n as u64;
        let chunk = &current[..n];
        let read_next = std::thread::scope(|scope| {
            let helper = scope.spawn(|| {
                sha.update(chunk);
                if let Some(h) = sha512.as_mut() {
                    h.update(chunk);
                }
                read_full(&mut reader, &mut next)
            });
            blake.update(chunk);
            helper.join()
        });
        n = match read_next {
            Ok(result) => result?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        std::mem::swap(&mut current, &mut next);
    }
    Ok(Digests {
        sha256: sha.finalize().into(),
        blake2b512: blake.finalize().into(),
        size,
        sha512: sha512.map(|h| h.finalize().into()),
    })
}

/// The bytes' digests with SHA-512 too.
pub(crate) fn hash_bytes_sha512(bytes: &[u8]) -> Digests {
    hash_reader_with(bytes, StreamHasher::with_sha512()).expect("reading from memory cannot fail")
}

pub(crate) fn hash_bytes(bytes: &[u8]) -> Digests {
    hash_reader(bytes).expect("reading from memory cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_of_abc() {
        let d = hash_bytes(b"abc");
        assert_eq!(
            crate::util::to_hex(&d.sha256),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            crate::util::to_hex(&d.blake2b512),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
        assert_eq!(d.size, 3);
    }

    #[test]
    fn split_hasher_matches_the_single_thread_one() {
        let data: Vec<u8> = (0..(SPLIT_CHUNK_BYTES * 2 + 12345))
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        for len in [0, 1, SPLIT_CHUNK_BYTES, data.len()] {
            let one = hash_reader(&data[..len]).unwrap();
            let split = hash_reader_split(&data[..len], false).unwrap();
            assert_eq!(one, split, "length {len}");
        }
    }
}
