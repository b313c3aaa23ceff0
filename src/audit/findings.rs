//! What an audit produces: [`Finding`]s (a rule, a severity, where, what it is about, what to do)
//! and the [`AuditReport`] that holds them with the threshold that decides the exit code.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::rule::Rule;
pub(crate) use super::severity::Confidence;
pub use super::severity::Severity;
use crate::markup::text_value;

/// Where a finding is: a place in a workflow file, or a GitHub API resource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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
        /// The API route without its query, e.g. `repos/o/r/environments/release`.
        resource: String,
    },
    /// A signing key of an organisation's inventory: its id, and the SHA-256 of its Ed25519 bytes
    /// (`sha256:` and 64 hex digits) when its bytes are known. An id is a label anyone can copy;
    /// a suppression or baseline names a key by its fingerprint.
    Key {
        key: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        fingerprint: Option<String>,
    },
}

impl Location {
    /// A key of the inventory, by its id.
    pub(crate) fn key(key: &str) -> Location {
        Location::Key {
            key: key.to_string(),
            fingerprint: None,
        }
    }

    /// The key's handle where suppressions and baselines name it: `key:sha256:…` when its bytes
    /// are known, `key:ID` for a key known by its id alone.
    pub(crate) fn key_handle(&self) -> Option<String> {
        match self {
            Location::Key {
                fingerprint: Some(f),
                ..
            } => Some(format!("key:{f}")),
            Location::Key { key, .. } => Some(format!("key:{key}")),
            _ => None,
        }
    }

    /// The API resource of a route (its query dropped).
    pub(crate) fn api(route: &str) -> Location {
        Location::Api {
            resource: route.split('?').next().unwrap_or(route).to_string(),
        }
    }
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
                // A pull request names files and jobs: never a line break or a `::` command.
                write!(
                    f,
                    "{}:{line}:{column}",
                    text_value(&path.display().to_string())
                )?;
                if let Some(j) = job {
                    write!(f, " (job {})", text_value(j))?;
                }
                Ok(())
            }
            Location::Api { resource } => write!(f, "GET /{}", text_value(resource)),
            Location::Key { key, .. } => write!(f, "key {}", text_value(key)),
        }
    }
}

/// Where a secret is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SecretScope {
    Repository,
    Organization,
}

/// What a finding is about, as data: the fix plan reads this, never the message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subject {
    /// The repository (`OWNER/NAME`) whose settings the finding is about.
    pub(crate) repository: Option<String>,
    /// The tag ruleset, by id.
    pub(crate) ruleset: Option<u64>,
    /// The deployment environment, by name.
    pub(crate) environment: Option<String>,
    /// The signing secrets involved, by name.
    pub(crate) secrets: Vec<String>,
    /// Where those secrets are stored, when the finding is about their placement.
    pub(crate) secret_scope: Option<SecretScope>,
    /// What in the workflow the finding is about, when a job can have several: the action
    /// reference, the expression, the trigger. A baseline matches it too.
    pub(crate) detail: Option<String>,
}

impl Subject {
    pub(crate) fn ruleset(id: u64) -> Self {
        Subject {
            ruleset: Some(id),
            ..Subject::default()
        }
    }

    pub(crate) fn environment(name: &str) -> Self {
        Subject {
            environment: Some(name.to_string()),
            ..Subject::default()
        }
    }

    pub(crate) fn secrets<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Self {
        Subject {
            secrets: names.into_iter().map(|n| n.as_ref().to_string()).collect(),
            ..Subject::default()
        }
    }

    /// One secret stored at `scope` (in `environment`, for an environment secret).
    pub(crate) fn stored_secret(name: &str, scope: SecretScope, environment: Option<&str>) -> Self {
        Subject {
            environment: environment.map(str::to_string),
            secrets: vec![name.to_string()],
            secret_scope: Some(scope),
            ..Subject::default()
        }
    }
}

/// Why a finding is suppressed (`.github/warden.toml`): the entry's reason and, if any, until
/// when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Suppression {
    pub(crate) reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) until: Option<String>,
}

/// One problem, in the form every renderer understands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub rule: Rule,
    pub(crate) severity: Severity,
    pub(crate) confidence: Confidence,
    pub(crate) location: Location,
    pub(crate) subject: Subject,
    pub message: String,
    pub(crate) remediation: String,
    /// Why each secret the finding calls a key is one (the one decision of key-ness).
    pub(crate) evidence: Vec<Evidence>,
    /// A finding that stands for several of one kind in one place (each unpinned action of a
    /// job): each one's location and words. SARIF keeps one result per part.
    pub(crate) parts: Vec<(Location, String)>,
}

/// What shows a secret to be a signing key, as the workflow audit decided it once for the job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Evidence {
    pub(crate) secret: String,
    /// The kind of evidence: `flows-into` (a signing command or action), `convention` (a tool's
    /// key variable), `key-file`, `named-as`, `given`, `passed`, `name`, `beside`,
    /// `every-secret`, `elsewhere`, `fetched`.
    pub(crate) kind: String,
    /// The line of the workflow where it shows.
    pub(crate) line: usize,
    /// In words, as the message says it.
    pub(crate) detail: String,
    /// `strong`: evidence that makes the secret a key in every job that reads it; `weak`: a
    /// guess that holds in this job only.
    pub(crate) strength: Strength,
}

