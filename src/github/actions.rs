//! The GitHub Actions runner's side of a job: whether warden runs in one (annotations), the step
//! summary file, the event payload (which pull request), and the repository. Read from the
//! environment once, by the binary.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::files::guarded::{open_regular, read_at_most};

/// An event payload larger than this is not read (GitHub's are far smaller).
const EVENT_CAP: u64 = 16 << 20;

#[derive(Clone, Debug, Default)]
pub struct ActionsEnv {
    /// `GITHUB_ACTIONS=true`: workflow commands (`::error …`) are read by the runner.
    pub enabled: bool,
    /// `GITHUB_STEP_SUMMARY`: the markdown file shown on the run's page.
    pub(crate) step_summary: Option<PathBuf>,
    /// `GITHUB_EVENT_PATH`: the JSON payload of the event that started the run.
    pub(crate) event_path: Option<PathBuf>,
    /// `GITHUB_REPOSITORY`: `OWNER/NAME`.
    pub repository: Option<String>,
    /// `GITHUB_RUN_ID`, `GITHUB_RUN_ATTEMPT` and `GITHUB_WORKFLOW_REF`, as given: the run a
    /// signature made here binds.
    pub run_id: Option<String>,
    pub run_attempt: Option<String>,
    pub workflow_ref: Option<String>,
}

impl ActionsEnv {
    pub fn from_env() -> Self {
        let path = |var: &str| {
            std::env::var_os(var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        ActionsEnv {
            enabled: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
            step_summary: path("GITHUB_STEP_SUMMARY"),
            event_path: path("GITHUB_EVENT_PATH"),
            repository: std::env::var("GITHUB_REPOSITORY")
                .ok()
                .filter(|r| r.contains('/')),
            run_id: std::env::var("GITHUB_RUN_ID").ok(),
            run_attempt: std::env::var("GITHUB_RUN_ATTEMPT").ok(),
            workflow_ref: std::env::var("GITHUB_WORKFLOW_REF").ok(),
        }
    }

    /// Appends `markdown` (and a line break) to the step summary.
    pub fn append_step_summary(&self, markdown: &str) -> Result<()> {
        let path = self.step_summary.as_deref().ok_or_else(|| {
            Error::Usage(
                "--step-summary: GITHUB_STEP_SUMMARY is not set (not running in GitHub Actions?)"
                    .into(),
            )
        })?;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| Error::io("opening", path, e))?;
        writeln!(f, "{markdown}").map_err(|e| Error::io("writing", path, e))
    }

    /// The pull request the run is about, from the event payload.
    pub fn pull_request(&self) -> Result<u64> {
        let path = self.event_path.as_deref().ok_or_else(|| {
            Error::Usage(
                "--post: no pull request: pass --pr N (GITHUB_EVENT_PATH is not set)".into(),
            )
        })?;
        let payload = read_event(path)?;
        pr_from_event(&payload).ok_or_else(|| {
            Error::Usage(
                "--post: the event at GITHUB_EVENT_PATH is not a pull request: pass --pr N".into(),
            )
        })
    }
}

fn read_event(path: &Path) -> Result<Value> {
    let bytes = open_regular(path)
        .and_then(|f| read_at_most(f, EVENT_CAP))
        .map_err(|e| Error::io("reading", path, e))?
        .ok_or_else(|| {
            Error::input(
                path.display().to_string(),
                None,
                "larger than 16 MiB: not an event payload",
            )
        })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::input(path.display().to_string(), None, format!("not JSON: {e}")))
}

/// The pull request number of an event payload (`pull_request`, an issue comment on a pull
/// request, or a bare `number`).
pub(crate) fn pr_from_event(payload: &Value) -> Option<u64> {
    payload["pull_request"]["number"]
        .as_u64()
        .or_else(|| payload["issue"]["number"].as_u64())
        .or_else(|| payload["number"].as_u64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pr_number_from_event_payloads() {
        assert_eq!(
            pr_from_event(&json!({"pull_request": {"number": 7}})),
            Some(7)
        );
        assert_eq!(
            pr_from_event(&json!({"issue": {"number": 8, "pull_request": {}}})),
            Some(8)
        );
        assert_eq!(pr_from_event(&json!({"ref": "refs/heads/main"})), None);
    }
}
