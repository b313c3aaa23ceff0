//! `release-binding-mismatch`: a published release is signed for another tag, repository or commit.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::verdict::release::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-binding-mismatch",
    severity: Severity::High,
    description: "A published release is signed for another tag, repository or commit than its own",
    explanation: "it is signed for another tag or repository, for a commit the tag no longer names (moved or recreated after signing), or binds no `tag:`, `repo:` or `commit:` (the rule `verify --release` applies; a tag whose commit cannot be read is `unverifiable`)",
});

/// Release `tag` is signed for another release (`p` says which field).
pub(crate) fn finding(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::of_release(RULE, (at, tag), p, "Sign each release in its own tag's workflow (`warden sign --tag \"$TAG\" --repo \"$GITHUB_REPOSITORY\" --commit \"$GITHUB_SHA\"`), and never move a release tag.")
}
