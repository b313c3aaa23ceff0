//! `warden known-issues …`: lint, render, exclusions and summary on an ethrex-like registry.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ethrex")
}

fn ki(root: &Path, args: &[&str]) -> Run {
    run(warden(root).arg("known-issues").args(args))
}

/// A scratch copy of the ethrex-like repository.
fn scratch() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), t.path());
    t
}

#[test]
fn ethrex_registry_lints_clean_and_its_doc_is_in_sync() {
    let out = ki(&fixture(), &["lint"]).expect(0);
    assert_eq!(out.stdout, "known-issues lint: 5 entries, 0 problems\n");
    let out = ki(&fixture(), &["render", "--check"]).expect(0);
    assert!(out.stdout.contains("up to date"), "{}", out.stdout);
}

#[test]
fn rendered_doc_snapshot() {
    let doc = fs::read_to_string(fixture().join("docs/known_issues.md")).unwrap();
    insta::assert_snapshot!("ethrex_known_issues_md", doc);
}

#[test]
fn render_check_fails_on_a_stale_doc_and_render_rewrites_it() {
    let t = scratch();
    let title = "rpc-compat cases that compare logs are excluded";
    let entry = t
        .path()
        .join("known_issues/rpc-compat-log-block-timestamp.toml");
    let text = fs::read_to_string(&entry)
        .unwrap()
        .replace(title, "Log-bearing rpc-compat cases are excluded");
    fs::write(&entry, text).unwrap();
    let out = ki(t.path(), &["render", "--check"]).expect(1);
    assert!(
        out.stdout.contains("docs/known_issues.md is out of date"),
        "{}",
        out.stdout
    );
    ki(t.path(), &["render"]).expect(0);
    ki(t.path(), &["render", "--check"]).expect(0);
    let doc = fs::read_to_string(t.path().join("docs/known_issues.md")).unwrap();
    assert!(doc.contains("### Log-bearing rpc-compat cases are excluded"));
    assert!(temp_files(&t.path().join("docs")).is_empty());
}

