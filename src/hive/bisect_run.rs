//! `warden hive bisect`: the commits between a good and a bad one, a probe workflow dispatched
//! for the commit [`Bisection`] asks about, the run waited for, its results artifact judged
//! (`probe`), and the answer recorded — each step saved to the state file, so a bisection that
//! takes days can stop and go on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::bisect::{Bisection, Next, PathRow, Probe, ProbeResult};
use super::probe::{bounded, judge_artifact, ProbeTarget, Subject};
use crate::error::{Error, Result};
use crate::github::workflow_runs::{self as wr, CommitInfo, RunState};
use crate::github::{LiveApi, Session};
use crate::markup::text_value;
use crate::util::unix_now;

/// What to bisect and how to probe it.
/// Two bisections are the same when their serialised options are: the limits of one invocation
/// (`serde(skip)`) are not part of it, so there is no `PartialEq` to compare them by mistake.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BisectOptions {
    /// The repository whose workflow probes (`OWNER/NAME`).
    pub repo: String,
    /// The probe workflow's file name (`hive-probe.yml`).
    pub workflow: String,
    /// The branch or tag the workflow is dispatched on.
    pub git_ref: String,
    /// The repository whose commits are bisected (the client's, or hive's).
    pub commits_repo: String,
    pub good: String,
    pub bad: String,
    /// A regex of the test's name (without its client suffix).
    pub test: Option<String>,
    /// A regex of the suite's name.
    pub suite: Option<String>,
    pub subject: Subject,
    /// The workflow's inputs; `{commit}` in a value is the candidate's full SHA, `{probe}` a
    /// name for this one dispatch (put it in the workflow's `run-name` to find the run on a
    /// server that does not name it).
    pub inputs: Vec<(String, String)>,
    /// The name of the artifact holding hive's results folder.
    pub artifact: String,
    /// The most dispatches in all (a limit of this invocation, not part of the bisection).
    #[serde(skip)]
    pub max_dispatches: usize,
    /// The most probes running at once (`Bisection::batch`); 1 probes one at a time.
    #[serde(skip)]
    pub parallel: usize,
    /// The longest one probe run may take.
    #[serde(skip)]
    pub run_timeout: Duration,
    /// How often a run's state is read while it runs.
    #[serde(skip)]
    pub poll: Duration,
    /// The largest results artifact downloaded.
    #[serde(skip)]
    pub artifact_cap: u64,
    /// Where the bisection is kept, step by step; read first when it exists.
    #[serde(skip)]
    pub state: Option<PathBuf>,
    /// Print the plan; dispatch nothing.
    #[serde(skip)]
    pub dry_run: bool,
}

/// One dispatch and what it came to.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Dispatch {
    commit: String,
    /// The name of this dispatch (`{probe}`).
    probe: String,
    run_id: Option<u64>,
    run_url: Option<String>,
    /// When it was dispatched (RFC 3339), to find the run by listing.
    at: String,
    result: Option<ProbeResult>,
}

/// The state file: the bisection's options, its commits, and every dispatch so far.
#[derive(Debug, Serialize, Deserialize)]
struct State {
    warden_hive_bisect: u32,
    options: BisectOptions,
    commits: Vec<CommitInfo>,
    dispatches: Vec<Dispatch>,
}

const STATE_VERSION: u32 = 1;

/// How a bisection ended.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub(crate) enum Ending {
    /// The first bad commit and its parent, the last good one.
    Found {
        first_bad: CommitInfo,
        parent: CommitInfo,
    },
    /// The probes cannot place a commit within their cap, or the dispatch budget ran out.
    Undecided { at: CommitInfo, why: String },
    /// `--dry-run`: what would be dispatched first.
    Plan {
        first: Vec<PlannedDispatch>,
        /// Commits between the endpoints a bisection probes: one per halving.
        midpoints: usize,
        most_dispatches: usize,
    },
}

/// A dispatch `--dry-run` shows.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct PlannedDispatch {
    pub(crate) commit: String,
    pub(crate) inputs: BTreeMap<String, String>,
}

