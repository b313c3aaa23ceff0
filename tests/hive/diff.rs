//! `warden hive diff OLD NEW` on two runs written here (synthetic, in hive's suite-file format):
//! the whole output.

use std::path::Path;

use crate::common::*;
use serde_json::json;

fn suite(dir: &Path, cases: &[(&str, bool, &str)]) {
    let cases: serde_json::Map<String, serde_json::Value> = cases
        .iter()
        .enumerate()
        .map(|(i, (name, pass, details))| {
            (
                i.to_string(),
                json!({"name": format!("{name} (ethrex)"), "summaryResult": {"pass": pass, "details": details}}),
            )
        })
        .collect();
    write(
        &dir.join("1-rpc.json"),
        json!({"name": "rpc-compat", "testCases": cases})
            .to_string()
            .as_bytes(),
    );
}

#[test]
fn new_failures_fixed_changed_added_and_removed() {
    let t = tempfile::tempdir().unwrap();
    suite(
        &t.path().join("old"),
        &[
            ("eth_call/a", true, ""),
            ("eth_call/b", false, "x"),
            (
                "eth_getLogs/c",
                false,
                "response differs\nfield blockTimestamp",
            ),
            ("eth_chainId/d", true, ""),
        ],
    );
    suite(
        &t.path().join("new"),
        &[
            ("eth_call/a", false, "boom\n::error::injected"),
            ("eth_call/b", true, ""),
            ("eth_getLogs/c", false, "response differs\nfield logsBloom"),
            ("eth_blobBaseFee/e", true, ""),
        ],
    );
    let out = run(warden(t.path()).args(["hive", "diff", "old", "new"])).expect(1);
    insta::assert_snapshot!(out.stdout, @r#"
    NEW          rpc-compat/eth_call/a (ethrex)
        | …
        | "::error::injected"
    FIXED        rpc-compat/eth_call/b (ethrex)
    CHANGED      rpc-compat/eth_getLogs/c (ethrex)
        - field blockTimestamp
        + field logsBloom
    ADDED        rpc-compat/eth_blobBaseFee/e (ethrex) (passed)
    REMOVED      rpc-compat/eth_chainId/d (ethrex) (passed)
    hive diff: 1 new, 1 fixed, 1 changed, 1 added, 1 removed
    "#);
    // The other way round: b is the new failure, a the fixed one.
    let out =
        run(warden(t.path()).args(["hive", "diff", "new", "old", "--format", "json"])).expect(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["new_failures"][0]["test"], "eth_call/b (ethrex)");
    assert_eq!(doc["fixed"][0]["test"], "eth_call/a (ethrex)");
    // A run against itself: nothing changed, exit 0.
    let out = run(warden(t.path()).args(["hive", "diff", "old", "old"])).expect(0);
    assert_eq!(
        out.stdout,
        "hive diff: 0 new, 0 fixed, 0 changed, 0 added, 0 removed\n"
    );
    let out = run(warden(t.path()).args(["hive", "diff", "old", "new", "--format", "markdown"]))
        .expect(1);
    assert!(
        out.stdout
            .starts_with("### hive diff: 1 new, 1 fixed, 1 changed, 1 added, 1 removed\n"),
        "{}",
        out.stdout
    );
    // A directory that is not a run is bad input.
    run(warden(t.path()).args(["hive", "diff", "old", "missing"])).expect(2);
}

/// The registry's `[upstream]` hive pin is compared with the run's `hive.json`: a mismatch is a
/// warning, a fixed test in such a run is labelled as likely an upstream change, and
/// `--require-pins` makes the mismatch a failure.
#[test]
fn pinned_hive_commit_is_enforced() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n\n[upstream]\nhive = \"a74a5a7063419f570c83a271dd8b36d4731f5872\"\n",
    );
    write(
        &t.path().join("known_issues/logs-field.toml"),
        b"title = \"t\"\nstatus = \"open\"\nadded = 2025-01-01\nreview_by = 2999-01-01\nwhy = \"w\"\nremoval = \"r\"\n\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_getLogs/c\"\n",
    );
    suite(
        &t.path().join("run"),
        &[("eth_call/a", true, ""), ("eth_getLogs/c", true, "")],
    );
    write(
        &t.path().join("run/hive.json"),
        br#"{"sourceCommit":"389348a0a7f04148881e90c278ece3e172dbbd4f"}"#,
    );
    let out = run(warden(t.path()).args(["hive", "check", "run", "--client", "ethrex"])).expect(1);
    assert!(
        out.stdout
            .contains("(likely an upstream change: the run does not match the pinned upstream)"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stderr,
        "warden: warning: hive: the run used 389348a0a7f04148881e90c278ece3e172dbbd4f, the registry pins a74a5a7063419f570c83a271dd8b36d4731f5872\n"
    );
    let summary =
        run(warden(t.path()).args(["known-issues", "summary", "--results", "run"])).expect(0);
    assert!(
        summary.stdout.contains("Pinned upstream: hive `a74a5a7063419f570c83a271dd8b36d4731f5872` (the run used `389348a0a7f04148881e90c278ece3e172dbbd4f`).\nThe run does not match the pins: a listed test that passed (fixed) is likely an upstream change.\n"),
        "{}",
        summary.stdout
    );
    // Nothing listed failing or passing: the mismatch alone passes, unless pins are required.
    std::fs::remove_file(t.path().join("known_issues/logs-field.toml")).unwrap();
    run(warden(t.path()).args(["hive", "check", "run", "--client", "ethrex"])).expect(0);
    let out = run(warden(t.path()).args([
        "hive",
        "check",
        "run",
        "--client",
        "ethrex",
        "--require-pins",
    ]))
    .expect(1);
    assert!(
        out.stdout.ends_with("hive check: FAILED (pin mismatch)\n"),
        "{}",
        out.stdout
    );
    // The pinned commit (abbreviated in the pin) matches.
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n\n[upstream]\nhive = \"389348a0a7f0\"\n",
    );
    let out = run(warden(t.path()).args([
        "hive",
        "check",
        "run",
        "--client",
        "ethrex",
        "--require-pins",
    ]))
    .expect(0);
    assert_eq!(out.stderr, "");
}

