//! Who a verifier trusts for a log: its key, the witnesses and how many of them must cosign,
//! and what `--require-log` (or `keys/policy.toml`'s `require_log`) asks of a release.

use std::path::PathBuf;

use crate::error::{Error, Result};
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