/// What `hive bisect` found, and the path that led there.
#[derive(Clone, Debug, Serialize)]
pub struct BisectReport {
    pub(crate) repo: String,
    pub(crate) workflow: String,
    #[serde(rename = "ref")]
    pub(crate) git_ref: String,
    pub(crate) commits_repo: String,
    pub(crate) test: Option<String>,
    pub(crate) suite: Option<String>,
    /// Commits from good to bad, both included.
    pub(crate) commits: usize,
    pub(crate) dispatches: usize,
    #[serde(flatten)]
    pub(crate) ending: Ending,
    pub(crate) path: Vec<PathRow>,
}

fn usage(message: String) -> Error {
    Error::Usage(message)
}

impl BisectOptions {
    fn target(&self) -> Result<ProbeTarget> {
        let regex = |flag: &str, r: &str| {
            Regex::new(r).map_err(|e| usage(format!("{flag} {:?}: {e}", text_value(r))))
        };
        if self.test.is_none() && self.suite.is_none() {
            return Err(usage(
                "hive bisect needs --test REGEX, --suite REGEX or both: which failure to bisect"
                    .into(),
            ));
        }
        Ok(ProbeTarget {
            test: regex("--test", self.test.as_deref().unwrap_or(""))?,
            suite: self
                .suite
                .as_deref()
                .map(|s| regex("--suite", s))
                .transpose()?,
            subject: self.subject.clone(),
        })
    }

    /// The inputs of one dispatch: `{commit}` and `{probe}` replaced.
    fn inputs_for(&self, commit: &str, probe: &str) -> BTreeMap<String, String> {
        self.inputs
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.replace("{commit}", commit).replace("{probe}", probe),
                )
            })
            .collect()
    }

    fn names_probe(&self) -> bool {
        self.inputs.iter().any(|(_, v)| v.contains("{probe}"))
    }
}

/// The state in `path`, if it is there: refused when it was made for another bisection.
fn load_state(path: &Path, opts: &BisectOptions) -> Result<Option<State>> {
    if !path.exists() && path.symlink_metadata().is_err() {
        return Ok(None);
    }
    let text = crate::files::guarded::read_small_file(path, 64 << 20, "a hive bisect state file")?;
    let state: State = serde_json::from_str(&text).map_err(|e| {
        Error::input(
            path.display().to_string(),
            Some(e.line()),
            format!("not a `hive bisect` state file: {e}"),
        )
    })?;
    if state.warden_hive_bisect != STATE_VERSION {
        return Err(Error::input(
            path.display().to_string(),
            None,
            format!(
                "state version {}, this warden reads {STATE_VERSION}",
                state.warden_hive_bisect
            ),
        ));
    }
    // What makes the bisection (the serialised options), not this invocation's limits.
    if serde_json::to_value(&state.options).ok() != serde_json::to_value(opts).ok() {
        return Err(usage(format!(
            "--state {}: it holds another bisection (its options differ from these: {}); give another file, or the same options",
            path.display(),
            differing(&state.options, opts)
        )));
    }
    Ok(Some(state))
}

/// The options that differ, by name.
fn differing(a: &BisectOptions, b: &BisectOptions) -> String {
    let (a, b) = (
        serde_json::to_value(a).unwrap_or_default(),
        serde_json::to_value(b).unwrap_or_default(),
    );
    let keys: Vec<&str> = a
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| b.get(k.as_str()) != Some(v))
        .map(|(k, _)| k.as_str())
        .collect();
    keys.join(", ")
}

fn save_state(path: Option<&Path>, state: &State) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let mut text = serde_json::to_vec_pretty(state).map_err(|e| usage(e.to_string()))?;
    text.push(b'\n');
    crate::files::atomic::write_atomic(path, &text, 0o644, true)
}

/// What every step of one bisection needs: the connection, the options, which cases a probe
/// looks at, and who hears of each step.
struct Driver<'a> {
    session: &'a Session,
    opts: &'a BisectOptions,
    target: ProbeTarget,
    notice: &'a dyn Fn(&str),
}

