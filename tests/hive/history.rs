//! `warden hive history` and `warden known-issues update --from-results` over several runs.
//!
//! The runs are built from a real hive file: polard's rpc-compat suite of May 2023
//! (`tests/fixtures/hive/berachain-rpc/1684352583-….json`, 45 cases, see PROVENANCE.md). Run 1
//! is that file unchanged; runs 2–4 are synthetic copies with outcomes flipped or cases removed,
//! so that each shape appears once:
//!
//! | test                               | runs 1–4 | shape      |
//! |------------------------------------|----------|------------|
//! | eth_getBalance/get-balance         | ✗✗✗✗     | persistent |
//! | eth_getCode/get-code               | ✗✓✗✗     | flaky (listed `fail`) |
//! | eth_feeHistory/fee-history         | ✗✗✓✓     | fixed      |
//! | eth_call/call-simple-contract      | ✓✓✓✗     | new (unlisted) |
//! | eth_getStorage/get-storage         | ✗✗··     | gone       |
//! | eth_syncing/check-syncing (listed) | ✓✓✓✓     | stale      |
//! | eth_getLogs/no-such-test (listed)  | ····     | stale, missing |
//!
//! Run 4's `hive.json` names another hive commit than the registry pins.

use std::path::Path;

use crate::common::*;
use serde_json::Value;

const REAL_RUN: &str =
    "tests/fixtures/hive/berachain-rpc/1684352583-47d017a65e7a02218661bff1de750bd5.json";
const REAL_HIVE: &str = "tests/fixtures/hive/berachain-rpc/hive.json";

