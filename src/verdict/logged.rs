//! `verify --require-log`: every counted signature of the checksum list must be an entry of the
//! transparency log, proved by the `.log-proof` beside it against a checkpoint signed by the
//! log's key and enough witnesses — and, given the log, consistent with it and with a pinned
//! earlier checkpoint. The entry is rebuilt from the release, so a proof of anything else fails.
//! Judged from what `release::log_reader` read; what is still to be read is asked for.

use std::path::Path;

use super::evidence::{Evidence, LogEvidence, LogNeed, Needs, Tree};
use crate::log::entry::Entry;
use crate::log::note::VerifiedCheckpoint;
use crate::log::proof::{proof_path, LogProof};
use crate::log::tree::{self, LogError};
use crate::trust::log::{rolled_back, LogRequirement, LoggedRelease};
use crate::trust::signer::{Candidate, Cause, Rejected, SignatureFiles};

fn unlogged(why: String) -> Rejected {
    (Cause::Unlogged, why)
}

fn unreadable(why: String) -> Rejected {
    (Cause::Unreadable, why)
}

pub(crate) fn from_log(e: LogError) -> Rejected {
    match e {
        LogError::Input(e) => unreadable(e.to_string()),
        LogError::Failed(why) => unlogged(why.to_string()),
    }
}

fn tree_of(cp: &VerifiedCheckpoint) -> Tree {
    (cp.size, cp.root.0)
}

