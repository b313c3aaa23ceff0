//! `secret-org-visible`: an organization secret of the signing secret's name is visible to the repository.

use crate::audit::findings::{Finding, Location, SecretScope, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::Settings;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "secret-org-visible",
    severity: Severity::High,
    description: "An organization secret with the signing secret's name is visible to the repository",
    explanation: "an organization secret of that name is visible to the repository",
});

/// The check (a settings rule): each organization secret with a signing secret's name that the
/// repository can read.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    v.signing_secrets_in(&v.settings.org_secrets)
        .iter()
        .map(|n| finding(v.settings, n))
        .collect()
}

fn finding(settings: &Settings, n: &str) -> Finding {
    Finding::new(
        RULE,
        Location::api(&settings.org_secrets.route),
        format!("an organization secret named {n} is visible to this repository: any job can read it"),
        format!("Remove this repository from the organization secret {n}'s selected repositories, or delete it; keep the key in the environment."),
    )
    .about(Subject::stored_secret(n, SecretScope::Organization, None))
}
