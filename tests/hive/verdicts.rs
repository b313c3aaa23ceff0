//! Issue 40: `hive history` verdicts on generated runs whose truth is known — a test broken by a
//! client change at run 12 of 30 (and a second with the same onset), a flake at 20 % under a
//! fixed client, a test that passed before a hive change and fails after, a new failure, a fix,
//! a test with one run — and hostile run records (huge, odd or missing `clientVersions`, runs
//! out of order), bounded and reported.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::*;

const T0: u64 = 1_780_000_000;

/// Run `i` (1-based): its folder name.
fn run_name(i: usize) -> String {
    (T0 + 3600 * i as u64).to_string()
}

/// Writes run `i` under `dir` with `cases` (name, passed) and the records given.
fn write_run(dir: &Path, i: usize, cases: &[(&str, bool)], versions: Value, hive: Option<&str>) {
    let run = dir.join(run_name(i));
    let mut tests = serde_json::Map::new();
    for (n, (name, pass)) in cases.iter().enumerate() {
        tests.insert(
            (n + 1).to_string(),
            json!({"name": name, "description": "", "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:01Z",
                   "summaryResult": {"pass": pass, "details": if *pass { "" } else { "response differs" }}, "clientInfo": null}),
        );
    }
    let suite = json!({"id": 0, "name": "rpc-compat", "description": "", "clientVersions": versions, "testCases": tests});
    write(
        &run.join(format!("{}-{i:032x}.json", T0 + 3600 * i as u64)),
        suite.to_string().as_bytes(),
    );
    if let Some(h) = hive {
        write(
            &run.join("hive.json"),
            json!({"sourceCommit": h}).to_string().as_bytes(),
        );
    }
}

/// Thirty runs with known truth.
fn thirty_runs(dir: &Path) {
    let flake = |i: usize| ((i - 1) * 7 + 3) % 10 < 2; // fails in runs 2, 5, 12, 15, 22, 25
    for i in 1..=30 {
        let reth = if i < 12 {
            "1.4.2+abc123"
        } else {
            "1.4.3+def456"
        };
        let hive = if i < 20 {
            "a".repeat(40)
        } else {
            "b".repeat(40)
        };
        let mut cases = vec![
            ("broken-after-client (reth)", i < 12),
            ("same-onset (reth)", i < 12),
            ("recovers (reth)", !(12..=13).contains(&i)),
            ("flake (geth)", !flake(i)),
            ("after-hive (geth)", i < 20),
            ("new-once (geth)", i < 30),
            ("fixed-by-client (reth)", i >= 12),
        ];
        if i == 30 {
            cases.push(("one-run (geth)", false));
        }
        write_run(
            dir,
            i,
            &cases,
            json!({"reth": reth, "geth": "1.16.0"}),
            Some(&hive),
        );
    }
}

fn history(dir: &Path, extra: &[&str]) -> Run {
    let runs: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    run(warden(dir)
        .args(["hive", "history"])
        .args(&runs)
        .args(["--registry", "none"])
        .args(extra))
}

