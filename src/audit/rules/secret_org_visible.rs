//! `secret-org-visible`: an organization secret of the signing secret's name is visible to the repository.

use crate::audit::findings::{Finding, Location, SecretScope, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::github::settings::Settings;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "secret-org-visible",
    severity: Severity::High,
    description: "An organization secret with the signing secret's name is visible to the repository",
    explanation: "an organization secret of that name is visible to the repository",
});

/// An organization secret named `n` (a signing secret's name) is visible to the repository.
pub(crate) fn finding(settings: &Settings, n: &str) -> Finding {
    Finding::new(
        RULE,
        Location::api(&settings.org_secrets.route),
        format!("an organization secret named {n} is visible to this repository: any job can read it"),
        format!("Remove this repository from the organization secret {n}'s selected repositories, or delete it; keep the key in the environment."),
    )
    .about(Subject::stored_secret(n, SecretScope::Organization, None))
}
