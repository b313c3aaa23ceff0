//! The records pipeline provenance checks (`release::provenance`), read through [`ApiSource`]
//! so a recording keeps them and a replay answers them: the attempt of the run a signature names,
//! and the deployments of its environment for the signed commit with their statuses. At most
//! 2 + deployments reads per signature.

use serde_json::Value;

use super::api::{ApiError, ApiSource, Fetched, Shape};
use super::routes;
use crate::github::records::{DeploymentRecord, RunEvidence, RunRecord};
use crate::minisign::run::RunBinding;
use crate::util::parse_utc;

/// Deployments read per environment and commit: a release job deploys once per attempt.
const MAX_DEPLOYMENTS: usize = 10;

/// What GitHub says about the run `binding` names in `repo`, and about the deployments to
/// `environment` (when one is required) of that run's commit. A 404 for the run is evidence
/// (no such run); any other failure is an error: provenance that cannot be read is not a pass.
pub(crate) async fn evidence<S: ApiSource>(
    source: &S,
    repo: &str,
    binding: &RunBinding,
    environment: Option<&str>,
) -> Result<RunEvidence, ApiError> {
    let route = routes::workflow_run_attempt(repo, binding.run_id, binding.attempt);
    let run = match source.get(&route, Shape::Object).await {
        Fetched::Ok(v) => run_record(&v, binding).ok_or_else(|| ApiError {
            route: route.clone(),
            status: 0,
            permission: None,
            message: "not a workflow run (id, path, head_sha or times missing)".into(),
        })?,
        Fetched::Failed { status: 404, .. } => {
            return Ok(RunEvidence {
                run: None,
                deployments: Vec::new(),
            })
        }
        failed => return Err(ApiError::from_fetched(&route, failed)),
    };
    let mut deployments = Vec::new();
    if let Some(env) = environment {
        let route = routes::deployments(repo, env, &run.head_sha);
        let list = match source.get(&route, Shape::Array).await {
            Fetched::Ok(Value::Array(list)) => list,
            Fetched::Ok(_) => Vec::new(),
            failed => return Err(ApiError::from_fetched(&route, failed)),
        };
        for d in list.iter().take(MAX_DEPLOYMENTS) {
            let Some(id) = d["id"].as_u64() else { continue };
            let route = routes::deployment_statuses(repo, id);
            let statuses = match source.get(&route, Shape::Array).await {
                Fetched::Ok(Value::Array(list)) => list,
                Fetched::Ok(_) => Vec::new(),
                failed => return Err(ApiError::from_fetched(&route, failed)),
            };
            let statuses = statuses
                .iter()
                .flat_map(|s| {
                    let state = s["state"].as_str().unwrap_or_default();
                    [&s["log_url"], &s["target_url"]]
                        .into_iter()
                        .filter_map(move |u| Some((state.to_string(), u.as_str()?.to_string())))
                })
                .collect();
            deployments.push(DeploymentRecord {
                environment: d["environment"].as_str().unwrap_or_default().to_string(),
                sha: d["sha"].as_str().unwrap_or_default().to_string(),
                statuses,
            });
        }
    }
    Ok(RunEvidence {
        run: Some(run),
        deployments,
    })
}

/// A run attempt of the API; `None` when a field the judgement needs is missing.
fn run_record(v: &Value, binding: &RunBinding) -> Option<RunRecord> {
    let time = |k: &str| v[k].as_str().and_then(parse_utc);
    Some(RunRecord {
        id: v["id"].as_u64()?,
        attempt: v["run_attempt"]
            .as_u64()
            .and_then(|a| u32::try_from(a).ok())
            .unwrap_or(binding.attempt),
        path: v["path"].as_str()?.to_string(),
        head_sha: v["head_sha"].as_str()?.to_string(),
        head_repository: v["head_repository"]["full_name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        event: v["event"].as_str().unwrap_or_default().to_string(),
        head_branch: v["head_branch"].as_str().unwrap_or_default().to_string(),
        started_at: time("run_started_at").or_else(|| time("created_at"))?,
        updated_at: time("updated_at")?,
    })
}
