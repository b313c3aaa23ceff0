//! On which runs a job holds the key: the workflow's events, narrowed by the job's `if:`. The
//! remedy follows from it (a job that runs on pull requests is not put behind a reviewer by
//! default), and so does what the whole-job remedy costs, said in words.

use yaml_serde::Value;

use super::split::events;
use crate::audit::workflows::triggers::{admits_only_tags, may_run_on, never_on_tags};

/// Events whose runs carry a pull request's code or text.
const PULL_REQUEST_EVENTS: &[&str] = &[
    "pull_request",
    "pull_request_target",
    "pull_request_review",
    "pull_request_review_comment",
    "issue_comment",
];

/// The kinds of run a job has.
#[derive(Debug, Default)]
pub(crate) struct JobRuns {
    pub(crate) tags: bool,
    /// Branch pushes: their filters (`*` for any branch).
    pub(crate) branches: Vec<String>,
    /// Pull-request events it runs on.
    pub(crate) pull_requests: Vec<String>,
    pub(crate) schedule: bool,
    pub(crate) dispatch: bool,
    pub(crate) reusable: bool,
    /// Other events (`workflow_run`, `repository_dispatch`, `merge_group`…).
    pub(crate) others: Vec<String>,
}

impl JobRuns {
    pub(crate) fn of(workflow: &Value, job: &Value) -> JobRuns {
        let cond = job.get("if").and_then(Value::as_str);
        let mut runs = JobRuns::default();
        if cond.is_some_and(admits_only_tags) {
            runs.tags = true;
            return runs;
        }
        let on = |event: &str| cond.is_none_or(|c| may_run_on(c, event));
        for (event, body) in events(workflow).unwrap_or_default() {
            if !on(event) {
                continue;
            }
            match event {
                "push" => {
                    let has = |k: &str| body.is_some_and(|b| b.get(k).is_some());
                    let tags = has("tags") || has("tags-ignore");
                    let branches = has("branches") || has("branches-ignore");
                    if tags || !branches {
                        runs.tags = true;
                    }
                    // `branches-ignore: ['*', '*/**']` (or `**`): no branch at all.
                    let ignored: Vec<String> = body
                        .and_then(|b| b.get("branches-ignore"))
                        .map(super::steps::all_strings)
                        .unwrap_or_default();
                    let no_branch = ignored.iter().any(|b| b == "**")
                        || (ignored.iter().any(|b| b == "*")
                            && ignored.iter().any(|b| b == "*/**"));
                    if (branches || !tags) && !no_branch {
                        let named = body
                            .and_then(|b| b.get("branches"))
                            .map(super::steps::all_strings)
                            .filter(|b| !b.is_empty())
                            .unwrap_or_else(|| vec!["*".to_string()]);
                        runs.branches.extend(named);
                    }
                }
                "release" | "create" => runs.tags = true,
                "schedule" => runs.schedule = true,
                "workflow_dispatch" => runs.dispatch = true,
                "workflow_call" => runs.reusable = true,
                e if PULL_REQUEST_EVENTS.contains(&e) => runs.pull_requests.push(e.to_string()),
                e => runs.others.push(e.to_string()),
            }
        }
        if cond.is_some_and(never_on_tags) {
            runs.tags = false;
        }
        runs
    }

    /// Whether every run of the job is a release (a tag, a release, a dispatch by hand).
    pub(crate) fn only_releases(&self) -> bool {
        self.branches.is_empty()
            && self.pull_requests.is_empty()
            && !self.schedule
            && !self.reusable
            && self.others.is_empty()
    }

    /// What putting the whole job behind an environment with required reviewers costs, per
    /// kind of run; empty when every run is a release.
    pub(crate) fn whole_job_costs(&self, env: &str) -> Vec<String> {
        let mut out = Vec::new();
        if !self.pull_requests.is_empty() {
            out.push(format!(
                "it runs on {}: each such run now waits for a reviewer of `{env}`, who approves the pull request's code to run with the key",
                self.pull_requests.join(", ")
            ));
        }
        if !self.branches.is_empty() {
            out.push(format!(
                "it runs on pushes to {}: each waits for a reviewer of `{env}` (or give `{env}` a deployment-branch policy for them, which lets whoever can push there reach the key)",
                self.branches
                    .iter()
                    .map(|b| format!("`{b}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.schedule {
            out.push(format!(
                "it runs on a schedule: each scheduled run waits for a reviewer of `{env}` (or give `{env}` a deployment-branch policy for the default branch)"
            ));
        }
        if self.reusable {
            out.push(format!(
                "it is a reusable workflow (`workflow_call`): each calling repository needs an environment `{env}` holding the key; a secret a caller passes is then not used"
            ));
        }
        if !self.others.is_empty() {
            out.push(format!(
                "it runs on {}: each such run waits for a reviewer of `{env}`",
                self.others.join(", ")
            ));
        }
        if self.others.iter().any(|e| e == "workflow_run") {
            out.push(format!(
                "`workflow_run` can hand this job another run's artifacts (signing-secret-dangerous-trigger stays): the reviewer of `{env}` approves what that run made too"
            ));
        }
        out
    }
}
