//! The log's reader: what `verdict::logged` asks of a log at hand (`--log DIR|URL`, and
//! `--checkpoint FILE`): its checkpoint, consistency proofs read from its tiles, an entry searched
//! or read. Every hash it reads is authenticated against the tree it was asked of; the verdict
//! checks each proof against the checkpoints it verified. A store is opened once per command, and
//! its reads run on one thread of their own (an HTTP log's runtime is never inside another).

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Result;
use crate::log::note::{VerifiedCheckpoint, MAX_CHECKPOINT_BYTES};
use crate::log::tiles::Store;
use crate::log::tree::{self, CHECKPOINT};
use crate::trust::log::LogRequirement;
use crate::trust::signer::{Cause, Rejected};
use crate::verdict::evidence::{Evidence, FoundEntry, LogNeed, Tree};
use crate::verdict::logged::from_log;

/// The logs of a verification's requirements, opened as they are first needed.
pub(crate) struct LogReader<'r> {
    requirements: Vec<&'r LogRequirement>,
    stores: BTreeMap<usize, Box<dyn Store>>,
}

impl<'r> LogReader<'r> {
    pub(crate) fn new(requirements: Vec<&'r LogRequirement>) -> Self {
        LogReader {
            requirements,
            stores: BTreeMap::new(),
        }
    }

