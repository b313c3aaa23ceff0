//! What a judgement is given, and what it asks for when that is not enough. Plain data: a reader
//! fills it (`release::folder_reader` from a folder on disk, `published` from a release's
//! assets, `release::log_reader` from a log), the verdict judges it and never reads.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::Reason;
use crate::minisign::hash::Digests;
use crate::minisign::run::RunBinding;
use crate::trust::signer::Rejected;

/// What an input of `warden verify` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputKind {
    Folder,
    File,
    Missing,
}

/// One entry of a release folder as its reader saw it: walked on disk, or a published asset.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    /// Its path below the folder, `/`-separated as a checksum list names it (`None`: not UTF-8).
    pub(crate) name: Option<String>,
    pub(crate) is_dir: bool,
    /// What it is, for the reason it is not verified: "a file", "a symbolic link", …
    pub(crate) kind: &'static str,
}

/// What is known of a file's bytes.
#[derive(Clone, Debug)]
pub(crate) enum FileBytes {
    /// Read: both digests from one read, and the bytes themselves when a legacy signature needs
    /// them.
    Read(Digests, Option<Vec<u8>>),
    /// Its SHA-256 alone: GitHub's, computed at upload (the asset was not read), or one a
    /// snapshot recorded by an older warden keeps.
    Sha256Only([u8; 32]),
    /// Reading it failed, in the words and cause the verdict gives.
    Failed(Rejected),
    /// Not read, and not to be (the audit reads the signed files only).
    NotRead,
}

/// A release folder's files as read: everything a folder's judgement looks at.
#[derive(Clone, Debug, Default)]
pub(crate) struct Evidence {
    /// The inputs and what each is (a published release: its folder).
    pub(crate) inputs: Vec<(PathBuf, InputKind)>,
    /// Every entry of each folder input, in name order (a folder that holds no listed file is
    /// not descended into).
    pub(crate) entries: BTreeMap<PathBuf, Vec<Entry>>,
    /// Every path that exists among those the judgement may ask of: entries, files given and
    /// their signatures.
    pub(crate) present: BTreeSet<PathBuf>,
    /// Each checksum list's bytes, by its path (`Ok(None)`: larger than a list may be).
    pub(crate) lists: BTreeMap<PathBuf, Result<Option<Vec<u8>>, Reason>>,
    /// The text of every signature and log proof read, by its path (`Err`: why it could not be
    /// read, as the verdict says it).
    pub(crate) texts: BTreeMap<PathBuf, Result<String, Rejected>>,
    /// Where a file's path resolves, its folders followed (for `path:`; none for an asset).
    pub(crate) resolved: BTreeMap<PathBuf, PathBuf>,
    /// Where a listed file really is, when that is outside its folder (a link out of it).
    pub(crate) escapes: BTreeMap<PathBuf, PathBuf>,
    /// What is known of each file's bytes.
    pub(crate) bytes: BTreeMap<PathBuf, FileBytes>,
    /// Signature files that exist and were not read (an artifact's own, to the audit).
    pub(crate) unread: BTreeSet<PathBuf>,
    /// Files that fail before they are judged (an asset GitHub's digest shows replaced).
    pub(crate) preset: BTreeMap<PathBuf, Rejected>,
    /// A published release's assets, when that is what is judged: a file missing from them is
    /// "not an asset of the release"; one the judgement cannot have is "not downloaded" when
    /// `downloading`, else "not checked".
    pub(crate) published: Option<Published>,
    /// A file given on its own without a signature of its own, and the signed checksum list
    /// beside it (found by its name) that is read in its place.
    pub(crate) file_lists: BTreeMap<PathBuf, PathBuf>,
    /// What each log requirement's log says (by the requirement's place in
    /// [`crate::verdict::file::log_requirements`]).
    pub(crate) logs: BTreeMap<usize, LogEvidence>,
    /// The attestation bundles read: `--attestations` files, or GitHub's answers by digest.
    pub(crate) attestations: AttestationEvidence,
}

/// Attestation bundles as read.
#[derive(Clone, Debug, Default)]
pub(crate) struct AttestationEvidence {
    /// Each source: a file, or GitHub's answer for one digest; its bundles, or why it could not
    /// be read.
    pub(crate) sources: crate::attest::bundle::Sources,
    /// The digests GitHub was asked about (a published release).
    pub(crate) asked: BTreeSet<[u8; 32]>,
    /// A snapshot recorded by an older warden holds no answer about them.
    pub(crate) not_recorded: bool,
}