#[test]
fn every_verdict_interval_and_onset_matches_the_truth() {
    let t = tempfile::tempdir().unwrap();
    thirty_runs(t.path());
    std::fs::create_dir(t.path().join("none")).unwrap();
    write(
        &t.path().join("none/registry.toml"),
        b"clients = [\"reth\", \"geth\"]\n",
    );
    let out = history(t.path(), &["--format", "json"]).expect(0);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    // Every verdict, interval and onset as docs/hive-history.schema.json documents them.
    let validator = hive_history_validator();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The verdict, once (`verdict`), beside what it rests on (`evidence`).
    let verdict = |name: &str| -> Value {
        let t = doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {}", doc["tests"]));
        assert!(t["evidence"].get("verdict").is_none(), "{t}");
        let mut e = t["evidence"].clone();
        e["verdict"] = t["verdict"].clone();
        e
    };
    let broken_12 = json!({"verdict": "broken", "failed": 19, "ran": 30,
        "onset": {"last_pass": 10, "first_fail": 11, "changes": ["client reth 1.4.2+abc123 → 1.4.3+def456"]},
        "why": format!("fails since run {}: client reth 1.4.2+abc123 → 1.4.3+def456; hive unchanged", run_name(12))});
    assert_eq!(verdict("broken-after-client (reth)"), broken_12);
    assert_eq!(verdict("same-onset (reth)"), broken_12);
    // 6 of 30; the interval computed apart from warden (Python, Wilson score, z = 1.959964):
    // 0.0951–0.3731.
    assert_eq!(
        verdict("flake (geth)"),
        json!({"verdict": "flaky", "failed": 6, "ran": 30, "interval": [0.0951, 0.3731], "why": "6 of 30, 10–37 %"})
    );
    assert_eq!(
        verdict("after-hive (geth)"),
        json!({"verdict": "broken", "failed": 11, "ran": 30,
            "onset": {"last_pass": 18, "first_fail": 19, "changes": ["hive aaaaaaaaaaaa → bbbbbbbbbbbb"]},
            "why": format!("fails since run {}: hive aaaaaaaaaaaa → bbbbbbbbbbbb; client geth unchanged", run_name(20))})
    );
    assert_eq!(verdict("new-once (geth)")["verdict"], "new");
    assert_eq!(
        verdict("recovers (reth)"),
        json!({"verdict": "fixed", "failed": 2, "ran": 30,
            "why": format!("passes since run {}: client reth unchanged; hive unchanged", run_name(14))})
    );
    assert_eq!(
        verdict("one-run (geth)"),
        json!({"verdict": "undecided", "failed": 1, "ran": 1,
            "onset": {"last_pass": null, "first_fail": 29, "changes": []},
            "why": "one run: too few to tell a flake from a break"})
    );
    // Nothing is flaky across a client change: the one flake is the one under a fixed client.
    let flaky: Vec<&Value> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["verdict"] == "flaky")
        .collect();
    assert_eq!(flaky.len(), 1, "{flaky:?}");
    // One change, many failures: the two reth tests share their onset.
    assert_eq!(
        doc["onsets"],
        json!([
            {"last_pass": run_name(11), "first_fail": run_name(12), "changes": ["client reth 1.4.2+abc123 → 1.4.3+def456"],
             "tests": ["rpc-compat/broken-after-client (reth)", "rpc-compat/same-onset (reth)"]},
            {"last_pass": run_name(19), "first_fail": run_name(20), "changes": ["hive aaaaaaaaaaaa → bbbbbbbbbbbb"],
             "tests": ["rpc-compat/after-hive (geth)"]},
            {"last_pass": run_name(29), "first_fail": run_name(30), "changes": [],
             "tests": ["rpc-compat/new-once (geth)"]}
        ])
    );
    // What to re-run: the new failure and the one-run test, enough times to part a flake at
    // the rate seen from a break.
    let plan = history(t.path(), &["--plan"]).expect(0);
    assert_eq!(
        plan.stdout,
        "# rpc-compat: 2 tests to re-run 5 times\nrpc-compat/^(?:new-once|one-run)(?: \\([^)]*\\))?$\n"
    );
}

#[test]
fn hostile_run_records_are_bounded_escaped_and_reported() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("none")).unwrap();
    write(
        &t.path().join("none/registry.toml"),
        b"clients = [\"reth\"]\n",
    );
    let huge = "9".repeat(10_000);
    let mut many = serde_json::Map::new();
    for c in 0..200 {
        many.insert(format!("zz{c}"), json!("1"));
    }
    many.insert(
        "reth".into(),
        json!(format!("\u{1b}]8;;http://evil\u{7}::error::x{huge}")),
    );
    // Run 1 has no hive.json; run 2 a huge, odd version and 200 clients; run 3 was written
    // before run 2.
    write_run(
        t.path(),
        1,
        &[("a (reth)", true)],
        json!({"reth": "1"}),
        None,
    );
    write_run(
        t.path(),
        2,
        &[("a (reth)", false)],
        Value::Object(many),
        Some(&"c".repeat(40)),
    );
    let three = t.path().join(run_name(3));
    write_run(
        t.path(),
        3,
        &[("a (reth)", false)],
        json!({"reth": "1"}),
        Some(&"c".repeat(40)),
    );
    std::fs::rename(
        three.join(format!("{}-{:032x}.json", T0 + 3 * 3600, 3)),
        three.join(format!("{}-{:032x}.json", T0 + 3600, 3)),
    )
    .unwrap();
    let out = history(t.path(), &[]).expect(0);
    assert!(!out.all().contains('\u{1b}'), "{}", out.all());
    assert!(
        !out.all().lines().any(|l| l.trim_start().starts_with("::")),
        "{}",
        out.all()
    );
    assert!(out.all().len() < 8_000, "{} bytes", out.all().len());
    let notes: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("warden: warning: "))
        .collect();
    assert_eq!(
        notes,
        [
            format!("warden: warning: run {} records no hive.json's commit: a pass and a failure there cannot make a test flaky", run_name(1)),
            format!("warden: warning: run {} was written before run {} (suite files at {} and {}): runs are read in the order given, oldest first", run_name(3), run_name(2), T0 + 3600, T0 + 7200),
            format!("warden: warning: run {}: more than 64 clients in clientVersions: the rest are not read", run_name(2)),
        ]
    );
    let json = history(t.path(), &["--format", "json"]).expect(0);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    let reth = doc["runs"][1]["sources"]["client_versions"]["reth"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(reth.chars().count(), 129, "{reth}");
    assert!(reth.ends_with('…') && !reth.contains('\u{1b}'));
}

