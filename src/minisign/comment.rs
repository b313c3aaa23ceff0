//! The trusted comment: the only metadata a minisign signature authenticates.
//!
//! warden writes minisign's own TAB-separated layout, `timestamp:<unix>\tfile:<name>\thashed`,
//! and appends `tag:`, `commit:`, `repo:` and a bare `dry-run` marker. Reading is lenient:
//! any text the minisign CLI would accept (including leading/trailing spaces) is kept byte
//! for byte, because the global signature covers those exact bytes.

use crate::error::Reason;
use std::fmt;

/// minisign C: 8192-byte buffer minus the prefix, the newline and the NUL.
pub(crate) const MAX_TRUSTED_COMMENT_BYTES: usize = 8173;

/// A trusted comment, stored exactly as signed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TrustedComment(String);

/// Release metadata bound into the trusted comment by `warden sign`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReleaseMeta {
    pub tag: Option<String>,
    pub commit: Option<String>,
    pub repo: Option<String>,
    pub dry_run: bool,
    /// The workflow run that signs (inside GitHub Actions), bound as `run:`, `attempt:`,
    /// `workflow:` and `environment:`.
    pub run: Option<crate::minisign::run::RunBinding>,
}

pub(crate) const DRY_RUN_MARKER: &str = "dry-run";

impl ReleaseMeta {
    /// Rejects values that would break the TAB-separated layout or be ambiguous after a
    /// trimming parser (the minisign crate trims the comment).
    pub(crate) fn validate(&self) -> Result<(), Reason> {
        for (flag, value) in [
            ("--tag", &self.tag),
            ("--commit", &self.commit),
            ("--repo", &self.repo),
        ] {
            if let Some(v) = value {
                check_field_value(v).map_err(|why| format!("{flag} {v:?}: {why}"))?;
            }
        }
        Ok(())
    }
}

fn check_field_value(v: &str) -> Result<(), &'static str> {
    if v.is_empty() {
        return Err("empty value");
    }
    if v.contains(['\t', '\r', '\n']) {
        return Err("contains a TAB, CR or LF");
    }
    if v.trim() != v {
        return Err("has leading or trailing whitespace");
    }
    if v.chars().any(char::is_control) {
        return Err("contains a control character");
    }
    Ok(())
}

impl TrustedComment {
    /// Accepts what the minisign CLI accepts on load: anything without CR/LF, within its size limit.
    pub fn parse(text: &str) -> Result<Self, Reason> {
        if text.contains(['\r', '\n']) {
            return Err("trusted comment contains a line break".into());
        }
        if text.len() > MAX_TRUSTED_COMMENT_BYTES {
            return Err(format!(
                "trusted comment is {} bytes, minisign's limit is {MAX_TRUSTED_COMMENT_BYTES}",
                text.len()
            )
            .into());
        }
        Ok(TrustedComment(text.to_string()))
    }

    /// The comment warden signs for one file.
    /// The comment warden signs for one file: `path` is the file's path below the signed folder,
    /// bound when it has folders (`sign -r`), so a file cannot stand in for its namesake.
    pub(crate) fn for_release(
        timestamp: u64,
        file_name: &str,
        path: Option<&str>,
        meta: &ReleaseMeta,
    ) -> Result<Self, Reason> {
        for name in std::iter::once(file_name).chain(path) {
            if name.chars().any(char::is_control) {
                return Err(format!(
                    "file name {name:?} contains a TAB, line break or control character and cannot be bound in a trusted comment"
                ).into());
            }
        }
        meta.validate()?;
        let mut s = format!("timestamp:{timestamp}\tfile:{file_name}\thashed");
        if let Some(path) = path {
            s.push_str(&format!("\tpath:{path}"));
        }
        for (key, value) in [
            ("tag", &meta.tag),
            ("commit", &meta.commit),
            ("repo", &meta.repo),
        ] {
            if let Some(v) = value {
                s.push_str(&format!("\t{key}:{v}"));
            }
        }
        for (key, value) in meta.run.iter().flat_map(|r| r.comment_fields()) {
            s.push_str(&format!("\t{key}:{value}"));
        }
        if meta.dry_run {
            s.push('\t');
            s.push_str(DRY_RUN_MARKER);
        }
        Self::parse(&s)
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// Every value of `key:` among the TAB-separated fields.
    pub(crate) fn values<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0.split('\t').filter_map(move |field| {
            field
                .split_once(':')
                .filter(|(k, _)| *k == key)
                .map(|(_, v)| v)
        })
    }

