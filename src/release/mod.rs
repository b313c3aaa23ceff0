//! Release integrity: minisign formats (`keys`, `signature`, `comment`, `checksums`), how release
//! files are named (`names`), cargo-binstall's signing section (`binstall`), the keys a verification trusts (`trusted_keys`), hashing
//! (`hash`), finding committed secret keys (`key_scan`), what a signature binds (`binding`), the
//! `keygen`, `sign` and `verify` operations built on them, and the one judgement of a published
//! release (`published`).

pub(crate) mod binding;
pub(crate) mod binstall;
pub(crate) mod checksums;
pub(crate) mod comment;
pub(crate) mod cosign;
pub(crate) mod hash;
pub(crate) mod key_scan;
pub(crate) mod keygen;
pub(crate) mod keys;
pub(crate) mod lineage;
pub(crate) mod logged;
pub(crate) mod names;
pub(crate) mod policy;
pub(crate) mod provenance;
pub(crate) mod revocation;
pub(crate) mod rotation;
pub(crate) mod sign;
pub(crate) mod signature;
mod statement;
pub mod tlog;
pub(crate) mod trust;
pub(crate) mod trusted_keys;
pub(crate) mod verdict;
pub(crate) mod verify;

pub use checksums::{check_relative_name, ChecksumFile};
pub use comment::{ReleaseMeta, TrustedComment};
pub use cosign::cosign;
pub use hash::Progress;
pub use key_scan::find_secret_key;
pub use keygen::{keygen, KeygenOptions};
pub use keys::{
    secret_key_protection, KeyId, Password, PublicKey, SecretKey, SecretKeyProtection,
    SecretKeyText,
};
pub use provenance::RunBinding;
pub use revocation::{install as install_revocation, revoke, RevokeOptions};
pub use rotation::{rotate, RotateOptions};
pub use sign::{sign, ChecksumsTarget, SignOptions};
pub use signature::SignatureFile;
pub use tlog::LogRequirement;
pub use trusted_keys::{list as list_keys, TrustedKeys};
pub use verify::{verify, Only, VerifyOptions, VerifyReport};
