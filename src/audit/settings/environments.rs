//! The signing environments: `environment-missing`, `environment-no-reviewers`,
//! `environment-self-review`, `environment-admin-bypass`, `environment-any-ref` and
//! `environment-no-tag-policy`. Pure functions of what `fetch` read.

use crate::audit::findings::{Confidence, Finding, Location, Severity, Subject};
use crate::audit::rule::Rule;
use crate::audit::tags::{ref_glob, ReleaseTags};
use crate::audit::workflows::signing_job::SigningJob;
use crate::github::settings::{Environment, EnvironmentReads, Settings};

const ENV_PERMISSION: &str = "Actions: read (fine-grained) or `repo` (classic)";

/// Findings about each environment a signing job uses.
pub fn judge(settings: &Settings, jobs: &[SigningJob], tags: &ReleaseTags) -> Vec<Finding> {
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
        let finding = |rule: Rule, message: String, remediation: String| {
            Finding::new(rule, Location::api(&reads.route), message, remediation)
                .about(Subject::environment(name))
        };
        let Some(env) = settings.environment(name) else {
            let users: Vec<String> = jobs
                .iter()
                .filter(|j| j.environment.as_deref() == Some(name))
                .map(|j| format!("{}:{}", j.workflow.display(), j.job))
                .collect();
            out.push(finding(
                Rule::EnvironmentMissing,
                format!("environment `{name}` (used by {}) does not exist: the first run creates it with no protection rules", users.join(", ")),
                format!("Create environment `{name}` with required reviewers and a tag deployment policy before the next release (see --fix-plan)."),
            ));
            continue;
        };
        out.extend(reviewers(env, name, &finding));
        out.extend(admin_bypass(env, reads, &finding));
        out.extend(deployment_policy(env, reads, tags, &finding));
    }
    out
}

type Make<'a> = dyn Fn(Rule, String, String) -> Finding + 'a;

/// `environment-no-reviewers`, or `environment-self-review` when the reviewers may approve
/// their own runs.
fn reviewers(env: &Environment, name: &str, finding: &Make) -> Option<Finding> {
    let rule = env
        .protection_rules
        .iter()
        .flatten()
        .find(|r| r.kind.as_deref() == Some("required_reviewers"));
    match rule {
        Some(r) if r.reviewers.as_ref().is_some_and(|a| !a.is_empty()) => {
            (r.prevent_self_review != Some(true)).then(|| finding(
                Rule::EnvironmentSelfReview,
                format!("environment `{name}` lets the person who started the run approve it (prevent_self_review is off)"),
                format!("Turn on \"Prevent self-review\" for `{name}`."),
            ))
        }
        _ => Some(finding(
            Rule::EnvironmentNoReviewers,
            format!("environment `{name}` has no required reviewers: any run that reaches it gets the signing key without approval"),
            format!("Add required reviewers (at least one person or team) to `{name}`."),
        )),
    }
}

/// `environment-admin-bypass`; `unverifiable` (low) when GitHub left the field out, as its own
/// documentation examples do.
fn admin_bypass(env: &Environment, reads: &EnvironmentReads, finding: &Make) -> Option<Finding> {
    let name = reads.name.as_str();
    match env.can_admins_bypass {
        Some(true) => Some(finding(
            Rule::EnvironmentAdminBypass,
            format!("administrators can bypass the protection rules of `{name}`"),
            format!("Turn off \"Allow administrators to bypass configured protection rules\" for `{name}`."),
        )),
        Some(false) => None,
        None => Some(
            Finding::unverifiable(
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

/// `environment-any-ref` when any ref may deploy; with custom policies, `environment-no-tag-policy`
/// unless a tag policy covers every release tag.
fn deployment_policy(
    env: &Environment,
    reads: &EnvironmentReads,
    tags: &ReleaseTags,
    finding: &Make,
) -> Option<Finding> {
    let name = reads.name.as_str();
    let listed = tags.listed();
    let Some(policy) = &env.deployment_branch_policy else {
        return Some(finding(
            Rule::EnvironmentAnyRef,
            format!("environment `{name}` has no deployment branch policy: a run from any branch or tag can use it"),
            format!("Restrict `{name}` to selected tags matching {listed} (a deployment policy of type tag)."),
        ));
    };
    if policy.custom_branch_policies != Some(true) {
        return None;
    }
    let read = &reads.policies;
    let Some(policies) = read.ok() else {
        return Finding::unreadable(
            read,
            Severity::Medium,
            &format!("the deployment policies of `{name}`"),
            ENV_PERMISSION,
        );
    };
    let patterns = policies.tag_patterns();
    let missed = tags.missed(|t| {
        let tag = t.trim_start_matches("refs/tags/");
        patterns
            .iter()
            .any(|p| ref_glob(p).is_some_and(|g| g.is_match(tag)))
    })?;
    Some(
        Finding::new(
            Rule::EnvironmentNoTagPolicy,
            Location::api(&read.route),
            format!(
                "no tag deployment policy of `{name}` covers the release tags ({listed}){}",
                if patterns.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; tag policies: {} (none covers {missed})",
                        patterns.join(", ")
                    )
                }
            ),
            format!(
                "Add a deployment policy of type tag named {} to `{name}`.",
                tags.first()
            ),
        )
        .about(Subject::environment(name)),
    )
}
