//! The one judgement of a published release's signature, used by `warden verify --release` and
//! by the audit's release check: the signed `SHA256SUMS` must verify against the trusted keys
//! with every check a file gets, and its trusted comment must bind the release's tag, its
//! repository and the commit the tag names (`binding`, which folder verification applies to
//! `--expect-*` too). A field the comment does not carry is a mismatch, never a pass.

use super::binding::{binding_mismatch, BindingMismatch, Expected, SignedRelease};
use super::trusted_keys::TrustedKeys;

/// Why a release's signed checksum list is not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// The signature does not verify, or is refused (legacy, dry-run, untrusted key, bad file
    /// binding, …).
    Invalid(String),
    /// It verifies, but binds another release.
    Binding(BindingMismatch),
}

/// The judgement: `signature` (the text of `SHA256SUMS.minisig`) over `sums` (the bytes of
/// `checksums_name`), with `keys`, for the release `expected` describes: its tag, its repository
/// and the commit the tag names now (`None` when that could not be read: the caller then says
/// the release is unverifiable if nothing else is wrong).
pub(crate) fn judge(
    signature: &str,
    sums: &[u8],
    checksums_name: &str,
    keys: &TrustedKeys,
    expected: &Expected<'_>,
) -> Result<SignedRelease, Rejection> {
    let signed = super::verify::verify_bytes(signature, sums, checksums_name, keys)
        .map_err(Rejection::Invalid)?;
    match binding_mismatch(&signed, expected) {
        Some(m) => Err(Rejection::Binding(m)),
        None => Ok(signed),
    }
}
