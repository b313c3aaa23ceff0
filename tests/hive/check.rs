//! `warden hive check` on real hive result files (see tests/fixtures/hive/PROVENANCE.md) and on
//! variations that produce every outcome class.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hive")
}

fn hive(dir: &str, registry: &Path, extra: &[&str]) -> Run {
    run(warden(&fixtures())
        .args(["hive", "check", dir, "--registry"])
        .arg(registry)
        .args(extra))
}

/// A scratch copy of a registry folder to modify.
fn registry_copy(name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for e in fs::read_dir(fixtures().join(name)).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), t.path().join(e.file_name())).unwrap();
    }
    t
}

const ENTRY: &str = "title = \"t\"\nwhy = \"w\"\nremoval = \"r\"\n";

#[test]
fn real_berachain_run_is_fully_explained_by_its_registry() {
    let out = hive("berachain-rpc", &fixtures().join("registry-polard"), &[]).expect(0);
    assert!(
        out.stdout
            .contains("rpc-compat (polard): 45 cases, 6 passed, 39 failed"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("rpc (polard): 38 cases, 4 passed, 34 failed"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("outcomes: 39 expected fail, 37 flaky, 7 pass"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with("hive check: ok\n"), "{}", out.stdout);
    // Every excused failure is named, with the entry that excuses it.
    assert!(out.stdout.contains("excused (expected fail) rpc-compat/debug_getRawBlock/get-block-n (polard): excused by debug-raw-methods"), "{}", out.stdout);
    assert!(out.stdout.contains("excused (expected fail) rpc-compat/eth_getProof/get-account-proof (polard): excused by get-proof"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("excused (flaky) rpc/ws/ABICall (polard): failed this run"),
        "{}",
        out.stdout
    );
}

#[test]
fn unlisted_failure_is_a_regression_with_its_text() {
    let reg = registry_copy("registry-polard");
    fs::remove_file(reg.path().join("get-proof.toml")).unwrap();
    let out = hive("berachain-rpc", reg.path(), &[]).expect(1);
    assert!(out.stdout.contains("REGRESSION       rpc-compat/eth_getProof/get-account-proof (polard): failed and is not a known issue"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("    | >>  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_getProof\""),
        "first lines of the failure: {}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("hive check: FAILED (3 regression)\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn listed_test_that_passes_is_an_unexpected_pass_naming_the_file() {
    let reg = registry_copy("registry-polard");
    fs::write(reg.path().join("eth-call.toml"), format!("{ENTRY}\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_call/call-simple-contract\"\n")).unwrap();
    let out = hive("berachain-rpc", reg.path(), &[]).expect(1);
    assert!(
        out.stdout.contains(
            "UNEXPECTED PASS  rpc-compat/eth_call/call-simple-contract (polard): passed, but"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "eth-call.toml (eth-call) lists it as an expected failure: remove that exclusion"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn failure_with_another_signature_is_a_wrong_failure() {
    let reg = registry_copy("registry-polard");
    let p = reg.path().join("get-proof.toml");
    fs::write(
        &p,
        fs::read_to_string(&p)
            .unwrap()
            .replace("\"method\":\"eth_getProof\"", "proof of exclusion"),
    )
    .unwrap();
    let out = hive("berachain-rpc", reg.path(), &[]).expect(1);
    assert!(out.stdout.contains("WRONG FAILURE    rpc-compat/eth_getProof/get-account-proof (polard): failed, but not with the signature /proof of exclusion/ of get-proof"), "{}", out.stdout);
}

#[test]
fn listed_test_absent_from_the_run_is_missing_unless_allowed() {
    let reg = registry_copy("registry-polard");
    fs::write(
        reg.path().join("renamed.toml"),
        format!("{ENTRY}\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_getLogs/no-topics\"\n"),
    )
    .unwrap();
    let out = hive("berachain-rpc", reg.path(), &[]).expect(1);
    assert!(
        out.stdout
            .contains("MISSING          rpc-compat/eth_getLogs/no-topics (polard): listed in"),
        "{}",
        out.stdout
    );
    let out = hive("berachain-rpc", reg.path(), &["--allow-missing"]).expect(0);
    assert!(
        out.stdout.contains("MISSING"),
        "still reported: {}",
        out.stdout
    );
    // A test of an --expected-tests list that did not run.
    let list = reg.path().join("expected.txt");
    fs::write(&list, "# name\teth_call/call-simple-contract\neth_call/call-simple-contract\neth_getLogs/no-topics\neth_blobBaseFee/get-current\n").unwrap();
    let out = hive(
        "berachain-rpc",
        &fixtures().join("registry-polard"),
        &["--expected-tests", list.to_str().unwrap()],
    )
    .expect(1);
    assert!(out.stdout.contains("MISSING          rpc-compat/eth_blobBaseFee/get-current (polard): in --expected-tests but absent from the run"), "{}", out.stdout);
    assert!(
        !out.stdout
            .contains("eth_call/call-simple-contract (polard): in --expected-tests"),
        "{}",
        out.stdout
    );
}

#[test]
fn failed_client_launch_is_infra_and_an_empty_run() {
    let out = hive(
        "berachain-launch-failed",
        &fixtures().join("registry-polard"),
        &[],
    )
    .expect(1);
    assert!(
        out.stdout.contains(
            "INFRA            rpc-compat/client launch (polard): the client failed to launch"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "    | can't launch node (type polard): client did not start: terminated unexpectedly"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("EMPTY RUN"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("MISSING"),
        "absent tests of a client that never launched are not news: {}",
        out.stdout
    );
    let empty = tempfile::tempdir().unwrap();
    fs::write(empty.path().join("hive.json"), "{}").unwrap();
    let out = run(warden(empty.path())
        .args(["hive", "check", ".", "--registry"])
        .arg(fixtures().join("registry-polard")))
    .expect(1);
    assert!(
        out.stdout.contains("no suite files: hive wrote no results"),
        "{}",
        out.stdout
    );
}

#[test]
fn current_format_reads_failure_text_from_the_details_log() {
    let out = hive("current-format", &fixtures().join("registry-current"), &[]).expect(1);
    assert!(
        out.stdout
            .contains("rpc-compat (ethrex): 7 cases, 2 passed, 5 failed"),
        "{}",
        out.stdout
    );
    // Text comes from testDetailsLog at summaryResult.log offsets.
    assert!(out.stdout.contains("REGRESSION       rpc-compat/eth_call/call-simple (ethrex): failed and is not a known issue\n    | response differs from expected (-- client, ++ test):\n    | --  \"result\": \"0x\""), "{}", out.stdout);
    // The signature matched against the log text: one expected, one a different failure.
    assert!(
        out.stdout
            .contains("excused (expected fail) rpc-compat/eth_getLogs/contract-addr (ethrex)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("WRONG FAILURE    rpc-compat/eth_getLogs/no-topics (ethrex)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "INFRA            rpc-compat/eth_blockNumber/simple-test (ethrex): timed out"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("INFRA            rpc-compat/shared client lifecycle (ethrex): a shared-client lifecycle case (multiTestContext) failed"), "{}", out.stdout);
    assert!(
        out.stdout
            .ends_with("hive check: FAILED (1 regression, 1 wrong failure, 2 infra)\n"),
        "{}",
        out.stdout
    );
}

/// The details log is named by the (untrusted) suite file and its text can reach a public PR
/// comment: a name that leaves the results directory, or a link out of it, is refused.
#[test]
fn a_details_log_outside_the_results_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let results = t.path().join("results");
    let src = fixtures().join("current-format");
    write(
        &results.join("details/1780000000-4f3a9c-1.log"),
        &fs::read(src.join("details/1780000000-4f3a9c-1.log")).unwrap(),
    );
    write(
        &t.path().join("runner-secret.txt"),
        b"AWS_SECRET=do-not-post",
    );
    let suite_name = "1780000000-0123456789abcdef0123456789abcdef.json";
    let suite = fs::read_to_string(src.join(suite_name)).unwrap();
    let registry = fixtures().join("registry-current");
    let check = |log_name: &str| {
        let text = suite.replace(
            "\"testDetailsLog\":\"details/1780000000-4f3a9c-1.log\"",
            &format!("\"testDetailsLog\":{log_name:?}"),
        );
        write(&results.join(suite_name), text.as_bytes());
        run(warden(t.path())
            .args(["hive", "check", "results", "--registry"])
            .arg(&registry))
    };
    for name in ["../runner-secret.txt", "/etc/passwd"] {
        let out = check(name).expect(2);
        assert!(
            out.stderr.contains(&format!(
                "{suite_name}: testDetailsLog {name:?} is not a path inside the results directory"
            )),
            "{}",
            out.stderr
        );
        assert!(!out.all().contains("do-not-post"));
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            t.path().join("runner-secret.txt"),
            results.join("details/link.log"),
        )
        .unwrap();
        let out = check("details/link.log").expect(2);
        assert!(
            out.stderr.contains("outside the results directory"),
            "{}",
            out.stderr
        );
        assert!(!out.all().contains("do-not-post"));
    }
    // The real name still works, and a log that was not downloaded is no error.
    let out = check("details/1780000000-4f3a9c-1.log").expect(1);
    assert!(
        out.stdout.contains("response differs from expected"),
        "{}",
        out.stdout
    );
    check("details/not-downloaded.log").expect(1);
}

#[test]
fn legacy_engine_withdrawals_pass_and_fail_and_a_foreign_producer() {
    let reg = fixtures().join("registry-erigon");
    let out = hive("withdrawals-pass", &reg, &[]).expect(0);
    assert!(
        out.stdout
            .contains("engine-withdrawals (erigon): 1 case, 1 passed, 0 failed"),
        "{}",
        out.stdout
    );
    let out = hive("withdrawals-fail", &reg, &[]).expect(1);
    assert!(out.stdout.contains("REGRESSION       engine-withdrawals/Sync after 2 blocks - Withdrawals on Block 1 - Single Withdrawal Account - No Transactions (erigon)"), "{}", out.stdout);
    let text_lines = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("    | "))
        .count();
    assert!(
        (1..=9).contains(&text_lines),
        "only the first lines of ~50 KB of inline logs: {text_lines}"
    );
    let out = hive("foreign-producer", &reg, &[]).expect(0);
    assert!(
        out.stdout
            .contains("other/any (no client suffix): 3 cases, 3 passed, 0 failed"),
        "{}",
        out.stdout
    );
}

#[test]
fn client_filter_and_output_formats() {
    let reg = fixtures().join("registry-current");
    let out = hive("current-format", &reg, &["--client", "reth"]).expect(1);
    assert!(
        out.stdout.contains("EMPTY RUN"),
        "no case of that client: {}",
        out.stdout
    );
    let json = hive("current-format", &reg, &["--format", "json"]).expect(1);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["counts"]["regression"], 1);
    assert_eq!(doc["suites"][0]["name"], "rpc-compat");
    let junit = hive("current-format", &reg, &["--format", "junit"]).expect(1);
    assert!(junit.stdout.starts_with("<?xml"), "{}", junit.stdout);
    assert_eq!(
        junit.stdout.matches("<testcase ").count(),
        6,
        "every case but the lifecycle case... {}",
        junit.stdout
    );
    assert!(
        junit.stdout.contains("<failure type=\"regression\""),
        "{}",
        junit.stdout
    );
    assert!(
        junit.stdout.contains("<skipped message=\"expected fail: "),
        "{}",
        junit.stdout
    );
    let md = hive("current-format", &reg, &["--format", "markdown"]).expect(1);
    assert!(
        md.stdout.starts_with("### Hive results: FAILED"),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout
            .contains("| regression | `rpc-compat/eth_call/call-simple (ethrex)` |"),
        "{}",
        md.stdout
    );
}

#[test]
fn malformed_suite_file_is_exit_2_with_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let good = fs::read_to_string(
        fixtures().join("current-format/1780000000-0123456789abcdef0123456789abcdef.json"),
    )
    .unwrap();
    fs::write(t.path().join("1-truncated.json"), &good[..good.len() / 2]).unwrap();
    let out = run(warden(t.path())
        .args(["hive", "check", ".", "--registry"])
        .arg(fixtures().join("registry-current")))
    .expect(2);
    assert!(
        out.stderr
            .contains("1-truncated.json: not a hive suite file: byte "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("truncated"), "{}", out.stderr);
    fs::write(t.path().join("1-truncated.json"), "[1, 2]").unwrap();
    let out = run(warden(t.path())
        .args(["hive", "check", ".", "--registry"])
        .arg(fixtures().join("registry-current")))
    .expect(2);
    assert!(
        out.stderr.contains("byte 0: expected a JSON object"),
        "{}",
        out.stderr
    );
}
