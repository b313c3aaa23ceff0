//! `release-unsigned`: a published release has no signed checksum list.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-unsigned",
    severity: Severity::High,
    description: "A published release has no SHA256SUMS and SHA256SUMS.minisig",
    explanation: "one of the latest `--releases N` (default 3) published releases has no `SHA256SUMS` and `SHA256SUMS.minisig`",
});

/// Release `tag` has no `checksums` and `signature` among its assets.
pub(crate) fn finding(at: &Location, tag: &str, (checksums, signature): (&str, &str)) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("release {tag} has no {checksums} and {signature} among its assets"),
        "Sign the release in its workflow (`warden sign dist/`) and upload SHA256SUMS and SHA256SUMS.minisig with the artifacts.",
    )
}
