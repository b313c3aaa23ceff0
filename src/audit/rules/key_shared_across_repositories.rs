//! `key-shared-across-repositories` (key inventory): one signing key signs for several
//! repositories, so one theft signs releases of all of them.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "key-shared-across-repositories",
    severity: Severity::Medium,
    description: "One signing key signs for several repositories",
    explanation: "`audit --org --inventory`: one key (by its bytes) is trusted by, signs the releases of, or is held by the jobs of more than one repository: whoever steals it signs for all of them",
});

pub(crate) fn finding(key: &str, repos: &[String]) -> Finding {
    Finding::new(
        RULE,
        Location::key(key),
        format!(
            "key {key} signs for {} repositories: {}: whoever holds it signs releases of every one",
            repos.len(),
            repos.join(", ")
        ),
        "Give each repository its own key (`warden keygen`, then `warden keys rotate` in each), so that a leak reaches one repository.",
    )
    .detail(repos.join(","))
}
