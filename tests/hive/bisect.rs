//! `warden hive bisect` against a local GitHub Actions (tests/common/actions_server.rs) over the
//! issue's history: 40 commits, the test passing 75 % of the time before commit 23 and never
//! after, two probes that never reach the candidate (one fails in `Wait for sync` with no
//! artifact; one ran a cached image of another commit and its test failed there).

use std::path::Path;
use std::process::Command;

use crate::common::actions_server::{self as gh, commit, fails, serve, BREAKS_AT, COMMITS};
use crate::common::*;

/// The seed of the flaky outcomes the snapshots show.
const SEED: u64 = 1;

/// What one bisection of the history prints, made on a fresh server in one go.
fn one_whole_run() -> String {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    run(&mut bisect(t.path(), &s.uri(), &[])).expect(0).stdout
}

fn bisect(dir: &Path, api: &str, extra: &[&str]) -> Command {
    bisect_workflow(dir, api, gh::WORKFLOW, extra)
}

fn bisect_workflow(dir: &Path, api: &str, workflow: &str, extra: &[&str]) -> Command {
    let mut cmd = warden(dir);
    cmd.env("GH_TOKEN", "test-token")
        .args(["hive", "bisect", "--api-url", api, "--repo", gh::REPO])
        .args(["--workflow", workflow])
        .args([
            "--good",
            &commit(0)[..7],
            "--bad",
            &commit(COMMITS - 1)[..7],
        ])
        .args([
            "--client",
            "ethrex",
            "--test",
            "^eth_getBlockByNumber/get-latest$",
        ])
        .args(["--input", "commit={commit}", "--input", "probe={probe}"])
        .args(extra);
    // The defaults a test may give otherwise (a flag is given once).
    for (flag, value) in [("--ref", "main"), ("--poll", "0")] {
        if !extra.contains(&flag) {
            cmd.args([flag, value]);
        }
    }
    cmd
}

#[test]
fn bisect_names_commit_23_within_30_dispatches_and_shows_its_path() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    let r = run(&mut bisect(t.path(), &s.uri(), &[])).expect(0);
    assert!(
        s.server.dispatches() <= 30,
        "{} dispatches",
        s.server.dispatches()
    );
    assert!(r
        .stdout
        .contains(&format!("first bad commit: {}", commit(BREAKS_AT))));
    insta::assert_snapshot!(r.stdout);
    // Each dispatch and what it showed, as it happens.
    let progress: Vec<&str> = r.stderr.lines().take(4).collect();
    assert_eq!(
        progress,
        [
            "warden: dispatched hive-probe.yml for d93dbdf394e0 (probe 1 of this commit)",
            "warden: https://github.com/acme/ethrex/actions/runs/7001: failed",
            "warden: dispatched hive-probe.yml for d93dbdf394e0 (probe 2 of this commit)",
            "warden: https://github.com/acme/ethrex/actions/runs/7002: failed",
        ]
    );
}

/// One run per step, as a person bisects by hand, reading each run's conclusion: the same
/// history (the same outcome for the same commit's first probe; the 3rd dispatch failed before
/// hive) names a wrong commit.
#[test]
fn one_run_per_step_names_a_wrong_commit_on_the_same_history() {
    let (mut good, mut bad, mut dispatch) = (0, COMMITS - 1, 0);
    while bad > good + 1 {
        let mid = (good + bad) / 2;
        dispatch += 1;
        let failed =
            dispatch == gh::NO_ARTIFACT || dispatch == gh::STALE_IMAGE || fails(SEED, mid, 0);
        if failed {
            bad = mid;
        } else {
            good = mid;
        }
    }
    assert_ne!(bad, BREAKS_AT, "one run per step found the right commit");
    assert_eq!(bad, 21, "the commit one run per step names");
}