/// The log requirement `req` (the `index`th) of every signature of `set` over the list `file`
/// (`sha256`): `None` while something must be read first (added to `needs`).
pub(crate) fn judge(
    (index, req): (usize, &LogRequirement),
    set: &[(std::path::PathBuf, Candidate<'_>)],
    (file, sha256): (&str, [u8; 32]),
    ev: &Evidence,
    needs: &mut Needs,
) -> Option<Result<(), Rejected>> {
    let empty = LogEvidence::default();
    let log = ev.logs.get(&index).unwrap_or(&empty);
    let mut ask = |need: LogNeed| {
        needs.logs.insert((index, need));
    };
    let current = match (&req.log, &log.checkpoint) {
        (None, _) => None,
        (Some(_), None) => {
            ask(LogNeed::Checkpoint);
            return None;
        }
        (Some(_), Some(Err(e))) => return Some(Err(e.clone())),
        (Some(_), Some(Ok((name, bytes)))) => {
            match tree::checked_checkpoint(bytes, name, &req.trust.policy) {
                Ok(cp) => Some(cp),
                Err(e) => return Some(Err(from_log(e))),
            }
        }
    };
    if let (Some(pinned), Some(current)) = (&req.pinned, &current) {
        let old = match &log.pinned {
            None => {
                ask(LogNeed::Pinned);
                return None;
            }
            Some(Err(e)) => return Some(Err(e.clone())),
            Some(Ok(bytes)) => {
                // The verifier's own earlier checkpoint: the log's signature is what makes it one.
                let mut policy = req.trust.policy.clone();
                policy.threshold = 0;
                let origin = pinned.display().to_string();
                match tree::checked_checkpoint(bytes, &origin, &policy) {
                    Ok(cp) => cp,
                    Err(e) => return Some(Err(from_log(e))),
                }
            }
        };
        match consistent(&old, current, log, &mut ask)? {
            Ok(()) => {}
            Err(e) => return Some(Err(e)),
        }
    }
    let files = SignatureFiles(&ev.texts);
    // In signature order: the first failure decides, once what comes before it is read.
    let mut pending = false;
    for (sig_path, c) in set {
        let entry = match Entry::new(c.key, file, sha256, &c.sig) {
            Ok(entry) => entry,
            Err(e) if !pending => return Some(Err(unlogged(e.to_string()))),
            Err(_) => break,
        };
        let one = judge_one(
            req,
            (current.as_ref(), log),
            (sig_path, &entry),
            &files,
            &mut ask,
        );
        let one = match one {
            Some(Ok(index)) => {
                not_rolled_back(current.as_ref(), log, (index, &entry), &mut ask).transpose()
            }
            Some(Err(e)) => Some(Err(e)),
            None => None,
        };
        match one {
            None => pending = true,
            Some(Err(e)) if !pending => return Some(Err(e)),
            Some(Err(_)) => break,
            Some(Ok(())) => {}
        }
    }
    (!pending).then_some(Ok(()))
}

/// With the log at hand, the entry at `index` (`entry`) must not be a rollback: no earlier entry
/// logs the same bytes for another release (the rule the monitor applies, `trust::log`).
/// `Ok(None)` while the earlier entries are to be read.
fn not_rolled_back(
    current: Option<&VerifiedCheckpoint>,
    log: &LogEvidence,
    (index, entry): (u64, &Entry),
    ask: &mut impl FnMut(LogNeed),
) -> Result<Option<()>, Rejected> {
    let Some(current) = current else {
        return Ok(Some(()));
    };
    let key = (entry.sha256, index, tree_of(current));
    let earlier = match log.same_bytes.get(&key) {
        None => {
            ask(LogNeed::SameBytes {
                sha256: entry.sha256,
                before: index,
                tree: tree_of(current),
            });
            return Ok(None);
        }
        Some(Err(e)) => return Err(e.clone()),
        Some(Ok(found)) => found,
    };
    let earlier: Vec<LoggedRelease> = earlier
        .iter()
        .filter_map(|(i, bytes)| Some(LoggedRelease::of(&Entry::parse(bytes).ok()?, *i)))
        .collect();
    match rolled_back(&earlier, &LoggedRelease::of(entry, index)) {
        Some(why) => Err(unlogged(format!(
            "signature by key {} is entry {index} of the log, which {why}",
            entry.key.key_id
        ))),
        None => Ok(Some(())),
    }
}

/// Whether the tree of `new` extends the one of `old`: `None` while the proof is to be read.
fn consistent(
    old: &VerifiedCheckpoint,
    new: &VerifiedCheckpoint,
    log: &LogEvidence,
    ask: &mut impl FnMut(LogNeed),
) -> Option<Result<(), Rejected>> {
    if let Some(decided) = tree::consistency_without_proof(old, new) {
        return Some(decided.map_err(from_log));
    }
    match log.consistency.get(&(old.size, tree_of(new))) {
        None => {
            ask(LogNeed::Consistency {
                old: old.size,
                tree: tree_of(new),
            });
            None
        }
        Some(Err(e)) => Some(Err(e.clone())),
        Some(Ok(proof)) => Some(tree::check_consistency_proof(proof, old, new).map_err(from_log)),
    }
}

/// One signature's entry (`entry`, its signature at `sig_path`) in the log, proved by the proof
/// beside it, or found in the log itself when it has none and the log is at hand: its index.
fn judge_one(
    req: &LogRequirement,
    (current, log): (Option<&VerifiedCheckpoint>, &LogEvidence),
    (sig_path, entry): (&Path, &Entry),
    files: &SignatureFiles<'_>,
    ask: &mut impl FnMut(LogNeed),
) -> Option<Result<u64, Rejected>> {
    let path = proof_path(sig_path);
    let key = entry.key.key_id;
    let text = match files.read(&path) {
        Ok(text) => text,
        Err((Cause::Unsigned, _)) => return without_proof(current, log, (sig_path, entry), ask),
        Err(e) => return Some(Err(e)),
    };
    let name = path.display().to_string();
    let proof = match LogProof::parse(&text) {
        Ok(proof) => proof,
        Err(e) => return Some(Err(unreadable(e.in_origin(name).to_string()))),
    };
    // With the log at hand, the witnesses vouch for its checkpoint, which must extend the proof's.
    let mut policy = req.trust.policy.clone();
    if current.is_some() {
        policy.threshold = 0;
    }
    let cp = match tree::checked_checkpoint(&proof.checkpoint, &name, &policy) {
        Ok(cp) => cp,
        Err(e) => return Some(Err(from_log(e))),
    };
    if let Err(why) = tree::check_inclusion(&cp, proof.index, entry.leaf_hash(), &proof.hashes) {
        let differs = match current {
            None => None,
            Some(_) => match log.entries.get(&(proof.index, tree_of(&cp))) {
                None => {
                    ask(LogNeed::EntryAt {
                        index: proof.index,
                        tree: tree_of(&cp),
                    });
                    return None;
                }
                Some(Ok(bytes)) => what_differs(bytes, proof.index, entry),
                Some(Err(_)) => None,
            },
        };
        return Some(Err(unlogged(format!(
            "{name}: signature by key {key} is not in the log: {}",
            differs.unwrap_or_else(|| why.to_string())
        ))));
    }
    let Some(current) = current else {
        return Some(Ok(proof.index));
    };
    // A log served behind the proof (a mirror or a cache not yet updated) cannot show that it
    // extends the proof's tree: said as such, not as a fork.
    if current.size < cp.size {
        return Some(Err(unlogged(format!(
            "{name}: the log given with --log is behind this proof (its checkpoint has {} entries, the proof's {}): a stale mirror or cache, or a rolled-back log; verify against the log's origin, or once the mirror has caught up",
            current.size, cp.size
        ))));
    }
    consistent(&cp, current, log, ask).map(|r| r.map(|()| proof.index))
}

/// A signature with no proof beside it (a mirror that copied only the signatures): the log
/// itself, when given, is searched; the entry found is proved against its checkpoint.
fn without_proof(
    current: Option<&VerifiedCheckpoint>,
    log: &LogEvidence,
    (sig_path, entry): (&Path, &Entry),
    ask: &mut impl FnMut(LogNeed),
) -> Option<Result<u64, Rejected>> {
    let path = proof_path(sig_path);
    let key = entry.key.key_id;
    let Some(current) = current else {
        return Some(Err(unlogged(format!(
            "signature by key {key} is not in the log: no {} beside {} (sign with --log, or run `warden log append`)",
            path.display(),
            sig_path.display()
        ))));
    };
    let leaf = entry.leaf_hash();
    match log.found.get(&(leaf.0, tree_of(current))) {
        None => {
            ask(LogNeed::Find {
                leaf: leaf.0,
                tree: tree_of(current),
            });
            None
        }
        Some(Err(e)) => Some(Err(e.clone())),
        Some(Ok(Some((index, hashes)))) => {
            let hashes: Vec<tlog_tiles::Hash> =
                hashes.iter().map(|h| tlog_tiles::Hash(*h)).collect();
            Some(
                tree::check_inclusion(current, *index, leaf, &hashes)
                    .map(|()| *index)
                    .map_err(|why| unlogged(why.to_string())),
            )
        }
        Some(Ok(None)) => Some(Err(unlogged(format!(
            "signature by key {key} is not in the log: no {} beside {}, and no entry of the log (size {}) is this signature",
            path.display(),
            sig_path.display(),
            current.size
        )))),
    }
}

/// When the log's entry at `index` (its `bytes`) is another record of the same key: what differs.
fn what_differs(bytes: &[u8], index: u64, want: &Entry) -> Option<String> {
    let have = Entry::parse(bytes).ok()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::note::{sign_checkpoint, KeyRole, NoteSigner};
    use crate::minisign::hash::hash_bytes;
    use crate::trust::log::{LogTrust, VerifierKeyArg};
    use crate::trust::signer::{check_signature_text, Checks, Judged, SignedName};
    use crate::verdict::testkit::Signer;
    use std::path::PathBuf;

    const ORIGIN: &str = "example.org/log";

    /// A log of one entry (this signature of `SHA256SUMS`), its key, and the signature's proof.
    struct OneEntryLog {
        log: NoteSigner,
        signer: Signer,
        sums: Vec<u8>,
        sig: String,
        proof: String,
        leaf: tlog_tiles::Hash,
    }

    fn one_entry_log() -> OneEntryLog {
        let (log, _) = NoteSigner::generate(ORIGIN, KeyRole::Log).unwrap();
        let signer = Signer::new();
        let sums = b"00  app\n".to_vec();
        let sig = signer.sign(&sums, "timestamp:1\tfile:SHA256SUMS\thashed");
        let entry =
            Entry::new(&signer.public, "SHA256SUMS", hash_bytes(&sums).sha256, &sig).unwrap();
        let leaf = entry.leaf_hash();
        // A tree of one entry: its root is the entry's leaf hash.
        let checkpoint = sign_checkpoint(ORIGIN, 1, leaf, &log);
        let proof = LogProof {
            index: 0,
            hashes: Vec::new(),
            checkpoint,
        }
        .to_string();
        OneEntryLog {
            log,
            signer,
            sums,
            sig: sig.to_string(),
            proof,
            leaf,
        }
    }

    fn requirement(l: &OneEntryLog, at_hand: bool) -> LogRequirement {
        LogRequirement {
            trust: LogTrust::new(VerifierKeyArg(l.log.public().clone()), Vec::new(), 0).unwrap(),
            log: at_hand.then(|| "log".to_string()),
            pinned: None,
        }
    }

    /// The requirement judged over `ev`, with the signature's candidate made here.
    fn judged(
        l: &OneEntryLog,
        req: &LogRequirement,
        ev: &Evidence,
    ) -> (Option<Result<(), Rejected>>, Needs) {
        let keys = l.signer.keys();
        let mut out = Judged::default();
        let sig_path = PathBuf::from("dist/SHA256SUMS.minisig");
        let c = check_signature_text(
            &l.sig,
            &sig_path,
            &SignedName::new("SHA256SUMS", None),
            &keys,
            &Checks::default(),
            &mut out,
        )
        .unwrap();
        let set = vec![(sig_path, c)];
        let mut needs = Needs::default();
        let sha256 = hash_bytes(&l.sums).sha256;
        let v = judge((0, req), &set, ("SHA256SUMS", sha256), ev, &mut needs);
        (v, needs)
    }

    fn with_proof(l: &OneEntryLog) -> Evidence {
        let mut ev = Evidence::default();
        ev.texts.insert(
            PathBuf::from("dist/SHA256SUMS.log-proof"),
            Ok(l.proof.clone()),
        );
        ev
    }

    #[test]
    fn a_proof_beside_the_signature_proves_it_without_the_log() {
        let l = one_entry_log();
        let (v, needs) = judged(&l, &requirement(&l, false), &with_proof(&l));
        assert_eq!(v, Some(Ok(())));
        assert!(needs.is_empty());
        // No proof, no log: not in the log.
        let (v, _) = judged(&l, &requirement(&l, false), &Evidence::default());
        assert_eq!(v.unwrap().unwrap_err().0, Cause::Unlogged);
    }

    /// With the log at hand, its checkpoint is asked for first; a checkpoint of the same size
    /// with another root is a fork; one that is not a note is bad input.
    #[test]
    fn the_log_at_hand_is_asked_for_and_a_fork_is_refused() {
        let l = one_entry_log();
        let req = requirement(&l, true);
        let mut ev = with_proof(&l);
        let (v, needs) = judged(&l, &req, &ev);
        assert_eq!(v, None);
        assert_eq!(
            needs.logs.into_iter().collect::<Vec<_>>(),
            [(0, LogNeed::Checkpoint)]
        );
        let name = "log/checkpoint".to_string();
        let same = sign_checkpoint(ORIGIN, 1, l.leaf, &l.log);
        ev.logs.entry(0).or_default().checkpoint = Some(Ok((name.clone(), same)));
        // Then the entries before this one that logged the same bytes (a rollback's first).
        let (v, needs) = judged(&l, &req, &ev);
        assert_eq!(v, None);
        let sha256 = hash_bytes(&l.sums).sha256;
        let tree = (1, l.leaf.0);
        assert_eq!(
            needs.logs.into_iter().collect::<Vec<_>>(),
            [(
                0,
                LogNeed::SameBytes {
                    sha256,
                    before: 0,
                    tree
                }
            )]
        );
        ev.logs
            .entry(0)
            .or_default()
            .same_bytes
            .insert((sha256, 0, tree), Ok(Vec::new()));
        assert_eq!(judged(&l, &req, &ev).0, Some(Ok(())));
        let forked = sign_checkpoint(ORIGIN, 1, tlog_tiles::Hash([9; 32]), &l.log);
        ev.logs.entry(0).or_default().checkpoint = Some(Ok((name.clone(), forked)));
        let (cause, why) = judged(&l, &req, &ev).0.unwrap().unwrap_err();
        assert_eq!(cause, Cause::Unlogged);
        assert_eq!(
            why,
            "the log forked at size 1: two signed checkpoints of that size have different roots"
        );
        ev.logs.entry(0).or_default().checkpoint = Some(Ok((name, b"garbage".to_vec())));
        let (cause, _) = judged(&l, &req, &ev).0.unwrap().unwrap_err();
        assert_eq!(cause, Cause::Unreadable);
    }

    /// A proof of a larger tree than the log at hand: a stale mirror, said so; a consistency
    /// proof the reader gives that does not hold is a fork.
    #[test]
    fn a_log_behind_the_proof_is_stale_and_a_bad_consistency_proof_a_fork() {
        let l = one_entry_log();
        let req = requirement(&l, true);
        let mut ev = with_proof(&l);
        let empty = sign_checkpoint(ORIGIN, 0, tlog_tiles::Hash([0; 32]), &l.log);
        ev.logs.entry(0).or_default().checkpoint = Some(Ok(("log/checkpoint".into(), empty)));
        let (_, why) = judged(&l, &req, &ev).0.unwrap().unwrap_err();
        assert!(why.contains("is behind this proof"), "{why}");
        let bigger = sign_checkpoint(ORIGIN, 2, tlog_tiles::Hash([5; 32]), &l.log);
        ev.logs.entry(0).or_default().checkpoint = Some(Ok(("log/checkpoint".into(), bigger)));
        let (v, needs) = judged(&l, &req, &ev);
        assert_eq!(v, None);
        let tree = (2, [5; 32]);
        assert_eq!(
            needs.logs.into_iter().collect::<Vec<_>>(),
            [(0, LogNeed::Consistency { old: 1, tree })]
        );
        ev.logs
            .entry(0)
            .or_default()
            .consistency
            .insert((1, tree), Ok(vec![[1; 32]]));
        let (_, why) = judged(&l, &req, &ev).0.unwrap().unwrap_err();
        assert_eq!(
            why,
            "the log forked at size 1: its tree of size 2 does not extend the earlier checkpoint"
        );
    }
}
