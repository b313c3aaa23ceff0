//! `key-not-committed` (key inventory): a key signs releases, and neither the releasing
//! repository nor the organisation's list commits it.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "key-not-committed",
    severity: Severity::High,
    description: "A key signs releases, and its repository does not commit it",
    explanation: "`audit --org --inventory`: a signature in a recent release is by a key that neither the releasing repository (`keys/`, `.github/*.pub`) nor the organisation's list (the `.github` repository's `keys/`) commits: nobody can revoke it, and users have nothing to check it against. A `.pub` another repository commits does not count: anyone who can push there could add it",
});

pub(crate) fn finding(key: &str, releases: &[String]) -> Finding {
    Finding::new(
        RULE,
        Location::key(key),
        format!(
            "key {key} signed {}, and neither that repository nor the organisation's list (`.github` repository, keys/) commits a key it verifies under: nobody can revoke it",
            releases.join(", ")
        ),
        "Commit the key's public half in the keys/ of each repository it signs for (or stop signing with it: `warden keys rotate` to a committed key).",
    )
}
