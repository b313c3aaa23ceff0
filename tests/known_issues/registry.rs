//! `warden known-issues …`: lint, render, exclusions and summary on an ethrex-like registry.
//! Where the output is the contract, the whole transcript (command, stdout, stderr, exit) is a
//! snapshot; behaviour that is not output (a bash array read back, a regex's matches) is checked
//! as such.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ethrex")
}

fn ki(root: &Path, args: &[&str]) -> Run {
    run(warden(root).arg("known-issues").args(args))
}

/// The transcript of `warden known-issues ARGS` run in `root` (written `[DIR]`).
fn ki_transcript(root: &Path, args: &[&str]) -> String {
    transcript(warden(root).arg("known-issues").args(args), root)
}

/// A scratch copy of the ethrex-like repository.
fn scratch() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), t.path());
    t
}

#[test]
fn ethrex_registry_lints_clean_and_its_doc_is_in_sync() {
    let mut out = ki_transcript(&fixture(), &["lint"]);
    out += &ki_transcript(&fixture(), &["render", "--check"]);
    insta::assert_snapshot!(out);
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
    let mut out = ki_transcript(t.path(), &["render", "--check"]);
    out += &ki_transcript(t.path(), &["render"]);
    out += &ki_transcript(t.path(), &["render", "--check"]);
    insta::assert_snapshot!(out);
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
    let mut out = ki_transcript(t.path(), &["lint"]);
    out += &transcript(
        warden(t.path())
            .env("GITHUB_ACTIONS", "true")
            .args(["known-issues", "lint"]),
        t.path(),
    );
    // Commands that need a valid registry refuse an invalid one, naming the problem.
    out += &ki_transcript(t.path(), &["render"]);
    assert!(!out.contains("title = [secret_marker"), "{out}");
    insta::assert_snapshot!(out);
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

/// reth's YAML (exact names with the client suffix, the entry id as a comment), plain lines
/// (sorted), JSON; a glob rule cannot become exact reth names without the upstream list.
#[test]
fn reth_yaml_lines_and_json() {
    let f = fixture();
    let mut out = ki_transcript(
        &f,
        &[
            "exclusions",
            "--format",
            "reth-yaml",
            "--suite",
            "rpc-compat",
            "--expect",
            "fail",
        ],
    );
    out += &ki_transcript(
        &f,
        &["exclusions", "--format", "lines", "--suite", "rpc-compat"],
    );
    out += &ki_transcript(&f, &["exclusions", "--format", "json"]);
    out += &ki_transcript(&f, &["exclusions", "--format", "reth-yaml"]);
    insta::assert_snapshot!(out);
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

/// A typo'd `--suite` or `--client` is an error naming what the registry knows, not an empty list
/// that turns every hive exclusion off; a suite with no entry yet is declared in registry.toml.
#[test]
fn an_unknown_suite_or_client_is_an_error_naming_the_known_ones() {
    let t = scratch();
    let out = ki(
        t.path(),
        &["exclusions", "--format", "bash", "--suite", "rpc-compt"],
    )
    .expect(2);
    assert_eq!(
        out.all(),
        "warden: --suite rpc-compt: the registry knows no suite of that name (its suites: engine-api, rpc-compat); a suite with no entry yet goes in registry.toml's `suites`\n"
    );
    let out = ki(
        t.path(),
        &["exclusions", "--format", "json", "--client", "reth"],
    )
    .expect(2);
    assert_eq!(
        out.all(),
        "warden: --client reth: the registry knows no client of that name (its clients: ethrex)\n"
    );
    let settings = t.path().join("known_issues/registry.toml");
    let text = std::fs::read_to_string(&settings).unwrap();
    write(&settings, format!("suites = [\"eth\"]\n{text}").as_bytes());
    let out = ki(
        t.path(),
        &["exclusions", "--format", "bash", "--suite", "eth"],
    )
    .expect(0);
    assert_eq!(
        out.all(),
        "# Generated by `warden known-issues exclusions` from the known-issues registry. Do not edit.\nKNOWN_EXCLUDED_TESTS=(\n)\n"
    );
    ki(t.path(), &["lint"]).expect(0);
}

/// The PR comment body (markdown, the first paragraph of each `why`, the marker last), with a
/// hive run's outcome for each excluded test, appended to the step summary; the text form.
#[test]
fn summary_is_the_pr_comment_body() {
    let f = fixture();
    let mut out = ki_transcript(&f, &["summary"]);
    let t = tempfile::tempdir().unwrap();
    let step = t.path().join("step.md");
    fs::write(&step, "previous step\n").unwrap();
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hive/current-format");
    let with_results = transcript(
        warden(&f)
            .env("GITHUB_STEP_SUMMARY", &step)
            .args(["known-issues", "summary", "--step-summary", "--results"])
            .arg(&results),
        t.path(),
    );
    let repo = env!("CARGO_MANIFEST_DIR");
    let appended = fs::read_to_string(&step).unwrap().replace(repo, "[REPO]");
    // The step summary gets the markdown the command printed, after what was there.
    let printed = with_results.split_once('\n').unwrap().1;
    assert_eq!(
        appended,
        format!(
            "previous step\n{}\n",
            printed.strip_suffix("--- exit 0\n").unwrap()
        )
    );
    out += &with_results;
    out += &ki_transcript(&f, &["summary", "--format", "text"]);
    out += &ki_transcript(&f, &["summary", "--step-summary"]);
    insta::assert_snapshot!(out);
}

/// `warden check` on the ethrex-like repository: its real problem (the key outside an
/// environment) fails the workflows line; a stale doc and a broken entry fail their own lines.
#[test]
fn check_fails_on_a_broken_entry_or_a_stale_doc() {
    let t = scratch();
    let secret = tempfile::tempdir().unwrap();
    demo_keypair(&t.path().join("keys/k.pub"), &secret.path().join("k.key"));
    let mut out = transcript(warden(t.path()).arg("check"), t.path());
    fs::write(t.path().join("docs/known_issues.md"), "stale\n").unwrap();
    out += &transcript(warden(t.path()).arg("check"), t.path());
    ki(t.path(), &["render"]).expect(0);
    fs::write(
        t.path().join("known_issues/zisk-guest-program-hash.toml"),
        "title = \"x\"\n",
    )
    .unwrap();
    out += &transcript(warden(t.path()).arg("check"), t.path());
    insta::assert_snapshot!(out);
}

/// A committed `known_issues -> ../outside` link: lint, summary, check and `update --write`
/// refuse it (exit 2) and nothing outside is read or written. A link inside the checkout is fine.
#[test]
#[cfg(unix)]
fn a_registry_folder_linked_out_of_the_checkout_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let checkout = t.path().join("checkout");
    let outside = t.path().join("outside");
    std::fs::create_dir_all(&checkout).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    write(
        &outside.join("private-entry.toml"),
        b"title = \"outside secret\"\n",
    );
    std::os::unix::fs::symlink("../outside", checkout.join("known_issues")).unwrap();
    let why = format!(
        "the registry folder is a link to {}, outside {}: refusing to read or write there",
        outside.canonicalize().unwrap().display(),
        checkout.canonicalize().unwrap().display()
    );
    for args in [
        vec!["known-issues", "lint"],
        vec!["known-issues", "summary"],
        vec!["check"],
    ] {
        let out = run(warden(&checkout).args(&args));
        assert!(out.code == 1 || out.code == 2, "{args:?}: {}", out.all());
        assert!(out.all().contains(&why), "{args:?}: {}", out.all());
        assert!(!out.all().contains("outside secret"), "{args:?}");
    }
    // A run whose unlisted failure would become a draft entry in the registry folder.
    write(
        &checkout.join("results/1.json"),
        br#"{"name": "rpc-compat", "testCases": {"1": {"name": "eth_call/a (ethrex)", "summaryResult": {"pass": false, "details": "boom"}}}}"#,
    );
    let before = std::fs::read_dir(&outside).unwrap().count();
    let out = run(warden(&checkout).args([
        "known-issues",
        "update",
        "--write",
        "--from-results",
        "results",
    ]));
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(out.all().contains(&why), "{}", out.all());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), before);

    // A link to a folder inside the checkout is read as usual.
    std::fs::remove_file(checkout.join("known_issues")).unwrap();
    std::fs::create_dir_all(checkout.join("ci/known_issues")).unwrap();
    std::os::unix::fs::symlink("ci/known_issues", checkout.join("known_issues")).unwrap();
    let out = run(warden(&checkout).args(["known-issues", "lint"])).expect(0);
    assert_eq!(out.stdout, "known-issues lint: 0 entries, 0 problems\n");
}
