//! `warden audit`: is the release-signing key behind an enforced boundary?
//!
//! Every audit is a small module that produces [`Finding`]s; renderers in `report::findings` turn
//! the same findings into text, JSON, SARIF or markdown. Audits fail closed: a setting that cannot
//! be read becomes an `unverifiable` finding naming the permission it needed.

pub mod fix_plan;
pub mod settings;
pub mod workflows;

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

/// Where a finding is: a place in a workflow file, or a GitHub API resource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Location {
    Workflow {
        /// Relative to the audited repository root.
        path: PathBuf,
        /// 1-based.
        line: usize,
        column: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        job: Option<String>,
    },
    Api {
        /// The API route, e.g. `repos/o/r/environments/release`.
        resource: String,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Workflow {
                path,
                line,
                column,
                job,
            } => {
                write!(f, "{}:{line}:{column}", path.display())?;
                if let Some(j) = job {
                    write!(f, " (job {j})")?;
                }
                Ok(())
            }
            Location::Api { resource } => write!(f, "GET /{resource}"),
        }
    }
}

/// One problem, in the form every renderer understands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable kebab-case id, e.g. `signing-secret-outside-environment`.
    pub id: &'static str,
    pub severity: Severity,
    pub confidence: Confidence,
    pub location: Location,
    pub message: String,
    pub remediation: String,
}

impl Finding {
    /// A finding the audit is sure of (confidence high), the common case.
    pub fn new(
        id: &'static str,
        severity: Severity,
        location: Location,
        message: impl Into<String>,
        remediation: impl Into<String>,
    ) -> Self {
        Finding {
            id,
            severity,
            confidence: Confidence::High,
            location,
            message: message.into(),
            remediation: remediation.into(),
        }
    }
}

/// Every finding id with a one-line description (README, SARIF rules).
pub const RULES: &[(&str, &str)] = &[
    (
        "signing-secret-outside-environment",
        "A job that uses the signing secret has no `environment:`",
    ),
    (
        "tag-gate-is-not-a-boundary",
        "A signing job is gated only by an `if:` on the ref, which a tag pusher can rewrite",
    ),
    (
        "signing-secret-dangerous-trigger",
        "The signing secret is reachable from pull_request_target, workflow_run or issue_comment",
    ),
    (
        "signing-secrets-inherit",
        "`secrets: inherit` passes every secret, the signing key included, to a reusable workflow",
    ),
    (
        "signing-job-write-permissions",
        "A signing job has write-all or write permissions it does not need",
    ),
    (
        "workflow-unparseable",
        "A workflow file could not be parsed, so it could not be audited",
    ),
    (
        "no-tag-ruleset",
        "No active tag ruleset protects the release tags",
    ),
    (
        "legacy-tag-protection",
        "The release tags are protected only by deprecated legacy tag protection (GHES)",
    ),
    (
        "tag-ruleset-incomplete",
        "The tag ruleset lacks creation, update or deletion rules",
    ),
    (
        "tag-ruleset-bypass",
        "The tag ruleset lets write/maintain roles, an integration or a deploy key bypass it",
    ),
    (
        "environment-missing",
        "The signing environment does not exist: GitHub auto-creates it with no protection",
    ),
    (
        "environment-no-reviewers",
        "The signing environment has no required reviewers",
    ),
    (
        "environment-self-review",
        "The signing environment lets the person who triggered the run approve it",
    ),
    (
        "environment-admin-bypass",
        "Administrators can bypass the signing environment's protection",
    ),
    (
        "environment-any-ref",
        "Any branch or tag may deploy to the signing environment",
    ),
    (
        "environment-no-tag-policy",
        "No tag deployment policy of the signing environment covers the release tags",
    ),
    (
        "secret-repo-level",
        "The signing secret is a repository secret, reachable from every job",
    ),
    (
        "secret-shadowed",
        "The signing secret exists in the environment and at repository or organization level",
    ),
    (
        "secret-org-visible",
        "An organization secret with the signing secret's name is visible to the repository",
    ),
    (
        "unverifiable",
        "A setting could not be read; it is not assumed to be safe",
    ),
];

pub fn rule_description(id: &str) -> &'static str {
    RULES.iter().find(|(i, _)| *i == id).map_or("", |(_, d)| d)
}

/// The signing secrets: names given with `--secret`, or by default any name containing
/// `MINISIGN`, `SIGNING` or `_SECRET_KEY`.
#[derive(Clone, Debug, Default)]
pub struct SigningSecrets {
    pub explicit: Vec<String>,
}

impl SigningSecrets {
    pub fn is_signing(&self, name: &str) -> bool {
        if !self.explicit.is_empty() {
            return self.explicit.iter().any(|n| n.eq_ignore_ascii_case(name));
        }
        let upper = name.to_ascii_uppercase();
        upper.contains("MINISIGN") || upper.contains("SIGNING") || upper.contains("_SECRET_KEY")
    }
}

/// Findings plus the threshold that decides the exit code.
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    pub findings: Vec<Finding>,
    pub fail_on: Severity,
    /// The repository audited online, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Release tag patterns the settings were checked against.
    pub release_tag_patterns: Vec<String>,
}

