//! What a signature binds of a release (`tag:`, `repo:`, `commit:`) against what is expected:
//! `verify --expect-*`, `verify --release` and the audit's release check ask this one question
//! and word the answer each in its own place.

use std::fmt;

/// The fields of a trusted comment a release binds (`tag:`, `repo:`, `commit:`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SignedRelease {
    pub(crate) tag: Option<String>,
    pub(crate) repo: Option<String>,
    pub(crate) commit: Option<String>,
    /// Read from someone else's free-form comment: a version written with or without its `v`
    /// (`1.2.0` for tag `v1.2.0`) is the same tag.
    pub(crate) loose: bool,
}

/// What a signature must bind: each field given is required. A repository compares without case
/// (GitHub's names do); the signed commit must be a full 40-hex SHA that begins with the expected
/// one (at least 12 hex digits; the full SHA for a published release).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Expected<'a> {
    pub(crate) tag: Option<&'a str>,
    pub(crate) repo: Option<&'a str>,
    pub(crate) commit: Option<&'a str>,
}

/// A published release as GitHub describes it: its tag, its repository, and the commit the tag
/// names now (a full SHA; `None` when it could not be read, which the caller reports as
/// unverifiable: a binding is then checked for tag and repository only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleaseIdentity {
    pub(crate) tag: String,
    pub(crate) repo: String,
    pub(crate) commit: Option<String>,
}

impl ReleaseIdentity {
    /// What a signature of this release must bind.
    pub(crate) fn expected(&self) -> Expected<'_> {
        Expected {
            tag: Some(&self.tag),
            repo: Some(&self.repo),
            commit: self.commit.as_deref(),
        }
    }
}

/// Which bound field disagrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoundField {
    Tag,
    Repo,
    Commit,
}

/// A binding the signature does not hold: what it says (`None`: the field is absent) and what
/// was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BindingMismatch {
    pub(crate) field: BoundField,
    pub(crate) signed: Option<String>,
    pub(crate) expected: String,
}

pub(crate) use crate::minisign::comment::is_full_commit;