/// Bisects as `opts` says; `notice` hears of each step (for a person watching stderr).
pub fn bisect(
    session: &Session,
    opts: &BisectOptions,
    notice: &dyn Fn(&str),
) -> Result<BisectReport> {
    let driver = Driver {
        session,
        opts,
        target: opts.target()?,
        notice,
    };
    let mut state = driver.open_state()?;
    let mut bisection = Bisection::new(state.commits.iter().map(|c| c.sha.clone()).collect());
    if opts.dry_run {
        session
            .block_on(wr::workflow_exists(
                session.api(),
                &opts.repo,
                &opts.workflow,
            ))
            .map_err(|e| session.check_api().err().unwrap_or(Error::Api(e)))?;
        return Ok(report(opts, &state, &bisection, plan(opts, &state)));
    }
    for d in &state.dispatches {
        if let Some(result) = &d.result {
            bisection.record(index_of(&state, &d.commit)?, probe_of(d, result));
        }
    }
    // Runs dispatched before a stop are waited for first.
    let pending: Vec<(usize, usize)> = (0..state.dispatches.len())
        .filter(|&i| state.dispatches[i].result.is_none())
        .map(|i| Ok((index_of(&state, &state.dispatches[i].commit)?, i)))
        .collect::<Result<_>>()?;
    driver.wait_and_record(&mut state, &mut bisection, pending)?;
    let ending = loop {
        let at = match bisection.next() {
            Next::Found { first_bad } => {
                break Ending::Found {
                    first_bad: state.commits[first_bad].clone(),
                    parent: state.commits[first_bad - 1].clone(),
                }
            }
            Next::Undecided { at, why } => {
                break Ending::Undecided {
                    at: state.commits[at].clone(),
                    why,
                }
            }
            Next::Probe(at) => at,
        };
        let left = opts.max_dispatches.saturating_sub(state.dispatches.len());
        if left == 0 {
            break Ending::Undecided {
                at: state.commits[at].clone(),
                why: format!(
                    "{} dispatches, the most --max-dispatches allows, and the bisection has not ended",
                    state.dispatches.len()
                ),
            };
        }
        // Dispatched together, then waited for in turn: the runs run at the same time.
        let mut batch = bisection.batch(opts.parallel.max(1));
        batch.truncate(left);
        let mut started = Vec::new();
        for at in batch {
            started.push((at, driver.start(&mut state, at)?));
        }
        driver.wait_and_record(&mut state, &mut bisection, started)?;
    };
    Ok(report(opts, &state, &bisection, ending))
}

impl Driver<'_> {
    /// The bisection `--state` holds, or a new one over the range GitHub's compare gives.
    fn open_state(&self) -> Result<State> {
        let (session, opts) = (self.session, self.opts);
        if let Some(path) = opts.state.as_deref() {
            if let Some(state) = load_state(path, opts)? {
                (self.notice)(&format!(
                    "going on from {} ({} dispatches so far)",
                    path.display(),
                    state.dispatches.len()
                ));
                return Ok(state);
            }
        }
        let commits = session
            .block_on(wr::commit_range(
                session.api(),
                &opts.commits_repo,
                &opts.good,
                &opts.bad,
            ))
            .map_err(|e| {
                session.check_api().err().unwrap_or_else(|| {
                    Error::Api(format!("--good {} --bad {}: {e}", opts.good, opts.bad))
                })
            })?;
        if commits.len() < 2 {
            return Err(usage(
                "--good and --bad are the same commit: nothing to bisect".into(),
            ));
        }
        Ok(State {
            warden_hive_bisect: STATE_VERSION,
            options: opts.clone(),
            commits,
            dispatches: Vec::new(),
        })
    }

    /// Waits for each dispatch of `started` (commit index, dispatch index), judges its run, and
    /// records what it showed.
    fn wait_and_record(
        &self,
        state: &mut State,
        bisection: &mut Bisection,
        started: Vec<(usize, usize)>,
    ) -> Result<()> {
        for (at, i) in started {
            self.finish(state, i)?;
            let d = &state.dispatches[i];
            let result = d.result.clone().unwrap_or(ProbeResult::Invalid("?".into()));
            bisection.record(at, probe_of(d, &result));
        }
        Ok(())
    }
}

fn index_of(state: &State, commit: &str) -> Result<usize> {
    state
        .commits
        .iter()
        .position(|c| c.sha == commit)
        .ok_or_else(|| {
            usage(format!(
                "the state file names commit {commit}, which is not in its range"
            ))
        })
}

fn probe_of(d: &Dispatch, result: &ProbeResult) -> Probe {
    Probe {
        result: result.clone(),
        run: d
            .run_url
            .clone()
            .or_else(|| d.run_id.map(|id| format!("run {id}"))),
    }
}

