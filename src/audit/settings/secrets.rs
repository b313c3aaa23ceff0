//! Where the signing secret is stored: `secret-repo-level`, `secret-org-visible` and
//! `secret-shadowed`. Pure functions of what `fetch` read.

use crate::audit::findings::{Finding, Location, SecretScope, Severity, Subject};
use crate::audit::rule::Rule;
use crate::audit::secrets::SigningSecrets;
use crate::github::settings::{Read, SecretList, Settings};

const SECRETS_PERMISSION: &str = "Secrets: read (fine-grained) or `repo` (classic)";
const ENV_SECRETS_PERMISSION: &str = "Environments: read (fine-grained) or `repo` (classic)";

/// Findings about the signing secrets stored at repository or organization level, or in two
/// places at once.
pub fn judge(settings: &Settings, secrets: &SigningSecrets) -> Vec<Finding> {
    let repo_names = settings.repo_secrets.ok().map(|l| l.names());
    let org_names = settings.org_secrets.ok().map(|l| l.names());
    let mut out = stored_outside(
        &settings.repo_secrets,
        secrets,
        (Severity::High, "the repository secrets"),
        |n| {
            Finding::new(
                Rule::SecretRepoLevel,
                Location::api(&settings.repo_secrets.route),
                format!("{n} is a repository secret: every job of every workflow can read it, whatever its environment"),
                format!("Store {n} in the signing environment only: `gh secret set {n} --env release`, then `gh secret delete {n}`."),
            )
            .about(Subject::stored_secret(n, SecretScope::Repository, None))
        },
    );
    out.extend(stored_outside(
        &settings.org_secrets,
        secrets,
        (Severity::Medium, "the organization secrets visible to the repository"),
        |n| {
            Finding::new(
                Rule::SecretOrgVisible,
                Location::api(&settings.org_secrets.route),
                format!("an organization secret named {n} is visible to this repository: any job can read it"),
                format!("Remove this repository from the organization secret {n}'s selected repositories, or delete it; keep the key in the environment."),
            )
            .about(Subject::stored_secret(n, SecretScope::Organization, None))
        },
    ));
    for reads in &settings.signing_environments {
        let env = reads.name.as_str();
        let listed = settings.environments.ok().is_some();
        if listed && settings.environment(env).is_none() {
            continue; // reported as missing
        }
        let Some(in_env) = reads.secrets.ok() else {
            out.extend(Finding::unreadable(
                &reads.secrets,
                Severity::Medium,
                &format!("the secrets of environment `{env}`"),
                ENV_SECRETS_PERMISSION,
            ));
            continue;
        };
        for n in in_env.names().iter().filter(|n| secrets.is_signing(n)) {
            let at_repo = repo_names.as_ref().is_some_and(|l| l.contains(n));
            let at_org = org_names.as_ref().is_some_and(|l| l.contains(n));
            let (scope, level) = match (at_repo, at_org) {
                (true, _) => (SecretScope::Repository, "repository"),
                (false, true) => (SecretScope::Organization, "organization"),
                (false, false) => continue,
            };
            out.push(
                Finding::new(
                    Rule::SecretShadowed,
                    Location::api(&reads.secrets.route),
                    format!("{n} is in environment `{env}` and also at {level} level: a job without the environment silently gets the other copy"),
                    format!("Delete the {level} copy of {n}; keep only the one in `{env}`."),
                )
                .about(Subject::stored_secret(n, scope, Some(env))),
            );
        }
    }
    out
}

/// A finding for each signing secret in a list of secrets every job can read (repository or
/// organization level); `unverifiable` when the list could not be read.
fn stored_outside(
    list: &Read<SecretList>,
    secrets: &SigningSecrets,
    (severity, what): (Severity, &str),
    finding: impl Fn(&str) -> Finding,
) -> Vec<Finding> {
    match list.ok() {
        Some(l) => l
            .names()
            .iter()
            .filter(|n| secrets.is_signing(n))
            .map(|n| finding(n))
            .collect(),
        None => Finding::unreadable(list, severity, what, SECRETS_PERMISSION)
            .into_iter()
            .collect(),
    }
}
