//! `release-asset-replaced`: a published release's asset is not what was signed, by GitHub's
//! own digest, or a signed file was uploaded by someone other than the run that signed.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::verdict::release::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-asset-replaced",
    severity: Severity::High,
    description: "A release asset differs from the signed SHA256SUMS by GitHub's digest, or a signed file was uploaded outside the run that signed it",
    explanation: "GitHub's `digest` of a release asset (computed at upload) differs from the signed `SHA256SUMS`, checked for every asset without a download; or, for a signature that binds a run, an asset of the release was uploaded by someone other than `github-actions[bot]`, or outside the run (a co-signature that binds a run of its own is judged against that run)",
});

/// An asset of release `tag` is not what was signed, or was uploaded outside the run (`p`).
pub(crate) fn finding(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::of_release(RULE, (at, tag), p, "Re-upload the signed artifact (or sign the release again), upload release files only from the release workflow, and find out who changed this one.")
}
