//! `key-secret-overexposed` (key inventory): an organisation secret holding a signing key is
//! readable by more repositories than sign with it.

use crate::audit::findings::{Finding, Location, SecretScope, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "key-secret-overexposed",
    severity: Severity::High,
    description: "An organisation secret holding a signing key reaches repositories that do not sign with it",
    explanation: "`audit --org --inventory`: an organisation secret that holds a signing key is visible to repositories none of whose jobs sign with it: anyone who can push a workflow there can read the key",
});

pub(crate) fn finding(key: &str, secret: &str, readers: &[String], signers: &[String]) -> Finding {
    let idle: Vec<&String> = readers.iter().filter(|r| !signers.contains(r)).collect();
    Finding::new(
        RULE,
        Location::key(key),
        format!(
            "organisation secret {secret} (key {key}) is readable by {} repositories; {} sign with it: {} can read it without using it",
            readers.len(),
            signers.len(),
            idle.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ),
        format!("Narrow {secret} to the repositories that sign (visibility `selected`), or move it into each signing repository's release environment."),
    )
    .about(Subject::stored_secret(secret, SecretScope::Organization, None))
    .detail(readers.join(","))
}