/// How far a secret's evidence reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Strength {
    Strong,
    Weak,
}

impl Finding {
    /// A finding of `rule` at its default severity, with high confidence (the common case).
    pub(crate) fn new(
        rule: Rule,
        location: Location,
        message: impl Into<String>,
        remediation: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            severity: rule.default_severity(),
            confidence: Confidence::High,
            location,
            subject: Subject::default(),
            message: message.into(),
            remediation: remediation.into(),
            evidence: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// A finding of `rule` about a published release `tag`: the verdict's problem `p`, said as
    /// `release TAG: SUBJECT: WHY` (a baseline knows it by subject and words).
    pub(crate) fn of_release(
        rule: Rule,
        (at, tag): (&Location, &str),
        p: &crate::verdict::release::Problem,
        remediation: &str,
    ) -> Self {
        Finding::new(
            rule,
            at.clone(),
            format!("release {tag}: {}: {}", p.subject, p.why),
            remediation,
        )
        .detail(format!("{}: {}", p.subject, p.why))
    }

    /// The same finding, about `subject`.
    pub(crate) fn about(mut self, subject: Subject) -> Self {
        self.subject = subject;
        self
    }

    /// The same finding, about `detail` too (see [`Subject::detail`]).
    pub(crate) fn detail(mut self, detail: impl Into<String>) -> Self {
        self.subject.detail = Some(detail.into());
        self
    }

    /// The same finding, with `confidence`.
    pub(crate) fn with_confidence(mut self, confidence: Confidence) -> Self {
        self.confidence = confidence;
        self
    }
}

/// A finding of the baseline that the new report no longer has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct GoneFinding {
    pub(crate) id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) repository: String,
    /// Where it was: `path:line:column (job …)` or `GET /resource`, as the baseline had it.
    pub(crate) location: String,
    pub(crate) message: String,
}

/// What the baseline did to a report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct BaselineOutcome {
    pub(crate) file: PathBuf,
    /// Findings also in the baseline: not shown, not counted.
    pub(crate) unchanged: usize,
    pub(crate) gone: Vec<GoneFinding>,
}

/// Findings plus the threshold that decides the exit code.
#[derive(Clone, Debug)]
pub struct AuditReport {
    pub(crate) findings: Vec<Finding>,
    pub(crate) fail_on: Severity,
    /// The repository whose settings were audited, if any.
    pub repository: Option<String>,
    /// Release tag patterns the settings were checked against.
    pub(crate) release_tag_patterns: Vec<String>,
    /// The workflow files read, relative to the repository root.
    pub workflows: Vec<PathBuf>,
    /// Where `warden audit snapshot` saved the responses it read, and how many.
    pub snapshot: Option<(PathBuf, usize)>,
    /// Findings `.github/warden.toml` suppresses, with the reason: not counted for the exit code,
    /// kept in JSON and SARIF.
    pub(crate) suppressed: Vec<(Finding, Suppression)>,
    /// `--baseline FILE`: `findings` holds only the new ones; what is unchanged and gone.
    pub(crate) baseline: Option<BaselineOutcome>,
    /// What the workflow audit read.
    pub(crate) coverage: Coverage,
    /// Where the workflows and the settings were read from ("workflows from the checkout (.);
    /// settings of o/r through the API"), for the text report.
    pub(crate) sources: Option<String>,
}

/// What the workflow audit read, so that a report says what its verdict covers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct Coverage {
    pub(crate) workflow_files: usize,
    pub(crate) jobs: usize,
    /// Each job that holds a signing key, and the secrets (or `toJSON(secrets)`-like
    /// expressions) that make it one.
    pub(crate) signing_jobs: Vec<CoveredJob>,
    /// The repository's local actions and scripts read to judge the steps.
    pub(crate) followed: std::collections::BTreeSet<String>,
    /// No job holds a key, none is committed, no signed release was read: what the settings
    /// protect reaches no key, so their findings are `info`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) holds_no_key: bool,
    /// Jobs not audited because their `if:` is always false (`file `job``).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) never_run: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct CoveredJob {
    pub(crate) workflow: PathBuf,
    pub(crate) job: String,
    pub(crate) secrets: Vec<String>,
}

impl AuditReport {
    /// Most severe first, then by place and rule.
    pub(crate) fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.location.cmp(&b.location))
                .then_with(|| a.rule.id().cmp(b.rule.id()))
        });
    }

    /// How many findings of each severity: high, medium, low, info.
    pub(crate) fn severity_counts(&self) -> [usize; 4] {
        [
            Severity::High,
            Severity::Medium,
            Severity::Low,
            Severity::Info,
        ]
        .map(|s| self.findings.iter().filter(|f| f.severity == s).count())
    }

    /// 0 no finding at or above `fail_on`, 1 otherwise.
    pub(crate) fn exit_code(&self) -> u8 {
        u8::from(self.findings.iter().any(|f| f.severity >= self.fail_on))
    }
}
