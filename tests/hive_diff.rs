//! `warden hive diff OLD NEW` on two runs written here (synthetic, in hive's suite-file format):
//! the whole output.

mod common;

use std::path::Path;

use common::*;
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
    NEW FAILURE  rpc-compat/eth_call/a (ethrex)
        | boom
        | "::error::injected"
    FIXED        rpc-compat/eth_call/b (ethrex)
    CHANGED      rpc-compat/eth_getLogs/c (ethrex)
        - field blockTimestamp
        + field logsBloom
    ADDED        rpc-compat/eth_blobBaseFee/e (ethrex) (passed)
    REMOVED      rpc-compat/eth_chainId/d (ethrex) (passed)
    hive diff: 1 new failure, 1 fixed, 1 changed, 1 added, 1 removed
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
        "hive diff: 0 new failures, 0 fixed, 0 changed, 0 added, 0 removed\n"
    );
    let out = run(warden(t.path()).args(["hive", "diff", "old", "new", "--format", "markdown"]))
        .expect(1);
    assert!(
        out.stdout
            .starts_with("### hive diff: 1 new failure, 1 fixed, 1 changed, 1 added, 1 removed\n"),
        "{}",
        out.stdout
    );
    // A directory that is not a run is bad input.
    run(warden(t.path()).args(["hive", "diff", "old", "missing"])).expect(2);
}
