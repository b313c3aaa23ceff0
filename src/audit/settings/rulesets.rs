//! Tag protection: `no-tag-ruleset`, `legacy-tag-protection`, `tag-ruleset-incomplete` and
//! `tag-ruleset-bypass`. Pure functions of what `fetch` read.

use crate::audit::findings::{Finding, Location, Severity, Subject};
use crate::audit::rule::Rule;
use crate::audit::tags::{legacy_gap, ruleset_covers, ruleset_protects, ReleaseTags};
use crate::github::settings::{BypassActor, Read, Ruleset, Settings};

const RULESET_PERMISSION: &str = "Administration: read (fine-grained) or `repo` (classic)";

/// Findings about the rulesets (and legacy protections) that guard the release tags.
pub fn judge(settings: &Settings, repo: &str, tags: &ReleaseTags) -> Vec<Finding> {
    let list = &settings.rulesets;
    if let Some(f) = Finding::unreadable(
        list,
        Severity::High,
        "the tag rulesets",
        RULESET_PERMISSION,
    ) {
        return vec![f];
    }
    let mut covering: Vec<(&Read<Ruleset>, &Ruleset)> = Vec::new();
    let mut unreadable = Vec::new();
    let mut seen = Vec::new();
    for read in &settings.ruleset_details {
        match &read.answer {
            Ok(rs) => {
                if rs.target.as_deref().is_some_and(|t| t != "tag") {
                    continue;
                }
                let missed = tags.missed(|t| ruleset_covers(rs, t));
                seen.push(format!(
                    "{} ({}{})",
                    rs.name(),
                    rs.enforcement.as_deref().unwrap_or("?"),
                    missed.map_or(String::new(), |tag| format!(", does not cover {tag}"))
                ));
                if ruleset_protects(rs, tags) {
                    covering.push((read, rs));
                }
            }
            Err(_) => unreadable.extend(Finding::unreadable(
                read,
                Severity::High,
                "a tag ruleset",
                RULESET_PERMISSION,
            )),
        }
    }
    if covering.is_empty() {
        // An unreadable ruleset may be the one that protects them: say that, not "none".
        if !unreadable.is_empty() {
            return unreadable;
        }
        return vec![unprotected(settings, repo, tags, seen)];
    }
    let mut out = unreadable;
    for (read, rs) in covering {
        out.extend(incomplete(read, rs));
        out.extend(bypass(read, rs));
    }
    out
}

/// No ruleset protects the release tags: `legacy-tag-protection` when a legacy protection does,
/// else `no-tag-ruleset`, naming every protection seen and a tag it misses.
fn unprotected(
    settings: &Settings,
    repo: &str,
    tags: &ReleaseTags,
    mut seen: Vec<String>,
) -> Finding {
    let listed = tags.listed();
    let legacy_list = settings
        .legacy
        .as_ref()
        .and_then(|l| l.ok().cloned())
        .unwrap_or_default();
    if let (Some(legacy), Some(p)) = (
        &settings.legacy,
        legacy_list.iter().find(|p| legacy_gap(p, tags).is_none()),
    ) {
        return Finding::new(
            Rule::LegacyTagProtection,
            Location::api(&legacy.route),
            format!(
                "the release tags ({listed}) are protected only by legacy tag protection `{}`: it is deprecated (gone from github.com since 2024-08-30), and anyone with the maintain role can create release tags",
                p.pattern.as_deref().unwrap_or("?")
            ),
            format!("Replace it with an active tag ruleset on refs/tags/{} with creation, update, deletion and non_fast_forward rules, bypass only for admins (see --fix-plan for repos/{repo}/rulesets), then delete the legacy protection.", tags.first()),
        );
    }
    for p in &legacy_list {
        seen.push(format!(
            "legacy tag protection {} ({})",
            p.pattern.as_deref().unwrap_or("?"),
            legacy_gap(p, tags).unwrap_or_default()
        ));
    }
    Finding::new(
        Rule::NoTagRuleset,
        Location::api(&settings.rulesets.route),
        format!(
            "no active ruleset protects the release tags ({listed}){}: anyone who can push can create a release tag, and the tag's workflow file decides what runs with the key",
            if seen.is_empty() { String::new() } else { format!("; tag protections seen: {}", seen.join(", ")) }
        ),
        format!("Create an active tag ruleset on refs/tags/{} with creation, update, deletion and non_fast_forward rules, bypass only for admins (see --fix-plan for repos/{repo}/rulesets).", tags.first()),
    )
}

fn subject(rs: &Ruleset) -> Subject {
    rs.id.map(Subject::ruleset).unwrap_or_default()
}

/// `tag-ruleset-incomplete`: a covering ruleset without creation, update or deletion rules.
fn incomplete(read: &Read<Ruleset>, rs: &Ruleset) -> Option<Finding> {
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
            Rule::TagRulesetIncomplete,
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
        .about(subject(rs)),
    )
}

/// `tag-ruleset-bypass` for each actor that may always bypass a covering ruleset, or
/// `unverifiable` when GitHub withheld the bypass list.
fn bypass(read: &Read<Ruleset>, rs: &Ruleset) -> Vec<Finding> {
    let name = rs.name();
    let Some(actors) = &rs.bypass_actors else {
        return vec![Finding::unverifiable(
            Severity::High,
            Location::api(&read.route),
            format!("tag ruleset `{name}` was returned without `bypass_actors`: GitHub hides them from tokens without write access to the ruleset, so who can bypass it is unknown"),
            "Run the audit with a token that can administer the repository (Administration: write).",
        )
        .about(subject(rs))];
    };
    actors
        .iter()
        .filter(|a| a.bypass_mode.as_deref().unwrap_or("always") == "always")
        .filter_map(who_bypasses)
        .map(|who| {
            Finding::new(
                Rule::TagRulesetBypass,
                Location::api(&read.route),
                format!("tag ruleset `{name}` lets {who} bypass it at any time: they can create or move release tags"),
                format!("Remove that bypass actor from `{name}`, or set its bypass_mode to pull_request; keep bypass for the admin role only."),
            )
            .about(subject(rs))
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
