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

impl fmt::Display for TrustedComment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