/// What a published release's assets are.
#[derive(Clone, Debug, Default)]
pub(crate) struct Published {
    pub(crate) assets: BTreeSet<String>,
    pub(crate) downloading: bool,
    /// GitHub's SHA-256 of each asset that has one, taken at upload.
    pub(crate) digests: BTreeMap<String, [u8; 32]>,
    /// Whether GitHub says the release is immutable (only those have a release attestation).
    pub(crate) immutable: Option<bool>,
}

impl Evidence {
    pub(crate) fn exists(&self, path: &Path) -> bool {
        self.present.contains(path)
    }

    pub(crate) fn is_published(&self) -> bool {
        self.published.is_some()
    }

    /// Whether the asset named by `path`'s file name is one of the release's.
    pub(crate) fn is_asset(&self, path: &Path) -> bool {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        self.published
            .as_ref()
            .is_some_and(|p| p.assets.contains(name))
    }
}

/// What a log's reader found for one requirement with its log at hand (`--log`).
#[derive(Clone, Debug, Default)]
pub(crate) struct LogEvidence {
    /// The log's checkpoint now, and how its file is named in messages.
    pub(crate) checkpoint: Option<Result<(String, Vec<u8>), Rejected>>,
    /// The verifier's earlier checkpoint (`--checkpoint FILE`).
    pub(crate) pinned: Option<Result<Vec<u8>, Rejected>>,
    /// Consistency proofs of the log's tree from an earlier size to the tree of the checkpoint,
    /// by (earlier size, tree).
    pub(crate) consistency: BTreeMap<(u64, Tree), Result<Hashes, Rejected>>,
    /// Where an entry is in the tree, by its leaf hash: its index and inclusion proof, or `None`
    /// when no entry of the tree is it.
    pub(crate) found: BTreeMap<([u8; 32], Tree), Result<FoundEntry, Rejected>>,
    /// Entries' bytes, by index in the tree, authenticated by it.
    pub(crate) entries: BTreeMap<(u64, Tree), Result<Vec<u8>, Rejected>>,
    /// The entries before an index that log a file with this SHA-256 (index and bytes, each
    /// authenticated by the tree), by (SHA-256, index, tree).
    pub(crate) same_bytes: BTreeMap<([u8; 32], u64, Tree), Result<Entries, Rejected>>,
}

/// An entry found in a log's tree: its index and its inclusion proof (`None`: not in it).
pub(crate) type FoundEntry = Option<(u64, Hashes)>;

/// Entries of a log: index and bytes.
pub(crate) type Entries = Vec<(u64, Vec<u8>)>;

/// A proof's hashes.
pub(crate) type Hashes = Vec<[u8; 32]>;

/// A log's tree, as a verified checkpoint names it: its size and root hash.
pub(crate) type Tree = (u64, [u8; 32]);

/// What a log's judgement needs read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LogNeed {
    /// The log's checkpoint now.
    Checkpoint,
    /// The verifier's earlier checkpoint.
    Pinned,
    /// A consistency proof from an earlier size to the tree.
    Consistency { old: u64, tree: Tree },
    /// The entry whose leaf hash this is, searched in the tree.
    Find { leaf: [u8; 32], tree: Tree },
    /// The entry at this index of the tree.
    EntryAt { index: u64, tree: Tree },
    /// The entries before `before` that log a file with this SHA-256 (a rollback's earlier
    /// release).
    SameBytes {
        sha256: [u8; 32],
        before: u64,
        tree: Tree,
    },
}

/// What a judgement needs of a file's bytes: their digests (SHA-256 and the BLAKE2b prehash,
/// from one read), SHA-512 too (a SHA-512 list), the bytes themselves (a legacy signature).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ByteNeed {
    pub(crate) whole: bool,
    pub(crate) sha512: bool,
}

/// What a judgement asks its readers for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Needs {
    /// Files whose bytes it needs, and what of them.
    pub(crate) bytes: BTreeMap<PathBuf, ByteNeed>,
    /// What each log requirement needs read, by the requirement's place.
    pub(crate) logs: BTreeSet<(usize, LogNeed)>,
    /// The runs counted signatures name, with the environment whose deployment each must show.
    pub(crate) runs: Vec<(RunBinding, Option<String>)>,
    /// Asset digests to ask GitHub's attestations of.
    pub(crate) attestations: BTreeSet<[u8; 32]>,
}

impl Needs {
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
            && self.logs.is_empty()
            && self.runs.is_empty()
            && self.attestations.is_empty()
    }
}

/// A judgement made, or what it needs first.
#[derive(Debug)]
pub(crate) enum Judgement<T> {
    Done(T),
    Needs(Needs),
}
