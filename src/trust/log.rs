//! Who a verifier trusts for a log: its key, the witnesses and how many of them must cosign,
//! and what `--require-log` (or `keys/policy.toml`'s `require_log`) asks of a release.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::log::entry::Entry;
use crate::log::note::{CheckpointPolicy, KeyRole, VerifierKey};

/// Parses a log's verifier key given with `flag`.
pub fn parse_vkey(text: &str, flag: &str) -> Result<VerifierKeyArg> {
    VerifierKey::parse(text, KeyRole::Log)
        .map(VerifierKeyArg)
        .map_err(|e| Error::Usage(format!("{flag}: {e}")))
}

/// Parses a witness's verifier key given with `flag`.
pub fn parse_witness_vkey(text: &str, flag: &str) -> Result<VerifierKeyArg> {
    VerifierKey::parse(text, KeyRole::Witness)
        .map(VerifierKeyArg)
        .map_err(|e| Error::Usage(format!("{flag}: {e}")))
}

/// A parsed verifier key.
#[derive(Clone, Debug)]
pub struct VerifierKeyArg(pub(crate) VerifierKey);

/// Who must sign a log's checkpoints: its key and `threshold` of `witnesses`.
#[derive(Clone, Debug)]
pub struct LogTrust {
    pub(crate) policy: CheckpointPolicy,
}

impl LogTrust {
    pub fn new(
        log: VerifierKeyArg,
        witnesses: Vec<VerifierKeyArg>,
        threshold: usize,
    ) -> Result<Self> {
        for (i, w) in witnesses.iter().enumerate() {
            if let Some(why) = witness_problem(&log, &witnesses[..i], w) {
                return Err(Error::Usage(format!("--witness {}: {why}", w.0.name)));
            }
        }
        if threshold > witnesses.len() {
            return Err(Error::Usage(format!(
                "--witness-threshold {threshold}: only {} --witness keys are given",
                witnesses.len()
            )));
        }
        Ok(LogTrust {
            policy: CheckpointPolicy {
                log: log.0,
                witnesses: witnesses.into_iter().map(|w| w.0).collect(),
                threshold,
            },
        })
    }
}

/// Why `w` cannot be one of a log's witnesses beside `earlier`: it is the log's own key (its
/// Ed25519 bytes under a witness's type byte would let the log's operator cosign their own
/// checkpoints), or a key already among them under another name (a witness is its key's bytes,
/// and counts once).
pub(crate) fn witness_problem(
    log: &VerifierKeyArg,
    earlier: &[VerifierKeyArg],
    w: &VerifierKeyArg,
) -> Option<String> {
    if w.0.key == log.0.key {
        return Some(format!(
            "this is the key of the log {} made into a witness key: the log's operator cannot witness their own log",
            log.0.name
        ));
    }
    earlier.iter().find(|e| e.0.key == w.0.key).map(|same| {
        format!(
            "the same key as the witness {} under another name: one witness counts once",
            same.0.name
        )
    })
}

/// What `--require-log` asks of a release.
#[derive(Clone, Debug)]
pub struct LogRequirement {
    pub trust: LogTrust,
    /// The log itself (`--log DIR|URL`): consistency, and what an entry that differs says.
    pub log: Option<String>,
    /// An earlier checkpoint (`--checkpoint FILE`) the log must extend.
    pub pinned: Option<PathBuf>,
}

/// What a logged entry binds, for the rollback rule: its file's bytes and name, and the release
/// its trusted comment names (tag, commit, version).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoggedRelease {
    pub(crate) index: u64,
    pub(crate) sha256: [u8; 32],
    pub(crate) file: String,
    pub(crate) tag: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) version: Option<String>,
}

impl LoggedRelease {
    pub(crate) fn of(entry: &Entry, index: u64) -> LoggedRelease {
        let tc = &entry.signature.trusted_comment;
        let value = |k: &str| tc.value(k).ok().flatten().map(str::to_string);
        LoggedRelease {
            index,
            sha256: entry.sha256,
            file: entry.file.clone(),
            tag: value("tag"),
            commit: value("commit"),
            version: value("version"),
        }
    }

    /// The same release: the same tag, commit and version.
    pub(crate) fn same_release(&self, other: &LoggedRelease) -> bool {
        (&self.tag, &self.commit, &self.version) == (&other.tag, &other.commit, &other.version)
    }
}

/// The rollback rule, for the monitor and `verify --require-log` alike: an entry that signs bytes
/// an earlier entry (`logged`) logged, for another tag, commit or version, is an old release's
/// file presented as a new one. Named with both entries.
pub(crate) fn rolled_back(logged: &[LoggedRelease], this: &LoggedRelease) -> Option<String> {
    let earlier = logged
        .iter()
        .find(|e| e.sha256 == this.sha256 && !e.same_release(this))?;
    let shown = |l: &LoggedRelease| {
        let mut parts = Vec::new();
        for (k, v) in [
            ("tag", &l.tag),
            ("commit", &l.commit),
            ("version", &l.version),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k}:{}", crate::markup::text_value(v)));
            }
        }
        if parts.is_empty() {
            "no tag, commit or version".to_string()
        } else {
            parts.join(" ")
        }
    };
    Some(format!(
        "signs the same bytes as entry {} ({} as {}), now as {} ({}): a rollback (an earlier release's file presented as another)",
        earlier.index,
        crate::markup::text_value(&earlier.file),
        shown(earlier),
        crate::markup::text_value(&this.file),
        shown(this)
    ))
}
