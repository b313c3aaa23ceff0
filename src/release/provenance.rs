//! Pipeline provenance (issue 26): a signature made inside GitHub Actions names the workflow run
//! that made it (`run:`, `attempt:`, `workflow:`, `environment:` in the trusted comment, which
//! the signature covers), and a verification checks that run against GitHub's own records: it
//! exists, ran the bound workflow of this repository (not a fork) for the signed commit on the
//! release tag, was running when the signature was made, deployed to the environment, and the
//! signed assets were uploaded during it by the Actions bot. A stolen key used on a laptop makes
//! a signature that names no run, or a run that does not match: loud, not silent.
//!
//! This file is the pure judgement; `github::runs` reads the records.

use crate::error::Reason;
use std::fmt;

/// Seconds of clock difference allowed between the signer's clock (the signature's timestamp)
/// and GitHub's (the run's start and last update): runners keep NTP time, so five minutes is
/// generous without letting a signature made an hour later pass.
pub(crate) const CLOCK_SKEW: u64 = 300;

/// The longest workflow reference bound (`owner/repo/.github/workflows/x.yml@refs/tags/v1`).
const MAX_WORKFLOW_REF: usize = 1024;

/// The login GitHub shows for uploads made with a workflow's `GITHUB_TOKEN`.
pub(crate) const ACTIONS_BOT: &str = "github-actions[bot]";

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

/// What `keys/policy.toml` asks of the run that signs (`require_run`, `workflow`, `environment`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct RunPolicy {
    pub(crate) require_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) workflow: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<String>,
}

impl RunPolicy {
    /// Whether the policy asks anything of runs.
    pub(crate) fn is_set(&self) -> bool {
        self.require_run || self.workflow.is_some() || self.environment.is_some()
    }

    /// What the first signature's binding (`None`: it binds no run) breaks of the policy, checked
    /// offline: a binding is there when required, and its workflow and environment are the
    /// policy's. `origin` names the policy file.
    pub(crate) fn offline_problem(
        &self,
        binding: Option<&RunBinding>,
        origin: &str,
    ) -> Option<String> {
        let Some(b) = binding else {
            return (self.require_run || self.workflow.is_some() || self.environment.is_some())
                .then(|| {
                    format!("the signature binds no workflow run, and {origin} requires one (made outside the release pipeline?)")
                });
        };
        if let Some(w) = self.workflow.as_deref().filter(|w| *w != b.workflow_path()) {
            return Some(format!("signed by {b}, but {origin} requires workflow {w}"));
        }
        if let Some(e) = self
            .environment
            .as_deref()
            .filter(|e| b.environment.as_deref() != Some(*e))
        {
            return Some(format!(
                "signed by {b}, but {origin} requires environment {e}"
            ));
        }
        None
    }
}

/// A workflow run as GitHub records it (one attempt of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunRecord {
    pub(crate) id: u64,
    pub(crate) attempt: u32,
    /// The workflow file (`.github/workflows/release.yml`).
    pub(crate) path: String,
    pub(crate) head_sha: String,
    /// `owner/repo` of the code that ran (a fork's name for a fork's pull request).
    pub(crate) head_repository: String,
    pub(crate) event: String,
    /// The branch or tag the run is for.
    pub(crate) head_branch: String,
    /// Unix seconds.
    pub(crate) started_at: u64,
    pub(crate) updated_at: u64,
}

/// A deployment a job with `environment:` made, with its statuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeploymentRecord {
    pub(crate) environment: String,
    pub(crate) sha: String,
    /// Each status's `state` with its `log_url` or `target_url`.
    pub(crate) statuses: Vec<(String, String)>,
}

/// The deployment states GitHub writes once a job has passed its environment's protection rules
/// and started (`queued` and `waiting` come before; `failure` also ends a rejected review).
const STARTED_STATES: [&str; 2] = ["in_progress", "success"];

/// A release asset's upload, as GitHub records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UploadRecord {
    pub(crate) name: String,
    pub(crate) uploader: String,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
}

/// What GitHub says about a bound run: the run (or why it could not be read) and the
/// deployments for the bound environment and the signed commit.
#[derive(Clone, Debug)]
pub(crate) struct RunEvidence {
    /// `None` when GitHub says there is no such run (404).
    pub(crate) run: Option<RunRecord>,
    pub(crate) deployments: Vec<DeploymentRecord>,
}

/// What the signature says, with the release it is for.
pub(crate) struct Signed<'a> {
    pub(crate) binding: &'a RunBinding,
    /// The trusted comment's `timestamp:`.
    pub(crate) timestamp: Option<u64>,
    pub(crate) commit: Option<&'a str>,
    pub(crate) repo: &'a str,
    pub(crate) tag: &'a str,
}

