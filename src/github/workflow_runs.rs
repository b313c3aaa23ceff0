//! What `hive bisect` asks of GitHub Actions, typed: the commits between two (compare), a
//! workflow dispatched and its run found, a run's state, the step that failed, its artifacts and
//! one artifact's zip. Nothing here judges a run: `hive::probe` does.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::api::{failure, ApiError, ApiSource, Fetched, LiveApi, Shape};
use super::routes;

/// The most commits a range may hold: a longer one is refused (bisect a narrower range).
pub(crate) const MAX_COMMITS: usize = 10_000;

/// A commit of the range, as compare lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct CommitInfo {
    pub(crate) sha: String,
    /// The committer's date (`YYYY-MM-DD`), when the API gives one.
    pub(crate) date: Option<String>,
    /// The first line of its message.
    pub(crate) title: String,
}

fn commit_info(v: &Value) -> Option<CommitInfo> {
    let sha = v["sha"].as_str()?;
    if sha.len() != 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let date = v["commit"]["committer"]["date"]
        .as_str()
        .or_else(|| v["commit"]["author"]["date"].as_str())
        .map(|d| d.chars().take(10).collect());
    let title = v["commit"]["message"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect();
    Some(CommitInfo {
        sha: sha.to_ascii_lowercase(),
        date,
        title,
    })
}

/// `good`, then every commit after it up to `bad` (oldest first), as GitHub's compare lists
/// them. An error names the read; a range where `bad` does not descend from `good` is refused.
pub(crate) async fn commit_range<S: ApiSource>(
    api: &S,
    repo: &str,
    good: &str,
    bad: &str,
) -> Result<Vec<CommitInfo>, String> {
    let route = routes::compare(repo, good, bad);
    let answer = match api.get(&route, Shape::Items("commits")).await {
        Fetched::Ok(v) => v,
        failed => return Err(ApiError::from_fetched(&route, failed).to_string()),
    };
    let unexpected = |message: String| format!("GET /{}: {message}", routes::path_of(&route));
    match answer["status"].as_str() {
        // `identical`: no commit between them, which the caller refuses in its own words.
        Some("ahead" | "identical") => {}
        Some(other) => {
            return Err(unexpected(format!(
                "the bad commit is not a descendant of the good one (compare says {:?}): give --good an ancestor of --bad",
                crate::markup::text_value(other)
            )))
        }
        None => return Err(unexpected("not a comparison (no status)".into())),
    }
    let base = commit_info(&answer["base_commit"])
        .ok_or_else(|| unexpected("the comparison names no base commit".into()))?;
    let list = answer["commits"].as_array().cloned().unwrap_or_default();
    if list.len() >= MAX_COMMITS {
        return Err(unexpected(format!(
            "{} commits or more between them: bisect a narrower range (at most {MAX_COMMITS})",
            list.len()
        )));
    }
    let mut commits = vec![base];
    for c in &list {
        commits.push(
            commit_info(c).ok_or_else(|| unexpected("a listed commit has no 40-hex sha".into()))?,
        );
    }
    Ok(commits)
}

/// A workflow run's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunState {
    pub(crate) id: u64,
    pub(crate) html_url: String,
    /// `queued`, `in_progress`, `completed`, …
    pub(crate) status: String,
    /// `success`, `failure`, `cancelled`, … once completed.
    pub(crate) conclusion: Option<String>,
    /// What the run calls itself (`run-name`), where a probe's id can be found.
    pub(crate) display_title: String,
    pub(crate) head_branch: String,
}

impl RunState {
    pub(crate) fn completed(&self) -> bool {
        self.status == "completed"
    }
}

fn run_state(v: &Value) -> Option<RunState> {
    Some(RunState {
        id: v["id"].as_u64()?,
        html_url: v["html_url"].as_str().unwrap_or_default().to_string(),
        status: v["status"].as_str()?.to_string(),
        conclusion: v["conclusion"].as_str().map(str::to_string),
        display_title: v["display_title"].as_str().unwrap_or_default().to_string(),
        head_branch: v["head_branch"].as_str().unwrap_or_default().to_string(),
    })
}

