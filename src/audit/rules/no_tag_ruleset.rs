//! `no-tag-ruleset`: no active ruleset (or legacy protection) protects the release tags.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::tags::{legacy_gap, ReleaseTags};
use super::legacy_tag_protection;
use crate::audit::settings::rulesets::{tag_protection, TagProtection};
use crate::audit::settings::view::SettingsView;
use crate::github::settings::Settings;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "no-tag-ruleset",
    severity: Severity::High,
    description: "No active tag ruleset protects the release tags",
    explanation: "no active ruleset's include patterns cover the release tags. A pattern covers `v*` only if it matches `v1.2.3`, `v99.0.0-rc.1` and `vx` (so `v1.*` and `v[0-9]*` do not: any tag the release workflow triggers on can reach the key). `~ALL` and excludes are honoured, `*` does not cross `/`, and `enabled` counts as active",
});

/// The check (a settings rule): neither a ruleset nor a legacy protection covers the release
/// tags.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    match tag_protection(v.settings, v.tags) {
        TagProtection::Unprotected(seen)
            if legacy_tag_protection::protecting(v.settings, v.tags).is_none() =>
        {
            vec![finding(v.settings, v.repo, v.tags, seen)]
        }
        _ => Vec::new(),
    }
}

/// The finding names every protection `seen` (and each legacy one) with a tag it misses.
fn finding(
    settings: &Settings,
    repo: &str,
    tags: &ReleaseTags,
    mut seen: Vec<String>,
) -> Finding {
    let legacy_list = settings
        .legacy
        .as_ref()
        .and_then(|l| l.ok().cloned())
        .unwrap_or_default();
    for p in &legacy_list {
        seen.push(format!(
            "legacy tag protection {} ({})",
            p.pattern.as_deref().unwrap_or("?"),
            legacy_gap(p, tags).unwrap_or_default()
        ));
    }
    Finding::new(
        RULE,
        Location::api(&settings.rulesets.route),
        format!(
            "no active ruleset protects the release tags ({}){}: anyone who can push can create a release tag, and the tag's workflow file decides what runs with the key",
            tags.listed(),
            if seen.is_empty() { String::new() } else { format!("; tag protections seen: {}", seen.join(", ")) }
        ),
        format!("Create an active tag ruleset on refs/tags/{} with creation, update, deletion and non_fast_forward rules, bypass only for admins (see --fix-plan for repos/{repo}/rulesets).", tags.first()),
    )
}
