//! The run binding's fields (issue 26): a signature made inside GitHub Actions names the workflow
//! run that made it (`run:`, `attempt:`, `workflow:`, `environment:` in the trusted comment,
//! which the signature covers). This is the format; `verdict::provenance` judges a binding
//! against GitHub's records, and `trust::run_policy` what a keys folder asks of it.

use crate::error::Reason;
use std::fmt;

/// The longest workflow reference bound (`owner/repo/.github/workflows/x.yml@refs/tags/v1`).
const MAX_WORKFLOW_REF: usize = 1024;
/// The workflow run a signature says made it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunBinding {
    pub(crate) run_id: u64,
    pub(crate) attempt: u32,
    /// `GITHUB_WORKFLOW_REF` as the runner gave it: `owner/repo/<path>@<ref>`.
    pub(crate) workflow: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<String>,
}

impl RunBinding {
    /// The binding of the run warden signs in, from the runner's `GITHUB_RUN_ID`,
    /// `GITHUB_RUN_ATTEMPT` and `GITHUB_WORKFLOW_REF`, and the environment the job runs in.
    /// Every value is checked: it goes into a signed, TAB-separated comment.
    pub fn from_runner(
        run_id: Option<&str>,
        attempt: Option<&str>,
        workflow_ref: Option<&str>,
        environment: Option<&str>,
    ) -> Result<RunBinding, Reason> {
        let need = |name: &str, v: Option<&str>| {
            v.filter(|v| !v.is_empty()).map(str::to_string).ok_or_else(|| {
                format!("{name} is not set: a run cannot be bound (pass --no-run-binding to sign without one)")
            })
        };
        let run_id = need("GITHUB_RUN_ID", run_id)?;
        let attempt = need("GITHUB_RUN_ATTEMPT", attempt)?;
        let workflow = need("GITHUB_WORKFLOW_REF", workflow_ref)?;
        RunBinding::from_fields(&run_id, &attempt, &workflow, environment)
            .map_err(|e| format!("the runner's {e}").into())
    }

    /// From the four field values; every one checked.
    fn from_fields(
        run_id: &str,
        attempt: &str,
        workflow: &str,
        environment: Option<&str>,
    ) -> Result<RunBinding, Reason> {
        let number = |name: &str, v: &str| -> Result<u64, Reason> {
            if v.is_empty() || v.len() > 20 || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(
                    format!("{name} {} is not a number", crate::markup::text_value(v)).into(),
                );
            }
            v.parse()
                .map_err(|_| format!("{name} {v:?} is out of range").into())
        };
        let run_id = number("run id", run_id)?;
        let attempt = u32::try_from(number("run attempt", attempt)?)
            .map_err(|_| format!("run attempt {attempt:?} is out of range"))?;
        let plain = |name: &str, v: &str| -> Result<String, Reason> {
            let bad = v.is_empty()
                || v.len() > MAX_WORKFLOW_REF
                || v.trim() != v
                || v.chars().any(|c| c.is_control() || c.is_whitespace());
            if bad {
                return Err(format!(
                    "{name} {} is empty, over {MAX_WORKFLOW_REF} bytes, or holds spaces or control characters",
                    crate::markup::text_value(v)
                ).into());
            }
            Ok(v.to_string())
        };
        let workflow = plain("workflow reference", workflow)?;
        if split_workflow(&workflow).is_none() {
            return Err(format!(
                "workflow reference {} is not OWNER/REPO/PATH@REF",
                crate::markup::text_value(&workflow)
            )
            .into());
        }
        let environment = environment.map(|e| plain("environment", e)).transpose()?;
        Ok(RunBinding {
            run_id,
            attempt,
            workflow,
            environment,
        })
    }

    /// The binding a trusted comment carries (`value` reads one of its fields): `None` without
    /// `run:`; an error when it is partial or malformed (a signature that half-binds a run binds
    /// none).
    pub(crate) fn from_comment<'c>(
        value: impl Fn(&'static str) -> Result<Option<&'c str>, Reason>,
    ) -> Result<Option<RunBinding>, Reason> {
        let run = value("run")?;
        let attempt = value("attempt")?;
        let workflow = value("workflow")?;
        let environment = value("environment")?;
        match (run, attempt, workflow) {
            (None, None, None) if environment.is_none() => Ok(None),
            (Some(r), Some(a), Some(w)) => RunBinding::from_fields(r, a, w, environment)
                .map(Some)
                .map_err(|e| format!("the trusted comment's {e}").into()),
            _ => Err(
                "the trusted comment binds a run only in part (run:, attempt: and workflow: go together)"
                    .into(),
            ),
        }
    }

    /// The fields, as the trusted comment carries them.
    pub(crate) fn comment_fields(&self) -> Vec<(&'static str, String)> {
        let mut fields = vec![
            ("run", self.run_id.to_string()),
            ("attempt", self.attempt.to_string()),
            ("workflow", self.workflow.clone()),
        ];
        if let Some(e) = &self.environment {
            fields.push(("environment", e.clone()));
        }
        fields
    }

    /// The repository the workflow file belongs to (`owner/repo`).
    pub(crate) fn workflow_repo(&self) -> &str {
        split_workflow(&self.workflow).map_or("", |(r, _, _)| r)
    }

    /// The workflow file's path in its repository (`.github/workflows/release.yml`).
    pub(crate) fn workflow_path(&self) -> &str {
        split_workflow(&self.workflow).map_or("", |(_, p, _)| p)
    }
}

impl fmt::Display for RunBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "run {} (attempt {}) of {}",
            self.run_id,
            self.attempt,
            self.workflow_path()
        )?;
        if let Some(e) = &self.environment {
            write!(f, " in environment {e}")?;
        }
        Ok(())
    }
}

/// `owner/repo/<path>@<ref>` as (owner/repo, path, ref).
fn split_workflow(w: &str) -> Option<(&str, &str, &str)> {
    let (file, git_ref) = w.rsplit_once('@')?;
    let mut parts = file.splitn(3, '/');
    let (owner, repo, path) = (parts.next()?, parts.next()?, parts.next()?);
    if owner.is_empty() || repo.is_empty() || path.is_empty() || git_ref.is_empty() {
        return None;
    }
    Some((&file[..owner.len() + 1 + repo.len()], path, git_ref))
}