pub(crate) async fn run<S: ApiSource>(api: &S, repo: &str, id: u64) -> Result<RunState, ApiError> {
    let route = routes::workflow_run(repo, id);
    match api.get(&route, Shape::Object).await {
        Fetched::Ok(v) => run_state(&v).ok_or_else(|| ApiError {
            route,
            status: 0,
            permission: None,
            message: "not a workflow run (no id or status)".into(),
        }),
        failed => Err(ApiError::from_fetched(&route, failed)),
    }
}

/// Dispatches `workflow` on `git_ref` with `inputs`, asking GitHub for the run it starts
/// (`return_run_details`, February 2026). `Ok(Some(id))` when GitHub names the run; `Ok(None)`
/// when the server does not know the parameter (an older GHES) and took the dispatch without it:
/// the caller finds the run by listing ([`dispatched_runs`]).
pub(crate) async fn dispatch(
    api: &LiveApi,
    repo: &str,
    workflow: &str,
    git_ref: &str,
    inputs: &BTreeMap<String, String>,
) -> Result<Option<u64>, String> {
    let route = routes::workflow_dispatches(repo, workflow);
    let post = |body: Value| {
        let route = route.clone();
        async move {
            let answer = api.send("POST", &route, &body).await;
            answer.map_err(|e| format!("POST /{route} failed: {e}"))
        }
    };
    let refused = |status: u16, headers: &_, text: &str| match failure(status, headers, text) {
        Fetched::Failed {
            message,
            permission,
            ..
        } => format!(
            "POST /{route} answered {status}: {}{}",
            crate::markup::text_value(&message),
            permission.map_or(String::new(), |p| format!(" (needs `{p}`)"))
        ),
        Fetched::Ok(_) => format!("POST /{route} answered {status}"),
    };
    let body = json!({ "ref": git_ref, "inputs": inputs, "return_run_details": true });
    let (status, headers, text) = post(body).await?;
    if (200..300).contains(&status) {
        let id = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["workflow_run_id"].as_u64());
        return Ok(id);
    }
    if matches!(status, 400 | 422) && text.contains("return_run_details") {
        let body = json!({ "ref": git_ref, "inputs": inputs });
        let (status, headers, text) = post(body).await?;
        if (200..300).contains(&status) {
            return Ok(None);
        }
        return Err(refused(status, &headers, &text));
    }
    Err(refused(status, &headers, &text))
}

/// `Ok` when `workflow` is a workflow of `repo` that can be dispatched (active), else why not.
pub(crate) async fn workflow_exists<S: ApiSource>(
    api: &S,
    repo: &str,
    workflow: &str,
) -> Result<(), String> {
    let route = routes::workflow(repo, workflow);
    match api.get(&route, Shape::Object).await {
        Fetched::Ok(v) if v["state"] == "active" => Ok(()),
        Fetched::Ok(v) => Err(format!(
            "--workflow {}: GitHub says it is {} in {repo}, not active",
            crate::markup::text_value(workflow),
            crate::markup::text_value(v["state"].as_str().unwrap_or("unknown"))
        )),
        Fetched::Failed { status: 404, .. } => Err(format!(
            "--workflow {}: {repo} has no such workflow (GET /{} answered 404)",
            crate::markup::text_value(workflow),
            routes::path_of(&route)
        )),
        failed => Err(ApiError::from_fetched(&route, failed).to_string()),
    }
}

