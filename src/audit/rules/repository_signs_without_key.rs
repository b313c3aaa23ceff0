//! `repository-signs-without-key` (key inventory): a repository publishes signed releases and
//! commits no public key at all.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "repository-signs-without-key",
    severity: Severity::High,
    description: "A repository signs releases and commits no public key",
    explanation: "`audit --org --inventory`: the repository's recent releases carry minisign signatures, and it commits no `.pub` file (keys/, .github/ or its root): its users cannot tell its key from a thief's",
});

pub(crate) fn finding(repo: &str, route: &str, keys: &[String]) -> Finding {
    Finding::new(
        RULE,
        Location::api(route),
        format!(
            "{repo} signs its releases (key {}) and commits no public key: users cannot check which key is its own",
            keys.join(", ")
        ),
        "Commit the public key in keys/ (`warden keygen` writes it there), and verify releases against it (`warden verify --release`).",
    )
}