    /// Reads every need into `ev`'s log evidence.
    pub(crate) fn read(
        &mut self,
        needs: &BTreeSet<(usize, LogNeed)>,
        ev: &mut Evidence,
    ) -> Result<()> {
        if needs.is_empty() {
            return Ok(());
        }
        for (index, _) in needs {
            if self.stores.contains_key(index) {
                continue;
            }
            let Some(location) = self.requirements.get(*index).and_then(|r| r.log.as_ref()) else {
                continue;
            };
            self.stores
                .insert(*index, crate::log::http::open(location, "--log")?);
        }
        let (stores, requirements) = (&self.stores, &self.requirements);
        let read: Vec<((usize, LogNeed), Answer)> = std::thread::scope(|s| {
            s.spawn(|| {
                needs
                    .iter()
                    .map(|(i, need)| {
                        let answer =
                            answer(*i, need, stores.get(i).map(|b| b.as_ref()), requirements);
                        ((*i, need.clone()), answer)
                    })
                    .collect()
            })
            .join()
            .unwrap_or_default()
        });
        for ((i, need), answer) in read {
            let log = ev.logs.entry(i).or_default();
            match (need, answer) {
                (LogNeed::Checkpoint, Answer::Checkpoint(a)) => log.checkpoint = Some(a),
                (LogNeed::Pinned, Answer::Bytes(a)) => log.pinned = Some(a),
                (LogNeed::Consistency { old, tree }, Answer::Hashes(a)) => {
                    log.consistency.insert((old, tree), a);
                }
                (LogNeed::Find { leaf, tree }, Answer::Found(a)) => {
                    log.found.insert((leaf, tree), a);
                }
                (LogNeed::EntryAt { index, tree }, Answer::Bytes(a)) => {
                    log.entries.insert((index, tree), a);
                }
                (
                    LogNeed::SameBytes {
                        sha256,
                        before,
                        tree,
                    },
                    Answer::Entries(a),
                ) => {
                    log.same_bytes.insert((sha256, before, tree), a);
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// What was read for one need.
enum Answer {
    Checkpoint(std::result::Result<(String, Vec<u8>), Rejected>),
    Bytes(std::result::Result<Vec<u8>, Rejected>),
    Hashes(std::result::Result<Vec<[u8; 32]>, Rejected>),
    Found(std::result::Result<FoundEntry, Rejected>),
    Entries(std::result::Result<Vec<(u64, Vec<u8>)>, Rejected>),
}

fn unreadable(why: String) -> Rejected {
    (Cause::Unreadable, why)
}

/// A tree as a checkpoint the verdict verified names it (its signatures are not needed here).
fn checkpoint_of((size, root): Tree) -> VerifiedCheckpoint {
    VerifiedCheckpoint {
        size,
        root: tlog_tiles::Hash(root),
        note: Vec::new(),
        cosigned: Vec::new(),
    }
}

fn answer(
    index: usize,
    need: &LogNeed,
    store: Option<&dyn Store>,
    requirements: &[&LogRequirement],
) -> Answer {
    let no_store = || unreadable("the log is not at hand (no --log)".into());
    match need {
        LogNeed::Checkpoint => Answer::Checkpoint(match store {
            None => Err(no_store()),
            Some(store) => match store.read(CHECKPOINT, MAX_CHECKPOINT_BYTES) {
                Ok(Some(bytes)) => Ok((store.name(CHECKPOINT), bytes)),
                Ok(None) => Err(unreadable(
                    crate::error::Error::input(
                        store.name(CHECKPOINT),
                        None,
                        "missing: not a log (`warden log init DIR` creates one)",
                    )
                    .to_string(),
                )),
                Err(e) => Err(unreadable(e.to_string())),
            },
        }),
        LogNeed::Pinned => Answer::Bytes(
            match requirements.get(index).and_then(|r| r.pinned.as_ref()) {
                None => Err(unreadable("no --checkpoint".into())),
                Some(pinned) => crate::files::guarded::read_small_file(
                    pinned,
                    MAX_CHECKPOINT_BYTES,
                    "a checkpoint",
                )
                .map(String::into_bytes)
                .map_err(|e| unreadable(e.to_string())),
            },
        ),
        LogNeed::Consistency { old, tree } => Answer::Hashes(match store {
            None => Err(no_store()),
            Some(store) => {
                tree::prove_consistency(store, *old, &checkpoint_of(*tree)).map_err(from_log)
            }
        }),
        LogNeed::Find { leaf, tree } => Answer::Found(match store {
            None => Err(no_store()),
            Some(store) => find(store, *leaf, *tree).map_err(from_log),
        }),
        LogNeed::EntryAt { index, tree } => Answer::Bytes(match store {
            None => Err(no_store()),
            Some(store) => tree::entry_at(store, &checkpoint_of(*tree), *index).map_err(from_log),
        }),
        LogNeed::SameBytes {
            sha256,
            before,
            tree,
        } => Answer::Entries(match store {
            None => Err(no_store()),
            Some(store) => same_bytes(store, *sha256, *before, *tree).map_err(from_log),
        }),
    }
}

/// The entries before `before` whose file has SHA-256 `sha256`, every entry read checked against
/// the tree (an entry hidden by an altered bundle is an error, not an absence).
fn same_bytes(
    store: &dyn Store,
    sha256: [u8; 32],
    before: u64,
    tree: Tree,
) -> std::result::Result<Vec<(u64, Vec<u8>)>, tree::LogError> {
    let cp = checkpoint_of(tree);
    let tiles = crate::log::tiles::Tiles::new(store);
    let mut found = Vec::new();
    tree::checked_entries(store, &tiles, &cp, 0, |index, bytes| {
        if index < before
            && crate::log::entry::Entry::parse(bytes).is_ok_and(|e| e.sha256 == sha256)
        {
            found.push((index, bytes.to_vec()));
        }
    })?;
    Ok(found)
}

/// The index of the entry whose leaf hash is `leaf` in `tree`, by reading every entry bundle,
/// with its inclusion proof.
fn find(
    store: &dyn Store,
    leaf: [u8; 32],
    tree: Tree,
) -> std::result::Result<FoundEntry, tree::LogError> {
    let cp = checkpoint_of(tree);
    let Some(index) = tree::find_leaf(store, &cp, tlog_tiles::Hash(leaf))? else {
        return Ok(None);
    };
    let hashes = tree::prove_inclusion(store, &cp, index)?;
    Ok(Some((index, hashes.iter().map(|h| h.0).collect())))
}
