//! `revoked-key-still-read` (key inventory): a key a repository revoked is still named or held
//! by a workflow that signs.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "revoked-key-still-read",
    severity: Severity::High,
    description: "A revoked key is still read by a workflow",
    explanation: "`audit --org --inventory`: a key revoked in a repository's keys/revoked/ is still named by, or the key of, a signing job of the organisation: the secret holding it was not replaced",
});

pub(crate) fn finding(key: &str, revoked_in: &[String], jobs: &[String]) -> Finding {
    Finding::new(
        RULE,
        Location::key(key),
        format!(
            "key {key} is revoked in {} and still read by {}",
            revoked_in.join(", "),
            jobs.join(", ")
        ),
        "Replace the secret's value with the new key (`gh secret set`), and point the workflow at the new public key.",
    )
    .detail(jobs.join(","))
}
