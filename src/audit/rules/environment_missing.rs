//! `environment-missing`: a signing job names an environment that does not exist.

use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::signing_job::SigningJob;
use crate::audit::settings::environments::signing_environments;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::EnvironmentReads;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "environment-missing",
    severity: Severity::High,
    description: "The signing environment does not exist: GitHub auto-creates it with no protection",
    explanation: "the signing environment does not exist, so GitHub auto-creates it unprotected",
});

/// The check (a settings rule): each signing environment the list of environments lacks.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    signing_environments(v.settings)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, env)| env.is_none())
        .map(|(reads, _)| finding(reads, v.jobs))
        .collect()
}

/// Environment `reads.name` is not among the repository's environments; `jobs` name it.
fn finding(reads: &EnvironmentReads, jobs: &[SigningJob]) -> Finding {
    let name = reads.name.as_str();
    let users: Vec<String> = jobs
        .iter()
        .filter(|j| j.environment.as_deref() == Some(name))
        .map(|j| format!("{}:{}", j.workflow.display(), j.job))
        .collect();
    Finding::new(
        RULE,
        Location::api(&reads.route),
        format!("environment `{name}` (used by {}) does not exist: the first run creates it with no protection rules", users.join(", ")),
        format!("Create environment `{name}` with required reviewers and a tag deployment policy before the next release (see --fix-plan)."),
    )
    .about(Subject::environment(name))
}