fn report(opts: &BisectOptions, state: &State, b: &Bisection, ending: Ending) -> BisectReport {
    let dates: BTreeMap<&str, &str> = state
        .commits
        .iter()
        .filter_map(|c| Some((c.sha.as_str(), c.date.as_deref()?)))
        .collect();
    BisectReport {
        repo: opts.repo.clone(),
        workflow: opts.workflow.clone(),
        git_ref: opts.git_ref.clone(),
        commits_repo: opts.commits_repo.clone(),
        test: opts.test.clone(),
        suite: opts.suite.clone(),
        commits: state.commits.len(),
        dispatches: state.dispatches.len(),
        ending,
        path: b.path_table(&|c| dates.get(c).map(|d| d.to_string())),
    }
}

/// `--dry-run`'s plan: the endpoints' first runs (each needs `MIN_RUNS` valid ones), how many
/// commits between them the bisection probes, and the most dispatches it may take.
fn plan(opts: &BisectOptions, state: &State) -> Ending {
    let n = state.commits.len();
    let first = [n - 1, 0]
        .into_iter()
        .map(|i| {
            let sha = &state.commits[i].sha;
            PlannedDispatch {
                commit: sha.clone(),
                inputs: opts.inputs_for(sha, &probe_name(sha, 1)),
            }
        })
        .collect();
    // One commit per halving of the commits between the endpoints.
    let midpoints = (usize::BITS - (n.saturating_sub(2)).leading_zeros()) as usize;
    Ending::Plan {
        first,
        midpoints,
        most_dispatches: opts.max_dispatches,
    }
}

/// The name of the `n`th dispatch of a commit.
fn probe_name(sha: &str, n: usize) -> String {
    format!("bisect-{}-{n}", &sha[..sha.len().min(12)])
}

impl Driver<'_> {
    /// Dispatches a probe of the commit at `at`; saved before its run is waited for.
    fn start(&self, state: &mut State, at: usize) -> Result<usize> {
        let (session, opts) = (self.session, self.opts);
        let sha = state.commits[at].sha.clone();
        let n = state.dispatches.iter().filter(|d| d.commit == sha).count() + 1;
        let probe = probe_name(&sha, n);
        let inputs = opts.inputs_for(&sha, &probe);
        let at_time = crate::util::utc_time(unix_now());
        let run_id = session
            .block_on(wr::dispatch(
                session.api(),
                &opts.repo,
                &opts.workflow,
                &opts.git_ref,
                &inputs,
            ))
            .map_err(|e| session.check_api().err().unwrap_or(Error::Api(e)))?;
        state.dispatches.push(Dispatch {
            commit: sha.clone(),
            probe,
            run_id,
            run_url: None,
            at: at_time,
            result: None,
        });
        save_state(opts.state.as_deref(), state)?;
        (self.notice)(&format!(
            "dispatched {} for {} (probe {n} of this commit)",
            opts.workflow,
            &sha[..12.min(sha.len())]
        ));
        Ok(state.dispatches.len() - 1)
    }

    /// Waits for dispatch `i`'s run, judges it, and saves what it showed.
    fn finish(&self, state: &mut State, i: usize) -> Result<()> {
        let (session, opts) = (self.session, self.opts);
        let api = session.api();
        let claimed: Vec<u64> = state.dispatches.iter().filter_map(|d| d.run_id).collect();
        let d = &state.dispatches[i];
        let run = session
            .block_on(wait_for_run(api, opts, d, &claimed))
            .map_err(|e| session.check_api().err().unwrap_or(e))?;
        let result = match &run {
            Some(run) => session
                .block_on(judge_run(api, opts, &self.target, run, &d.commit))
                .map_err(|e| session.check_api().err().unwrap_or(e))?,
            None => ProbeResult::Invalid(format!(
                "no run of {} was found for this dispatch",
                opts.workflow
            )),
        };
        let d = &mut state.dispatches[i];
        if let Some(run) = &run {
            d.run_id = Some(run.id);
            d.run_url = Some(run.html_url.clone()).filter(|u| !u.is_empty());
        }
        (self.notice)(&format!(
            "{}: {}",
            text_value(d.run_url.as_deref().unwrap_or_default()),
            match &result {
                ProbeResult::Passed => "passed".to_string(),
                ProbeResult::Failed => "failed".to_string(),
                ProbeResult::Invalid(why) => format!("invalid: {}", text_value(why)),
            }
        ));
        d.result = Some(result);
        save_state(opts.state.as_deref(), state)
    }
}

