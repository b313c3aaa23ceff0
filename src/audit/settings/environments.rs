//! What the environment rules share: the signing environments, each with what the list of
//! environments says of it. An unreadable list is `unverifiable` and no environment rule runs;
//! an environment not in it is `environment-missing`; each one that exists is checked by
//! `environment-no-reviewers`, `environment-self-review`, `environment-admin-bypass`,
//! `environment-any-ref` and `environment-no-tag-policy`.

use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::Rule;
use crate::github::settings::{Environment, EnvironmentReads, Settings};

/// Each signing environment and its entry in the list (`None`: it does not exist); `None` when
/// the list could not be read.
pub(crate) fn signing_environments(
    settings: &Settings,
) -> Option<Vec<(&EnvironmentReads, Option<&Environment>)>> {
    settings.environments.ok()?;
    Some(
        settings
            .signing_environments
            .iter()
            .map(|reads| (reads, settings.environment(&reads.name)))
            .collect(),
    )
}

/// The signing environments that exist, with their settings.
pub(crate) fn existing(settings: &Settings) -> Vec<(&EnvironmentReads, &Environment)> {
    signing_environments(settings)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(reads, env)| Some((reads, env?)))
        .collect()
}

/// `one` on each signing environment that exists: the environment rules' check.
pub(crate) fn each_existing(
    settings: &Settings,
    one: impl Fn(&Environment, &EnvironmentReads) -> Option<Finding>,
) -> Vec<Finding> {
    existing(settings)
        .into_iter()
        .filter_map(|(reads, env)| one(env, reads))
        .collect()
}

/// A finding of `rule` about the environment `reads` names.
pub(crate) fn environment_finding(
    rule: Rule,
    reads: &EnvironmentReads,
    message: String,
    remediation: String,
) -> Finding {
    Finding::new(rule, Location::api(&reads.route), message, remediation)
        .about(Subject::environment(&reads.name))
}