/// Every way the run GitHub recorded differs from the one the signature names (empty: it
/// matches). `policy` adds the workflow and environment the keys folder requires.
pub(crate) fn judge_run(
    signed: &Signed<'_>,
    evidence: &RunEvidence,
    policy: &RunPolicy,
) -> Vec<String> {
    let b = signed.binding;
    let mut problems = Vec::new();
    let Some(run) = &evidence.run else {
        return vec![format!(
            "signed by run {} of {}, which GitHub does not have: not made by this repository's pipeline",
            b.run_id, signed.repo
        )];
    };
    if run.id != b.run_id {
        problems.push(format!(
            "asked for run {}, GitHub answered with run {}",
            b.run_id, run.id
        ));
    }
    if !b.workflow_repo().eq_ignore_ascii_case(signed.repo) {
        problems.push(format!(
            "signed by a run of {}'s workflow, not {}'s",
            b.workflow_repo(),
            signed.repo
        ));
    }
    let ran = run.path.split('@').next().unwrap_or_default();
    if ran != b.workflow_path() {
        problems.push(format!(
            "the signature names {}, but run {} ran {ran}",
            b.workflow_path(),
            run.id
        ));
    }
    if let Some(w) = policy.workflow.as_deref().filter(|w| *w != ran) {
        problems.push(format!("signed by run {} of {ran}, expected {w}", run.id));
    }
    if !run.head_repository.eq_ignore_ascii_case(signed.repo) {
        problems.push(format!(
            "run {} ran code from {}, a fork, not {}",
            run.id, run.head_repository, signed.repo
        ));
    }
    match signed.commit {
        Some(c) if c.eq_ignore_ascii_case(&run.head_sha) => {}
        Some(c) => problems.push(format!(
            "run {} built commit {}, the signature is for {c}",
            run.id, run.head_sha
        )),
        None => problems.push("the signature binds a run but no commit:".into()),
    }
    let on_tag = run.head_branch == signed.tag;
    let by_tag = matches!(run.event.as_str(), "push" | "workflow_dispatch" | "release");
    if !(on_tag && by_tag) {
        problems.push(format!(
            "run {} was a {} on {}, not a tag push or dispatch on {}",
            run.id, run.event, run.head_branch, signed.tag
        ));
    }
    if run.attempt != b.attempt {
        problems.push(format!(
            "the signature names attempt {} of run {}, GitHub has attempt {}",
            b.attempt, run.id, run.attempt
        ));
    }
    match signed.timestamp {
        Some(t) if within(t, run) => {}
        Some(t) => problems.push(format!(
            "signed at {}, outside run {} ({} to {}, {} s of clock skew allowed)",
            crate::util::rfc3339(t),
            run.id,
            crate::util::rfc3339(run.started_at),
            crate::util::rfc3339(run.updated_at),
            CLOCK_SKEW
        )),
        None => problems.push("the signature has no timestamp: to compare with the run".into()),
    }
    problems.extend(deployment_problems(signed, (evidence, run), policy));
    problems
}

/// What the deployments say of the run's environment (the binding's, or the policy's): a
/// deployment of the run's commit to it must point at the run and have started.
fn deployment_problems(
    signed: &Signed<'_>,
    (evidence, run): (&RunEvidence, &RunRecord),
    policy: &RunPolicy,
) -> Vec<String> {
    let b = signed.binding;
    let mut problems = Vec::new();
    let environment = b.environment.as_deref().or(policy.environment.as_deref());
    let Some(env) = environment else {
        return problems;
    };
    if let Some(required) = policy
        .environment
        .as_deref()
        .filter(|e| Some(*e) != b.environment.as_deref())
    {
        problems.push(format!(
            "the signature names environment {}, the policy requires {required}",
            b.environment.as_deref().unwrap_or("none")
        ));
    }
    let marker = format!("/{}/actions/runs/{}", signed.repo, run.id).to_ascii_lowercase();
    let of_run: Vec<&str> = evidence
        .deployments
        .iter()
        .filter(|d| d.environment == env && d.sha.eq_ignore_ascii_case(&run.head_sha))
        .flat_map(|d| &d.statuses)
        .filter(|(_, url)| points_at(url, &marker))
        .map(|(state, _)| state.as_str())
        .collect();
    if of_run.is_empty() {
        problems.push(format!(
            "no deployment to environment {env} for commit {} points at run {}: its protection rules were not shown to pass",
            run.head_sha, run.id
        ));
    } else if !of_run.iter().any(|s| STARTED_STATES.contains(s)) {
        let mut states = of_run.clone();
        states.sort_unstable();
        states.dedup();
        problems.push(format!(
            "run {}'s deployment to environment {env} never started (its statuses: {}): its protection rules did not let it through",
            run.id,
            crate::markup::text_value(&states.join(", "))
        ));
    }
    problems
}