/// What to do to a case of the real file in a synthetic run.
enum Flip {
    Pass,
    Fail(&'static str),
    Remove,
}

fn make_run(dir: &Path, flips: &[(&str, Flip)], hive_commit: Option<&str>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut suite: Value =
        serde_json::from_slice(&std::fs::read(root.join(REAL_RUN)).unwrap()).unwrap();
    let cases = suite["testCases"].as_object_mut().unwrap();
    for (name, flip) in flips {
        let full = format!("{name} (polard)");
        let id = cases
            .iter()
            .find(|(_, c)| c["name"] == full.as_str())
            .map(|(id, _)| id.clone())
            .unwrap_or_else(|| panic!("{full} is not in the real run"));
        match flip {
            Flip::Remove => {
                cases.remove(&id);
            }
            Flip::Pass => {
                cases[&id]["summaryResult"] = serde_json::json!({"pass": true, "details": ""});
            }
            Flip::Fail(text) => {
                cases[&id]["summaryResult"] = serde_json::json!({"pass": false, "details": text});
            }
        }
    }
    write(
        &dir.join("1684352583-47d017a65e7a02218661bff1de750bd5.json"),
        suite.to_string().as_bytes(),
    );
    let hive = match hive_commit {
        Some(c) => format!("{{\"sourceCommit\":\"{c}\"}}").into_bytes(),
        None => std::fs::read(root.join(REAL_HIVE)).unwrap(),
    };
    write(&dir.join("hive.json"), &hive);
}

/// The four runs of the table above, in `runs/1` … `runs/4`.
pub(super) fn four_runs(t: &Path) {
    let fail = |s| Flip::Fail(s);
    make_run(&t.join("runs/1"), &[], None);
    make_run(
        &t.join("runs/2"),
        &[("eth_getCode/get-code", Flip::Pass)],
        None,
    );
    make_run(
        &t.join("runs/3"),
        &[
            ("eth_feeHistory/fee-history", Flip::Pass),
            ("eth_getStorage/get-storage", Flip::Remove),
        ],
        None,
    );
    make_run(
        &t.join("runs/4"),
        &[
            ("eth_feeHistory/fee-history", Flip::Pass),
            ("eth_getStorage/get-storage", Flip::Remove),
            ("eth_getCode/get-code", fail("code differs\nat block 0x3")),
            (
                "eth_call/call-simple-contract",
                fail("response differs from the fixture at byte 0x1f\n::error::injected"),
            ),
        ],
        Some("e429a9470c1f310907e6bdc8cc3d48403d82a2b6"),
    );
}

/// A registry in the layout maintainers write by hand: comments, unusual key order, an inline
/// array of exclusions, a multi-line `why`.
pub(super) fn registry(t: &Path) {
    write(
        &t.join("known_issues/registry.toml"),
        b"# polard's known issues\nclients = [\"polard\"]\n\n[upstream]\nhive = \"389348a0a7f04148881e90c278ece3e172dbbd4f\"  # bumped by hand\n",
    );
    write(
        &t.join("known_issues/fixture-chain.toml"),
        br#"# Most state queries answer for another chain.
removal = "When polard can import the rpc-compat fixture chain."
title = "Responses differ from the Ethereum fixtures"
why = """
polard's genesis differs from the fixture chain.

Not an RPC bug.
"""

# persistent
[[exclude]]
test = "eth_getBalance/get-balance"
suite = "rpc-compat"

# fixed upstream in run 3
[[exclude]]
suite = "rpc-compat"
test = "eth_feeHistory/fee-history"

[[exclude]]
suite = "rpc-compat"
test = "eth_getCode/get-code"   # sometimes passes
expect = "fail"

[[exclude]]
suite = "rpc-compat"
test = "eth_getStorage/get-storage"
"#,
    );
    write(
        &t.join("known_issues/syncing.toml"),
        br#"title = "eth_syncing answers early"
why = "Listed, but passes."
removal = "Now."
exclude = [
  { suite = "rpc-compat", test = "eth_syncing/check-syncing" },  # passes every run
  { suite = "rpc-compat", test = "eth_getLogs/no-such-test" },
]
"#,
    );
    // Every other failure of the real run, so that only the shapes above stand out.
    let mut rest = String::from(
        "title = \"The rest of polard's failures in May 2023\"\nwhy = \"w\"\nremoval = \"r\"\n",
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite: Value =
        serde_json::from_slice(&std::fs::read(root.join(REAL_RUN)).unwrap()).unwrap();
    let mut names: Vec<String> = suite["testCases"]
        .as_object()
        .unwrap()
        .values()
        .filter(|c| c["summaryResult"]["pass"] == false)
        .map(|c| {
            c["name"]
                .as_str()
                .unwrap()
                .trim_end_matches(" (polard)")
                .to_string()
        })
        .filter(|n| {
            ![
                "eth_getBalance/get-balance",
                "eth_feeHistory/fee-history",
                "eth_getCode/get-code",
                "eth_getStorage/get-storage",
            ]
            .contains(&n.as_str())
        })
        .collect();
    names.sort();
    for n in names {
        rest.push_str(&format!(
            "\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"{n}\"\n"
        ));
    }
    write(&t.join("known_issues/rest.toml"), rest.as_bytes());
}

#[test]
fn history_classifies_every_shape_across_runs() {
    let t = tempfile::tempdir().unwrap();
    four_runs(t.path());
    registry(t.path());
    let out =
        run(warden(t.path()).args(["hive", "history", "runs/1", "runs/2", "runs/3", "runs/4"]))
            .expect(0);
    insta::assert_snapshot!(out.stdout);
    // `--all` lists the known failures the default folds into one line, in its place (after
    // everything else), and nothing else changes.
    let all = run(warden(t.path()).args([
        "hive", "history", "runs/1", "runs/2", "runs/3", "runs/4", "--all",
    ]))
    .expect(0);
    let folded: Vec<&str> = out.stdout.lines().collect();
    let listed: Vec<&str> = all.stdout.lines().collect();
    let known: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|l| l.starts_with("KNOWN ") && l.contains("listed in "))
        .collect();
    assert_eq!(known.len(), 36, "{}", all.stdout);
    let at = folded.iter().position(|l| l.starts_with("KNOWN ")).unwrap();
    assert_eq!(
        folded[at],
        "KNOWN      36 known failures (broken, listed in the registry): --all lists them"
    );
    let mut expected: Vec<&str> = folded[..at].to_vec();
    expected.extend(known.iter().copied());
    expected.extend(folded[at + 1..].iter().copied());
    assert_eq!(listed, expected);
    assert_eq!(
        out.stderr,
        "warden: warning: hive: the run used e429a9470c1f310907e6bdc8cc3d48403d82a2b6, the registry pins 389348a0a7f04148881e90c278ece3e172dbbd4f\n"
    );
    let md = run(warden(t.path()).args([
        "hive", "history", "runs/1", "runs/2", "runs/3", "runs/4", "--format", "markdown",
    ]))
    .expect(0);
    insta::assert_snapshot!(md.stdout);
    // --require-pins: the last run's pin mismatch fails.
    run(warden(t.path()).args(["hive", "history", "runs/1", "runs/4", "--require-pins"])).expect(1);
}

#[test]
fn history_json_and_rerun_regex() {
    let t = tempfile::tempdir().unwrap();
    four_runs(t.path());
    registry(t.path());
    let out = run(warden(t.path()).args([
        "hive", "history", "runs/1", "runs/2", "runs/3", "runs/4", "--format", "json",
    ]))
    .expect(0);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    // The JSON is what docs/hive-history.schema.json says, and the schema refuses old names.
    let validator = hive_history_validator();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut old = doc.clone();
    old["tests"][0]["verdict"] = "persistent".into();
    assert!(!validator.is_valid(&old), "an old name is refused");
    let class = |name: &str| {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| (t["verdict"].clone(), t["marks"].clone()))
    };
    assert_eq!(
        class("eth_getCode/get-code (polard)"),
        Some((
            "flaky".into(),
            serde_json::json!(["fail", "pass", "fail", "fail"])
        ))
    );
    assert_eq!(
        class("eth_getStorage/get-storage (polard)"),
        Some((
            "gone".into(),
            serde_json::json!(["fail", "fail", "absent", "absent"])
        ))
    );
    assert_eq!(doc["runs"].as_array().unwrap().len(), 4);
    assert_eq!(
        doc["runs"][3]["sources"]["client_versions"]["polard"],
        "0.0.0"
    );
    // Only the last run's failures, one line per suite, ready for --sim.limit.
    let out = run(warden(t.path()).args(["hive", "history", "runs/3", "runs/4", "--rerun-regex"]))
        .expect(0);
    assert!(
        out.stdout
            .starts_with("rpc-compat/^(?:debug_getRawBlock/get-block-n|"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("|eth_call/call-simple-contract|"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("eth_feeHistory"), "{}", out.stdout);
    assert!(
        out.stdout.ends_with(")(?: \\([^)]*\\))?$\n"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 1);
}

/// Dates in drafts are today's.
pub(super) fn today_filtered(s: &str) -> String {
    regex::Regex::new(r"added = \d{4}-\d{2}-\d{2}")
        .unwrap()
        .replace_all(s, "added = TODAY")
        .into_owned()
}

#[test]
fn update_proposes_edits_writes_them_and_is_idempotent() {
    let t = tempfile::tempdir().unwrap();
    four_runs(t.path());
    registry(t.path());
    let before = std::fs::read(t.path().join("known_issues/rest.toml")).unwrap();
    let args = [
        "known-issues",
        "update",
        "--from-results",
        "runs/1",
        "runs/2",
        "runs/3",
        "runs/4",
    ];
    let out = run(warden(t.path()).args(args)).expect(0);
    insta::assert_snapshot!(today_filtered(&out.stdout));
    // Nothing is written without --write; an untouched file is never rewritten.
    assert!(!t.path().join("known_issues/draft-rpc-compat").exists());
    let written = run(warden(t.path()).args(args).arg("--write")).expect(0);
    assert!(
        written
            .stdout
            .ends_with("known-issues update: 4 changes in 3 files, written\n"),
        "{}",
        written.stdout
    );
    assert_eq!(
        std::fs::read(t.path().join("known_issues/rest.toml")).unwrap(),
        before
    );
    // Idempotent: a second run proposes nothing.
    let again = run(warden(t.path()).args(args)).expect(0);
    assert_eq!(
        again.stdout,
        "MISSING  known_issues/syncing.toml: rpc-compat/eth_getLogs/no-such-test (syncing): absent from all 4 runs; renamed or removed upstream? (--prune-missing removes it)\nNOTE     known_issues/registry.toml: hive: the run used e429a9470c1f310907e6bdc8cc3d48403d82a2b6, the registry pins 389348a0a7f04148881e90c278ece3e172dbbd4f; not moved while 1 failure of the run needs a reviewed entry\nknown-issues update: nothing to change (2 notes)\n"
    );
    // The draft cannot reach main unnoticed: lint refuses it unless --allow-draft.
    let lint = run(warden(t.path()).args(["known-issues", "lint"])).expect(1);
    assert!(
        lint.stdout
            .contains("a draft written by `warden known-issues update`"),
        "{}",
        lint.stdout
    );
    run(warden(t.path()).args(["known-issues", "lint", "--allow-draft"])).expect(0);
}

/// An entry whose only exclusion is fixed is kept and marked for review; the pin moves when every
/// failure of the last run is listed; --prune-missing removes what matched nothing, unless the
/// upstream test list still has it; a pattern is never loosened to flaky.
#[test]
fn update_marks_emptied_entries_moves_pins_and_prunes() {
    let t = tempfile::tempdir().unwrap();
    four_runs(t.path());
    registry(t.path());
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"polard\"]\n\n[upstream]\nhive = \"e429a94\"  # bumped by hand\nexecution-apis = \"033ca6e6\"\n",
    );
    write(
        &t.path().join("known_issues/fixture-chain.toml"),
        br#"title = "Responses differ from the Ethereum fixtures"
status = "open"   # tracked in polard#12
why = "w"
removal = "r"

[[exclude]]
suite = "rpc-compat"
test = "eth_getBalance/get-balance"

[[exclude]]
suite = "rpc-compat"
test = "eth_getCode/"
match = "prefix"

[[exclude]]
suite = "rpc-compat"
test = "eth_getStorage/get-storage"
"#,
    );
    write(
        &t.path().join("known_issues/fee-history.toml"),
        b"title = \"eth_feeHistory rewards\"\nwhy = \"w\"\nremoval = \"r\"\n\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_feeHistory/fee-history\"\n",
    );
    let args = [
        "known-issues",
        "update",
        "--from-results",
        "runs/1",
        "runs/2",
        "runs/3",
        "--prune-missing",
    ];
    let out = run(warden(t.path()).args(args)).expect(0);
    insta::assert_snapshot!(out.stdout);
    // The upstream list still has the missing test: the run did not include it, nothing to prune.
    write(
        &t.path().join("tests.tsv"),
        b"eth_getLogs/no-such-test\teth_getLogs\n",
    );
    let out = run(warden(t.path())
        .args(args)
        .args(["--expected-tests", "tests.tsv"]))
    .expect(0);
    assert!(!out.stdout.contains("MISSING"), "{}", out.stdout);
    run(warden(t.path()).args(args).arg("--write")).expect(0);
    let again = run(warden(t.path()).args(args)).expect(0);
    assert!(
        again
            .stdout
            .ends_with("known-issues update: nothing to change (1 note)\n"),
        "{}",
        again.stdout
    );
    // The emptied entry is documented as fixed; lint accepts it.
    run(warden(t.path()).args(["known-issues", "lint"])).expect(0);
}

/// Names and failure text from the run are hostile: no line of the output is a workflow
/// command, and a name that cannot be listed is not drafted.
#[test]
fn update_and_history_escape_what_the_run_says() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    let suite = serde_json::json!({
        "name": "rpc-compat",
        "testCases": {
            "1": {"name": "eth_call/x\n::error::pwned (ethrex)", "summaryResult": {"pass": false, "details": "boom"}},
            "2": {"name": "eth_call/y (ethrex)", "summaryResult": {"pass": false, "details": "\u{202e}::warning::x\n\u{1b}[31mred"}},
            "3": {"name": "eth_call/z (ethrex)", "summaryResult": {"pass": false, "timeout": true, "details": "Test was terminated by host"}}
        }
    });
    write(
        &t.path().join("run/1-rpc.json"),
        suite.to_string().as_bytes(),
    );
    for args in [
        vec!["hive", "history", "run"],
        vec!["known-issues", "update", "--from-results", "run"],
    ] {
        let out = run(warden(t.path()).args(&args)).expect(0);
        for line in out.stdout.lines() {
            assert!(!line.trim_start().starts_with("::"), "{line}");
            assert!(
                !line.contains('\u{1b}') && !line.contains('\u{202e}'),
                "{line:?}"
            );
        }
    }
    let out =
        run(warden(t.path()).args(["known-issues", "update", "--from-results", "run", "--write"]))
            .expect(0);
    insta::assert_snapshot!(out.stdout);
    // The draft parses and is refused by lint as a draft, nothing else.
    let lint = run(warden(t.path()).args(["known-issues", "lint"])).expect(1);
    assert_eq!(
        lint.stdout.matches("a draft written by").count(),
        1,
        "{}",
        lint.stdout
    );
}

/// One draft per distinct failure: hive's rpc suite begins every failure text with the request
/// it sent, so failures are told apart by what follows it (numbers and hashes aside), not by
/// their first line.
#[test]
fn update_drafts_one_entry_per_distinct_failure() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"polard\"]\n",
    );
    let request = |method: &str, id: u32| {
        format!(">>  {{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\"}}\n<<  {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":\"0x\"}}\n")
    };
    let case = |name: &str, details: String| serde_json::json!({"name": format!("{name} (polard)"), "summaryResult": {"pass": false, "details": details}});
    let suite = serde_json::json!({
        "name": "rpc",
        "testCases": {
            "1": case("http/ABICall", format!("{}Unable to fetch `ui` variable: no contract code at given address", request("eth_call", 1))),
            "2": case("http/CodeAt", format!("{}Unexpected code, want 0x6001", request("eth_call", 1))),
            "3": case("http/BalanceAndNonceAt", format!("{}unable to send funding transaction: account 0x1a2b does not exist", request("eth_sendRawTransaction", 4))),
            "4": case("http/TransactionReceipt", format!("{}unable to send funding transaction: account 0x3c4d does not exist", request("eth_sendRawTransaction", 9))),
        }
    });
    write(
        &t.path().join("run/1-rpc.json"),
        suite.to_string().as_bytes(),
    );
    let out = run(warden(t.path())
        .env("SOURCE_DATE_EPOCH", "1764644410")
        .args(["known-issues", "update", "--from-results", "run", "--write"]))
    .expect(0);
    insta::assert_snapshot!(out.stdout);
    let drafts: Vec<String> = std::fs::read_dir(t.path().join("known_issues"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("draft-"))
        .collect();
    assert_eq!(drafts.len(), 3, "{drafts:?}");
}