impl AuditReport {
    pub fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.location.cmp(&b.location))
                .then_with(|| a.id.cmp(b.id))
        });
    }

    /// 0 no finding at or above `fail_on`, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.findings.iter().any(|f| f.severity >= self.fail_on))
    }
}

/// fnmatch as GitHub applies it to ref patterns: `*` does not cross `/`, `**` does.
pub fn ref_glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The characters of a glob class body (`0-9a-f_`), ranges expanded.
fn class_members(class: &str) -> Vec<char> {
    let chars: Vec<char> = class.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 2 < chars.len() && chars[i + 1] == '-' && chars[i] <= chars[i + 2] {
            out.extend(chars[i]..=chars[i + 2]);
            i += 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Tags that a release tag pattern stands for, to test rule patterns against. A rule covers the
/// release tags only if it matches every sample: `v1.*` does not cover `v*`, because
/// `v99.0.0-rc.1` and `vx` are release tags too (any such tag runs the release workflow).
pub fn sample_tags(pattern: &str) -> Vec<String> {
    const STAR: [&str; 3] = ["1.2.3", "99.0.0-rc.1", "x"];
    const ONE: [char; 3] = ['1', '9', 'x'];
    // A sample must match its own pattern; `X+` is checked as `X*` (globs have no `+`).
    let own = ref_glob(&pattern.replace('+', "*"));
    let samples: Vec<String> = (0..3)
        .map(|k| {
            let mut out = String::new();
            let mut chars = pattern.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '*' => {
                        while chars.peek() == Some(&'*') {
                            chars.next();
                        }
                        out.push_str(STAR[k]);
                    }
                    '?' => out.push(ONE[k]),
                    // GitHub's filter syntax: one or more of the previous character, and one
                    // has just been written.
                    '+' => {}
                    // A class: its first, middle or last member (a negated class gets a digit
                    // or a letter it does not name).
                    '[' => {
                        let class: String = chars.by_ref().take_while(|&c| c != ']').collect();
                        match class.strip_prefix(['!', '^']) {
                            Some(negated) => out.extend(
                                ['0', 'a', 'Z', '_']
                                    .into_iter()
                                    .find(|c| !negated.contains(*c)),
                            ),
                            None => {
                                let members = class_members(&class);
                                out.extend(members.get(k * members.len().saturating_sub(1) / 2));
                            }
                        }
                    }
                    '\\' => out.extend(chars.next()),
                    c => out.push(c),
                }
            }
            out
        })
        .collect();
    let mut kept: Vec<String> = samples
        .into_iter()
        .filter(|s| own.as_ref().is_none_or(|g| g.is_match(s)))
        .collect();
    kept.dedup();
    if kept.is_empty() {
        kept.push(pattern.to_string());
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_signing_secret_names() {
        let s = SigningSecrets::default();
        for yes in [
            "MINISIGN_SECRET_KEY",
            "minisign_password",
            "GPG_SIGNING_KEY",
            "RELEASE_SECRET_KEY",
        ] {
            assert!(s.is_signing(yes), "{yes}");
        }
        for no in ["GITHUB_TOKEN", "NPM_TOKEN", "SECRET"] {
            assert!(!s.is_signing(no), "{no}");
        }
        let only = SigningSecrets {
            explicit: vec!["RELEASE_KEY".into()],
        };
        assert!(only.is_signing("RELEASE_KEY") && !only.is_signing("MINISIGN_SECRET_KEY"));
    }

    #[test]
    fn ref_patterns_follow_fnmatch() {
        let g = ref_glob("refs/tags/v*").unwrap();
        assert!(g.is_match("refs/tags/v1.2.3"));
        assert!(!g.is_match("refs/tags/v1/x"), "* does not cross /");
        assert!(!g.is_match("refs/tags/pkg-v1"));
        assert_eq!(sample_tags("v*"), ["v1.2.3", "v99.0.0-rc.1", "vx"]);
        assert_eq!(
            sample_tags("v[0-9]+.[0-9]+.[0-9]+"),
            ["v0.0.0", "v4.4.4", "v9.9.9"]
        );
        for pattern in [
            "v*.*.*-*",
            "v[0-9]*",
            "release-?",
            "v[!a-z]*",
            "v**",
            "v1.0.0",
        ] {
            let samples = sample_tags(pattern);
            assert!(!samples.is_empty());
            for s in samples {
                assert!(ref_glob(pattern).unwrap().is_match(&s), "{pattern}: {s}");
            }
        }
        // A narrower rule pattern misses at least one sample.
        for (release, rule) in [
            ("v*", "v1.*"),
            ("v*", "v[0-9]*"),
            ("v*", "v*.*"),
            ("v[0-9]+.[0-9]+.[0-9]+", "v0.*"),
        ] {
            let g = ref_glob(rule).unwrap();
            assert!(
                !sample_tags(release).iter().all(|s| g.is_match(s)),
                "{rule} must not cover {release}"
            );
        }
        let wider = ref_glob("v**").unwrap();
        assert!(sample_tags("v*").iter().all(|s| wider.is_match(s)));
    }
}
