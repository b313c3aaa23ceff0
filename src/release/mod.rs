//! Release operations: `keygen`, `sign` (and `cosign`), `verify` of a folder on disk (its reader,
//! `folder_reader`; the log's, `log_reader`), the transparency log's commands (`log_ops`), cargo-binstall's signing section (`binstall`), finding committed secret
//! keys (`key_scan`). Formats are `minisign`, trust is `trust`, judgements are `verdict`.

pub(crate) mod binstall;
pub(crate) mod cosign;
pub(crate) mod folder_reader;
pub(crate) mod key_scan;
pub(crate) mod keygen;
pub mod log_ops;
pub(crate) mod log_reader;
pub(crate) mod sign;
pub mod witness_net;

pub use cosign::cosign;
pub use folder_reader::verify;
pub use key_scan::find_secret_key;
pub use keygen::{keygen, KeygenOptions};
pub use sign::{sign, ChecksumsTarget, SignOptions};
