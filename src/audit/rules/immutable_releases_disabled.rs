//! `immutable-releases-disabled`: neither the repository nor its organisation enforces immutable releases.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "immutable-releases-disabled",
    severity: Severity::Medium,
    description: "Neither the repository nor its organisation enforces immutable releases",
    explanation: "the organisation does not enforce immutable releases for the repository (`/orgs/{org}/settings/immutable-releases`: `all`, or `selected` with it), and the latest release was published mutable (the API has no repository-level read)",
});

/// Neither `repo` nor its organisation (policy at `at`) enforces immutable releases.
pub(crate) fn finding(at: Location, repo: &str) -> Finding {
    Finding::new(
        RULE,
        at,
        format!("immutable releases are not enforced for {repo}: its organisation does not enforce them, and its latest release was published mutable"),
        "Enable release immutability in the repository's settings (Releases), or enforce it for the organisation; it applies to releases published afterwards.",
    )
}
