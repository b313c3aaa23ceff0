//! `SHA256SUMS.log-proof`: where a signature sits in the log, proved (C2SP tlog-proof@v1: the
//! entry's index, the inclusion proof from the leaf upwards, then the checkpoint with its
//! signatures). The entry itself is not in the file: the verifier rebuilds it from the release.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use tlog_tiles::Hash;

use std::path::{Path, PathBuf};

use crate::error::ParseError;
pub(crate) use crate::minisign::names::PROOF_SUFFIX;
use crate::minisign::names::SIGNATURE_SUFFIX;

const VERSION: &str = "c2sp.org/tlog-proof@v1";
/// A tree of 2^48 entries needs 48 hashes; more is not a proof.
const MAX_PROOF_HASHES: usize = 63;
/// A proof file is its hashes and one checkpoint.
pub(crate) const MAX_PROOF_BYTES: u64 = 128 * 1024;

/// The proof file beside a signature (`X.minisig` → `X.log-proof`).
pub(crate) fn proof_path(signature: &Path) -> PathBuf {
    let s = signature.to_string_lossy();
    let stem = s.strip_suffix(SIGNATURE_SUFFIX).unwrap_or(&s);
    PathBuf::from(format!("{stem}{PROOF_SUFFIX}"))
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LogProof {
    pub(crate) index: u64,
    pub(crate) hashes: Vec<Hash>,
    /// The checkpoint note, as signed.
    pub(crate) checkpoint: Vec<u8>,
}

impl LogProof {
    pub(crate) fn parse(text: &str) -> Result<Self, ParseError> {
        let mut lines = text
            .split_inclusive('\n')
            .enumerate()
            .map(|(i, l)| (i + 1, l));
        let mut next = |what: &str| {
            lines
                .next()
                .map(|(n, l)| (n, l.strip_suffix('\n').unwrap_or(l)))
                .ok_or_else(|| ParseError::whole(format!("ends before {what} (truncated proof)")))
        };
        let (_, first) = next("its first line")?;
        if first != VERSION {
            return Err(ParseError::at(
                1,
                format!("expected `{VERSION}` (not a log proof)"),
            ));
        }
        let (mut n, mut line) = next("`index N`")?;
        while line.starts_with("extra ") {
            (n, line) = next("`index N`")?;
        }
        let index = line
            .strip_prefix("index ")
            .filter(|d| {
                !d.is_empty()
                    && d.bytes().all(|b| b.is_ascii_digit())
                    && (d.len() == 1 || !d.starts_with('0'))
            })
            .and_then(|d| d.parse::<u64>().ok())
            .ok_or_else(|| ParseError::at(n, "expected `index N` (a decimal entry index)"))?;
        let mut hashes = Vec::new();
        loop {
            let (n, line) = next("the empty line before the checkpoint")?;
            if line.is_empty() {
                break;
            }
            if hashes.len() == MAX_PROOF_HASHES {
                return Err(ParseError::at(
                    n,
                    format!("more than {MAX_PROOF_HASHES} proof hashes"),
                ));
            }
            let bytes = BASE64
                .decode(line)
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| {
                    ParseError::at(n, "expected a base64 SHA-256 hash (44 characters)")
                })?;
            hashes.push(Hash(bytes));
        }
        let checkpoint: String = lines.map(|(_, l)| l).collect();
        if checkpoint.is_empty() {
            return Err(ParseError::whole(
                "no checkpoint after the proof hashes (truncated proof)",
            ));
        }
        Ok(LogProof {
            index,
            hashes,
            checkpoint: checkpoint.into_bytes(),
        })
    }
}

impl fmt::Display for LogProof {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{VERSION}")?;
        writeln!(f, "index {}", self.index)?;
        for h in &self.hashes {
            writeln!(f, "{}", BASE64.encode(h.0))?;
        }
        writeln!(f)?;
        write!(f, "{}", String::from_utf8_lossy(&self.checkpoint))
    }
}

/// How long the inclusion proof of entry `index` in a tree of `size` entries is (RFC 9162).
pub(crate) fn inclusion_proof_len(index: u64, size: u64) -> usize {
    if index >= size {
        return 0;
    }
    // RFC 9162 §2.1.3.2's walk, counting the hashes it takes.
    let (mut f, mut s, mut len) = (index, size - 1, 0);
    while s > 0 {
        len += 1;
        if f % 2 == 0 && f == s {
            while f % 2 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        }
        f >>= 1;
        s >>= 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_round_trips_and_hostile_ones_name_the_line() {
        let proof = LogProof {
            index: 5,
            hashes: vec![Hash([1; 32]), Hash([2; 32])],
            checkpoint: b"example.com/log\n7\nAAAA\n\n\xe2\x80\x94 example.com/log AAAA\n".to_vec(),
        };
        let text = proof.to_string();
        assert_eq!(LogProof::parse(&text).unwrap(), proof);
        let e = |t: &str| LogProof::parse(t).unwrap_err().to_string();
        assert_eq!(
            e("hello\n"),
            "line 1: expected `c2sp.org/tlog-proof@v1` (not a log proof)"
        );
        assert_eq!(
            e("c2sp.org/tlog-proof@v1\nindex 05\n"),
            "line 2: expected `index N` (a decimal entry index)"
        );
        assert_eq!(
            e("c2sp.org/tlog-proof@v1\nindex 5\nnope\n"),
            "line 3: expected a base64 SHA-256 hash (44 characters)"
        );
        assert_eq!(
            e("c2sp.org/tlog-proof@v1\nindex 5\n"),
            "ends before the empty line before the checkpoint (truncated proof)"
        );
    }

    #[test]
    fn proof_lengths_follow_the_tree_s_shape() {
        // Size 7: leaves 0-3 sit under a perfect subtree of 4 (2 hashes) plus the right side.
        assert_eq!(inclusion_proof_len(0, 7), 3);
        assert_eq!(inclusion_proof_len(6, 7), 2);
        assert_eq!(inclusion_proof_len(4, 7), 3);
        assert_eq!(inclusion_proof_len(0, 1), 0);
        assert_eq!(inclusion_proof_len(0, 100_000), 17);
        assert_eq!(inclusion_proof_len(99_999, 100_000), 10);
    }
}
