//! `secret-repo-level`: the signing secret is a repository secret.

use crate::audit::findings::{Finding, Location, SecretScope, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::Settings;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "secret-repo-level",
    severity: Severity::High,
    description: "The signing secret is a repository secret, reachable from every job",
    explanation: "the signing secret is a repository secret",
});

/// The check (a settings rule): each signing secret among the repository secrets.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    v.signing_secrets_in(&v.settings.repo_secrets)
        .iter()
        .map(|n| finding(v.settings, n))
        .collect()
}

fn finding(settings: &Settings, n: &str) -> Finding {
    Finding::new(
        RULE,
        Location::api(&settings.repo_secrets.route),
        format!("{n} is a repository secret: every job of every workflow can read it, whatever its environment"),
        format!("Store {n} in the signing environment only: `gh secret set {n} --env release`, then `gh secret delete {n}`."),
    )
    .about(Subject::stored_secret(n, SecretScope::Repository, None))
}
