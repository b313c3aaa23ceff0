//! `verify --require-log`: every counted signature of the checksum list must be an entry of the
//! transparency log, proved by the `.log-proof` beside it against a checkpoint signed by the
//! log's key and enough witnesses — and, given the log, consistent with it and with a pinned
//! earlier checkpoint. The entry is rebuilt from the release, so a proof of anything else fails.

use std::path::{Path, PathBuf};

use super::trust::{Candidate, Cause, Rejected, SignatureFiles};
use crate::release::tlog::entry::Entry;
use crate::release::tlog::log::{self, LogError};
use crate::release::tlog::note::VerifiedCheckpoint;
use crate::release::tlog::proof::proof_path;
use crate::release::tlog::proof::LogProof;
use crate::release::tlog::tiles::Store;
use crate::release::tlog::trust::LogRequirement;

fn unlogged(why: String) -> Rejected {
    (Cause::Unlogged, why)
}

fn unreadable(why: String) -> Rejected {
    (Cause::Unreadable, why)
}

fn from_log(e: LogError) -> Rejected {
    match e {
        LogError::Input(e) => unreadable(e.to_string()),
        LogError::Failed(why) => unlogged(why.to_string()),
    }
}

/// Checks that every signature of `set` over the list `file` (`sha256`) is in the log.
pub(crate) fn check_logged(
    req: &LogRequirement,
    set: &[(PathBuf, Candidate<'_>)],
    (file, sha256): (&str, [u8; 32]),
    files: &SignatureFiles<'_>,
) -> Result<(), Rejected> {
    let store = match &req.log {
        Some(location) => Some(
            crate::release::tlog::http::open(location, "--log")
                .map_err(|e| unreadable(e.to_string()))?,
        ),
        None => None,
    };
    let store = store.as_deref();
    let current = match store {
        Some(s) => Some(log::read_checkpoint(s, &req.trust.policy).map_err(from_log)?),
        None => None,
    };
    if let (Some(pinned), Some(store), Some(current)) = (&req.pinned, store, &current) {
        let bytes = crate::files::guarded::read_small_file(
            pinned,
            crate::release::tlog::note::MAX_CHECKPOINT_BYTES,
            "a checkpoint",
        )
        .map_err(|e| unreadable(e.to_string()))?;
        // The verifier's own earlier checkpoint: the log's signature is what makes it one.
        let mut policy = req.trust.policy.clone();
        policy.threshold = 0;
        let old = log::checked_checkpoint(bytes.as_bytes(), &pinned.display().to_string(), &policy)
            .map_err(from_log)?;
        log::check_consistency(store, &old, current).map_err(from_log)?;
    }
    for (sig_path, c) in set {
        let entry = Entry::new(c.key, file, sha256, &c.sig).map_err(|e| unlogged(e.to_string()))?;
        check_one(req, (store, current.as_ref()), sig_path, &entry, files)?;
    }
    Ok(())
}

/// The index of `entry` in the log, proved by the proof beside `sig_path`.
fn check_one(
    req: &LogRequirement,
    (store, current): (Option<&dyn Store>, Option<&VerifiedCheckpoint>),
    sig_path: &Path,
    entry: &Entry,
    files: &SignatureFiles<'_>,
) -> Result<u64, Rejected> {
    let path = proof_path(sig_path);
    let key = entry.key.key_id;
    let proof_file = (crate::release::tlog::proof::MAX_PROOF_BYTES, "a log proof");
    let text = match files.read_as(&path, proof_file) {
        Ok(text) => text,
        Err((Cause::Unsigned, _)) => {
            // No proof beside it (a mirror that copied only the signatures): the log itself,
            // when given, is searched; the entry found is proved against its checkpoint.
            if let (Some(store), Some(current)) = (store, current) {
                if let Some(index) = find_entry(store, current, entry).map_err(from_log)? {
                    return Ok(index);
                }
                return Err(unlogged(format!(
                    "signature by key {key} is not in the log: no {} beside {}, and no entry of the log (size {}) is this signature",
                    path.display(),
                    sig_path.display(),
                    current.size
                )));
            }
            return Err(unlogged(format!(
                "signature by key {key} is not in the log: no {} beside {} (sign with --log, or run `warden log append`)",
                path.display(),
                sig_path.display()
            )));
        }
        Err(e) => return Err(e),
    };
    let name = path.display().to_string();
    let proof =
        LogProof::parse(&text).map_err(|e| unreadable(e.in_origin(name.clone()).to_string()))?;
    // With the log at hand, the witnesses vouch for its checkpoint, which must extend the proof's.
    let mut policy = req.trust.policy.clone();
    if current.is_some() {
        policy.threshold = 0;
    }
    let cp = log::checked_checkpoint(&proof.checkpoint, &name, &policy).map_err(from_log)?;
    if let Err(why) = log::check_inclusion(&cp, proof.index, entry.leaf_hash(), &proof.hashes) {
        let differs = store.and_then(|s| what_differs(s, &cp, proof.index, entry));
        return Err(unlogged(format!(
            "{name}: signature by key {key} is not in the log: {}",
            differs.unwrap_or_else(|| why.to_string())
        )));
    }
    if let (Some(store), Some(current)) = (store, current) {
        // A log served behind the proof (a mirror or a cache not yet updated) cannot show that
        // it extends the proof's tree: said as such, not as a fork.
        if current.size < cp.size {
            return Err(unlogged(format!(
                "{name}: the log given with --log is behind this proof (its checkpoint has {} entries, the proof's {}): a stale mirror or cache, or a rolled-back log; verify against the log's origin, or once the mirror has caught up",
                current.size, cp.size
            )));
        }
        log::check_consistency(store, &cp, current).map_err(from_log)?;
    }
    Ok(proof.index)
}

/// The index of `entry` in the tree of `cp`, by reading every entry bundle, and proved.
fn find_entry(
    store: &dyn Store,
    cp: &VerifiedCheckpoint,
    entry: &Entry,
) -> Result<Option<u64>, LogError> {
    let leaf = entry.leaf_hash();
    let Some(index) = log::find_leaf(store, cp, leaf)? else {
        return Ok(None);
    };
    let hashes = log::prove_inclusion(store, cp, index)?;
    log::check_inclusion(cp, index, leaf, &hashes).map_err(LogError::Failed)?;
    Ok(Some(index))
}

/// When the log's entry at `index` is another record of the same key: what differs.
fn what_differs(
    store: &dyn Store,
    cp: &VerifiedCheckpoint,
    index: u64,
    want: &Entry,
) -> Option<String> {
    let bytes = log::entry_at(store, cp, index).ok()?;
    let have = Entry::parse(&bytes).ok()?;
    let mut what = Vec::new();
    if have.key != want.key {
        what.push(format!("it was signed by key {}", have.key.key_id));
    }
    if have.file != want.file {
        what.push(format!("it signs {:?}, not {:?}", have.file, want.file));
    }
    if have.sha256 != want.sha256 {
        what.push(format!(
            "its {} has SHA-256 {}, the release's has {}",
            want.file,
            crate::util::to_hex(&have.sha256),
            crate::util::to_hex(&want.sha256)
        ));
    }
    if have.signature.trusted_comment != want.signature.trusted_comment {
        what.push(format!(
            "its trusted comment is {:?}, the release's is {:?}",
            have.signature.trusted_comment.as_str(),
            want.signature.trusted_comment.as_str()
        ));
    } else if have.signature != want.signature {
        what.push("its signature bytes differ".to_string());
    }
    (!what.is_empty()).then(|| {
        format!(
            "entry {index} of the log differs from the release: {}",
            what.join("; ")
        )
    })
}
