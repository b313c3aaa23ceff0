//! A local GitHub Actions for `warden hive bisect` (issue 52): a client repository of 40
//! commits, a probe workflow that runs hive for the commit it is given, and its runs, jobs and
//! results artifacts (zips of a hive results folder, served by a redirect to a blob host).
//!
//! The history is the issue's: the test passes 75 % of the time before commit 23 and never from
//! it on. Two dispatches never reach the candidate: the 3rd fails in its `Wait for sync` step
//! and uploads nothing; the 9th ran an image cached from another commit (its clientVersions name
//! that commit, with a right-to-left override in the version) and its test failed there. A
//! probe's result is fixed by its commit and how many times that commit was dispatched before,
//! so a bisection that probes the same commits sees the same history.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

pub(crate) const REPO: &str = "acme/ethrex";
pub(crate) const WORKFLOW: &str = "hive-probe.yml";
pub(crate) const COMMITS: usize = 40;
pub(crate) const BREAKS_AT: usize = 23;
pub(crate) const TEST: &str = "eth_getBlockByNumber/get-latest";
/// The dispatches (1-based) that never reach the candidate.
pub(crate) const NO_ARTIFACT: usize = 3;
pub(crate) const STALE_IMAGE: usize = 9;

/// The `i`th commit's SHA (40 hex, stable).
pub(crate) fn commit(i: usize) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(format!("ethrex commit {i}").as_bytes())[..20])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A uniform number in [0, 1) for (seed, commit, nth probe of it) (SplitMix64).
fn uniform(seed: u64, at: usize, nth: usize) -> f64 {
    let mut z = seed
        .wrapping_add((at as u64) << 32 | nth as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// Whether the test fails in the `nth` (0-based) probe of commit `at`.
pub(crate) fn fails(seed: u64, at: usize, nth: usize) -> bool {
    at >= BREAKS_AT || uniform(seed, at, nth) < 0.25
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Passed,
    Failed,
    /// Failed before hive ran: no artifact.
    NoArtifact,
    /// Ran an image of another commit; the test failed there.
    StaleImage,
    /// The commit is not in the repository: the checkout failed.
    NoCommit,
}

#[derive(Clone, Debug)]
struct Run {
    id: u64,
    commit: String,
    probe: String,
    kind: Kind,
    reads: u32,
}

#[derive(Default)]
struct World {
    runs: Vec<Run>,
    per_commit: HashMap<String, usize>,
    requests: Vec<String>,
}

/// The server: mount it for every method.
#[derive(Clone)]
pub(crate) struct ActionsServer {
    base: String,
    seed: u64,
    /// An older server: `return_run_details` refused (422), runs found by listing.
    legacy: bool,
    /// Runs are complete when first read (the documentation's example waits for nothing).
    instant: bool,
    /// The dispatch (1-based) whose run never completes.
    stuck: Option<usize>,
    world: Arc<Mutex<World>>,
}

impl ActionsServer {
    pub(crate) fn new(base: &str, seed: u64) -> Self {
        ActionsServer {
            base: base.trim_end_matches('/').to_string(),
            seed,
            legacy: false,
            instant: false,
            stuck: None,
            world: Arc::default(),
        }
    }

    pub(crate) fn legacy(mut self) -> Self {
        self.legacy = true;
        self
    }

    /// Dispatches received so far.
    pub(crate) fn dispatches(&self) -> usize {
        self.world.lock().unwrap().runs.len()
    }

    /// Every request, `METHOD path`.
    pub(crate) fn requests(&self) -> Vec<String> {
        self.world.lock().unwrap().requests.clone()
    }

    fn run_json(&self, r: &Run) -> Value {
        let stuck = self.stuck.is_some_and(|n| r.id == 7000 + n as u64);
        let completed = !stuck && r.reads >= if self.instant { 1 } else { 2 };
        let conclusion = match r.kind {
            Kind::Passed => "success",
            _ => "failure",
        };
        json!({
            "id": r.id,
            "name": "hive probe",
            "display_title": format!("hive probe {}", r.probe),
            "head_branch": "main",
            "event": "workflow_dispatch",
            "status": if completed { "completed" } else { "in_progress" },
            "conclusion": if completed { Value::from(conclusion) } else { Value::Null },
            "html_url": format!("https://github.com/{REPO}/actions/runs/{}", r.id),
        })
    }

    fn dispatch(&self, body: &Value) -> ResponseTemplate {
        if self.legacy && body.get("return_run_details").is_some() {
            return ResponseTemplate::new(422).set_body_json(json!({
                "message": "Invalid request.\n\n\"return_run_details\" is not a permitted key.",
            }));
        }
        if body["ref"] != "main" && body["ref"] != "refs/heads/main" {
            return ResponseTemplate::new(422)
                .set_body_json(json!({"message": "No ref found for: x"}));
        }
        let candidate = body["inputs"]["commit"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let probe = body["inputs"]["probe"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut w = self.world.lock().unwrap();
        let n = w.runs.len() + 1;
        let nth = *w.per_commit.get(&candidate).unwrap_or(&0);
        w.per_commit.insert(candidate.clone(), nth + 1);
        let kind = match (0..COMMITS).position(|i| commit(i) == candidate) {
            None => Kind::NoCommit,
            Some(_) if n == NO_ARTIFACT => Kind::NoArtifact,
            Some(_) if n == STALE_IMAGE => Kind::StaleImage,
            Some(at) if fails(self.seed, at, nth) => Kind::Failed,
            Some(_) => Kind::Passed,
        };
        let id = 7000 + n as u64;
        w.runs.push(Run {
            id,
            commit: candidate,
            probe,
            kind,
            reads: 0,
        });
        if body.get("return_run_details").is_some() {
            return ResponseTemplate::new(200).set_body_json(json!({
                "workflow_run_id": id,
                "run_url": format!("{}/repos/{REPO}/actions/runs/{id}", self.base),
                "html_url": format!("https://github.com/{REPO}/actions/runs/{id}"),
            }));
        }
        ResponseTemplate::new(204)
    }

    fn compare(&self, range: &str) -> ResponseTemplate {
        let (good, bad) = range.split_once("...").unwrap_or((range, ""));
        let index = |c: &str| (0..COMMITS).position(|i| commit(i).starts_with(c) && c.len() >= 7);
        let (Some(g), Some(b)) = (index(good), index(bad)) else {
            return ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}));
        };
        let info = |i: usize| {
            json!({
                "sha": commit(i),
                "commit": {
                    "message": format!("Commit {i}\n\nbody"),
                    "committer": {"date": format!("2026-11-{:02}T12:00:00Z", 1 + i * 29 / COMMITS)},
                },
            })
        };
        let status = if b > g {
            "ahead"
        } else if b == g {
            "identical"
        } else {
            "behind"
        };
        let commits: Vec<Value> = (g + 1..=b.max(g)).map(info).collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "status": status,
            "base_commit": info(g),
            "merge_base_commit": info(g.min(b)),
            "total_commits": commits.len(),
            "commits": commits,
        }))
    }

    fn jobs(r: &Run) -> Value {
        let step = |name: &str, conclusion: &str| json!({"name": name, "conclusion": conclusion});
        let steps = match r.kind {
            Kind::NoArtifact => vec![
                step("Set up job", "success"),
                step("Build ethrex image", "success"),
                step("Wait for sync", "failure"),
                step("Run hive", "skipped"),
            ],
            Kind::NoCommit => vec![
                step("Set up job", "success"),
                step("Check out the client", "failure"),
            ],
            Kind::Passed => vec![step("Run hive", "success")],
            _ => vec![step("Run hive", "failure")],
        };
        let conclusion = if r.kind == Kind::Passed {
            "success"
        } else {
            "failure"
        };
        json!({"total_count": 1, "jobs": [{"id": r.id * 10, "name": "hive", "conclusion": conclusion, "steps": steps}]})
    }

    /// The zip of a hive results folder for run `r`.
    fn artifact(&self, r: &Run) -> Vec<u8> {
        let at = (0..COMMITS)
            .position(|i| commit(i) == r.commit)
            .unwrap_or(0);
        let version = match r.kind {
            // The image of the last commit, left in the runner's cache.
            Kind::StaleImage => format!(
                "ethrex/v9.1.0-{}\u{202e}/x86_64-unknown-linux-gnu",
                &commit(if at + 1 == COMMITS { 0 } else { COMMITS - 1 })[..7]
            ),
            _ => format!("ethrex/v9.1.0-{}/x86_64-unknown-linux-gnu", &r.commit[..7]),
        };
        let pass = r.kind == Kind::Passed;
        let case = |name: &str, pass: bool| json!({"name": format!("{name} (ethrex)"), "description": "", "summaryResult": {"pass": pass, "details": if pass { "" } else { "FAIL: response differs" }}});
        let suite = json!({
            "id": 0,
            "name": "rpc-compat",
            "clientVersions": {"ethrex": version},
            "testCases": {
                "1": case("client launch", true),
                "2": case(TEST, pass),
                "3": case("eth_chainId/get-chain-id", true),
            },
        });
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("hive.json", options).unwrap();
        zip.write_all(br#"{"sourceCommit":"a74a5a70","hiveVersion":{"commit":"a74a5a70"}}"#)
            .unwrap();
        zip.start_file(
            format!("1780000{:03}-{}.json", r.id % 1000, &r.commit[..12]),
            options,
        )
        .unwrap();
        zip.write_all(suite.to_string().as_bytes()).unwrap();
        zip.finish().unwrap().into_inner()
    }
}