/// Whether `url` names the run (`…/<owner>/<repo>/actions/runs/<id>`, lower case, followed by
/// nothing, `/`, `?` or `#`).
fn points_at(url: &str, marker: &str) -> bool {
    let url = url.to_ascii_lowercase();
    url.match_indices(marker).any(|(at, m)| {
        let rest = &url[at + m.len()..];
        rest.is_empty() || rest.starts_with(['/', '?', '#'])
    })
}

fn within(t: u64, run: &RunRecord) -> bool {
    t + CLOCK_SKEW >= run.started_at && t <= run.updated_at + CLOCK_SKEW
}

/// The signed assets' uploads that the run did not make: by someone other than the Actions bot,
/// or created or changed outside the run.
pub(crate) fn judge_uploads(run: &RunRecord, uploads: &[UploadRecord]) -> Vec<String> {
    let mut problems = Vec::new();
    for u in uploads {
        if u.uploader != ACTIONS_BOT {
            problems.push(format!(
                "{} was uploaded by @{}, not by the workflow ({ACTIONS_BOT})",
                crate::markup::text_value(&u.name),
                crate::markup::text_value(&u.uploader)
            ));
            continue;
        }
        let last = u.created_at.max(u.updated_at);
        if last > run.updated_at + CLOCK_SKEW {
            problems.push(format!(
                "{} was changed {} after run {} ended",
                crate::markup::text_value(&u.name),
                duration(last - run.updated_at),
                run.id
            ));
        } else if u.created_at + CLOCK_SKEW < run.started_at {
            problems.push(format!(
                "{} was uploaded {} before run {} started",
                crate::markup::text_value(&u.name),
                duration(run.started_at - u.created_at),
                run.id
            ));
        }
    }
    problems
}

