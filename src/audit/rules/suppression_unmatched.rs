//! `suppression-unmatched`: a suppression in `.github/warden.toml` matches no finding.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "suppression-unmatched",
    severity: Severity::Low,
    description: "A suppression in .github/warden.toml matches no finding",
    explanation: "a suppression in `.github/warden.toml` matches no finding",
});

/// The suppression of `rule` in `path` (for `job`, when it names one) at `at` matched nothing.
pub(crate) fn finding(at: Location, rule: &str, path: &str, job: Option<&str>) -> Finding {
    Finding::new(
        RULE,
        at,
        format!(
            "the suppression of {rule} in {path}{} matches no finding",
            job.map(|j| format!(" (job {j})")).unwrap_or_default()
        ),
        "Remove the suppression: what it excused is gone (or the rule, path or job is misspelt).",
    )
}