impl Respond for ActionsServer {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let path = req.url.path().to_string();
        self.world
            .lock()
            .unwrap()
            .requests
            .push(format!("{} {path}", req.method));
        let repo = format!("/repos/{REPO}");
        let Some(rest) = path.strip_prefix(&repo) else {
            if let Some(id) = path
                .strip_prefix("/blobs/")
                .and_then(|p| p.strip_suffix(".zip"))
            {
                let w = self.world.lock().unwrap();
                if let Some(r) = w.runs.iter().find(|r| r.id.to_string() == id) {
                    return ResponseTemplate::new(200).set_body_bytes(self.artifact(r));
                }
            }
            return ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}));
        };
        let rest = rest.to_string();
        if req.method.as_str() == "POST" {
            // A token that may read but not dispatch, as GitHub answers it.
            let auth = req
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok());
            if auth.is_some_and(|a| a.ends_with("read-only-token")) {
                return ResponseTemplate::new(403)
                    .insert_header("x-accepted-github-permissions", "actions=write")
                    .set_body_json(
                        json!({"message": "Resource not accessible by personal access token"}),
                    );
            }
            if rest == format!("/actions/workflows/{WORKFLOW}/dispatches") {
                let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                return self.dispatch(&body);
            }
            return ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}));
        }
        if let Some(range) = rest.strip_prefix("/compare/") {
            return self.compare(range);
        }
        if rest == format!("/actions/workflows/{WORKFLOW}") {
            return ResponseTemplate::new(200).set_body_json(json!({
                "id": 4242, "name": "hive probe", "path": format!(".github/workflows/{WORKFLOW}"), "state": "active",
            }));
        }
        if rest == format!("/actions/workflows/{WORKFLOW}/runs") {
            let w = self.world.lock().unwrap();
            let runs: Vec<Value> = w.runs.iter().rev().map(|r| self.run_json(r)).collect();
            return ResponseTemplate::new(200)
                .set_body_json(json!({"total_count": runs.len(), "workflow_runs": runs}));
        }
        let parts: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
        let mut w = self.world.lock().unwrap();
        match parts.as_slice() {
            ["actions", "runs", id, more @ ..] => {
                let Some(r) = w.runs.iter_mut().find(|r| r.id.to_string() == *id) else {
                    return ResponseTemplate::new(404)
                        .set_body_json(json!({"message": "Not Found"}));
                };
                match more {
                    [] => {
                        r.reads += 1;
                        let r = r.clone();
                        ResponseTemplate::new(200).set_body_json(self.run_json(&r))
                    }
                    ["jobs"] => ResponseTemplate::new(200).set_body_json(Self::jobs(r)),
                    ["artifacts"] => {
                        let list = match r.kind {
                            Kind::NoArtifact | Kind::NoCommit => vec![],
                            _ => {
                                let size = self.artifact(r).len();
                                vec![
                                    json!({"id": r.id, "name": "hive-results", "size_in_bytes": size, "expired": false}),
                                ]
                            }
                        };
                        ResponseTemplate::new(200)
                            .set_body_json(json!({"total_count": list.len(), "artifacts": list}))
                    }
                    _ => ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
                }
            }
            ["actions", "artifacts", id, "zip"] => ResponseTemplate::new(302)
                .insert_header("location", format!("{}/blobs/{id}.zip", self.base)),
            _ => ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
        }
    }
}