#[test]
fn lint_errors_name_file_line_and_column() {
    let t = scratch();
    let k = t.path().join("known_issues");
    let entry = |name: &str, body: &str| fs::write(k.join(name), body).unwrap();
    let base = "title = \"t\"\nwhy = \"w\"\nremoval = \"r\"\n";
    entry("unknown-key.toml", &format!("{base}owner = \"me\"\n"));
    entry(
        "wrong-type.toml",
        "title = 3\nwhy = \"w\"\nremoval = \"r\"\n",
    );
    entry("missing-why.toml", "title = \"t\"\nremoval = \"r\"\n");
    entry("Bad_Name.toml", base);
    entry("paths.toml", &format!("{base}\n[[where]]\npath = \"nope.rs\"\n\n[[where]]\npath = \"crates/l2/prover/zisk.rs\"\nsymbol = \"NOT_THERE\"\n\n[[coverage]]\npath = \"tests/rpc_logs.rs\"\ntest = \"no_such_test\"\n"));
    entry("expired.toml", &format!("{base}review_by = 2020-01-01\n"));
    entry("escape.toml", &format!("{base}\n[[where]]\npath = \"/etc/passwd\"\nsymbol = \"root\"\n\n[[coverage]]\npath = \"../outside.rs\"\ntest = \"t\"\n"));
    // A link committed into the repository that points out of it is not followed.
    let outside = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    {
        fs::write(outside.path().join("x.rs"), "fn secret_marker() {}").unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.rs"), t.path().join("leak.rs")).unwrap();
        entry(
            "link.toml",
            &format!("{base}\n[[where]]\npath = \"leak.rs\"\nsymbol = \"secret_marker\"\n"),
        );
        // An entry file that is itself such a link is not read either.
        fs::write(outside.path().join("entry.toml"), "title = [secret_marker").unwrap();
        std::os::unix::fs::symlink(outside.path().join("entry.toml"), k.join("linked.toml"))
            .unwrap();
    }
    entry("bad-regex.toml", &format!("{base}\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"x\"\nsignature = \"(unclosed\"\n"));
    entry("duplicate.toml", &format!("{base}\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_getLogs/no-topics\"\n\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_getLogs/*\"\nmatch = \"glob\"\n"));
    entry(
        "suffixed.toml",
        &format!("{base}\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_call/foo (ethrex)\"\n"),
    );
    let out = ki(t.path(), &["lint"]).expect(1);
    let expected = [
        "known_issues/unknown-key.toml:4:1: unknown field `owner`",
        "known_issues/wrong-type.toml:1:9: invalid type: integer `3`, expected a string",
        "known_issues/missing-why.toml:1:1: missing field `why`",
        "known_issues/Bad_Name.toml:1:1: the file name \"Bad_Name\" is the entry id and must be kebab-case",
        "known_issues/paths.toml:6:8: where.path \"nope.rs\" does not exist in the repository",
        "known_issues/paths.toml:10:10: where.symbol \"NOT_THERE\" does not occur in crates/l2/prover/zisk.rs",
        "known_issues/paths.toml:14:8: coverage.test \"no_such_test\": no `fn no_such_test` in tests/rpc_logs.rs",
        "known_issues/expired.toml:4:13: review_by 2020-01-01 is in the past",
        "known_issues/link.toml:6:8: where.path \"leak.rs\" resolves outside the repository or into .git",
        "known_issues/linked.toml: cannot read: resolves outside the repository",
        "known_issues/escape.toml:6:8: where.path \"/etc/passwd\" must be a relative path inside the repository (no `..`, no `.git`, not absolute)",
        "known_issues/escape.toml:10:8: coverage.path \"../outside.rs\" must be a relative path inside the repository (no `..`, no `.git`, not absolute)",
        "known_issues/bad-regex.toml:8:13: exclude[0]: signature is not a valid regex",
        "known_issues/rpc-compat-log-block-timestamp.toml:36:8: rpc-compat/eth_getLogs/no-topics is also excluded by duplicate",
        "known_issues/duplicate.toml:11:8: rpc-compat/eth_getLogs/no-topics is also excluded by rpc-compat-log-block-timestamp",
        "known_issues/duplicate.toml:11:8: rpc-compat/eth_getLogs/no-topics is also excluded by duplicate (known_issues/duplicate.toml)",
        "known_issues/suffixed.toml:7:8: exclude[0]: write the test name without the client suffix",
    ];
    for e in expected {
        assert!(out.stdout.contains(e), "missing {e:?} in:\n{}", out.stdout);
    }
    assert!(
        !out.stdout.contains("::error"),
        "annotations only under GitHub Actions"
    );
    assert!(!out.all().contains("title = [secret_marker"));
    let gha = run(warden(t.path())
        .env("GITHUB_ACTIONS", "true")
        .args(["known-issues", "lint"]))
    .expect(1);
    assert!(gha.stdout.contains("::error file=known_issues/expired.toml,line=4,col=13::review_by 2020-01-01 is in the past"), "{}", gha.stdout);
    // Commands that need a valid registry refuse an invalid one, naming the problem.
    let out = ki(t.path(), &["render"]).expect(2);
    assert!(
        out.stderr.contains("known_issues/Bad_Name.toml")
            || out.stderr.contains("known-issues lint"),
        "{}",
        out.stderr
    );
}

#[test]
fn bash_array_round_trips_hostile_names() {
    let t = tempfile::tempdir().unwrap();
    let k = t.path().join("known_issues");
    fs::create_dir_all(&k).unwrap();
    fs::write(k.join("registry.toml"), "clients = [\"ethrex\"]\n").unwrap();
    let hostile = [
        "quote\"d",
        "dollar$HOME",
        "back`tick`",
        "back\\slash",
        "single'quote",
        "spa ce",
        "glob*?[x]",
        "semi;colon && rm -rf /",
        // A line break is refused by the schema (names are one line): see tests/attacks.rs.
    ];
    let mut body = String::from("title = \"hostile names\"\nwhy = \"w\"\nremoval = \"r\"\n");
    for h in hostile {
        body.push_str(&format!(
            "\n[[exclude]]\nsuite = \"s\"\ntest = {}\n",
            toml_string(h)
        ));
    }
    fs::write(k.join("hostile.toml"), body).unwrap();
    let out = ki(t.path(), &["exclusions", "--format", "bash"]).expect(0);
    fs::write(t.path().join("excluded.sh"), &out.stdout).unwrap();
    let printed = std::process::Command::new("bash")
        .args([
            "-c",
            "source ./excluded.sh && printf '%s\\0' \"${KNOWN_EXCLUDED_TESTS[@]}\"",
        ])
        .current_dir(t.path())
        .output()
        .unwrap();
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let mut got: Vec<String> = String::from_utf8(printed.stdout)
        .unwrap()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let mut want: Vec<String> = hostile.iter().map(|s| s.to_string()).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap() // a JSON string is a valid TOML basic string
}

