//! A log in a folder: created, appended to under a lock (tiles and bundles first, the checkpoint
//! last), and read back with every hash authenticated against a verified checkpoint.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tlog_tiles::{stored_hash_index, stored_hashes, HashReader, Tile};

use crate::error::{Error, Reason};
use crate::files::atomic;
use crate::log::entry::Entry;
use crate::log::note::{
    sign_checkpoint, verify_checkpoint, CheckpointError, CheckpointPolicy, NoteSigner,
    VerifiedCheckpoint, MAX_CHECKPOINT_BYTES,
};
use crate::log::proof::{inclusion_proof_len, LogProof};
use crate::log::tiles::{
    tile_path, DirStore, Overlay, Store, Tiles, TreeReader, HEIGHT, TILE_WIDTH,
};

pub(crate) const CHECKPOINT: &str = "checkpoint";

/// What stops a log check: input that is not a log (exit 2) or a log that fails (exit 1).
#[derive(Debug)]
pub(crate) enum LogError {
    Input(Error),
    Failed(Reason),
}

impl From<Error> for LogError {
    fn from(e: Error) -> Self {
        LogError::Input(e)
    }
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogError::Input(e) => write!(f, "{e}"),
            LogError::Failed(r) => write!(f, "{r}"),
        }
    }
}

/// Reads and verifies the log's checkpoint.
pub(crate) fn read_checkpoint(
    store: &dyn Store,
    policy: &CheckpointPolicy,
) -> Result<VerifiedCheckpoint, LogError> {
    let bytes = store
        .read(CHECKPOINT, MAX_CHECKPOINT_BYTES)?
        .ok_or_else(|| {
            Error::input(
                store.name(CHECKPOINT),
                None,
                "missing: not a log (`warden log init DIR` creates one)",
            )
        })?;
    checked_checkpoint(&bytes, &store.name(CHECKPOINT), policy)
}

/// `bytes`, a checkpoint named `origin` in messages, checked against the policy.
pub(crate) fn checked_checkpoint(
    bytes: &[u8],
    origin: &str,
    policy: &CheckpointPolicy,
) -> Result<VerifiedCheckpoint, LogError> {
    verify_checkpoint(bytes, policy).map_err(|e| match e {
        CheckpointError::Malformed(why) => {
            LogError::Input(Error::input(origin, None, why.to_string()))
        }
        CheckpointError::Refused(why) => LogError::Failed(format!("{origin}: {why}").into()),
    })
}

/// Turns a failed tree operation into the read error behind it, or a failed check.
fn tree_error(tiles: &Tiles<'_>, e: tlog_tiles::Error, what: &str) -> LogError {
    if let Some(read) = tiles.error.borrow_mut().take() {
        return LogError::Input(read);
    }
    LogError::Failed(
        match e {
            tlog_tiles::Error::InconsistentTile | tlog_tiles::Error::InvalidProof => format!(
                "{what}: the log's tiles do not hash to its checkpoint's root (altered tiles, or a log rewritten under a signed checkpoint)"
            ),
            other => format!("{what}: {other}"),
        }
        .into(),
    )
}

/// The inclusion proof of entry `index` in the tree of `cp`.
pub(crate) fn prove_inclusion(
    store: &dyn Store,
    cp: &VerifiedCheckpoint,
    index: u64,
) -> Result<Vec<tlog_tiles::Hash>, LogError> {
    let tiles = Tiles::new(store);
    let reader = TreeReader::new(cp.size, cp.root, &tiles);
    tlog_tiles::prove_record(cp.size, index, &reader)
        .map_err(|e| tree_error(&tiles, e, &format!("proving entry {index}")))
}