    /// The single value of `key:`; `Err` when the key appears more than once with different values.
    pub fn value<'a>(&'a self, key: &'a str) -> Result<Option<&'a str>, Reason> {
        let mut values = self.values(key);
        let first = values.next();
        if let Some(other) = values.find(|v| Some(*v) != first) {
            return Err(format!(
                "trusted comment has conflicting {key}: fields ({:?} and {other:?})",
                first.unwrap_or_default()
            )
            .into());
        }
        Ok(first)
    }

    /// The workflow run the comment binds (`None`: none); an error when partial or malformed.
    pub(crate) fn run(&self) -> Result<Option<crate::minisign::run::RunBinding>, Reason> {
        crate::minisign::run::RunBinding::from_comment(|k| self.value(k))
    }

    /// Whether a bare marker such as `dry-run` is present.
    pub fn has_marker(&self, marker: &str) -> bool {
        self.0.split('\t').any(|field| field == marker)
    }
}

/// How a trusted comment says what it binds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum CommentForm {
    /// TAB-separated `key:value` fields: warden's own comment, and minisign's default
    /// (`timestamp:…⇥file:…⇥hashed`).
    #[default]
    Fields,
    /// Words, as people write them with `minisign -t`: a file name first, then `key:value` (or
    /// `key=value`) words, a version, a commit (`<file> tag:… commit:…`; ethrex's `<file> ethrex
    /// <tag> <sha>`; `name version`; cargo-binstall's `gh=… git=… ts=…`; the default's shape
    /// with spaces).
    Words,
}

/// What a trusted comment binds, read the way its writer meant it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Binds {
    pub(crate) form: CommentForm,
    pub(crate) file: Option<String>,
    pub(crate) tag: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) repo: Option<String>,
    /// A rehearsal: warden's `dry-run` marker, or a `DRY-RUN` word.
    pub(crate) dry_run: bool,
}

impl Binds {
    /// Whether it binds neither a file nor a release (a comment minisign accepts and that holds
    /// nothing against a renamed or older file).
    pub(crate) fn nothing(&self) -> bool {
        self.file.is_none() && self.tag.is_none() && self.commit.is_none() && self.repo.is_none()
    }

    /// Whether it is warden's own comment: fields, one of them a release's (`tag:`, `commit:`,
    /// `repo:`). Such a comment is held to every field a release expects.
    pub(crate) fn is_wardens(&self) -> bool {
        self.form == CommentForm::Fields
            && (self.tag.is_some() || self.commit.is_some() || self.repo.is_some())
    }
}

/// Whether `c` is a full commit SHA: 40 hex digits.
pub(crate) fn is_full_commit(c: &str) -> bool {
    c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The keys a comment's fields (or `key:value` words) are read by, and what each binds.
fn known_key(key: &str) -> Option<&'static str> {
    Some(match key.to_ascii_lowercase().as_str() {
        "file" => "file",
        "tag" | "version" => "tag",
        "commit" | "git" | "sha" => "commit",
        "repo" | "repository" | "gh" => "repo",
        "timestamp" | "ts" | "path" | "run" | "attempt" | "workflow" | "environment" => "other",
        _ => return None,
    })
}

/// A version or tag as a word (`v1.2.3`, `1.2.3-rc.1`, `v10.0.0-rc.1+build`).
fn is_version(word: &str) -> bool {
    let w = word.strip_prefix('v').unwrap_or(word);
    let (core, _) = w.split_once(['-', '+']).unwrap_or((w, ""));
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A file name as a word: a name with an extension that is not a version's last number
/// (`app.tar.gz`, `guest-v1.elf`; not `v1.2.3`, not `name`).
fn is_file_name(word: &str) -> bool {
    if is_version(word) || word.contains([':', '=', '/']) {
        return false;
    }
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=10).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && !ext.bytes().all(|b| b.is_ascii_digit())
    })
}

