//! `legacy-tag-protection`: the release tags are protected only by a deprecated legacy tag protection.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::tags::{legacy_gap, ReleaseTags};
use crate::github::settings::Settings;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "legacy-tag-protection",
    severity: Severity::Medium,
    description: "The release tags are protected only by deprecated legacy tag protection (GHES)",
    explanation: "no ruleset, but a legacy tag protection (GHES ≤ 3.19, `/tags/protection`) covers the release tags: deprecated, and the maintain role can create release tags. Read only when no ruleset covers them; github.com's 410 means none",
});

/// When no ruleset protects the release tags: the legacy protection that covers them all, if
/// one does.
pub(crate) fn check(settings: &Settings, repo: &str, tags: &ReleaseTags) -> Option<Finding> {
    let legacy = settings.legacy.as_ref()?;
    let list = legacy.ok()?;
    let p = list.iter().find(|p| legacy_gap(p, tags).is_none())?;
    Some(Finding::new(
        RULE,
        Location::api(&legacy.route),
        format!(
            "the release tags ({}) are protected only by legacy tag protection `{}`: it is deprecated (gone from github.com since 2024-08-30), and anyone with the maintain role can create release tags",
            tags.listed(),
            p.pattern.as_deref().unwrap_or("?")
        ),
        format!("Replace it with an active tag ruleset on refs/tags/{} with creation, update, deletion and non_fast_forward rules, bypass only for admins (see --fix-plan for repos/{repo}/rulesets), then delete the legacy protection.", tags.first()),
    ))
}
