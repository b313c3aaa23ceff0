//! `environment-no-reviewers`: the signing environment has no required reviewers.

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::environments::{each_existing, environment_finding};
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
    each_existing(v.settings, one)
}


fn one(env: &Environment, reads: &EnvironmentReads) -> Option<Finding> {
    let name = reads.name.as_str();
    reviewers(env).is_none().then(|| environment_finding(
        RULE,
        reads,
        format!("environment `{name}` has no required reviewers: any run that reaches it gets the signing key without approval"),
        format!("Add required reviewers (at least one person or team) to `{name}`."),
    ))
}

