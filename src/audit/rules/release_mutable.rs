//! `release-mutable`: a published release is not immutable.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-mutable",
    severity: Severity::Low,
    description: "A published release is not immutable: its assets and tag can still change",
    explanation: "GitHub says the release is not immutable",
});

/// Release `tag` (at `at`) is not immutable.
pub(crate) fn finding(at: &Location, tag: &str) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("release {tag} is not immutable: its assets and tag can still be changed"),
        "Enable immutable releases for the repository (or the organisation); releases published from then on cannot change.",
    )
}
