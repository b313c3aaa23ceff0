//! `environment-no-tag-policy`: custom deployment policies, but none of type tag covers the release tags.

use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::environments::each_existing;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{Environment, EnvironmentReads};
use crate::audit::tags::{ref_glob, ReleaseTags};

use crate::audit::settings::view::ENV_PERMISSION;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "environment-no-tag-policy",
    severity: Severity::Medium,
    description: "No tag deployment policy of the signing environment covers the release tags",
    explanation: "custom policies exist, but no `type: tag` policy covers the release tags",
});

/// The check (a settings rule): each signing environment that exists.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    each_existing(v.settings, |env, reads| one(env, reads, v.tags))
}

/// An environment with custom deployment policies: a tag policy must cover every release tag
/// (`unverifiable` when the policies could not be read).
fn one(env: &Environment, reads: &EnvironmentReads, tags: &ReleaseTags) -> Option<Finding> {
    let name = reads.name.as_str();
    let listed = tags.listed();
    let policy = env.deployment_branch_policy.as_ref()?;
    if policy.custom_branch_policies != Some(true) {
        return None;
    }
    let read = &reads.policies;
    let Some(policies) = read.ok() else {
        return super::unverifiable::unreadable(
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
            RULE,
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
