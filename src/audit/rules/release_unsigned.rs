//! `release-unsigned`: a published release has no signed checksum list.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::verdict::release::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-unsigned",
    severity: Severity::High,
    description: "A published release has no signed SHA256SUMS",
    explanation: "one of the latest `--releases N` (default 3) published releases has no `SHA256SUMS`, or no `SHA256SUMS.minisig` beside it",
});

/// Release `tag` is not signed (`p` says how).
pub(crate) fn finding(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("release {tag}: {}", p.why),
        "Sign the release in its workflow (`warden sign dist/`) and upload SHA256SUMS and SHA256SUMS.minisig with the artifacts.",
    )
}
