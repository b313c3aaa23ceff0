//! `release-attestation-mismatch`: GitHub's own statements about a published release (its release
//! attestation, build provenance) do not verify, or contradict the release or its signatures.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::verdict::release::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-attestation-mismatch",
    severity: Severity::High,
    description: "GitHub's release attestation or build provenance of a published release disagrees with its signatures",
    explanation: "GitHub's release attestation or build provenance of a published release does not verify under GitHub's roots, names another repository, tag, commit or run than the release and its minisign signatures, or does not list an asset (replaced after publishing), or is missing where `require_attestation` asks for it (the rule `verify --release` applies)",
});

/// Release `tag`'s attestations disagree with it (`p` says how).
pub(crate) fn finding(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::of_release(RULE, (at, tag), p, "Find out which side is wrong before anyone installs the release: GitHub's attestations are made by GitHub and the run, so a minisign signature they contradict was made elsewhere (a stolen key), or an asset was replaced.")
}
