//! The signing environments: an unreadable list is `unverifiable`; an environment not in it is
//! `environment-missing`; each one that exists is checked by `environment-no-reviewers`,
//! `environment-self-review`, `environment-admin-bypass`, `environment-any-ref` and
//! `environment-no-tag-policy`, each in its own file. Pure functions of what `github::settings`
//! read.

use crate::audit::findings::{Finding, Severity};
use crate::audit::rules::{
    environment_admin_bypass, environment_any_ref, environment_missing, environment_no_reviewers,
    environment_no_tag_policy, environment_self_review,
};
use crate::audit::tags::ReleaseTags;
use crate::audit::workflows::signing_job::SigningJob;
use crate::github::settings::Settings;

const ENV_PERMISSION: &str = "Actions: read (fine-grained) or `repo` (classic)";

/// Findings about each environment a signing job uses.
pub(crate) fn judge(settings: &Settings, jobs: &[SigningJob], tags: &ReleaseTags) -> Vec<Finding> {
    if settings.signing_environments.is_empty() {
        return Vec::new();
    }
    if let Some(f) = Finding::unreadable(
        &settings.environments,
        Severity::High,
        "the environments",
        ENV_PERMISSION,
    ) {
        return vec![f];
    }
    let mut out = Vec::new();
    for reads in &settings.signing_environments {
        let name = reads.name.as_str();
        let Some(env) = settings.environment(name) else {
            out.push(environment_missing::finding(reads, jobs));
            continue;
        };
        out.extend(environment_no_reviewers::check(env, reads));
        out.extend(environment_self_review::check(env, reads));
        out.extend(environment_admin_bypass::check(env, reads));
        out.extend(environment_any_ref::check(env, reads, tags));
        out.extend(environment_no_tag_policy::check(env, reads, tags));
    }
    out
}