/// A suite file `file` of `dir` with `cases`.
fn suite_file(dir: &Path, file: &str, cases: &[(&str, bool)]) {
    let cases: serde_json::Map<String, serde_json::Value> = cases
        .iter()
        .enumerate()
        .map(|(i, (name, pass))| {
            (
                i.to_string(),
                json!({"name": format!("{name} (ethrex)"), "summaryResult": {"pass": pass, "details": if *pass { "" } else { "boom" }}}),
            )
        })
        .collect();
    write(
        &dir.join(file),
        json!({"name": "rpc-compat", "testCases": cases})
            .to_string()
            .as_bytes(),
    );
}

/// A test that fails in one suite file of NEW and passes in another counts as failing, as
/// `hive check` counts it, whichever file is read first.
#[test]
fn a_test_failing_in_one_suite_file_and_passing_in_another_is_failing() {
    let t = tempfile::tempdir().unwrap();
    suite_file(&t.path().join("old"), "1.json", &[("eth_call/a", true)]);
    for (first, second) in [(false, true), (true, false)] {
        let new = t.path().join(format!("new-{first}"));
        suite_file(&new, "1.json", &[("eth_call/a", first)]);
        suite_file(&new, "2.json", &[("eth_call/a", second)]);
        let out = run(warden(t.path()).args(["hive", "diff", "old"]).arg(&new)).expect(1);
        assert_eq!(
            out.stdout.lines().next(),
            Some("NEW          rpc-compat/eth_call/a (ethrex)"),
            "{}",
            out.stdout
        );
    }
}

/// A NEW (or OLD) run without a suite file is an error, not "nothing failed".
#[test]
fn a_run_without_a_suite_file_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    suite_file(&t.path().join("old"), "1.json", &[("eth_call/a", true)]);
    std::fs::create_dir_all(t.path().join("new")).unwrap();
    write(&t.path().join("new/hive.json"), b"{}");
    let out = run(warden(t.path()).args(["hive", "diff", "old", "new"])).expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "warden: NEW: no hive suite file (*.json) in new: did hive write no results, or is this the wrong folder? (hive writes them to workspace/logs)\n"
    );
    let out = run(warden(t.path()).args(["hive", "diff", "new", "old"])).expect(2);
    assert!(out.stderr.starts_with("warden: OLD: "), "{}", out.stderr);
    // The run is in logs/ below the folder given: said, with the folder to pass.
    suite_file(
        &t.path().join("new/logs"),
        "2.json",
        &[("eth_call/a", true)],
    );
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    let out = run(warden(t.path()).args(["hive", "history", "new"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: no hive suite file (*.json) in new, but new/logs has some: pass that folder (hive's --results-root)\n"
    );
}

/// A `*.json` entry of a results folder that is a link out of it, a FIFO or a folder is bad
/// input (exit 2) in `check`, `diff` and `history`: never read, never silently skipped.
#[test]
#[cfg(unix)]
fn a_linked_fifo_or_folder_suite_file_is_bad_input_everywhere() {
    let t = tempfile::tempdir().unwrap();
    suite_file(&t.path().join("old"), "1.json", &[("eth_call/a", true)]);
    std::fs::create_dir_all(t.path().join("known_issues")).unwrap();
    write(&t.path().join("outside.json"), b"{\"name\": \"secret\"}");
    type Make = Box<dyn Fn(&Path)>;
    let cases: [(&str, Make, &str); 3] = [
        (
            "link",
            Box::new(|p: &Path| {
                std::os::unix::fs::symlink(
                    p.parent().unwrap().parent().unwrap().join("outside.json"),
                    p,
                )
                .unwrap()
            }),
            "a link out of the results directory: not read as a suite file",
        ),
        (
            "fifo",
            Box::new(|p: &Path| {
                assert!(std::process::Command::new("mkfifo")
                    .arg(p)
                    .status()
                    .unwrap()
                    .success())
            }),
            "a FIFO, socket or device, not a suite file",
        ),
        (
            "folder",
            Box::new(|p: &Path| std::fs::create_dir(p).unwrap()),
            "a folder, not a suite file",
        ),
    ];
    for (name, make, why) in &cases {
        let dir = t.path().join(name);
        suite_file(&dir, "1.json", &[("eth_call/a", true)]);
        make(&dir.join("2.json"));
        let expected = format!("warden: {name}/2.json: {why}\n");
        for args in [
            vec!["hive", "diff", "old", name],
            vec!["hive", "history", "old", name],
            vec!["hive", "check", name],
        ] {
            let out = run(std::process::Command::new("timeout")
                .arg("20")
                .arg(warden_bin())
                .args(&args)
                .current_dir(t.path()));
            assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
            assert_eq!(out.stderr, expected, "{args:?}");
            assert!(!out.all().contains("secret"));
        }
    }
}