#[test]
fn reth_yaml_lines_and_json() {
    let out = ki(
        &fixture(),
        &[
            "exclusions",
            "--format",
            "reth-yaml",
            "--suite",
            "rpc-compat",
            "--expect",
            "fail",
        ],
    )
    .expect(0);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("  - "))
        .collect();
    assert_eq!(names.len(), 8, "{}", out.stdout);
    assert!(out.stdout.contains("\"rpc-compat\":\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "  - \"eth_getLogs/contract-addr (ethrex)\"  # rpc-compat-log-block-timestamp\n"
        ),
        "{}",
        out.stdout
    );
    let lines = ki(
        &fixture(),
        &["exclusions", "--format", "lines", "--suite", "rpc-compat"],
    )
    .expect(0);
    assert_eq!(lines.stdout.lines().count(), 8);
    assert!(
        lines
            .stdout
            .starts_with("eth_getBlockReceipts/get-block-receipts-latest\n"),
        "sorted: {}",
        lines.stdout
    );
    let json = ki(&fixture(), &["exclusions", "--format", "json"]).expect(0);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc.as_array().unwrap().len(), 9);
    assert_eq!(doc[0]["id"], "hive-abandoned-cases");
    assert_eq!(doc[0]["match"], "glob");
    // A glob rule cannot become exact reth names without the upstream list.
    let err = ki(&fixture(), &["exclusions", "--format", "reth-yaml"]).expect(2);
    assert!(err.stderr.contains("--tests-from"), "{}", err.stderr);
}

#[test]
fn sim_limit_includes_everything_but_skipped_tests() {
    let t = tempfile::tempdir().unwrap();
    let k = t.path().join("known_issues");
    fs::create_dir_all(&k).unwrap();
    fs::write(k.join("registry.toml"), "clients = [\"ethrex\"]\n").unwrap();
    fs::write(
        k.join("simulate-unsupported.toml"),
        "title = \"t\"\nwhy = \"w\"\nremoval = \"r\"\n\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_simulateV1/\"\nmatch = \"prefix\"\nexpect = \"skip\"\n\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_getLogs/no-topics\"\nexpect = \"skip\"\n",
    )
    .unwrap();
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hive/tests-033ca6e6.tsv");
    let out = ki(
        t.path(),
        &[
            "exclusions",
            "--format",
            "sim-limit",
            "--tests-from",
            list.to_str().unwrap(),
        ],
    )
    .expect(0);
    let pattern = out.stdout.trim();
    let (suite, test) = pattern.split_once('/').unwrap();
    assert_eq!(suite, "rpc-compat");
    // hive compiles each part case-insensitively and unanchored (Go RE2; this syntax is common to both).
    let re = regex::Regex::new(&format!("(?i:{test})")).unwrap();
    let names: Vec<String> = fs::read_to_string(&list)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 233);
    let mut kept = 0;
    for n in &names {
        let skipped = n.starts_with("eth_simulateV1/") || n == "eth_getLogs/no-topics";
        assert_eq!(re.is_match(n), !skipped, "{n}");
        assert_eq!(
            re.is_match(&format!("{n} (ethrex)")),
            !skipped,
            "{n} (ethrex)"
        );
        kept += usize::from(!skipped);
    }
    assert_eq!(kept, 233 - 91 - 1);
    assert!(
        !re.is_match("eth_getLogs/no-topics-extra (ethrex)"),
        "anchored: a longer name is not included"
    );
    let err = ki(t.path(), &["exclusions", "--format", "sim-limit"]).expect(2);
    assert!(err.stderr.contains("--tests-from"), "{}", err.stderr);
}

