//! `key-not-committed` (key inventory): a key signs releases, and no repository of the
//! organisation commits it.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "key-not-committed",
    severity: Severity::High,
    description: "A key signs releases, and no repository commits it",
    explanation: "`audit --org --inventory`: a signature in a recent release is by a key that no repository of the organisation commits (no `keys/*.pub` verifies it): nobody can revoke it, and users have nothing to check it against",
});

pub(crate) fn finding(key: &str, releases: &[String]) -> Finding {
    Finding::new(
        RULE,
        Location::key(key),
        format!(
            "key {key} signed {}, and no repository of the organisation commits a key it verifies under: nobody can revoke it",
            releases.join(", ")
        ),
        "Commit the key's public half in the keys/ of each repository it signs for (or stop signing with it: `warden keys rotate` to a committed key).",
    )
}