impl TrustedComment {
    /// What the comment binds: its fields when it is warden's or minisign's TAB-separated
    /// `key:value` layout, else its words; `Err` when a field appears twice with two values.
    pub(crate) fn binds(&self) -> Result<Binds, Reason> {
        let fields: Vec<&str> = self.0.split('\t').collect();
        let is_field = |f: &&str| {
            f.split_once(':')
                .is_some_and(|(k, _)| known_key(k).is_some() && !k.contains(' '))
        };
        let marker = |f: &&str| !f.is_empty() && !f.contains([' ', ':']);
        // Fields are TAB-separated: one field alone has no blank in it.
        let tabbed = fields.len() > 1 || !self.0.contains(char::is_whitespace);
        if tabbed && fields.iter().any(is_field) && fields.iter().all(|f| is_field(f) || marker(f))
        {
            let value = |k| self.value(k).map(|v| v.map(str::to_string));
            return Ok(Binds {
                form: CommentForm::Fields,
                file: value("file")?,
                tag: value("tag")?,
                commit: value("commit")?,
                repo: value("repo")?,
                dry_run: self.has_marker(DRY_RUN_MARKER),
            });
        }
        let mut b = Binds {
            form: CommentForm::Words,
            ..Binds::default()
        };
        for (i, word) in self.0.split_whitespace().enumerate() {
            let keyed = word.split_once(':').or_else(|| word.split_once('='));
            match keyed.and_then(|(k, v)| Some((known_key(k)?, v))) {
                Some(("file", v)) => {
                    b.file.get_or_insert(v.trim_start_matches("./").to_string());
                }
                Some(("tag", v)) => {
                    b.tag.get_or_insert(v.to_string());
                }
                Some(("commit", v)) => {
                    b.commit.get_or_insert(v.to_string());
                }
                Some(("repo", v)) => {
                    b.repo.get_or_insert(v.to_string());
                }
                Some(_) => {}
                None if word.eq_ignore_ascii_case(DRY_RUN_MARKER) => b.dry_run = true,
                None if i == 0 && is_file_name(word) => b.file = Some(word.to_string()),
                None if is_full_commit(word) => {
                    b.commit.get_or_insert(word.to_string());
                }
                None if is_version(word) => {
                    b.tag.get_or_insert(word.to_string());
                }
                None => {}
            }
        }
        Ok(b)
    }
}