/// Checks that `leaf` is entry `index` of the tree of `cp`, by `hashes`.
pub(crate) fn check_inclusion(
    cp: &VerifiedCheckpoint,
    index: u64,
    leaf: tlog_tiles::Hash,
    hashes: &[tlog_tiles::Hash],
) -> Result<(), Reason> {
    if index >= cp.size {
        return Err(format!(
            "the proof is for entry {index}, but the checkpoint's tree has {} entries",
            cp.size
        )
        .into());
    }
    let want = inclusion_proof_len(index, cp.size);
    if hashes.len() != want {
        return Err(format!(
            "the proof is for another tree size: it has {} hashes, a proof of entry {index} in the checkpoint's tree of size {} has {want}",
            hashes.len(),
            cp.size
        )
        .into());
    }
    tlog_tiles::check_record(&hashes.to_vec(), cp.size, cp.root, index, leaf)
        .map_err(|_| format!("entry {index} of the log is not this signature (the proof does not lead to the checkpoint's root)").into())
}

/// Checks that the log of `new` extends the one of `old` (the same tree, only longer).
pub(crate) fn check_consistency(
    store: &dyn Store,
    old: &VerifiedCheckpoint,
    new: &VerifiedCheckpoint,
) -> Result<(), LogError> {
    if let Some(decided) = consistency_without_proof(old, new) {
        return decided;
    }
    let proof = prove_consistency(store, old.size, new)?;
    check_consistency_proof(&proof, old, new)
}

/// What two checkpoints say of each other without a proof: the same size and root (consistent),
/// the same size and another root (a fork), or a smaller tree after a larger (rolled back);
/// `None` when a proof must tell.
pub(crate) fn consistency_without_proof(
    old: &VerifiedCheckpoint,
    new: &VerifiedCheckpoint,
) -> Option<Result<(), LogError>> {
    if old.size == new.size {
        return Some(if old.root == new.root {
            Ok(())
        } else {
            Err(LogError::Failed(format!("the log forked at size {}: two signed checkpoints of that size have different roots", old.size).into()))
        });
    }
    if old.size > new.size {
        return Some(Err(LogError::Failed(
            format!(
                "the log shrank: its checkpoint is of size {}, an earlier one was of size {} (a rolled-back or forked log)",
                new.size, old.size
            )
            .into(),
        )));
    }
    None
}

/// The consistency proof of the tree of `new` from its first `old_size` entries, read from the
/// log's tiles (each authenticated against `new`'s root).
pub(crate) fn prove_consistency(
    store: &dyn Store,
    old_size: u64,
    new: &VerifiedCheckpoint,
) -> Result<Vec<[u8; 32]>, LogError> {
    let tiles = Tiles::new(store);
    let reader = TreeReader::new(new.size, new.root, &tiles);
    let proof = tlog_tiles::prove_tree(new.size, old_size, &reader)
        .map_err(|e| tree_error(&tiles, e, "proving consistency"))?;
    Ok(proof.iter().map(|h| h.0).collect())
}

/// Checks `proof`: the tree of `new` extends the tree of `old`.
pub(crate) fn check_consistency_proof(
    proof: &[[u8; 32]],
    old: &VerifiedCheckpoint,
    new: &VerifiedCheckpoint,
) -> Result<(), LogError> {
    let proof: Vec<tlog_tiles::Hash> = proof.iter().map(|h| tlog_tiles::Hash(*h)).collect();
    tlog_tiles::check_tree(&proof, new.size, new.root, old.size, old.root).map_err(|_| {
        LogError::Failed(
            format!(
                "the log forked at size {}: its tree of size {} does not extend the earlier checkpoint",
                old.size, new.size
            )
            .into(),
        )
    })
}

/// Entry `index` of the tree of `cp`, its bytes authenticated by the tree.
pub(crate) fn entry_at(
    store: &dyn Store,
    cp: &VerifiedCheckpoint,
    index: u64,
) -> Result<Vec<u8>, LogError> {
    if index >= cp.size {
        return Err(LogError::Failed(
            format!(
                "entry {index} is past the end of the log (its checkpoint's tree has {} entries)",
                cp.size
            )
            .into(),
        ));
    }
    let tiles = Tiles::new(store);
    let n = index / TILE_WIDTH;
    let width = (cp.size - n * TILE_WIDTH).min(TILE_WIDTH) as u32;
    let bytes = tiles
        .bundle(n, width)?
        .swap_remove((index % TILE_WIDTH) as usize);
    let reader = TreeReader::new(cp.size, cp.root, &tiles);
    let stored = reader
        .read_hashes(&[stored_hash_index(0, index)])
        .map_err(|e| tree_error(&tiles, e, &format!("reading entry {index}")))?;
    if stored.first() != Some(&tlog_tiles::record_hash(&bytes)) {
        return Err(LogError::Failed(
            format!(
                "{}: entry {index} does not hash to its leaf (altered entry bundle)",
                store.name(&tile_path(&Tile::new(HEIGHT, 0, n, width, true)))
            )
            .into(),
        ));
    }
    Ok(bytes)
}