/// A running server and the runtime that serves it.
pub(crate) struct Serving {
    pub(crate) server: ActionsServer,
    pub(crate) mock: wiremock::MockServer,
    _rt: tokio::runtime::Runtime,
}

impl Serving {
    pub(crate) fn uri(&self) -> String {
        self.mock.uri()
    }
}

/// Starts a server for the issue's history (`seed` fixes the flaky outcomes).
pub(crate) fn serve(seed: u64, legacy: bool) -> Serving {
    serve_as(seed, |s| if legacy { s.legacy() } else { s })
}

/// The documentation's server: runs complete when first read.
pub(crate) fn serve_instant(seed: u64) -> Serving {
    serve_as(seed, |mut s| {
        s.instant = true;
        s
    })
}

/// A server whose `n`th dispatch's run never completes.
pub(crate) fn serve_stuck(seed: u64, n: usize) -> Serving {
    serve_as(seed, |mut s| {
        s.stuck = Some(n);
        s
    })
}

fn serve_as(seed: u64, shape: impl FnOnce(ActionsServer) -> ActionsServer) -> Serving {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mock = rt.block_on(wiremock::MockServer::start());
    let server = shape(ActionsServer::new(&mock.uri(), seed));
    rt.block_on(
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(server.clone())
            .mount(&mock),
    );
    Serving {
        server,
        mock,
        _rt: rt,
    }
}
