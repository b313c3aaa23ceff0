//! Release integrity: minisign keys and signatures, the trusted comment, SHA256SUMS, and the
//! `keygen`, `sign` and `verify` operations built on them.

pub mod checksums;
pub mod comment;
pub mod hash;
pub mod keygen;
pub mod keys;
pub mod sign;
pub mod signature;
pub mod verify;