/// The first index whose entry has leaf hash `leaf`, reading the bundles of the tree of `cp`.
pub(crate) fn find_leaf(
    store: &dyn Store,
    cp: &VerifiedCheckpoint,
    leaf: tlog_tiles::Hash,
) -> Result<Option<u64>, LogError> {
    let tiles = Tiles::new(store);
    for n in 0..cp.size.div_ceil(TILE_WIDTH) {
        let width = (cp.size - n * TILE_WIDTH).min(TILE_WIDTH) as u32;
        for (k, bytes) in tiles.bundle(n, width)?.iter().enumerate() {
            if tlog_tiles::record_hash(bytes) == leaf {
                return Ok(Some(n * TILE_WIDTH + k as u64));
            }
        }
    }
    Ok(None)
}

/// Reads what appending to the log in `dir` will need (its checkpoint, the right edge of its
/// tree and the last entry bundle), so that a command that signs first and logs after fails
/// before signing.
pub(crate) fn check_appendable(dir: &Path, key: &NoteSigner) -> Result<(), LogError> {
    let store = DirStore {
        root: dir.to_path_buf(),
    };
    let policy = CheckpointPolicy {
        log: key.public().clone(),
        witnesses: Vec::new(),
        threshold: 0,
    };
    let cp = read_checkpoint(&store, &policy)?;
    let tiles = Tiles::new(&store);
    let reader = TreeReader::new(cp.size, cp.root, &tiles);
    tlog_tiles::tree_hash(cp.size, &reader)
        .and_then(|_| stored_hashes(cp.size, b"", &reader))
        .map_err(|e| tree_error(&tiles, e, "reading the log"))?;
    recent_leaves(&store, &tiles, &cp)?;
    Ok(())
}

/// Creates an empty log in `dir` (which must not hold one): its checkpoint of size 0.
pub(crate) fn init(dir: &Path, key: &NoteSigner) -> Result<VerifiedCheckpoint, Error> {
    fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
    let path = dir.join(CHECKPOINT);
    if fs::symlink_metadata(&path).is_ok() {
        return Err(Error::Refused(format!(
            "{}: a log is here already; nothing was changed",
            path.display()
        )));
    }
    let empty = tlog_tiles::tree_hash(0, &NoHashes).expect("the empty tree needs no hashes");
    let note = sign_checkpoint(&key.public().name, 0, empty, key);
    atomic::write_atomic(&path, &note, 0o644, false)?;
    Ok(VerifiedCheckpoint {
        size: 0,
        root: empty,
        note,
        cosigned: Vec::new(),
    })
}

struct NoHashes;

impl HashReader for NoHashes {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        if indexes.is_empty() {
            Ok(Vec::new())
        } else {
            Err(tlog_tiles::Error::IndexesNotInTree)
        }
    }
}

/// What an append did: where each entry went, and the proofs of them in the new tree.
#[derive(Debug)]
pub(crate) struct Appended {
    pub(crate) checkpoint: VerifiedCheckpoint,
    /// One per entry given, in order.
    pub(crate) proofs: Vec<LogProof>,
    /// Per entry given: it was in the log already (among its last [`RECENT`] entries, or twice
    /// in the batch), and was not appended again.
    pub(crate) already: Vec<bool>,
}

/// How many of the log's last entries an append reads, checks against the tree and searches for
/// the entries it is given: a release logged twice (`sign --log`, then `log append`; a retry
/// after a crash between the checkpoint and the proof) gets one entry. Bounded so that an append
/// costs the same at any size.
pub(crate) const RECENT: u64 = 4 * TILE_WIDTH;