impl fmt::Display for TrustedComment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binds(text: &str) -> Binds {
        TrustedComment::parse(text).unwrap().binds().unwrap()
    }

    /// The comments real releases carry, read as their writers meant them.
    #[test]
    fn what_real_comments_bind() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let b = binds("timestamp:1717729444\tfile:zig-linux-x86_64-0.13.0.tar.xz\thashed");
        assert_eq!(
            (b.form, b.file.as_deref(), b.tag.as_deref(), b.is_wardens()),
            (
                CommentForm::Fields,
                Some("zig-linux-x86_64-0.13.0.tar.xz"),
                None,
                false
            )
        );
        let b = binds(&format!(
            "stateless-validator-ethrex-zisk-v1.0.0-alpha.elf ethrex v10.0.0-rc.1 {sha}"
        ));
        assert_eq!(
            (
                b.form,
                b.file.as_deref(),
                b.tag.as_deref(),
                b.commit.as_deref()
            ),
            (
                CommentForm::Words,
                Some("stateless-validator-ethrex-zisk-v1.0.0-alpha.elf"),
                Some("v10.0.0-rc.1"),
                Some(sha)
            )
        );
        assert!(binds(&format!("guest.elf ethrex DRY-RUN v1.0.0 {sha}")).dry_run);
        let b = binds(&format!("guest-v1.elf tag:v1.0.0 commit:{sha}"));
        assert_eq!(
            (b.file.as_deref(), b.tag.as_deref(), b.commit.as_deref()),
            (Some("guest-v1.elf"), Some("v1.0.0"), Some(sha))
        );
        let b = binds("kes v0.22.0");
        assert_eq!((b.file, b.tag.as_deref()), (None, Some("v0.22.0")));
        let b = binds(&format!(
            "gh=cargo-bins/cargo-binstall git={sha} ts=2025-01-01T00:00:00+00:00 run=1"
        ));
        assert_eq!(
            (b.repo.as_deref(), b.commit.as_deref()),
            (Some("cargo-bins/cargo-binstall"), Some(sha))
        );
        let b = binds("timestamp:2022-04-15T12:00:00Z   file:./configlet_4.0.0-beta.13_linux_x86-64.tar.gz    hashed");
        assert_eq!(
            b.file.as_deref(),
            Some("configlet_4.0.0-beta.13_linux_x86-64.tar.gz")
        );
        assert!(binds("free text, nothing bound").nothing());
        assert!(binds("").nothing());
        let b = binds("timestamp:1\tfile:app\thashed\ttag:v1\tcommit:abc\trepo:o/r");
        assert!(b.is_wardens());
        assert!(TrustedComment::parse("file:a\tfile:b")
            .unwrap()
            .binds()
            .is_err());
    }

    #[test]
    fn release_comment_layout() {
        let meta = ReleaseMeta {
            tag: Some("v1.2.3".into()),
            commit: Some("0123abc".into()),
            repo: Some("lambdaclass/ethrex".into()),
            dry_run: true,
            run: None,
        };
        let c =
            TrustedComment::for_release(1700000000, "ethrex-linux-x86_64", None, &meta).unwrap();
        assert_eq!(
            c.as_str(),
            "timestamp:1700000000\tfile:ethrex-linux-x86_64\thashed\ttag:v1.2.3\tcommit:0123abc\trepo:lambdaclass/ethrex\tdry-run"
        );
        assert_eq!(c.value("tag").unwrap(), Some("v1.2.3"));
        assert_eq!(c.value("file").unwrap(), Some("ethrex-linux-x86_64"));
        assert!(c.has_marker(DRY_RUN_MARKER));
        assert_eq!(TrustedComment::parse(c.as_str()).unwrap(), c);
    }

    #[test]
    fn plain_minisign_comment_has_no_tag_and_no_marker() {
        let c =
            TrustedComment::for_release(5, "a b.tar.gz", None, &ReleaseMeta::default()).unwrap();
        assert_eq!(c.as_str(), "timestamp:5\tfile:a b.tar.gz\thashed");
        assert_eq!(c.value("tag").unwrap(), None);
        assert!(!c.has_marker(DRY_RUN_MARKER));
    }

    #[test]
    fn bad_values_are_rejected() {
        for bad in ["v1\t2", "v1\n", "v1\r", " v1", "v1 ", ""] {
            let meta = ReleaseMeta {
                tag: Some(bad.into()),
                ..Default::default()
            };
            assert!(meta.validate().is_err(), "{bad:?}");
        }
        assert!(TrustedComment::for_release(1, "a\tb", None, &ReleaseMeta::default()).is_err());
        assert!(TrustedComment::parse("a\nb").is_err());
        assert!(TrustedComment::parse(&"x".repeat(MAX_TRUSTED_COMMENT_BYTES + 1)).is_err());
    }

    #[test]
    fn leading_and_trailing_spaces_are_kept() {
        let c = TrustedComment::parse(" release v1 ").unwrap();
        assert_eq!(c.as_str(), " release v1 ");
    }

    #[test]
    fn conflicting_fields_are_reported() {
        let c = TrustedComment::parse("file:a\tfile:b").unwrap();
        assert!(c.value("file").is_err());
        let same = TrustedComment::parse("file:a\tfile:a").unwrap();
        assert_eq!(same.value("file").unwrap(), Some("a"));
    }
}
