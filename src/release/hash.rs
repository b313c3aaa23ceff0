//! One read per artifact: SHA-256 (for SHA256SUMS) and BLAKE2b-512 (the minisign prehash) are fed
//! from the same buffer, so a multi-GB artifact is read once and memory stays constant.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use blake2::{Blake2b512, Digest};
use sha2::Sha256;

/// Read buffer: large enough to amortise syscalls, small enough to keep RSS flat.
const BUFFER_BYTES: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Digests {
    pub sha256: [u8; 32],
    pub blake2b512: [u8; 64],
    pub size: u64,
}

/// Streams `reader` once through both hashes.
pub fn hash_reader(mut reader: impl Read) -> io::Result<Digests> {
    let mut sha = Sha256::new();
    let mut blake = Blake2b512::new();
    let mut buf = vec![0u8; BUFFER_BYTES];
    let mut size = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        sha.update(&buf[..n]);
        blake.update(&buf[..n]);
        size += n as u64;
    }
    Ok(Digests {
        sha256: sha.finalize().into(),
        blake2b512: blake.finalize().into(),
        size,
    })
}

pub fn hash_file(path: &Path) -> io::Result<Digests> {
    hash_reader(File::open(path)?)
}

pub fn hash_bytes(bytes: &[u8]) -> Digests {
    hash_reader(bytes).expect("reading from memory cannot fail")
}

/// Runs `f` over `items` on up to `available_parallelism()` threads, keeping the input order.
/// Work is handed out one item at a time, so one large artifact does not stall the others.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item is processed")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_of_abc() {
        let d = hash_bytes(b"abc");
        assert_eq!(
            super::super::checksums::to_hex(&d.sha256),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            super::super::checksums::to_hex(&d.blake2b512),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
        assert_eq!(d.size, 3);
    }

    #[test]
    fn parallel_map_keeps_order() {
        let items: Vec<u32> = (0..100).collect();
        assert_eq!(parallel_map(&items, |x| x * 2), items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(parallel_map(&Vec::<u32>::new(), |x| *x).is_empty());
    }
}
