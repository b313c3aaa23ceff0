//! `environment-self-review`: the reviewers of the signing environment may approve their own runs.

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::environments::{each_existing, environment_finding};
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{Environment, EnvironmentReads};
use super::environment_no_reviewers::reviewers;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "environment-self-review",
    severity: Severity::Medium,
    description: "The signing environment lets the person who triggered the run approve it",
    explanation: "`prevent_self_review` is off",
});

/// The check (a settings rule): each signing environment that exists.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    each_existing(v.settings, one)
}

/// Only an environment with reviewers: whether they may approve their own runs.
fn one(env: &Environment, reads: &EnvironmentReads) -> Option<Finding> {
    let name = reads.name.as_str();
    let rule = reviewers(env)?;
    (rule.prevent_self_review != Some(true)).then(|| environment_finding(
        RULE,
        reads,
        format!("environment `{name}` lets the person who started the run approve it (prevent_self_review is off)"),
        format!("Turn on \"Prevent self-review\" for `{name}`."),
    ))
}

