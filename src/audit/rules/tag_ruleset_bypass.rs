//! `tag-ruleset-bypass`: someone who should not may always bypass the ruleset that protects the release tags.

use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::settings::rulesets::each_covering;
use crate::audit::settings::view::SettingsView;
use crate::github::settings::{BypassActor, Read, Ruleset};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "tag-ruleset-bypass",
    severity: Severity::High,
    description: "The tag ruleset lets write/maintain roles, an integration or a deploy key bypass it",
    explanation: "bypass `always` for the write (4) or maintain (2) role, an integration or a deploy key",
});

/// The check (a settings rule): each ruleset that covers the release tags.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    each_covering(v.settings, v.tags, one)
}

/// `tag-ruleset-bypass` for each actor that may always bypass a covering ruleset, or
/// `unverifiable` when GitHub withheld the bypass list.
fn one(read: &Read<Ruleset>, rs: &Ruleset) -> Vec<Finding> {
    let name = rs.name();
    let Some(actors) = &rs.bypass_actors else {
        return vec![super::unverifiable::finding(
            Severity::High,
            Location::api(&read.route),
            format!("tag ruleset `{name}` was returned without `bypass_actors`: GitHub hides them from tokens without write access to the ruleset, so who can bypass it is unknown"),
            "Run the audit with a token that can administer the repository (Administration: write).",
        )
        .about(rs.id.map(Subject::ruleset).unwrap_or_default())];
    };
    actors
        .iter()
        .filter(|a| a.bypass_mode.as_deref().unwrap_or("always") == "always")
        .filter_map(who_bypasses)
        .map(|who| {
            Finding::new(
                RULE,
                Location::api(&read.route),
                format!("tag ruleset `{name}` lets {who} bypass it at any time: they can create or move release tags"),
                format!("Remove that bypass actor from `{name}`, or set its bypass_mode to pull_request; keep bypass for the admin role only."),
            )
            .about(rs.id.map(Subject::ruleset).unwrap_or_default())
        })
        .collect()
}

/// Who a bypass actor is, when it is one that should not bypass tag protection. Repository role
/// ids are undocumented: maintain is 2, write is 4 (admin, 5, may bypass).
fn who_bypasses(a: &BypassActor) -> Option<String> {
    match (a.actor_type.as_deref().unwrap_or("?"), a.actor_id) {
        ("RepositoryRole", Some(4)) => Some("the write role".to_string()),
        ("RepositoryRole", Some(2)) => Some("the maintain role".to_string()),
        ("Integration", i) => Some(format!(
            "a GitHub App (integration {})",
            i.map_or("?".into(), |i| i.to_string())
        )),
        ("DeployKey", _) => Some("deploy keys".to_string()),
        _ => None,
    }
}
