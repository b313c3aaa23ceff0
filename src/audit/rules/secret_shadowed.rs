//! `secret-shadowed`: the signing secret is in its environment and also at repository or organization level.

use crate::audit::findings::{Finding, Location, SecretScope, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::EnvironmentReads;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "secret-shadowed",
    severity: Severity::High,
    description: "The signing secret exists in the environment and at repository or organization level",
    explanation: "it is in the environment and also at repository or organization level",
});

/// The check (a settings rule): each signing secret of a signing environment that also exists
/// at repository (else organization) level. An environment the list lacks is left to
/// `environment-missing`.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    let settings = v.settings;
    let repo_names = settings.repo_secrets.ok().map(|l| l.names());
    let org_names = settings.org_secrets.ok().map(|l| l.names());
    let listed = settings.environments.ok().is_some();
    let mut out = Vec::new();
    for reads in &settings.signing_environments {
        if listed && settings.environment(&reads.name).is_none() {
            continue;
        }
        let Some(in_env) = reads.secrets.ok() else {
            continue;
        };
        for n in in_env.names().iter().filter(|n| v.secrets.is_signing(n)) {
            let at_repo = repo_names.as_ref().is_some_and(|l| l.contains(n));
            let at_org = org_names.as_ref().is_some_and(|l| l.contains(n));
            let scope = match (at_repo, at_org) {
                (true, _) => SecretScope::Repository,
                (false, true) => SecretScope::Organization,
                (false, false) => continue,
            };
            out.push(finding(reads, n, scope));
        }
    }
    out
}

/// Signing secret `n` of environment `reads.name` also exists at `scope` level.
fn finding(reads: &EnvironmentReads, n: &str, scope: SecretScope) -> Finding {
    let env = reads.name.as_str();
    let level = match scope {
        SecretScope::Repository => "repository",
        _ => "organization",
    };
    Finding::new(
        RULE,
        Location::api(&reads.secrets.route),
        format!("{n} is in environment `{env}` and also at {level} level: a job without the environment silently gets the other copy"),
        format!("Delete the {level} copy of {n}; keep only the one in `{env}`."),
    )
    .about(Subject::stored_secret(n, scope, Some(env)))
}