/// The leaf hashes of the last [`RECENT`] entries of the tree of `cp`, each entry's bytes checked
/// against the tree (an altered bundle is refused before anything is copied from it).
fn recent_leaves(
    store: &dyn Store,
    tiles: &Tiles<'_>,
    cp: &VerifiedCheckpoint,
) -> Result<HashMap<[u8; 32], u64>, LogError> {
    let mut found = HashMap::new();
    checked_entries(
        store,
        tiles,
        cp,
        cp.size.saturating_sub(RECENT),
        |index, bytes| {
            found
                .entry(tlog_tiles::record_hash(bytes).0)
                .or_insert(index);
        },
    )?;
    Ok(found)
}

/// Each entry `from..` of the tree of `cp`, its bytes checked against the tree's leaf hash, a
/// bundle at a time: an altered bundle is named, never read past.
pub(crate) fn checked_entries(
    store: &dyn Store,
    tiles: &Tiles<'_>,
    cp: &VerifiedCheckpoint,
    from: u64,
    mut each: impl FnMut(u64, &[u8]),
) -> Result<(), LogError> {
    let reader = TreeReader::new(cp.size, cp.root, tiles);
    let mut n = from / TILE_WIDTH;
    while n * TILE_WIDTH < cp.size {
        let first = n * TILE_WIDTH;
        let width = (cp.size - first).min(TILE_WIDTH) as u32;
        let bundle = tiles.bundle(n, width)?;
        let indexes: Vec<u64> = (first..first + u64::from(width))
            .map(|i| stored_hash_index(0, i))
            .collect();
        let leaves = reader
            .read_hashes(&indexes)
            .map_err(|e| tree_error(tiles, e, "reading the log's entries"))?;
        for (k, bytes) in bundle.iter().enumerate() {
            let index = first + k as u64;
            if tlog_tiles::record_hash(bytes) != leaves[k] {
                return Err(LogError::Input(Error::input(
                    store.name(&tile_path(&Tile::new(HEIGHT, 0, n, width, true))),
                    None,
                    format!("entry {index} does not hash to its leaf (altered entry bundle)"),
                )));
            }
            if index >= from {
                each(index, bytes);
            }
        }
        n += 1;
    }
    Ok(())
}

/// How long an append waits for another one in the same folder to finish.
const LOCK_WAIT: Duration = Duration::from_secs(120);

/// An exclusive lock on the log folder, waited for: two release jobs appending at once take
/// turns, and each reads the checkpoint the other wrote.
struct AppendLock {
    _dir: fs::File,
}

impl AppendLock {
    fn acquire(dir: &Path) -> Result<Self, Error> {
        let handle = fs::File::open(dir).map_err(|e| Error::io("opening", dir, e))?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match handle.try_lock() {
                Ok(()) => return Ok(AppendLock { _dir: handle }),
                Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(Error::Refused(format!(
                        "{}: another append held the log for {} s; nothing was written",
                        dir.display(),
                        LOCK_WAIT.as_secs()
                    )))
                }
                Err(fs::TryLockError::Error(e)) => return Err(Error::io("locking", dir, e)),
            }
        }
    }
}

