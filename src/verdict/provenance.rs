//! Pipeline provenance (issue 26): a signature's bound run checked against GitHub's own records:
//! it exists, ran the bound workflow of this repository (not a fork) for the signed commit on the
//! release tag, was running when the signature was made, deployed to the environment, and the
//! signed assets were uploaded during it by the Actions bot. A stolen key used on a laptop makes
//! a signature that names no run, or a run that does not match: loud, not silent.
//!
//! This file is the pure judgement; `github::runs` reads the records.

use crate::github::records::{RunEvidence, RunRecord, UploadRecord};
use crate::minisign::run::RunBinding;
use crate::trust::run_policy::RunPolicy;

/// Seconds of clock difference allowed between the signer's clock (the signature's timestamp)
/// and GitHub's (the run's start and last update): runners keep NTP time, so five minutes is
/// generous without letting a signature made an hour later pass.
pub(crate) const CLOCK_SKEW: u64 = 300;
/// The login GitHub shows for uploads made with a workflow's `GITHUB_TOKEN`.
pub(crate) const ACTIONS_BOT: &str = "github-actions[bot]";
/// The deployment states GitHub writes once a job has passed its environment's protection rules
/// and started (`queued` and `waiting` come before; `failure` also ends a rejected review).
const STARTED_STATES: [&str; 2] = ["in_progress", "success"];
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
    use crate::github::records::DeploymentRecord;

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
