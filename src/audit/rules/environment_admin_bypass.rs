//! `environment-admin-bypass`: administrators can bypass the signing environment's protection.

use crate::audit::findings::{Confidence, Finding, Location, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::environments::{each_existing, environment_finding};
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{Environment, EnvironmentReads};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "environment-admin-bypass",
    severity: Severity::Medium,
    description: "Administrators can bypass the signing environment's protection",
    explanation: "`can_admins_bypass` is on",
});

/// The check (a settings rule): each signing environment that exists.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    each_existing(v.settings, one)
}

/// `environment-admin-bypass`; `unverifiable` (low) when GitHub left the field out, as its own
/// documentation examples do.
fn one(env: &Environment, reads: &EnvironmentReads) -> Option<Finding> {
    let name = reads.name.as_str();
    match env.can_admins_bypass {
        Some(true) => Some(environment_finding(
            RULE,
            reads,
            format!("administrators can bypass the protection rules of `{name}`"),
            format!("Turn off \"Allow administrators to bypass configured protection rules\" for `{name}`."),
        )),
        Some(false) => None,
        None => Some(
            super::unverifiable::finding(
                Severity::Low,
                Location::api(&reads.route),
                format!("environment `{name}` was returned without `can_admins_bypass`, so whether admins can bypass it is unknown"),
                "Check the setting in the environment's page, or re-run against the live API (GitHub's documentation examples omit the field).",
            )
            .with_confidence(Confidence::Medium)
            .about(Subject::environment(name)),
        ),
    }
}