#[test]
fn summary_is_the_pr_comment_body() {
    let out = ki(&fixture(), &["summary"]).expect(0);
    assert!(
        out.stdout
            .starts_with("## Known issues — intentionally skipped tests\n"),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .trim_end()
        .ends_with("<!-- warden:known-issues -->"));
    assert!(out.stdout.contains("### rpc-compat cases that compare logs are excluded (`rpc-compat-log-block-timestamp`, permanent)"), "{}", out.stdout);
    assert!(out.stdout.contains("Excludes 8 tests."));
    assert!(
        out.stdout
            .contains("ethrex returns `blockTimestamp` on every log object."),
        "first paragraph of why"
    );
    assert!(
        !out.stdout.contains("The pin cannot move"),
        "only the first paragraph"
    );

    // With results: how each excluded test fared; appended to the step summary too.
    let t = tempfile::tempdir().unwrap();
    let step = t.path().join("step.md");
    fs::write(&step, "previous step\n").unwrap();
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hive/current-format");
    let out = run(warden(&fixture())
        .env("GITHUB_STEP_SUMMARY", &step)
        .args(["known-issues", "summary", "--step-summary", "--results"])
        .arg(&results))
    .expect(0);
    assert!(
        out.stdout
            .contains("| `eth_getLogs/contract-addr (ethrex)` | expected fail |"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("| `eth_getLogs/no-topics (ethrex)` | wrong failure |"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("| `eth_getLogs/topic-wildcard (ethrex)` | missing |"),
        "{}",
        out.stdout
    );
    let appended = fs::read_to_string(&step).unwrap();
    assert!(
        appended.starts_with("previous step\n## Known issues"),
        "{appended}"
    );
    let text = ki(&fixture(), &["summary", "--format", "text"]).expect(0);
    assert!(
        !text.stdout.contains("<!--") && !text.stdout.contains("##"),
        "{}",
        text.stdout
    );
    let err = ki(&fixture(), &["summary", "--step-summary"]).expect(2);
    assert!(err.stderr.contains("GITHUB_STEP_SUMMARY"), "{}", err.stderr);
}

#[test]
fn check_fails_on_a_broken_entry_or_a_stale_doc() {
    let t = scratch();
    // The scratch repository needs a key for `check` to look at only its registry problems.
    let (pk, _) = keypair(t.path(), "k");
    fs::create_dir_all(t.path().join("keys")).unwrap();
    fs::rename(&pk, t.path().join("keys/k.pub")).unwrap();
    // The ethrex-like repository has ethrex's real problem (the key outside an environment); the
    // registry and doc checks pass on their own lines.
    let out = run(warden(t.path()).arg("check")).expect(1);
    assert!(
        out.stdout
            .contains("ok    known-issues known_issues/: 5 entries lint clean"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("ok    docs         docs/known_issues.md: in sync"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("FAIL  workflows    .github/workflows/tag_release.yaml:9:3 (job finalize-release): signing-secret-outside-environment"), "{}", out.stdout);
    fs::write(t.path().join("docs/known_issues.md"), "stale\n").unwrap();
    let out = run(warden(t.path()).arg("check")).expect(1);
    assert!(
        out.stdout
            .contains("FAIL  docs         docs/known_issues.md: out of date"),
        "{}",
        out.stdout
    );
    ki(t.path(), &["render"]).expect(0);
    fs::write(
        t.path().join("known_issues/zisk-guest-program-hash.toml"),
        "title = \"x\"\n",
    )
    .unwrap();
    let out = run(warden(t.path()).arg("check")).expect(1);
    assert!(
        out.stdout.contains(
            "FAIL  known-issues known_issues/zisk-guest-program-hash.toml:1:1: missing field `why`"
        ),
        "{}",
        out.stdout
    );
}