/// Whether `c` can name a commit as an expectation: 12 to 40 hex digits (an empty or shorter
/// prefix would match too much, and never does).
fn is_commit_prefix(c: &str) -> bool {
    (12..=40).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The first binding `signed` does not hold, checked in the order repository, tag (when it binds
/// another one: the signature is another release's, a replay, which says more than its commit
/// differing), commit, tag (when it binds none).
pub(crate) fn binding_mismatch(
    signed: &SignedRelease,
    expected: &Expected<'_>,
) -> Option<BindingMismatch> {
    let mismatch = |field, signed: &Option<String>, expected: &str| BindingMismatch {
        field,
        signed: signed.clone(),
        expected: expected.to_string(),
    };
    let same_tag = |t: &str, tag: &str| {
        t == tag
            || (signed.loose
                && t.strip_prefix('v').unwrap_or(t) == tag.strip_prefix('v').unwrap_or(tag))
    };
    if let Some(repo) = expected.repo {
        if !signed
            .repo
            .as_deref()
            .is_some_and(|r| r.eq_ignore_ascii_case(repo))
        {
            return Some(mismatch(BoundField::Repo, &signed.repo, repo));
        }
    }
    if let (Some(t), Some(tag)) = (signed.tag.as_deref(), expected.tag) {
        if !same_tag(t, tag) {
            return Some(mismatch(BoundField::Tag, &signed.tag, tag));
        }
    }
    if let Some(commit) = expected.commit {
        let holds = is_commit_prefix(commit)
            && signed.commit.as_deref().is_some_and(|c| {
                is_full_commit(c)
                    && c.to_ascii_lowercase()
                        .starts_with(&commit.to_ascii_lowercase())
            });
        if !holds {
            return Some(mismatch(BoundField::Commit, &signed.commit, commit));
        }
    }
    if let Some(tag) = expected.tag {
        if !signed.tag.as_deref().is_some_and(|t| same_tag(t, tag)) {
            return Some(mismatch(BoundField::Tag, &signed.tag, tag));
        }
    }
    None
}

impl BindingMismatch {
    fn field_name(&self) -> (&'static str, &'static str) {
        match self.field {
            BoundField::Tag => ("tag", "tag"),
            BoundField::Repo => ("repo", "repository"),
            BoundField::Commit => ("commit", "commit"),
        }
    }
}

/// verify's words for a result line.
impl fmt::Display for BindingMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, noun) = self.field_name();
        let expected = &self.expected;
        match (&self.signed, self.field) {
            (None, _) => write!(
                f,
                "the trusted comment has no {key}: field, expected {noun} {expected}"
            ),
            (Some(c), BoundField::Commit) if !is_full_commit(c) => write!(
                f,
                "the trusted comment's commit:{c} is not a full 40-hex commit"
            ),
            (Some(v), _) => write!(f, "signed for {noun} {v}, expected {expected}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: &str = "3470838ef50e566f292860fb1d8aee4937d11849";
    const C2: &str = "ffffffffffffffffffffffffffffffffffffffff";

    fn signed(tag: Option<&str>, repo: Option<&str>, commit: Option<&str>) -> SignedRelease {
        SignedRelease {
            tag: tag.map(str::to_string),
            repo: repo.map(str::to_string),
            commit: commit.map(str::to_string),
            loose: false,
        }
    }

    fn release() -> Expected<'static> {
        Expected {
            tag: Some("v1"),
            repo: Some("o/r"),
            commit: Some(C1),
        }
    }

    #[test]
    fn a_signature_binding_the_release_holds_and_the_repository_ignores_case() {
        assert_eq!(
            binding_mismatch(&signed(Some("v1"), Some("O/R"), Some(C1)), &release()),
            None
        );
        let prefix = Expected {
            commit: Some(&C1[..12]),
            ..Expected::default()
        };
        assert_eq!(
            binding_mismatch(&signed(None, None, Some(C1)), &prefix),
            None
        );
    }

    #[test]
    fn a_missing_field_is_a_mismatch() {
        // The disagreement issue 22 found: no `commit:` passed the audit and failed verify.
        let m = binding_mismatch(&signed(Some("v1"), Some("o/r"), None), &release()).unwrap();
        assert_eq!(m.field, BoundField::Commit);
        assert_eq!(
            m.to_string(),
            format!("the trusted comment has no commit: field, expected commit {C1}")
        );
        let m = binding_mismatch(&signed(None, Some("o/r"), Some(C1)), &release()).unwrap();
        assert_eq!(
            m.to_string(),
            "the trusted comment has no tag: field, expected tag v1"
        );
        let m = binding_mismatch(&signed(Some("v1"), None, Some(C1)), &release()).unwrap();
        assert_eq!(
            m.to_string(),
            "the trusted comment has no repo: field, expected repository o/r"
        );
    }

    #[test]
    fn each_wrong_field_is_named_repository_first() {
        let m = binding_mismatch(&signed(Some("v0"), Some("fork/r"), Some(C2)), &release());
        let m = m.unwrap();
        assert_eq!(m.to_string(), "signed for repository fork/r, expected o/r");
        let m = binding_mismatch(&signed(Some("v1"), Some("o/r"), Some(C2)), &release()).unwrap();
        assert_eq!(
            m.to_string(),
            format!("signed for commit {C2}, expected {C1}")
        );
        let m = binding_mismatch(&signed(Some("v0"), Some("o/r"), Some(C1)), &release()).unwrap();
        assert_eq!(m.to_string(), "signed for tag v0, expected v1");
    }

    #[test]
    fn a_short_signed_commit_never_matches() {
        let m = binding_mismatch(
            &signed(Some("v1"), Some("o/r"), Some(&C1[..12])),
            &release(),
        );
        let m = m.unwrap();
        assert_eq!(
            m.to_string(),
            format!(
                "the trusted comment's commit:{} is not a full 40-hex commit",
                &C1[..12]
            )
        );
    }

    #[test]
    fn an_expected_commit_shorter_than_twelve_digits_matches_nothing() {
        // An API answer without a usable `sha` once made the expected commit "", which every
        // signed commit begins with.
        for short in [
            "",
            "3",
            &C1[..11],
            "not hex at all, forty characters long...",
        ] {
            let expected = Expected {
                commit: Some(short),
                ..Expected::default()
            };
            let m = binding_mismatch(&signed(None, None, Some(C1)), &expected);
            assert_eq!(m.map(|m| m.field), Some(BoundField::Commit), "{short:?}");
        }
    }
}
