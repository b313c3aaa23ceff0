//! `environment-any-ref`: any branch or tag may deploy to the signing environment.

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::environments::{each_existing, environment_finding};
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{Environment, EnvironmentReads};
use crate::audit::tags::ReleaseTags;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "environment-any-ref",
    severity: Severity::Medium,
    description: "Any branch or tag may deploy to the signing environment",
    explanation: "`deployment_branch_policy` is null, so any ref may deploy",
});

/// The check (a settings rule): each signing environment that exists.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    each_existing(v.settings, |env, reads| one(env, reads, v.tags))
}

/// The environment has no deployment branch policy at all.
fn one(env: &Environment, reads: &EnvironmentReads, tags: &ReleaseTags) -> Option<Finding> {
    let name = reads.name.as_str();
    env.deployment_branch_policy.is_none().then(|| environment_finding(
        RULE,
        reads,
        format!("environment `{name}` has no deployment branch policy: a run from any branch or tag can use it"),
        format!("Restrict `{name}` to selected tags matching {} (a deployment policy of type tag).", tags.listed()),
    ))
}

