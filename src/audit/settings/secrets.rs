//! Where the signing secret is stored: `secret-repo-level`, `secret-org-visible` and
//! `secret-shadowed` (each finding made in its rule's file). Pure functions of what
//! `github::settings` read.

use crate::audit::findings::{Finding, SecretScope, Severity};
use crate::audit::rules::{secret_org_visible, secret_repo_level, secret_shadowed};
use crate::audit::secrets::SigningSecrets;
use crate::github::settings::{Read, SecretList, Settings};

const SECRETS_PERMISSION: &str = "Secrets: read (fine-grained) or `repo` (classic)";
const ENV_SECRETS_PERMISSION: &str = "Environments: read (fine-grained) or `repo` (classic)";

/// Findings about the signing secrets stored at repository or organization level, or in two
/// places at once.
pub(crate) fn judge(settings: &Settings, secrets: &SigningSecrets) -> Vec<Finding> {
    let repo_names = settings.repo_secrets.ok().map(|l| l.names());
    let org_names = settings.org_secrets.ok().map(|l| l.names());
    let mut out = stored_outside(
        &settings.repo_secrets,
        secrets,
        (Severity::High, "the repository secrets"),
        |n| secret_repo_level::finding(settings, n),
    );
    out.extend(stored_outside(
        &settings.org_secrets,
        secrets,
        (
            Severity::Medium,
            "the organization secrets visible to the repository",
        ),
        |n| secret_org_visible::finding(settings, n),
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
            let scope = match (at_repo, at_org) {
                (true, _) => SecretScope::Repository,
                (false, true) => SecretScope::Organization,
                (false, false) => continue,
            };
            out.push(secret_shadowed::finding(reads, n, scope));
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