#[test]
fn an_invalid_probe_is_reported_with_its_step_and_never_decides() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    let r = run(&mut bisect(t.path(), &s.uri(), &["--format", "json"])).expect(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["status"], "found");
    assert_eq!(v["first_bad"]["sha"], commit(BREAKS_AT));
    assert_eq!(v["parent"]["sha"], commit(BREAKS_AT - 1));
    let rows = v["path"].as_array().unwrap();
    let invalid: Vec<(&str, &str)> = rows
        .iter()
        .flat_map(|row| row["probes"].as_array().unwrap())
        .filter(|p| p["result"] == "invalid")
        .map(|p| (p["run"].as_str().unwrap(), p["why"].as_str().unwrap()))
        .collect();
    assert_eq!(
        invalid,
        [
            (
                "https://github.com/acme/ethrex/actions/runs/7003",
                "no hive-results artifact: the run ended in failure (failed step: hive / Wait for sync)"
            ),
            (
                "https://github.com/acme/ethrex/actions/runs/7009",
                "the run did not test the candidate: clientVersions says ethrex ethrex/v9.1.0-d93dbdf\u{202e}/x86_64-unknown-linux-gnu, not 55de37af4be8 (failed step: hive / Run hive)"
            ),
        ]
    );
    // The good commit's test failed in run 7009 too, on another commit's image: not counted.
    let good = &rows[1];
    assert_eq!(good["commit"], commit(0));
    assert_eq!(
        (
            good["failed"].as_u64(),
            good["runs"].as_u64(),
            good["invalid"].as_u64()
        ),
        (Some(2), Some(4), Some(1))
    );
}

#[test]
fn markdown_links_each_run_and_escapes_what_runs_say() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    let r = run(&mut bisect(t.path(), &s.uri(), &["--format", "markdown"])).expect(0);
    insta::assert_snapshot!(r.stdout);
    assert!(!r.stdout.contains('\u{202e}'));
}

#[test]
fn a_stopped_bisection_goes_on_from_its_state_file() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    let state = t.path().join("bisect.json");
    let state_arg = state.to_str().unwrap();
    // Stopped after 12 dispatches: undecided (exit 1), every step saved.
    let first = run(&mut bisect(
        t.path(),
        &s.uri(),
        &["--state", state_arg, "--max-dispatches", "12"],
    ))
    .expect(1);
    assert!(
        first
            .stdout
            .contains("12 dispatches, the most --max-dispatches allows"),
        "{}",
        first.stdout
    );
    assert_eq!(s.server.dispatches(), 12);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["dispatches"].as_array().unwrap().len(), 12);
    // Going on: the same answer and the same path as one whole run, no dispatch repeated.
    let second = run(&mut bisect(t.path(), &s.uri(), &["--state", state_arg])).expect(0);
    assert!(second.stderr.starts_with(&format!(
        "warden: going on from {state_arg} (12 dispatches so far)\n"
    )));
    let whole = one_whole_run();
    assert_eq!(second.stdout, whole);
    // Other options with the same state file are refused, naming what differs.
    let other = run(&mut bisect(
        t.path(),
        &s.uri(),
        &["--state", state_arg, "--artifact", "results"],
    ))
    .expect(2);
    assert_eq!(
        other.stderr,
        format!("warden: --state {state_arg}: it holds another bisection (its options differ from these: artifact); give another file, or the same options\n")
    );
}

#[test]
fn dry_run_dispatches_nothing_and_shows_the_plan() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    let r = run(&mut bisect(t.path(), &s.uri(), &["--dry-run"])).expect(0);
    assert_eq!(s.server.dispatches(), 0);
    assert!(s.server.requests().iter().all(|r| r.starts_with("GET ")));
    insta::assert_snapshot!(r.stdout);
    // A workflow that is not there is said before anything is dispatched.
    let r = run(&mut bisect_workflow(
        t.path(),
        &s.uri(),
        "nope.yml",
        &["--dry-run"],
    ))
    .expect(2);
    assert_eq!(
        r.stderr,
        "warden: --workflow nope.yml: acme/ethrex has no such workflow (GET /repos/acme/ethrex/actions/workflows/nope.yml answered 404)\n"
    );
}

/// A server without `return_run_details` (an older GHES): the dispatch is sent again without
/// it, and each run is found by the probe's name in its title.
#[test]
fn an_older_server_s_runs_are_found_by_the_probe_name() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, true);
    // The ref in full: a run's head_branch names it short.
    let r = run(&mut bisect(
        t.path(),
        &s.uri(),
        &["--ref", "refs/heads/main"],
    ))
    .expect(0);
    let whole = one_whole_run();
    assert_eq!(
        r.stdout,
        whole.replace(" on main in ", " on refs/heads/main in ")
    );
}

