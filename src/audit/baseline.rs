//! `--baseline FILE`: a previous JSON report (one repository, or an organisation), so that a
//! report shows only what is new, and what is gone, and the exit status follows the new findings.
//!
//! Findings are matched by rule, repository and a stable subject (the workflow file and job, or
//! the API resource, the secrets involved, and what in the job it is about: the action
//! reference, the expression, the trigger), never by line number: moving a job within its file,
//! or editing the file elsewhere, does not make an old finding look new. Equal keys are counted,
//! so a second finding of the same kind on the same job is still new, and a finding more severe
//! than the one recorded is new.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::findings::{AuditReport, BaselineOutcome, Finding, GoneFinding, Location};
use super::severity::Severity;
use crate::error::{Error, Result};

/// A baseline report is a few MB at most; 64 MiB is refused unread.
const BASELINE_CAP: u64 = 64 << 20;

/// What identifies a finding across runs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FindingKey {
    rule: String,
    repository: String,
    /// `workflow:<path>#<job>` or `api:<resource>`.
    subject: String,
    secrets: Vec<String>,
    /// The action reference, expression or trigger (empty when the rule has none).
    detail: String,
}

impl FindingKey {
    pub(crate) fn of(f: &Finding, repository: Option<&str>) -> FindingKey {
        let subject = match &f.location {
            Location::Workflow { path, job, .. } => format!(
                "workflow:{}#{}",
                path.display(),
                job.as_deref().unwrap_or_default()
            ),
            Location::Api { resource } => format!("api:{resource}"),
            Location::Key { .. } => f.location.key_handle().unwrap_or_default(),
        };
        let mut secrets = f.subject.secrets.clone();
        secrets.sort();
        FindingKey {
            rule: f.rule.id().to_string(),
            repository: f
                .subject
                .repository
                .as_deref()
                .or(repository)
                .unwrap_or_default()
                .to_string(),
            subject,
            secrets,
            detail: f.subject.detail.clone().unwrap_or_default(),
        }
    }

    /// A short hash of the key: SARIF's `partialFingerprints`, so that code scanning also keeps
    /// a finding whose job moved within its file.
    pub(crate) fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut text = format!(
            "{}\n{}\n{}\n{}",
            self.rule,
            self.repository,
            self.subject,
            self.secrets.join(",")
        );
        // Only when there is one: fingerprints of findings without a detail stay as they were.
        if !self.detail.is_empty() {
            text.push('\n');
            text.push_str(&self.detail);
        }
        crate::util::to_hex(&Sha256::digest(text.as_bytes()))[..32].to_string()
    }

    /// The key of a finding as JSON v1 wrote it (`repository` from its report).
    fn of_json(f: &Value, repository: &str) -> Option<FindingKey> {
        let loc = &f["location"];
        let subject = match loc["kind"].as_str()? {
            "workflow" => format!(
                "workflow:{}#{}",
                loc["path"].as_str()?,
                loc["job"].as_str().unwrap_or_default()
            ),
            "api" => format!("api:{}", loc["resource"].as_str()?),
            "key" => match loc["fingerprint"].as_str() {
                Some(fp) => format!("key:{fp}"),
                None => format!("key:{}", loc["key"].as_str()?),
            },
            _ => return None,
        };
        let mut secrets: Vec<String> = f["secrets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect();
        secrets.sort();
        Some(FindingKey {
            rule: f["id"].as_str()?.to_string(),
            repository: repository.to_string(),
            subject,
            secrets,
            detail: f["subject"].as_str().unwrap_or_default().to_string(),
        })
    }
}

/// A previous report's findings, by key.
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    pub(crate) file: PathBuf,
    /// Each finding's key, its severity then, and how it is listed when gone.
    findings: Vec<(FindingKey, Severity, GoneFinding)>,
    /// An organisation's repositories that could not be read then, and why.
    unreadable: Vec<(String, String)>,
}

