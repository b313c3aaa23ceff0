//! `release-asset-replaced`: a published release's asset is not what was signed, by GitHub's
//! own digest, or a signed file was uploaded by someone other than the run that signed.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-asset-replaced",
    severity: Severity::High,
    description: "A release asset differs from the signed SHA256SUMS by GitHub's digest, or a signed file was uploaded outside the run that signed it",
    explanation: "GitHub's `digest` of a release asset (computed at upload) differs from the signed `SHA256SUMS`, checked for every asset without a download; or, for a signature that binds a run, `SHA256SUMS` or a signature was uploaded by someone other than `github-actions[bot]` or changed after the run ended",
});

/// Asset `name` of release `tag`: GitHub's `digest` is not the `listed` one.
pub(crate) fn digest(at: &Location, tag: &str, name: &str, (digest, listed): (&str, &str)) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("release {tag}'s asset {name} has GitHub digest sha256:{digest}, the signed SHA256SUMS lists {listed}: replaced after signing"),
        "Re-upload the signed artifact (or sign the release again), and find out who replaced it.",
    )
    .detail(name.to_string())
}

/// A signed file of release `tag` was uploaded outside the run: `why`.
pub(crate) fn upload(at: &Location, tag: &str, why: &str) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("release {tag}: {why}"),
        "Upload release files only from the release workflow, and find out who changed this one.",
    )
    .detail(why.to_string())
}