/// The run of dispatch `d`, once completed; `None` when no run can be found for it.
async fn wait_for_run(
    api: &LiveApi,
    opts: &BisectOptions,
    d: &Dispatch,
    claimed: &[u64],
) -> Result<Option<RunState>> {
    // The run's time counts from its dispatch, across stops and resumptions.
    let dispatched_at = crate::util::parse_utc(&d.at).unwrap_or_else(unix_now);
    let id = match d.run_id {
        Some(id) => id,
        None => match find_run(api, opts, d, claimed).await? {
            Some(id) => id,
            None => return Ok(None),
        },
    };
    loop {
        let run = wr::run(api, &opts.repo, id)
            .await
            .map_err(|e| Error::Api(e.to_string()))?;
        if run.completed() {
            return Ok(Some(run));
        }
        if unix_now().saturating_sub(dispatched_at) > opts.run_timeout.as_secs() {
            return Ok(Some(RunState {
                status: "timed out".into(),
                conclusion: Some(format!(
                    "not completed {} s after its dispatch (--run-timeout)",
                    opts.run_timeout.as_secs()
                )),
                ..run
            }));
        }
        tokio::time::sleep(poll_interval(api, opts.poll)).await;
    }
}

/// `poll`, stretched when the token's requests run low so they last until the reset.
fn poll_interval(api: &LiveApi, poll: Duration) -> Duration {
    match api.rate_limit() {
        Some((remaining, reset)) if remaining < 100 => {
            let left = reset.saturating_sub(unix_now()).max(1);
            poll.max(Duration::from_secs(left / remaining.max(1)))
        }
        _ => poll,
    }
}

/// The run a dispatch started, on a server that did not name it: the `workflow_dispatch` run
/// created since, whose title holds the probe's name (when an input carries `{probe}`), else
/// the oldest such run no other dispatch claimed. Asked for up to five minutes.
async fn find_run(
    api: &LiveApi,
    opts: &BisectOptions,
    d: &Dispatch,
    claimed: &[u64],
) -> Result<Option<u64>> {
    let since = shift_back(&d.at, 60);
    for attempt in 0..60 {
        if attempt > 0 {
            tokio::time::sleep(
                opts.poll
                    .clamp(Duration::from_millis(10), Duration::from_secs(5)),
            )
            .await;
        }
        let runs = wr::dispatched_runs(api, &opts.repo, &opts.workflow, &since)
            .await
            .map_err(|e| Error::Api(e.to_string()))?;
        let mine = runs.iter().rev().find(|r| {
            !claimed.contains(&r.id)
                && r.head_branch == short_ref(&opts.git_ref)
                && (!opts.names_probe() || r.display_title.contains(&d.probe))
        });
        if let Some(run) = mine {
            return Ok(Some(run.id));
        }
    }
    Ok(None)
}

/// A ref as a run's `head_branch` names it (`refs/heads/main` is `main`).
fn short_ref(git_ref: &str) -> &str {
    git_ref
        .strip_prefix("refs/heads/")
        .or_else(|| git_ref.strip_prefix("refs/tags/"))
        .unwrap_or(git_ref)
}

/// An RFC 3339 time `secs` earlier (runs are listed by their creation, on GitHub's clock).
fn shift_back(at: &str, secs: u64) -> String {
    crate::util::parse_utc(at)
        .map(|t| crate::util::utc_time(t.saturating_sub(secs)))
        .unwrap_or_else(|| at.to_string())
}

