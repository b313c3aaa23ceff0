//! `release-signature-invalid`: a published release's signature does not verify, or its assets do not match the signed list.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-signature-invalid",
    severity: Severity::High,
    description: "A published release's SHA256SUMS.minisig does not verify against the repository's keys/",
    explanation: "its `SHA256SUMS.minisig` does not verify against the repository's `keys/` (untrusted key, bad signature, `file:` not `SHA256SUMS`); with `--deep`, an asset does not match the signed list (each asset is hashed as it streams; the snapshot keeps only its digest)",
});

/// The `signature` of release `tag` does not verify against `keys/`, for `why`.
pub(crate) fn invalid(at: &Location, (tag, signature): (&str, &str), why: &str) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("the {signature} of release {tag} does not verify against keys/: {why}"),
        "Re-sign the release with the key in keys/, and find out how this signature got there.",
    )
}

/// `--deep`: release `tag` does not match its signed `checksums`, for `why`.
pub(crate) fn assets_differ(at: &Location, (tag, checksums): (&str, &str), why: &str) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("release {tag} does not match its signed {checksums}: {why}"),
        "Re-upload the artifacts the list was signed for, or sign the release again; find out how the assets changed.",
    )
}
