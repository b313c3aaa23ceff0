//! `environment-no-reviewers`: the signing environment has no required reviewers.

use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::environments::existing;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{Environment, EnvironmentReads};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "environment-no-reviewers",
    severity: Severity::High,
    description: "The signing environment has no required reviewers",
    explanation: "the environment has no required reviewers",
});

/// The environment's required reviewers: `None` when it has none.
pub(crate) fn reviewers(env: &Environment) -> Option<&crate::github::settings::ProtectionRule> {
    env.protection_rules
        .iter()
        .flatten()
        .find(|r| r.kind.as_deref() == Some("required_reviewers"))
        .filter(|r| r.reviewers.as_ref().is_some_and(|a| !a.is_empty()))
}

/// The check (a settings rule): each signing environment that exists.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    existing(v.settings)
        .into_iter()
        .filter_map(|(reads, env)| one(env, reads))
        .collect()
}

fn one(env: &Environment, reads: &EnvironmentReads) -> Option<Finding> {
    let name = reads.name.as_str();
    reviewers(env).is_none().then(|| finding(
        reads,
        format!("environment `{name}` has no required reviewers: any run that reaches it gets the signing key without approval"),
        format!("Add required reviewers (at least one person or team) to `{name}`."),
    ))
}

fn finding(reads: &EnvironmentReads, message: String, remediation: String) -> Finding {
    Finding::new(RULE, Location::api(&reads.route), message, remediation)
        .about(Subject::environment(&reads.name))
}
