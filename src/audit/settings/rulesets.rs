//! Tag protection, judged in order: an unreadable list or ruleset is `unverifiable`; no covering
//! ruleset is `legacy-tag-protection` or `no-tag-ruleset`; each covering ruleset is checked by
//! `tag-ruleset-incomplete` and `tag-ruleset-bypass`. Pure functions of what `github::settings`
//! read; each rule's finding is made in its own file.

use crate::audit::findings::{Finding, Severity};
use crate::audit::rules::{
    legacy_tag_protection, no_tag_ruleset, tag_ruleset_bypass, tag_ruleset_incomplete,
};
use crate::audit::tags::{ruleset_covers, ruleset_protects, ReleaseTags};
use crate::github::settings::{Read, Ruleset, Settings};

const RULESET_PERMISSION: &str = "Administration: read (fine-grained) or `repo` (classic)";

/// Findings about the rulesets (and legacy protections) that guard the release tags.
pub(crate) fn judge(settings: &Settings, repo: &str, tags: &ReleaseTags) -> Vec<Finding> {
    let list = &settings.rulesets;
    if let Some(f) =
        Finding::unreadable(list, Severity::High, "the tag rulesets", RULESET_PERMISSION)
    {
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
        // A legacy protection covers them all, or nothing does.
        return vec![legacy_tag_protection::check(settings, repo, tags)
            .unwrap_or_else(|| no_tag_ruleset::finding(settings, repo, tags, seen))];
    }
    let mut out = unreadable;
    for (read, rs) in covering {
        out.extend(tag_ruleset_incomplete::check(read, rs));
        out.extend(tag_ruleset_bypass::check(read, rs));
    }
    out
}