/// Appends `entries` to the log in `dir`, signed by `key`: tiles and entry bundles are written
/// first, the checkpoint last, so a reader never sees a checkpoint whose files are missing and
/// a failed append leaves the log as it was.
pub(crate) fn append(
    dir: &Path,
    key: &NoteSigner,
    entries: &[Entry],
) -> Result<Appended, LogError> {
    let _lock = AppendLock::acquire(dir)?;
    let store = DirStore {
        root: dir.to_path_buf(),
    };
    let policy = CheckpointPolicy {
        log: key.public().clone(),
        witnesses: Vec::new(),
        threshold: 0,
    };
    let old = read_checkpoint(&store, &policy)?;
    let tiles = Tiles::new(&store);
    let (bytes, placed) = place(&store, &tiles, &old, entries)?;
    if bytes.is_empty() {
        return already_appended(&store, old, &placed);
    }
    let base = TreeReader::new(old.size, old.root, &tiles);
    let mut tree = Overlay {
        base: &base,
        new: HashMap::new(),
    };
    for (k, data) in bytes.iter().enumerate() {
        let n = old.size + k as u64;
        let hashes =
            stored_hashes(n, data, &tree).map_err(|e| tree_error(&tiles, e, "appending"))?;
        let start = stored_hash_index(0, n);
        for (i, h) in hashes.into_iter().enumerate() {
            tree.new.insert(start + i as u64, h);
        }
    }
    let size = old.size + bytes.len() as u64;
    let root =
        tlog_tiles::tree_hash(size, &tree).map_err(|e| tree_error(&tiles, e, "appending"))?;
    let mut staged = Vec::new();
    for t in Tile::new_tiles(HEIGHT, old.size, size) {
        let data = t
            .read_data(&tree)
            .map_err(|e| tree_error(&tiles, e, "appending"))?;
        staged.push(stage(dir, &tile_path(&t), &data)?);
        if t.level() == 0 {
            let first = t.level_index() * TILE_WIDTH;
            let mut bundle = Vec::new();
            if old.size > first {
                let kept = (old.size - first) as u32;
                for e in tiles.bundle(t.level_index(), kept)? {
                    push_entry(&mut bundle, &e);
                }
            }
            let end = (first + u64::from(t.width())).min(size);
            for n in first.max(old.size)..end {
                push_entry(&mut bundle, &bytes[(n - old.size) as usize]);
            }
            let mut data_tile = t;
            data_tile.set_is_data();
            staged.push(stage(dir, &tile_path(&data_tile), &bundle)?);
        }
    }
    let note = sign_checkpoint(&key.public().name, size, root, key);
    let checkpoint = VerifiedCheckpoint {
        size,
        root,
        note,
        cosigned: Vec::new(),
    };
    let mut proofs = Vec::new();
    for &(index, _) in &placed {
        let hashes = tlog_tiles::prove_record(size, index, &tree)
            .map_err(|e| tree_error(&tiles, e, "proving"))?;
        proofs.push(LogProof {
            index,
            hashes,
            checkpoint: checkpoint.note.clone(),
        });
    }
    for file in staged {
        file.commit(true)?;
    }
    atomic::write_atomic(&dir.join(CHECKPOINT), &checkpoint.note, 0o644, true)?;
    Ok(Appended {
        checkpoint,
        proofs,
        already: placed.iter().map(|p| p.1).collect(),
    })
}

/// The bytes of the entries that go in, and each entry's (index, already in the log).
type Placed = (Vec<Vec<u8>>, Vec<(u64, bool)>);

/// Each entry's index: where it already is (among the log's last [`RECENT`]), or where it
/// goes; and the bytes of those that go in.
fn place(
    store: &DirStore,
    tiles: &Tiles<'_>,
    old: &VerifiedCheckpoint,
    entries: &[Entry],
) -> Result<Placed, LogError> {
    let mut known = recent_leaves(store, tiles, old)?;
    let mut bytes: Vec<Vec<u8>> = Vec::new();
    let mut placed = Vec::with_capacity(entries.len());
    for entry in entries {
        let data = entry.to_bytes();
        let leaf = tlog_tiles::record_hash(&data);
        match known.get(&leaf.0) {
            Some(&index) => placed.push((index, true)),
            None => {
                let index = old.size + bytes.len() as u64;
                known.insert(leaf.0, index);
                placed.push((index, false));
                bytes.push(data);
            }
        }
    }
    Ok((bytes, placed))
}

/// Every entry was in the log already: its proofs against the checkpoint as it is.
fn already_appended(
    store: &DirStore,
    old: VerifiedCheckpoint,
    placed: &[(u64, bool)],
) -> Result<Appended, LogError> {
    let proofs = placed
        .iter()
        .map(|&(index, _)| {
            Ok(LogProof {
                index,
                hashes: prove_inclusion(store, &old, index)?,
                checkpoint: old.note.clone(),
            })
        })
        .collect::<Result<_, LogError>>()?;
    Ok(Appended {
        checkpoint: old,
        proofs,
        already: placed.iter().map(|p| p.1).collect(),
    })
}

