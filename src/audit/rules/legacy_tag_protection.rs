//! `legacy-tag-protection`: the release tags are protected only by a deprecated legacy tag protection.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::tags::{legacy_gap, ReleaseTags};
use crate::audit::settings::rulesets::{tag_protection, TagProtection};
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{LegacyProtection, Read, Settings};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "legacy-tag-protection",
    severity: Severity::Medium,
    description: "The release tags are protected only by deprecated legacy tag protection (GHES)",
    explanation: "no ruleset, but a legacy tag protection (GHES ≤ 3.19, `/tags/protection`) covers the release tags: deprecated, and the maintain role can create release tags. Read only when no ruleset covers them; github.com's 410 means none",
});

/// The check (a settings rule): no ruleset protects the release tags, and a legacy protection
/// covers them all.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    match tag_protection(v.settings, v.tags) {
        TagProtection::Unprotected(_) => finding(v.settings, v.repo, v.tags).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The legacy protection that covers every release tag, if one does.
pub(crate) fn protecting<'s>(
    settings: &'s Settings,
    tags: &ReleaseTags,
) -> Option<(&'s Read<Vec<LegacyProtection>>, &'s LegacyProtection)> {
    let legacy = settings.legacy.as_ref()?;
    let p = legacy.ok()?.iter().find(|p| legacy_gap(p, tags).is_none())?;
    Some((legacy, p))
}

fn finding(settings: &Settings, repo: &str, tags: &ReleaseTags) -> Option<Finding> {
    let (legacy, p) = protecting(settings, tags)?;
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