#[test]
fn bad_ranges_and_missing_flags_are_usage_errors() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    // Good after bad.
    let mut cmd = warden(t.path());
    cmd.env("GH_TOKEN", "t")
        .args(["hive", "bisect", "--api-url", &s.uri(), "--repo", gh::REPO])
        .args([
            "--workflow",
            gh::WORKFLOW,
            "--client",
            "ethrex",
            "--test",
            "x",
        ])
        .args(["--good", &commit(30)[..7], "--bad", &commit(3)[..7]]);
    let r = run(&mut cmd).expect(2);
    assert_eq!(
        r.stderr,
        format!(
            "warden: --good {} --bad {}: GET /repos/acme/ethrex/compare/{}...{}: the bad commit is not a descendant of the good one (compare says \"behind\"): give --good an ancestor of --bad\n",
            &commit(30)[..7],
            &commit(3)[..7],
            &commit(30)[..7],
            &commit(3)[..7]
        )
    );
    // The same commit twice: nothing between them.
    let mut cmd = warden(t.path());
    cmd.env("GH_TOKEN", "t")
        .args(["hive", "bisect", "--api-url", &s.uri(), "--repo", gh::REPO])
        .args([
            "--workflow",
            gh::WORKFLOW,
            "--client",
            "ethrex",
            "--test",
            "x",
        ])
        .args(["--good", &commit(3)[..7], "--bad", &commit(3)[..7]]);
    assert_eq!(
        run(&mut cmd).expect(2).stderr,
        "warden: --good and --bad are the same commit: nothing to bisect\n"
    );
    // No token: said before anything is sent.
    let r = run(bisect(t.path(), &s.uri(), &[]).env_remove("GH_TOKEN")).expect(2);
    assert_eq!(
        r.stderr,
        "warden: hive bisect: no GH_TOKEN or GITHUB_TOKEN (dispatching needs `actions: write`)\n"
    );
    // A workflow that is not there, and a token that may not dispatch: GitHub's answer, with
    // the permission it asks for; the state keeps nothing dispatched.
    let r = run(&mut bisect_workflow(t.path(), &s.uri(), "nope.yml", &[])).expect(2);
    assert_eq!(
        r.stderr,
        "warden: POST /repos/acme/ethrex/actions/workflows/nope.yml/dispatches answered 404: Not Found\n"
    );
    let r = run(bisect(t.path(), &s.uri(), &[]).env("GH_TOKEN", "read-only-token")).expect(2);
    assert_eq!(
        r.stderr,
        "warden: POST /repos/acme/ethrex/actions/workflows/hive-probe.yml/dispatches answered 403: Resource not accessible by personal access token (needs `actions=write`)\n"
    );
    // A bad regex.
    let r = run(&mut bisect(t.path(), &s.uri(), &["--suite", "("])).expect(2);
    assert!(
        r.stderr
            .starts_with("warden: --suite \"(\": regex parse error"),
        "{}",
        r.stderr
    );
}

/// `known-issues update --bisect` puts the commit the failure began at into the draft's `why`.
#[test]
fn update_drafts_the_entry_with_the_commit_bisect_found() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    let report = run(&mut bisect(t.path(), &s.uri(), &["--format", "json"])).expect(0);
    write(&t.path().join("bisect.json"), report.stdout.as_bytes());
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    let suite = serde_json::json!({
        "name": "rpc-compat",
        "testCases": {
            "1": {"name": "eth_getBlockByNumber/get-latest (ethrex)", "summaryResult": {"pass": false, "details": "FAIL: response differs"}},
            "2": {"name": "eth_getLogs/no-topics (ethrex)", "summaryResult": {"pass": false, "details": "FAIL: other"}},
        }
    });
    write(
        &t.path().join("run/1-rpc.json"),
        suite.to_string().as_bytes(),
    );
    let out = run(warden(t.path())
        .env("SOURCE_DATE_EPOCH", "1764644410")
        .args([
            "known-issues",
            "update",
            "--from-results",
            "run",
            "--bisect",
            "bisect.json",
            "--write",
        ]))
    .expect(0);
    let whys: Vec<String> = std::fs::read_dir(t.path().join("known_issues"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("draft-")
        })
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| l.starts_with("why = "))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let mut whys = whys;
    whys.sort();
    assert_eq!(
        whys,
        [
            "why = \"\"".to_string(),
            format!(
                "why = 'Began at acme/ethrex@{} (2026-11-17, \"Commit 23\"; its parent {} passes), found by `warden hive bisect` over 26 probe runs.'",
                &commit(BREAKS_AT)[..12],
                &commit(BREAKS_AT - 1)[..12]
            ),
        ],
        "{}",
        out.stdout
    );
    // A report that found nothing is refused, naming the file.
    write(
        &t.path().join("undecided.json"),
        br#"{"status": "undecided"}"#,
    );
    let r = run(warden(t.path()).args([
        "known-issues",
        "update",
        "--from-results",
        "run",
        "--bisect",
        "undecided.json",
    ]))
    .expect(2);
    assert_eq!(
        r.stderr,
        "warden: undecided.json: not a `hive bisect --format json` report that found the first bad commit\n"
    );
}

