//! `secret-shadowed`: the signing secret is in its environment and also at repository or organization level.

use crate::audit::findings::{Finding, Location, SecretScope, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::github::settings::EnvironmentReads;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "secret-shadowed",
    severity: Severity::High,
    description: "The signing secret exists in the environment and at repository or organization level",
    explanation: "it is in the environment and also at repository or organization level",
});

/// Signing secret `n` of environment `reads.name` also exists at `scope` level.
pub(crate) fn finding(reads: &EnvironmentReads, n: &str, scope: SecretScope) -> Finding {
    let env = reads.name.as_str();
    let level = match scope {
        SecretScope::Repository => "repository",
        _ => "organization",
    };
    Finding::new(
        RULE,
        Location::api(&reads.secrets.route),
        format!("{n} is in environment `{env}` and also at {level} level: a job without the environment silently gets the other copy"),
        format!("Delete the {level} copy of {n}; keep only the one in `{env}`."),
    )
    .about(Subject::stored_secret(n, scope, Some(env)))
}