fn location_text(loc: &Value) -> String {
    match loc["kind"].as_str() {
        Some("workflow") => {
            let mut s = format!(
                "{}:{}:{}",
                loc["path"].as_str().unwrap_or_default(),
                loc["line"].as_u64().unwrap_or(0),
                loc["column"].as_u64().unwrap_or(0)
            );
            if let Some(job) = loc["job"].as_str() {
                s.push_str(&format!(" (job {job})"));
            }
            s
        }
        Some("key") => format!("key {}", loc["key"].as_str().unwrap_or_default()),
        _ => format!("GET /{}", loc["resource"].as_str().unwrap_or_default()),
    }
}

impl Baseline {
    /// Reads a JSON report written by `warden audit --format json`: one repository's (v1), or an
    /// organisation's (`repositories`, each a v1 report). Suppressed findings are left out.
    pub fn load(path: &Path) -> Result<Baseline> {
        let dir = crate::files::paths::parent_dir(path);
        let text = crate::files::guarded::read_text_inside(dir, path, BASELINE_CAP)
            .map_err(|e| Error::io("reading", path, e))?;
        let bad = |why: String| Error::input(path.display().to_string(), None, why);
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not a JSON report: {e}")))?;
        // An organisation's report holds one per repository; a key inventory's findings are its
        // own (its `repositories` are names).
        let reports: Vec<&Value> = match doc["repositories"].as_array() {
            Some(repos) if doc["kind"] != "inventory" => repos.iter().collect(),
            _ => vec![&doc],
        };
        let mut findings = Vec::new();
        for report in reports {
            if report["version"] != 1 {
                return Err(bad(
                    "not a `warden audit --format json` report (version 1)".into()
                ));
            }
            let repository = report["repository"].as_str().unwrap_or_default();
            for f in report["findings"].as_array().into_iter().flatten() {
                if !f["suppressed"].is_null() {
                    continue;
                }
                let key = FindingKey::of_json(f, repository)
                    .ok_or_else(|| bad(format!("a finding without id or location: {f}")))?;
                let severity: Severity = serde_json::from_value(f["severity"].clone())
                    .map_err(|_| bad(format!("a finding without a known severity: {f}")))?;
                findings.push((
                    key,
                    severity,
                    GoneFinding {
                        id: f["id"].as_str().unwrap_or_default().to_string(),
                        repository: repository.to_string(),
                        location: location_text(&f["location"]),
                        message: f["message"].as_str().unwrap_or_default().to_string(),
                    },
                ));
            }
        }
        let unreadable = doc["unreadable"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| {
                Some((
                    u["repository"].as_str()?.to_string(),
                    u["reason"].as_str()?.to_string(),
                ))
            })
            .collect();
        Ok(Baseline {
            file: path.to_path_buf(),
            findings,
            unreadable,
        })
    }

    /// Whether the baseline lists `repository` as unreadable for this same `reason`: then it is
    /// not new (a repository that becomes unreadable, or for another reason, is).
    pub fn lists_unreadable(&self, repository: &str, reason: &str) -> bool {
        self.unreadable
            .iter()
            .any(|(r, why)| r == repository && why == reason)
    }

    /// Keeps only the findings of `report` that the baseline does not have, and records those of
    /// the baseline that are gone. Only the baseline's findings for `report`'s repository count.
    pub fn apply(&self, report: &mut AuditReport) {
        let repo = report.repository.clone().unwrap_or_default();
        let mut left: BTreeMap<&FindingKey, Vec<(Severity, &GoneFinding)>> = BTreeMap::new();
        for (k, severity, g) in &self.findings {
            if k.repository == repo || (repo.is_empty() && k.repository.is_empty()) {
                left.entry(k).or_default().push((*severity, g));
            }
        }
        let mut unchanged = 0;
        report.findings.retain(|f| {
            let key = FindingKey::of(f, report.repository.as_deref());
            // A recorded finding at least as severe covers it; a more severe one is new.
            let recorded = left.get_mut(&key).and_then(|list| {
                let i = list.iter().position(|(s, _)| *s >= f.severity)?;
                Some(list.remove(i))
            });
            match recorded {
                Some(_) => {
                    unchanged += 1;
                    false
                }
                None => true,
            }
        });
        let gone = left
            .into_values()
            .flatten()
            .map(|(_, g)| g.clone())
            .collect();
        report.baseline = Some(BaselineOutcome {
            file: self.file.clone(),
            unchanged,
            gone,
        });
    }
}
