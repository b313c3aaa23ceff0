//! `suppression-expired`: a suppression in `.github/warden.toml` is past its `until` date.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "suppression-expired",
    severity: Severity::Medium,
    description: "A suppression in .github/warden.toml is past its `until` date, so its finding counts again",
    explanation: "a suppression in `.github/warden.toml` is past its `until` date: its finding counts again",
});

/// The suppression of `rule` in `path` at `at` expired on `until`.
pub(crate) fn finding(at: Location, rule: &str, path: &str, until: &str) -> Finding {
    Finding::new(
        RULE,
        at,
        format!("the suppression of {rule} in {path} expired on {until}: its finding counts again"),
        "Fix the finding, or review the reason and move `until`.",
    )
}
