//! `tag-ruleset-incomplete`: a ruleset that covers the release tags lacks creation, update or deletion rules.

use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::rulesets::each_covering;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{Read, Ruleset};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "tag-ruleset-incomplete",
    severity: Severity::Medium,
    description: "The tag ruleset lacks creation, update or deletion rules",
    explanation: "the covering ruleset lacks `creation`, `update` or `deletion`",
});

/// The check (a settings rule): each ruleset that covers the release tags.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    each_covering(v.settings, v.tags, one)
}

/// `tag-ruleset-incomplete`: a covering ruleset without creation, update or deletion rules.
fn one(read: &Read<Ruleset>, rs: &Ruleset) -> Option<Finding> {
    let types = rs.rule_types();
    let missing: Vec<&str> = ["creation", "update", "deletion"]
        .into_iter()
        .filter(|t| !types.contains(t))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let name = rs.name();
    let can_be: Vec<&str> = missing
        .iter()
        .map(|m| match *m {
            "creation" => "created",
            "update" => "moved",
            _ => "deleted",
        })
        .collect();
    Some(
        Finding::new(
            RULE,
            Location::api(&read.route),
            format!(
                "tag ruleset `{name}` has no {} rule: release tags can be {}",
                missing.join(", "),
                can_be.join(", ")
            ),
            format!(
                "Add the {} rule{} to ruleset `{name}`.",
                missing.join(", "),
                if missing.len() == 1 { "" } else { "s" }
            ),
        )
        .about(rs.id.map(Subject::ruleset).unwrap_or_default()),
    )
}