/// A span of seconds as people say it: "3 days", "2 hours", "40 minutes", "12 s".
fn duration(secs: u64) -> String {
    let (n, unit) = match secs {
        s if s >= 2 * 86_400 => (s / 86_400, "days"),
        s if s >= 2 * 3600 => (s / 3600, "hours"),
        s if s >= 120 => (s / 60, "minutes"),
        s => (s, "s"),
    };
    format!("{n} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> RunBinding {
        RunBinding::from_runner(
            Some("123"),
            Some("1"),
            Some("o/r/.github/workflows/release.yml@refs/tags/v1"),
            Some("release"),
        )
        .unwrap()
    }

    fn run() -> RunRecord {
        RunRecord {
            id: 123,
            attempt: 1,
            path: ".github/workflows/release.yml".into(),
            head_sha: "abc".into(),
            head_repository: "o/r".into(),
            event: "push".into(),
            head_branch: "v1".into(),
            started_at: 1_000,
            updated_at: 2_000,
        }
    }

    fn evidence() -> RunEvidence {
        RunEvidence {
            run: Some(run()),
            deployments: vec![DeploymentRecord {
                environment: "release".into(),
                sha: "abc".into(),
                statuses: vec![
                    (
                        "waiting".into(),
                        "https://github.com/o/r/actions/runs/123/job/9".into(),
                    ),
                    (
                        "success".into(),
                        "https://github.com/O/R/actions/runs/123/job/9".into(),
                    ),
                ],
            }],
        }
    }

    fn signed(b: &RunBinding, t: u64) -> Signed<'_> {
        Signed {
            binding: b,
            timestamp: Some(t),
            commit: Some("abc"),
            repo: "o/r",
            tag: "v1",
        }
    }

    #[test]
    fn runner_values_are_checked() {
        let b = binding();
        assert_eq!(b.workflow_repo(), "o/r");
        assert_eq!(b.workflow_path(), ".github/workflows/release.yml");
        let bad = |run: &str, wf: &str, env: Option<&str>| {
            RunBinding::from_runner(Some(run), Some("1"), Some(wf), env).unwrap_err()
        };
        let wf = "o/r/.github/workflows/release.yml@refs/tags/v1";
        assert_eq!(
            bad("12a", wf, None),
            "the runner's run id 12a is not a number"
        );
        assert_eq!(
            bad("1", "o/r/a.yml@x\ttag:v9", None),
            "the runner's workflow reference \"o/r/a.yml@x\\ttag:v9\" is empty, over 1024 bytes, or holds spaces or control characters"
        );
        assert_eq!(
            bad("1", "release.yml", None),
            "the runner's workflow reference release.yml is not OWNER/REPO/PATH@REF"
        );
        assert!(RunBinding::from_runner(
            Some("1"),
            Some("1"),
            Some(&format!("o/r/{}@x", "a".repeat(1100))),
            None
        )
        .is_err());
        assert!(
            RunBinding::from_runner(Some("1"), Some("1"), Some(wf), Some("prod\nrun:9")).is_err()
        );
        assert_eq!(
            RunBinding::from_runner(None, Some("1"), Some(wf), None).unwrap_err(),
            "GITHUB_RUN_ID is not set: a run cannot be bound (pass --no-run-binding to sign without one)"
        );
    }

    #[test]
    fn the_recorded_run_must_match() {
        let b = binding();
        let policy = RunPolicy::default();
        assert_eq!(
            judge_run(&signed(&b, 1_500), &evidence(), &policy),
            Vec::<String>::new()
        );
        // Clock skew at both ends.
        assert!(judge_run(&signed(&b, 1_000 - CLOCK_SKEW), &evidence(), &policy).is_empty());
        assert_eq!(
            judge_run(&signed(&b, 2_000 + CLOCK_SKEW + 1), &evidence(), &policy),
            ["signed at 1970-01-01T00:38:21Z, outside run 123 (1970-01-01T00:16:40Z to 1970-01-01T00:33:20Z, 300 s of clock skew allowed)"]
        );
        let mut other = evidence();
        if let Some(r) = other.run.as_mut() {
            r.path = ".github/workflows/ci.yml".into();
            r.head_repository = "fork/r".into();
            r.event = "pull_request".into();
            r.head_branch = "main".into();
        }
        other.deployments.clear();
        assert_eq!(
            judge_run(&signed(&b, 1_500), &other, &policy),
            [
                "the signature names .github/workflows/release.yml, but run 123 ran .github/workflows/ci.yml",
                "run 123 ran code from fork/r, a fork, not o/r",
                "run 123 was a pull_request on main, not a tag push or dispatch on v1",
                "no deployment to environment release for commit abc points at run 123: its protection rules were not shown to pass",
            ]
        );
        let none = RunEvidence {
            run: None,
            deployments: Vec::new(),
        };
        assert_eq!(
            judge_run(&signed(&b, 1_500), &none, &policy),
            ["signed by run 123 of o/r, which GitHub does not have: not made by this repository's pipeline"]
        );
        // A status of run 1234 is not run 123's.
        let mut near = evidence();
        near.deployments[0].statuses = vec![(
            "success".into(),
            "https://github.com/o/r/actions/runs/1234".into(),
        )];
        assert_eq!(judge_run(&signed(&b, 1_500), &near, &policy).len(), 1);
        // Nor is another repository's run 123.
        near.deployments[0].statuses = vec![(
            "success".into(),
            "https://github.com/x/r/actions/runs/123".into(),
        )];
        assert_eq!(judge_run(&signed(&b, 1_500), &near, &policy).len(), 1);
        // A tag pushed by anyone starts the run, but a job still waiting for its reviewers (or
        // rejected) did not pass the environment: a signature it names was made elsewhere.
        let mut waiting = evidence();
        waiting.deployments[0].statuses = vec![
            (
                "waiting".into(),
                "https://github.com/o/r/actions/runs/123/job/9".into(),
            ),
            (
                "failure".into(),
                "https://github.com/o/r/actions/runs/123/job/9".into(),
            ),
            (
                "waiting".into(),
                "https://github.com/o/r/actions/runs/123/job/9".into(),
            ),
        ];
        assert_eq!(
            judge_run(&signed(&b, 1_500), &waiting, &policy),
            ["run 123's deployment to environment release never started (its statuses: failure, waiting): its protection rules did not let it through"]
        );
    }

    #[test]
    fn uploads_must_be_the_runs() {
        let ok = UploadRecord {
            name: "SHA256SUMS.minisig".into(),
            uploader: ACTIONS_BOT.into(),
            created_at: 1_500,
            updated_at: 1_500,
        };
        let by_alice = UploadRecord {
            uploader: "alice".into(),
            ..ok.clone()
        };
        let later = UploadRecord {
            updated_at: 2_000 + 3 * 86_400,
            ..ok.clone()
        };
        assert_eq!(
            judge_uploads(&run(), &[ok, by_alice, later]),
            [
                "SHA256SUMS.minisig was uploaded by @alice, not by the workflow (github-actions[bot])",
                "SHA256SUMS.minisig was changed 3 days after run 123 ended",
            ]
        );
    }

    #[test]
    fn the_policy_is_checked_offline() {
        let b = binding();
        let policy = RunPolicy {
            require_run: true,
            workflow: Some(".github/workflows/publish.yml".into()),
            environment: None,
        };
        assert_eq!(
            policy.offline_problem(None, "keys/policy.toml").unwrap(),
            "the signature binds no workflow run, and keys/policy.toml requires one (made outside the release pipeline?)"
        );
        assert_eq!(
            policy.offline_problem(Some(&b), "keys/policy.toml").unwrap(),
            "signed by run 123 (attempt 1) of .github/workflows/release.yml in environment release, but keys/policy.toml requires workflow .github/workflows/publish.yml"
        );
        assert_eq!(RunPolicy::default().offline_problem(None, "x"), None);
    }
}