/// The sticky comment's body gains each excluded test's strip over the earlier runs.
#[test]
fn summary_shows_the_history_strip() {
    let t = tempfile::tempdir().unwrap();
    four_runs(t.path());
    registry(t.path());
    std::fs::remove_file(t.path().join("known_issues/rest.toml")).unwrap();
    let out = run(warden(t.path()).args([
        "known-issues",
        "summary",
        "--results",
        "runs/4",
        "--history",
        "runs/1",
        "runs/2",
        "runs/3",
    ]))
    .expect(0);
    insta::assert_snapshot!(out.stdout);
}

/// Bad input is exit 2 with the file named, and nothing is written.
#[test]
fn bad_runs_and_registries_are_errors_that_write_nothing() {
    let t = tempfile::tempdir().unwrap();
    four_runs(t.path());
    registry(t.path());
    let out = run(warden(t.path()).args(["hive", "history", "runs/1", "runs/none"])).expect(2);
    assert!(out.stderr.contains("runs/none"), "{}", out.stderr);
    write(
        &t.path().join("runs/2/1-bad.json"),
        b"{\"name\":\"x\",\"testCases\":{\"1\":",
    );
    let out = run(warden(t.path()).args([
        "known-issues",
        "update",
        "--from-results",
        "runs/1",
        "runs/2",
        "--write",
    ]))
    .expect(2);
    assert!(out.stderr.contains("runs/2/1-bad.json"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let files = std::fs::read_dir(t.path().join("known_issues"))
        .unwrap()
        .count();
    assert_eq!(files, 4, "nothing written");
    run(warden(t.path()).args(["hive", "history", "runs/1", "--fixed-after", "0"])).expect(2);
    run(warden(t.path()).args(["known-issues", "update"])).expect(2);
}

/// Real runs: polard's rpc-compat run, then a run where its client failed to launch (and the
/// legacy `rpc` suite did not run at all). That run says nothing about the tests: `?`, not gone.
#[test]
fn a_run_whose_client_did_not_launch_is_not_news() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hive");
    let out = run(warden(&root).args([
        "hive",
        "history",
        "berachain-rpc",
        "berachain-launch-failed",
        "--registry",
        "registry-polard",
        "--format",
        "json",
    ]))
    .expect(0);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let tests = doc["tests"].as_array().unwrap();
    assert!(tests
        .iter()
        .all(|t| t["verdict"] != "gone" && t["verdict"] != "new"));
    let getcode = tests
        .iter()
        .find(|t| t["name"] == "eth_getCode/get-code (polard)")
        .unwrap();
    assert_eq!(getcode["marks"], serde_json::json!(["fail", "not-run"]));
    // One run that ran it cannot tell a flake from a break.
    assert_eq!(getcode["verdict"], "undecided");
    assert_eq!(
        getcode["evidence"]["why"],
        "one run: too few to tell a flake from a break"
    );
}

/// A broken run with thousands of new failures: at most 100 drafts are written, the rest named
/// in one note; a group too large for one draft lists what fits and says how many it left out;
/// every written draft loads.
#[test]
fn drafts_are_capped_in_number_and_size_and_always_load() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("known_issues")).unwrap();
    let mut cases = serde_json::Map::new();
    // 150 groups of one failure each (a signature per group: letters, not numbers, differ).
    for i in 0..150 {
        let word: String = format!("{i:03}")
            .bytes()
            .map(|b| char::from(b'a' + (b - b'0')))
            .collect();
        cases.insert(
            format!("g{i}"),
            serde_json::json!({"name": format!("group/{word} (ethrex)"), "summaryResult": {"pass": false, "details": format!("failure {word}")}}),
        );
    }
    // One group of 5,000 tests with long names: far more than a draft holds.
    let long = "x".repeat(120);
    for i in 0..5000 {
        cases.insert(
            format!("b{i}"),
            serde_json::json!({"name": format!("big/{long}-{i} (ethrex)"), "summaryResult": {"pass": false, "details": "aaa broken"}}),
        );
    }
    write(
        &t.path().join("run/1.json"),
        serde_json::json!({"name": "rpc-compat", "testCases": cases})
            .to_string()
            .as_bytes(),
    );
    let out =
        run(warden(t.path()).args(["known-issues", "update", "--write", "--from-results", "run"]))
            .expect(0);
    let notes: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("more failure groups not drafted") || l.contains("left out"))
        .collect();
    assert_eq!(notes.len(), 2, "{}", out.stdout);
    assert!(notes.iter().any(|l| l.ends_with("known_issues: 51 more failure groups not drafted: at most 100 drafts per update (triage these first, then run it again)")), "{notes:?}");
    assert!(
        notes.iter().any(
            |l| l.contains("5000 new failures in rpc-compat (aaa broken): drafted (")
                && l.ends_with(" left out: a draft holds at most 256 KiB); write why and removal")
        ),
        "{notes:?}"
    );
    let drafts: Vec<_> = std::fs::read_dir(t.path().join("known_issues"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(drafts.len(), 100);
    assert!(drafts
        .iter()
        .all(|d| std::fs::metadata(d).unwrap().len() <= 256 << 10));
    let lint = run(warden(t.path()).args(["known-issues", "lint", "--allow-draft"]));
    assert_eq!(
        lint.stdout.lines().last(),
        Some("known-issues lint: 100 entries, 0 problems"),
        "{}",
        lint.all()
    );
}

/// Issue 40 (first part): each failing test's verdict, interval and onset in the JSON, and
/// `--plan` with what to re-run.
#[test]
fn history_verdicts_say_how_sure_and_plan_what_to_rerun() {
    let t = tempfile::tempdir().unwrap();
    four_runs(t.path());
    registry(t.path());
    let out = run(warden(t.path()).args([
        "hive", "history", "runs/1", "runs/2", "runs/3", "runs/4", "--format", "json",
    ]))
    .expect(0);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let verdict = |name: &str| {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| {
                // The verdict, once, beside what it rests on.
                assert!(t["evidence"].get("verdict").is_none(), "{t}");
                let mut e = t["evidence"].clone();
                e["verdict"] = t["verdict"].clone();
                e
            })
            .unwrap()
    };
    // Failed and passed under one client version and hive commit (runs 1 to 3): flaky, its rate
    // counted there (run 4 has another hive commit).
    assert_eq!(
        verdict("eth_getCode/get-code (polard)"),
        serde_json::json!({"verdict": "flaky", "failed": 2, "ran": 3, "interval": [0.2077, 0.9385], "onset": {"last_pass": 1, "first_fail": 2, "changes": []}, "why": "2 of 3, 21–94 % (of the 3 runs under the versions it both passed and failed under)"})
    );
    // Passed in runs 1 to 3, failed in run 4, the one with another hive commit: new, onset said.
    assert_eq!(
        verdict("eth_call/call-simple-contract (polard)"),
        serde_json::json!({"verdict": "new", "failed": 1, "ran": 4, "onset": {"last_pass": 2, "first_fail": 3, "changes": ["hive 389348a0a7f0 → e429a9470c1f"]}, "why": "new: fails since run 4: hive 389348a0a7f0 → e429a9470c1f; client polard unchanged"})
    );
    let out = run(warden(t.path()).args([
        "hive", "history", "runs/1", "runs/2", "runs/3", "runs/4", "--plan",
    ]))
    .expect(0);
    assert_eq!(
        out.stdout,
        "# rpc-compat: 1 test to re-run 5 times\nrpc-compat/^(?:eth_call/call-simple-contract)(?: \\([^)]*\\))?$\n"
    );
}
