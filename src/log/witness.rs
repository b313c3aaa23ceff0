//! C2SP tlog-witness (`c2sp.org/tlog-witness`): the `add-checkpoint` request a log sends its
//! witnesses, and the witness's decision on it, status code and all, given the last checkpoint it
//! cosigned for the origin. Formats and the decision only: the server and the client that carry
//! them are `release::witness_net`.
//!
//! Request body: `old <size>\n`, zero to 63 base64 consistency-proof hashes one per line, an empty
//! line, then the checkpoint note with its signatures. The answers are the spec's: 404 for an
//! origin the witness does not follow, 403 without a valid signature by the log's key, 400 for a
//! malformed request or an old size beyond the checkpoint's, 409 (body: the size it knows, as
//! `text/x.tlog.size`) when the old size is not the one it cosigned last, 422 when the proof does
//! not prove the new tree extends the old one (a fork), 200 with the cosignature line. And where
//! a witness keeps the checkpoint it cosigned last, for the served and the pulled witness alike.

use base64::Engine as _;

use super::note::{verify_checkpoint, CheckpointError, CheckpointPolicy, VerifiedCheckpoint};
use std::path::{Path, PathBuf};

use super::note::MAX_CHECKPOINT_BYTES;
use crate::error::{Error, Reason};
use crate::files::guarded;

/// At most this many proof lines (a tree of 2^63 entries needs no more).
pub(crate) const MAX_PROOF_LINES: usize = 63;
/// The largest request body a witness reads.
pub(crate) const MAX_REQUEST_BYTES: usize = 80 << 10;
/// The content type of a 409's body.
pub(crate) const SIZE_TYPE: &str = "text/x.tlog.size";

/// An `add-checkpoint` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AddCheckpoint {
    pub(crate) old: u64,
    pub(crate) proof: Vec<[u8; 32]>,
    /// The checkpoint note, signatures included.
    pub(crate) checkpoint: Vec<u8>,
}

impl AddCheckpoint {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut out = format!("old {}\n", self.old).into_bytes();
        for h in &self.proof {
            out.extend_from_slice(b64.encode(h).as_bytes());
            out.push(b'\n');
        }
        out.push(b'\n');
        out.extend_from_slice(&self.checkpoint);
        out
    }

    pub(crate) fn parse(body: &[u8]) -> Result<Self, Reason> {
        if body.len() > MAX_REQUEST_BYTES {
            return Err("the request is larger than a checkpoint and its proof".into());
        }
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut rest = body;
        let mut line = |what: &str| -> Result<&[u8], Reason> {
            let end = rest
                .iter()
                .position(|b| *b == b'\n')
                .ok_or_else(|| format!("{what}: the line does not end"))?;
            let (l, r) = rest.split_at(end);
            rest = &r[1..];
            Ok(l)
        };
        let first = line("the first line")?;
        let old = std::str::from_utf8(first)
            .ok()
            .and_then(|l| l.strip_prefix("old "))
            .filter(|n| {
                !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_digit())
                    && (n.len() == 1 || !n.starts_with('0'))
            })
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or("the first line is not `old <size>`")?;
        let mut proof = Vec::new();
        loop {
            let l = line("the consistency proof")?;
            if l.is_empty() {
                break;
            }
            if proof.len() == MAX_PROOF_LINES {
                return Err(format!("more than {MAX_PROOF_LINES} proof lines").into());
            }
            let hash = b64
                .decode(l)
                .ok()
                .and_then(|h| <[u8; 32]>::try_from(h).ok())
                .ok_or("a proof line is not a base64 SHA-256 hash")?;
            proof.push(hash);
        }
        Ok(AddCheckpoint {
            old,
            proof,
            checkpoint: rest.to_vec(),
        })
    }
}

/// The checkpoint's origin: its first line, without a signature check (to find the log).
pub(crate) fn origin_of(note: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(note).ok()?;
    text.split('\n').next().filter(|o| !o.is_empty())
}

/// A witness's answer: the status and the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: u16,
    pub(crate) body: String,
}

fn refuse(status: u16, body: impl Into<String>) -> Refusal {
    Refusal {
        status,
        body: body.into(),
    }
}

