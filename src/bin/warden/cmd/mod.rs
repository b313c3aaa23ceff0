//! One file per command: parse → one library call → emit.

pub(crate) mod audit;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod hive;
pub(crate) mod keygen;
pub(crate) mod keys;
pub(crate) mod known_issues;
pub(crate) mod log;
pub(crate) mod sign;
pub(crate) mod verify;

/// The keys folder a command reads when none is named.
pub(crate) const DEFAULT_KEYS_DIR: &str = "keys";
