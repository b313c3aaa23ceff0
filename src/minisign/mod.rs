//! minisign's formats, as types: keys (`keys`), signatures (`signature`), trusted comments and
//! the fields they carry (`comment`, `run`), checksum lists (`checksums`), how release files are
//! named (`names`) and hashing (`hash`). A leaf: nothing here decides trust (`trust`) or judges a
//! release (`verdict`).

pub(crate) mod checksums;
pub(crate) mod comment;
pub(crate) mod hash;
pub(crate) mod keys;
pub(crate) mod names;
pub(crate) mod run;
pub(crate) mod signature;

pub use checksums::{check_relative_name, ChecksumFile};
pub use comment::{ReleaseMeta, TrustedComment};
pub use hash::Progress;
pub use keys::{
    secret_key_protection, KeyId, Password, PublicKey, SecretKey, SecretKeyProtection,
    SecretKeyText,
};
pub use run::RunBinding;
pub use signature::SignatureFile;
