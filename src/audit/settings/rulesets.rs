//! What the tag-protection rules share: which rulesets protect the release tags. An unreadable
//! list or ruleset is `unverifiable` (an unreadable ruleset may be the one that protects them);
//! with no covering ruleset, `legacy-tag-protection` or `no-tag-ruleset`; each covering ruleset is
//! checked by `tag-ruleset-incomplete` and `tag-ruleset-bypass`.

use crate::audit::findings::Finding;
use crate::audit::tags::{ruleset_covers, ruleset_protects, ReleaseTags};
use crate::github::settings::{Read, Ruleset, Settings};

/// How the release tags are protected, as far as the rulesets tell.
pub(crate) enum TagProtection<'s> {
    /// The list of rulesets could not be read.
    ListUnreadable,
    /// No readable ruleset covers them, and some ruleset could not be read.
    Unreadable,
    /// No ruleset covers them: the rulesets seen, each with a tag it misses.
    Unprotected(Vec<String>),
    /// These active rulesets cover every release tag.
    Covered(Vec<(&'s Read<Ruleset>, &'s Ruleset)>),
}

/// The tag rulesets of `settings` against the release `tags`.
pub(crate) fn tag_protection<'s>(settings: &'s Settings, tags: &ReleaseTags) -> TagProtection<'s> {
    if settings.rulesets.ok().is_none() {
        return TagProtection::ListUnreadable;
    }
    let mut covering = Vec::new();
    let mut unreadable = false;
    let mut seen = Vec::new();
    for read in &settings.ruleset_details {
        let Ok(rs) = &read.answer else {
            unreadable = true;
            continue;
        };
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
    match (covering.is_empty(), unreadable) {
        (false, _) => TagProtection::Covered(covering),
        (true, true) => TagProtection::Unreadable,
        (true, false) => TagProtection::Unprotected(seen),
    }
}

/// `one` on each ruleset that covers the release tags: the covering-ruleset rules' check.
pub(crate) fn each_covering<I: IntoIterator<Item = Finding>>(
    settings: &Settings,
    tags: &ReleaseTags,
    one: impl Fn(&Read<Ruleset>, &Ruleset) -> I,
) -> Vec<Finding> {
    match tag_protection(settings, tags) {
        TagProtection::Covered(list) => list.into_iter().flat_map(|(r, rs)| one(r, rs)).collect(),
        _ => Vec::new(),
    }
}
