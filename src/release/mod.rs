//! Release integrity: minisign formats (`keys`, `signature`, `comment`, `checksums`), how release
//! files are named (`names`), the keys a verification trusts (`trusted_keys`), hashing
//! (`hash`), finding committed secret keys (`key_scan`), what a signature binds (`binding`), the
//! `keygen`, `sign` and `verify` operations built on them, and the one judgement of a published
//! release (`published`).

pub mod binding;
pub mod checksums;
pub mod comment;
pub mod cosign;
pub mod hash;
pub mod key_scan;
pub mod keygen;
pub mod keys;
pub(crate) mod names;
pub mod policy;
pub mod provenance;
pub mod revocation;
pub mod rotation;
pub mod sign;
pub mod signature;
mod statement;
mod trust;
pub mod trusted_keys;
pub(crate) mod verdict;
pub mod verify;
