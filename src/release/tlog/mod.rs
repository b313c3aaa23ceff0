//! A transparency log of release signatures (C2SP tlog-tiles of static files, checkpoints as
//! C2SP signed notes, witnesses' cosignatures): every signature a release counts is public in an
//! append-only log, or refused. `entry` is what one signature records, `proof` the file beside a
//! signature that proves it is logged, `note` the log's and witnesses' keys and checkpoints,
//! `tiles` the static files, `log` a log in a folder, `trust` who a verifier trusts for
//! a log, `ops` the commands.

pub(crate) mod entry;
pub(crate) mod http;
pub(crate) mod log;
pub(crate) mod note;
pub(crate) mod ops;
pub(crate) mod proof;
pub(crate) mod tiles;
pub(crate) mod trust;

pub use ops::{
    append_release, append_synthetic, check_log_key, init, prove_entry, verify_log, witness,
    witness_key, AppendReport, InitReport, LogKey, LogVerifyReport, WitnessKey,
    WitnessReport,
};
pub use trust::{parse_vkey, parse_witness_vkey, LogRequirement, LogTrust, VerifierKeyArg};
