//! `key-unused` (key inventory): a committed key that no recent release was signed with.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "key-unused",
    severity: Severity::Low,
    description: "A committed key signed none of the recent releases",
    explanation: "`audit --org --inventory`: a key trusted by a repository's keys/ (not revoked, not rotated away) signed none of the releases read: a key that is trusted but unused is one more to lose",
});

pub(crate) fn finding(key: &str, repos: &[String], releases: usize) -> Finding {
    Finding::new(
        RULE,
        Location::key(key),
        if releases == 0 {
            format!(
                "key {key} is trusted by {}, which published no release signed with it",
                repos.join(", ")
            )
        } else {
            format!(
                "key {key} is trusted by {} and signed none of their {releases} latest releases",
                repos.join(", ")
            )
        },
        "If the key is no longer used, revoke it (`warden keys revoke`) or remove it from keys/; if it is a spare, say so in keys/policy.toml (`role`) and suppress this finding.",
    )
    .detail(repos.join(","))
}
