//! `key-expiring` (key inventory): a key past, or within 30 days of, its `valid_until`.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "key-expiring",
    severity: Severity::Medium,
    description: "A signing key is past, or within 30 days of, its valid_until",
    explanation: "`audit --org --inventory`: keys/policy.toml gives the key a `valid_until` that has passed (high: its signatures no longer count) or comes within 30 days",
});

pub(crate) fn finding(key: &str, until: &str, past: bool, repos: &[String]) -> Finding {
    let mut f = Finding::new(
        RULE,
        Location::key(key),
        if past {
            format!(
                "key {key} is past its valid_until ({until}) in {}: its signatures no longer count",
                repos.join(", ")
            )
        } else {
            format!(
                "key {key} expires on {until} (within 30 days) in {}",
                repos.join(", ")
            )
        },
        "Rotate to a new key before it expires (`warden keys rotate`), and sign the next releases with it.",
    )
    .detail(repos.join(","));
    if past {
        f.severity = Severity::High;
    }
    f
}