/// Known issues that do not hold, each named with the runs that show it; and the registry edits
/// `known-issues update` draws from the verdicts: a flake only from a flaky verdict, never a
/// broken test made a flaky exclusion, one draft per onset with its change in `why`.
#[test]
fn entries_that_do_not_hold_are_named_and_updates_follow_the_verdicts() {
    let t = tempfile::tempdir().unwrap();
    thirty_runs(t.path());
    // One more test that fails in every run, listed as a flake.
    for i in 1..=30 {
        let dir = t.path().join(run_name(i));
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap() != "hive.json")
            .unwrap();
        let mut suite: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        suite["testCases"]["99"] = json!({"name": "always (reth)", "summaryResult": {"pass": false, "details": "boom"}, "clientInfo": null});
        write(&file, suite.to_string().as_bytes());
    }
    let k = t.path().join("known_issues");
    write(
        &k.join("registry.toml"),
        b"clients = [\"reth\", \"geth\"]\n",
    );
    write(
        &k.join("client-bump.toml"),
        br#"title = "reth 1.4.3 answers differently"
why = "w"
removal = "r"

[[exclude]]
suite = "rpc-compat"
test = "broken-after-client"
signature = "a text reth no longer prints"
"#,
    );
    write(
        &k.join("always.toml"),
        br#"title = "always fails, listed as a flake"
why = "w"
removal = "r"

[[exclude]]
suite = "rpc-compat"
test = "always"
expect = "flaky"
"#,
    );
    write(
        &k.join("recovers.toml"),
        br#"title = "broke for two runs, and under the old client"
why = "w"
removal = "r"

[[exclude]]
suite = "rpc-compat"
test = "recovers"

[[exclude]]
suite = "rpc-compat"
test = "fixed-by-client"
"#,
    );
    let runs: Vec<String> = (1..=30).map(run_name).collect();
    let out = run(warden(t.path()).args(["hive", "history"]).args(&runs)).expect(0);
    let holds: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("entry ") || l.starts_with("    does not hold"))
        .collect();
    let last = run_name(30);
    assert_eq!(
        holds,
        [
            "entry always (known_issues/always.toml): not a flake: its tests failed in every run; list them as expect = \"fail\"".to_string(),
            format!("    does not hold: rpc-compat/always (reth) is listed flaky but failed in every run it ran in (30 runs, {} to {last})", run_name(1)),
            "entry client-bump (known_issues/client-bump.toml): excuses 1 test broken since a change the runs record".to_string(),
            format!("    does not hold: rpc-compat/broken-after-client (reth) fails in run {last}, but no longer with its listed failure text"),
            "entry recovers (known_issues/recovers.toml): fixed: its tests failed, then passed in each of the last runs: remove its exclusions".to_string(),
            format!("    does not hold: rpc-compat/fixed-by-client (reth) is listed broken but passes under the newest client (reth 1.4.3+def456): 19 runs, {} to {last}", run_name(12)),
        ][..]
    );
    // The update: the flake gets a flaky draft; the break after the hive change a draft of its
    // own whose why says where it began.
    let upd = run(warden(t.path())
        .args(["known-issues", "update", "--from-results"])
        .args(&runs))
    .expect(0);
    insta::assert_snapshot!(super::history::today_filtered(&upd.stdout));
}