/// The witness's decision on `req` for a log it follows (`policy`: the log's key), given the
/// checkpoint it cosigned last (`None`: never): the checkpoint to cosign, or the refusal.
pub(crate) fn decide(
    req: &AddCheckpoint,
    policy: &CheckpointPolicy,
    last: Option<&VerifiedCheckpoint>,
) -> Result<VerifiedCheckpoint, Refusal> {
    let cp = verify_checkpoint(&req.checkpoint, policy).map_err(|e| match e {
        CheckpointError::Malformed(why) => refuse(400, format!("{why}\n")),
        CheckpointError::Refused(why) => refuse(403, format!("{why}\n")),
    })?;
    if req.old > cp.size {
        return Err(refuse(
            400,
            format!(
                "old size {} is beyond the checkpoint's size {}\n",
                req.old, cp.size
            ),
        ));
    }
    let known = last.map_or(0, |l| l.size);
    if req.old != known {
        return Err(refuse(409, format!("{known}\n")));
    }
    let empty_root = tlog_tiles::Hash(crate::minisign::hash::hash_bytes(b"").sha256);
    if cp.size == 0 && cp.root != empty_root {
        return Err(refuse(422, "a tree of size 0 has the empty tree's root\n"));
    }
    match last {
        None if !req.proof.is_empty() => {
            Err(refuse(422, "a consistency proof from size 0 is empty\n"))
        }
        None => Ok(cp),
        Some(last) if last.size == cp.size => {
            if last.root != cp.root || !req.proof.is_empty() {
                return Err(refuse(
                    422,
                    format!(
                        "the log forked at size {}: this witness cosigned another root for that size\n",
                        cp.size
                    ),
                ));
            }
            Ok(cp)
        }
        Some(last) => {
            super::tree::check_consistency_proof(&req.proof, last, &cp)
                .map_err(|e| refuse(422, format!("{e}\n")))?;
            Ok(cp)
        }
    }
}

/// `note` with the cosignature `line` (`— name base64`) added, an earlier one by the same name
/// and key id replaced.
pub(crate) fn with_cosignature(note: &[u8], line: &str) -> Result<Vec<u8>, Reason> {
    let sig = signed_note::Signature::from_bytes(line.trim_end_matches('\n').as_bytes())
        .map_err(|_| "not a note signature line")?;
    let text = std::str::from_utf8(note).map_err(|_| "not a signed note")?;
    let (body, sigs) = text
        .rsplit_once("\n\n")
        .ok_or("not a signed note (no empty line before its signatures)")?;
    let mut out = format!("{body}\n\n");
    for existing in sigs.lines() {
        let same = signed_note::Signature::from_bytes(existing.as_bytes())
            .is_ok_and(|s| s.name() == sig.name() && s.id() == sig.id());
        if !same {
            out.push_str(existing);
            out.push('\n');
        }
    }
    out.push_str(&String::from_utf8_lossy(&sig.to_bytes()));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out.into_bytes())
}

/// The state file of `origin` under `state`: the checkpoint this witness cosigned last (the
/// pull witness, `warden log witness DIR`, keeps the same).
pub(crate) fn state_file(state: &Path, origin: &str) -> PathBuf {
    state.join(crate::util::to_hex(
        &crate::minisign::hash::hash_bytes(origin.as_bytes()).sha256,
    ))
}

/// The checkpoint this witness cosigned last for `policy`'s log (`None`: never), from the state
/// folder, checked against the log's key: the one read of a witness's state, served or pulled.
pub(crate) fn last_cosigned(
    state: &Path,
    policy: &CheckpointPolicy,
) -> Result<Option<VerifiedCheckpoint>, Error> {
    let file = state_file(state, &policy.log.name);
    if std::fs::symlink_metadata(&file).is_err() {
        return Ok(None);
    }
    let bytes = guarded::read_bytes_inside(state, &file, MAX_CHECKPOINT_BYTES)
        .map_err(|e| Error::io("reading", &file, e))?;
    super::tree::checked_checkpoint(&bytes, &file.display().to_string(), policy)
        .map(Some)
        .map_err(|e| Error::Refused(format!("the witness's state: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_and_malformed_ones_are_named() {
        let req = AddCheckpoint {
            old: 3,
            proof: vec![[7; 32], [9; 32]],
            checkpoint: b"example.org/log\n4\nAAAA\n\n\xe2\x80\x94 x y\n".to_vec(),
        };
        assert_eq!(AddCheckpoint::parse(&req.to_bytes()), Ok(req));
        for (body, why) in [
            (&b"old 03\n\nx"[..], "the first line is not `old <size>`"),
            (b"new 3\n\nx", "the first line is not `old <size>`"),
            (
                b"old 3\nnot base64\n\nx",
                "a proof line is not a base64 SHA-256 hash",
            ),
            (b"old 3", "the first line: the line does not end"),
        ] {
            assert_eq!(AddCheckpoint::parse(body).unwrap_err().to_string(), why);
        }
    }
}