/// The probe workflow docs/registry-and-hive.md shows: actionlint (an outside judge) finds no
/// problem, and it has what `hive bisect` relies on — the inputs its `--input` flags fill, the
/// probe's name in `run-name`, and the results uploaded as `hive-results` even when a step failed.
#[test]
fn the_documented_probe_workflow_lints_and_has_what_bisect_needs() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/registry-and-hive.md"),
    )
    .unwrap();
    let after = doc
        .split_once("<!-- bisect-probe-workflow -->\n```yaml\n")
        .expect("the probe workflow block")
        .1;
    let yaml = after.split_once("\n```").unwrap().0;
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("hive-probe.yml");
    write(&file, yaml.as_bytes());
    if let Some(problems) = actionlint(std::slice::from_ref(&file)) {
        assert_eq!(problems[&file], Vec::<String>::new());
    }
    let v: serde_json::Value = serde_yaml_value(yaml);
    assert_eq!(v["run-name"], "hive probe ${{ inputs.probe }}");
    let inputs = &v["on"]["workflow_dispatch"]["inputs"];
    assert_eq!(
        (
            inputs["commit"]["required"].as_bool(),
            inputs["probe"]["required"].as_bool()
        ),
        (Some(true), Some(true))
    );
    let steps = v["jobs"]["hive"]["steps"].as_array().unwrap();
    let upload = steps.last().unwrap();
    assert!(upload["uses"]
        .as_str()
        .unwrap()
        .starts_with("actions/upload-artifact@"));
    assert_eq!(
        (upload["if"].as_str(), upload["with"]["name"].as_str()),
        (Some("always()"), Some("hive-results"))
    );
}

fn serde_yaml_value(yaml: &str) -> serde_json::Value {
    yaml_serde::from_str(yaml).unwrap()
}

/// `--parallel 4`: the endpoints' runs, and the runs a commit that failed needs, are dispatched
/// together; the same commit is found in fewer rounds of waiting.
#[test]
fn parallel_probes_find_the_same_commit_in_fewer_rounds() {
    let t = tempfile::tempdir().unwrap();
    let s = serve(SEED, false);
    let r = run(&mut bisect(
        t.path(),
        &s.uri(),
        &["--parallel", "4", "--format", "json"],
    ))
    .expect(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["first_bad"]["sha"], commit(BREAKS_AT));
    // A round: dispatches sent one after another, before any run is read.
    let requests = s.server.requests();
    let posts: Vec<bool> = requests.iter().map(|r| r.starts_with("POST ")).collect();
    let rounds = posts.windows(2).filter(|w| w[1] && !w[0]).count() + usize::from(posts[0]);
    let dispatches = s.server.dispatches();
    assert_eq!((dispatches, rounds), (28, 14), "dispatches and rounds");
    // One at a time, the same history took 26 dispatches in 26 rounds.
}

/// A run that never completes is invalid once `--run-timeout` (minutes, from its dispatch)
/// has passed, with the step it was in; it decides nothing.
#[test]
fn a_run_that_never_completes_is_invalid_after_the_timeout() {
    let t = tempfile::tempdir().unwrap();
    let s = crate::common::actions_server::serve_stuck(SEED, 1);
    let r = run(&mut bisect(
        t.path(),
        &s.uri(),
        &[
            "--run-timeout",
            "0.02",
            "--poll",
            "0.2",
            "--max-dispatches",
            "2",
            "--format",
            "json",
        ],
    ))
    .expect(1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["status"], "undecided");
    let probes = &v["path"][0]["probes"];
    assert_eq!(
        (probes[0]["result"].as_str(), probes[0]["why"].as_str()),
        (
            Some("invalid"),
            Some("not completed 1 s after its dispatch (--run-timeout) (failed step: hive / Run hive)")
        )
    );
    assert_eq!(probes[1]["result"], "failed");
    assert_eq!(
        (
            v["path"][0]["runs"].as_u64(),
            v["path"][0]["invalid"].as_u64()
        ),
        (Some(1), Some(1))
    );
}
