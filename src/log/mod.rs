//! A transparency log of release signatures, its formats and stores (C2SP tlog-tiles of static
//! files, checkpoints as C2SP signed notes, witnesses' cosignatures): `entry` is what one
//! signature records, `proof` the file beside a signature that proves it is logged, `note` the
//! log's and witnesses' keys and checkpoints, `tiles` the static files and the stores that hold
//! them (a folder, or `http` over HTTP), `tree` a log's tree read and appended, `witness` the C2SP
//! tlog-witness request and a witness's decision on it. A leaf beside
//! `minisign`: who a verifier trusts for a log is `trust::log`; the commands are
//! `release::log_ops`.

pub(crate) mod entry;
mod fuzz;
pub(crate) mod http;
pub(crate) mod note;
pub(crate) mod proof;
pub(crate) mod tiles;
pub(crate) mod tree;
pub(crate) mod witness;

/// For the fuzz target `log_reads` only: everything a served log makes warden read, from one
/// input (see the module `fuzz`).
#[doc(hidden)]
pub fn fuzz_log_reads(data: &[u8]) {
    fuzz::run(data);
}

/// For the fuzz target `witness_requests` only: an `add-checkpoint` body from the network and a
/// witness's cosignature line, as the witness server and `log cosign` read them.
#[doc(hidden)]
pub fn fuzz_witness_request(data: &[u8]) {
    fuzz::run_witness_request(data);
}