/// The `workflow_dispatch` runs of `workflow` created at or after `since` (RFC 3339), newest
/// first (one page of 100: a bisection dispatches one at a time).
pub(crate) async fn dispatched_runs<S: ApiSource>(
    api: &S,
    repo: &str,
    workflow: &str,
    since: &str,
) -> Result<Vec<RunState>, ApiError> {
    let route = routes::dispatched_runs(repo, workflow, since);
    match api.get(&route, Shape::Object).await {
        Fetched::Ok(v) => Ok(v["workflow_runs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(run_state)
            .collect()),
        failed => Err(ApiError::from_fetched(&route, failed)),
    }
}

/// The first step that failed in a run (`job / step`), or the first failed job when its steps
/// are not listed.
pub(crate) async fn failed_step<S: ApiSource>(
    api: &S,
    repo: &str,
    run: u64,
) -> Result<Option<String>, ApiError> {
    let route = routes::run_jobs(repo, run);
    let jobs = match api.get(&route, Shape::Items("jobs")).await {
        Fetched::Ok(v) => v,
        failed => return Err(ApiError::from_fetched(&route, failed)),
    };
    let failed = |v: &Value| matches!(v["conclusion"].as_str(), Some("failure" | "timed_out"));
    for job in jobs["jobs"].as_array().into_iter().flatten() {
        if !failed(job) {
            continue;
        }
        let name = job["name"].as_str().unwrap_or("?");
        let step = job["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| failed(s))
            .and_then(|s| s["name"].as_str());
        return Ok(Some(match step {
            Some(step) => format!("{name} / {step}"),
            None => name.to_string(),
        }));
    }
    Ok(None)
}

/// An artifact a run uploaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Artifact {
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) size: u64,
    pub(crate) expired: bool,
}

pub(crate) async fn artifacts<S: ApiSource>(
    api: &S,
    repo: &str,
    run: u64,
) -> Result<Vec<Artifact>, ApiError> {
    let route = routes::run_artifacts(repo, run);
    match api.get(&route, Shape::Items("artifacts")).await {
        Fetched::Ok(v) => Ok(v["artifacts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| {
                Some(Artifact {
                    id: a["id"].as_u64()?,
                    name: a["name"].as_str()?.to_string(),
                    size: a["size_in_bytes"].as_u64().unwrap_or_default(),
                    expired: a["expired"].as_bool().unwrap_or(false),
                })
            })
            .collect()),
        failed => Err(ApiError::from_fetched(&route, failed)),
    }
}

/// Downloads an artifact's zip into `out` (at most `cap` bytes: a larger one is refused before
/// it fills the disk), following the redirect to blob storage without the token.
pub(crate) async fn download_artifact<S: ApiSource>(
    api: &S,
    repo: &str,
    artifact: &Artifact,
    out: &Path,
    cap: u64,
) -> Result<u64, String> {
    if artifact.size > cap {
        return Err(format!(
            "artifact {:?} is {} bytes, more than the {cap} warden reads (--artifact-cap)",
            crate::markup::text_value(&artifact.name),
            artifact.size
        ));
    }
    let mut file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(8);
    let route = routes::artifact_zip(repo, artifact.id);
    // As a release asset: within the deadline its listed size allows, so a trickle cannot hold
    // the bisection.
    let deadline = super::releases::download_deadline(artifact.size);
    let fetch = async {
        let sent = tokio::time::timeout(deadline, api.download(&route, &tx))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "not complete after {} s, the most warden waits for {} bytes",
                    deadline.as_secs(),
                    artifact.size
                )
                .into())
            });
        drop(tx);
        sent
    };
    let write = async move {
        let mut written = 0u64;
        while let Some(chunk) = rx.recv().await {
            written += chunk.len() as u64;
            if written > cap {
                return Err(format!("the artifact's zip is larger than {cap} bytes"));
            }
            file.write_all(&chunk)
                .map_err(|e| format!("{}: {e}", out.display()))?;
        }
        Ok(written)
    };
    let (sent, written) = futures::join!(fetch, write);
    let written = written?;
    sent.map_err(|e| format!("GET /{}: {e}", routes::path_of(&route)))?;
    Ok(written)
}