/// What a completed run showed: its results artifact judged, or why it has none.
async fn judge_run(
    api: &LiveApi,
    opts: &BisectOptions,
    target: &ProbeTarget,
    run: &RunState,
    commit: &str,
) -> Result<ProbeResult> {
    let api_error = |e: crate::github::api::ApiError| Error::Api(e.to_string());
    if !run.completed() {
        // Timed out: what it was doing is all there is to say.
        let step = wr::failed_step(api, &opts.repo, run.id)
            .await
            .map_err(api_error)?;
        let why = bounded(run.conclusion.as_deref().unwrap_or("not completed"));
        return Ok(ProbeResult::Invalid(match step {
            Some(step) => format!("{why} (failed step: {})", bounded(&step)),
            None => why,
        }));
    }
    let artifacts = wr::artifacts(api, &opts.repo, run.id)
        .await
        .map_err(api_error)?;
    let artifact = artifacts.iter().find(|a| a.name == opts.artifact);
    let result = match artifact {
        Some(a) if a.expired => {
            ProbeResult::Invalid(format!("its {} artifact has expired", opts.artifact))
        }
        Some(a) => {
            let dir = tempfile::tempdir()
                .map_err(|e| Error::io("creating", Path::new("a temp dir"), e))?;
            let zip = dir.path().join("results.zip");
            match wr::download_artifact(api, &opts.repo, a, &zip, opts.artifact_cap).await {
                Ok(_) => judge_artifact(&zip, target, commit)
                    .map_err(|e| Error::io("reading", &zip, e))?,
                Err(why) => {
                    return Err(Error::Api(format!(
                        "the results artifact of {}: {why}",
                        run.html_url
                    )))
                }
            }
        }
        None => ProbeResult::Invalid(format!(
            "no {} artifact: the run ended in {}",
            opts.artifact,
            bounded(run.conclusion.as_deref().unwrap_or("ended"))
        )),
    };
    let ProbeResult::Invalid(why) = result else {
        return Ok(result);
    };
    // An invalid probe says which step failed, when one did.
    let step = wr::failed_step(api, &opts.repo, run.id)
        .await
        .map_err(api_error)?;
    Ok(ProbeResult::Invalid(match step {
        Some(step) => format!("{why} (failed step: {})", bounded(&step)),
        None => why,
    }))
}

/// What `known-issues update --bisect` takes of a `hive bisect --format json` report: which
/// test, and the commit its failure began at.
#[derive(Clone, Debug, Deserialize)]
pub struct BisectFinding {
    commits_repo: String,
    test: Option<String>,
    suite: Option<String>,
    first_bad: CommitInfo,
    parent: CommitInfo,
    dispatches: usize,
    #[serde(skip)]
    test_re: Option<Regex>,
    #[serde(skip)]
    suite_re: Option<Regex>,
}

impl BisectFinding {
    /// Reads a `hive bisect --format json` report that found the first bad commit.
    pub fn read(path: &Path) -> Result<BisectFinding> {
        let text = crate::files::guarded::read_small_file(path, 16 << 20, "a hive bisect report")?;
        let bad = |line: Option<usize>, message: String| {
            Error::input(path.display().to_string(), line, message)
        };
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(Some(e.line()), e.to_string()))?;
        if v["status"] != "found" {
            return Err(bad(
                None,
                "not a `hive bisect --format json` report that found the first bad commit".into(),
            ));
        }
        let mut f: BisectFinding =
            serde_json::from_value(v).map_err(|e| bad(None, e.to_string()))?;
        let regex = |r: &Option<String>| -> Result<Option<Regex>> {
            r.as_deref()
                .map(|r| {
                    Regex::new(r).map_err(|e| bad(None, format!("its test or suite regex: {e}")))
                })
                .transpose()
        };
        f.test_re = regex(&f.test)?;
        f.suite_re = regex(&f.suite)?;
        Ok(f)
    }

    /// Whether it is about `test` (a name without its client suffix) of `suite`.
    pub(crate) fn covers(&self, suite: &str, test: &str) -> bool {
        self.test_re.as_ref().is_none_or(|r| r.is_match(test))
            && self.suite_re.as_ref().is_none_or(|r| r.is_match(suite))
    }

    /// The start of a `why`: where the failure began, and how that was found.
    pub(crate) fn why(&self) -> String {
        let date = |c: &CommitInfo| c.date.clone().unwrap_or_else(|| "?".into());
        format!(
            "Began at {}@{} ({}, \"{}\"; its parent {} passes), found by `warden hive bisect` over {} probe runs.",
            self.commits_repo,
            &self.first_bad.sha[..self.first_bad.sha.len().min(12)],
            date(&self.first_bad),
            self.first_bad.title,
            &self.parent.sha[..self.parent.sha.len().min(12)],
            self.dispatches
        )
    }
}