fn push_entry(bundle: &mut Vec<u8>, entry: &[u8]) {
    bundle.extend_from_slice(&(entry.len() as u16).to_be_bytes());
    bundle.extend_from_slice(entry);
}

fn stage(dir: &Path, rel: &str, data: &[u8]) -> Result<atomic::StagedFile, Error> {
    let path: PathBuf = dir.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| Error::io("creating", parent, e))?;
    }
    atomic::stage(&path, data, 0o644)
}

/// What `log verify` found in a whole log.
#[derive(Debug, serde::Serialize)]
pub(crate) struct LogSummary {
    pub(crate) size: u64,
    pub(crate) tiles: usize,
    /// Entries per signing key id.
    pub(crate) keys: std::collections::BTreeMap<String, u64>,
}

/// Checks every entry and tile of the log against its checkpoint: entries parse and are signed by
/// the key they name, the tree they make has the checkpoint's root, and every tile is the one
/// that tree gives.
pub(crate) fn verify_all(
    store: &dyn Store,
    cp: &VerifiedCheckpoint,
) -> Result<LogSummary, LogError> {
    let tiles = Tiles::new(store);
    let mut tree = MemoryTree::default();
    let mut keys = std::collections::BTreeMap::new();
    let bundles = cp.size.div_ceil(TILE_WIDTH);
    // Entries are checked (their signatures verified) on every core, 16 bundles at a time:
    // memory stays at 4,096 entries whatever the log's size.
    for first in (0..bundles).step_by(16) {
        let mut read = Vec::new();
        for n in first..(first + 16).min(bundles) {
            let width = (cp.size - n * TILE_WIDTH).min(TILE_WIDTH) as u32;
            let path = tile_path(&Tile::new(HEIGHT, 0, n, width, true));
            for (k, bytes) in tiles.bundle(n, width)?.into_iter().enumerate() {
                read.push((n * TILE_WIDTH + k as u64, path.clone(), bytes));
            }
        }
        let parsed = crate::util::parallel_map(&read, |(index, path, bytes)| {
            Entry::parse(bytes)
                .map(|e| e.key.key_id.to_string())
                .map_err(|e| format!("{}: entry {index}: {e}", store.name(path)))
        });
        for ((index, _, bytes), key) in read.iter().zip(parsed) {
            let key = key.map_err(|why| LogError::Failed(why.into()))?;
            *keys.entry(key).or_insert(0) += 1;
            tree.push(*index, bytes);
        }
    }
    let root = tlog_tiles::tree_hash(cp.size, &tree)
        .map_err(|e| LogError::Failed(format!("{e}").into()))?;
    if root != cp.root {
        return Err(LogError::Failed(
            format!("the log's entries do not hash to its checkpoint's root (size {}): altered or missing entries", cp.size).into(),
        ));
    }
    let all = Tile::new_tiles(HEIGHT, 0, cp.size);
    for t in &all {
        let want = t
            .read_data(&tree)
            .map_err(|e| LogError::Failed(format!("{e}").into()))?;
        let path = tile_path(t);
        let have = tiles.tile(t)?;
        if have != want {
            return Err(LogError::Failed(
                format!(
                    "{}: not the tile the log's entries give (altered, truncated or missing)",
                    store.name(&path)
                )
                .into(),
            ));
        }
    }
    Ok(LogSummary {
        size: cp.size,
        tiles: all.len(),
        keys,
    })
}

/// Every stored hash of a tree, rebuilt from its entries.
#[derive(Default)]
struct MemoryTree {
    hashes: Vec<tlog_tiles::Hash>,
}

impl MemoryTree {
    fn push(&mut self, n: u64, data: &[u8]) {
        let new = stored_hashes(n, data, &*self).expect("the tree holds every earlier hash");
        self.hashes.extend(new);
    }
}

impl HashReader for MemoryTree {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        indexes
            .iter()
            .map(|&i| {
                self.hashes
                    .get(i as usize)
                    .copied()
                    .ok_or(tlog_tiles::Error::IndexesNotInTree)
            })
            .collect()
    }
}
