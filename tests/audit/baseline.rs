//! `warden audit --baseline FILE`: only new findings count; gone ones are listed; a job moved
//! within its file is the same finding.

use std::path::Path;

use crate::common::*;

const SIGN_PR: &str = r#"name: sign preview
on:
  pull_request_target:
    types: [labeled]
permissions: {}
jobs:
  sign:
    runs-on: ubuntu-latest
    environment: release
    permissions:
      contents: read
    steps:
      - run: echo "$KEY" | warden sign dist/ --secret-key-stdin
        env:
          KEY: ${{ secrets['MINISIGN_SECRET_KEY'] }}
"#;

/// The same workflow with a job added above the signing job: every line of it moves.
fn sign_pr_moved() -> String {
    SIGN_PR.replace(
        "jobs:\n",
        "jobs:\n  # A job added above: the signing job's lines all move.\n  lint:\n    runs-on: ubuntu-latest\n    permissions:\n      contents: read\n    steps:\n      - run: echo lint\n",
    )
}

/// From `tests/fixtures/workflows/write-all`: a signing job with `permissions: write-all`.
const RELEASE_WRITE_ALL: &str = r#"name: release
on:
  push:
    tags: ["release-*"]
jobs:
  sign:
    runs-on: ubuntu-latest
    environment:
      name: release
      url: https://example.org
    permissions: write-all
    steps:
      - run: warden sign dist/ --secret-key-env GPG_SIGNING_KEY
        env:
          GPG_SIGNING_KEY: ${{ secrets.GPG_SIGNING_KEY }}
"#;

fn audit(dir: &Path, extra: &[&str]) -> Run {
    let mut cmd = warden(dir);
    cmd.args(["audit", "--offline", "--root", "repo"])
        .args(extra);
    run(&mut cmd)
}

#[test]
fn baseline_shows_new_and_gone_findings_and_ignores_moves() {
    let t = tempfile::tempdir().unwrap();
    let wf = t.path().join("repo/.github/workflows");
    write(&wf.join("sign-pr.yml"), SIGN_PR.as_bytes());
    let base = audit(t.path(), &["--format", "json"]).expect(1);
    write(&t.path().join("base.json"), base.stdout.as_bytes());
    let findings = serde_json::from_str::<serde_json::Value>(&base.stdout).unwrap()["findings"]
        .as_array()
        .unwrap()
        .len();
    assert!(findings > 0);

    // Unchanged, and then with the job moved down the file: nothing new, exit 0.
    for (text, jobs) in [(SIGN_PR.to_string(), "1 job"), (sign_pr_moved(), "2 jobs")] {
        write(&wf.join("sign-pr.yml"), text.as_bytes());
        let out = audit(t.path(), &["--baseline", "base.json"]).expect(0);
        assert_eq!(
            out.stdout,
            format!("audited: workflows from the checkout (repo); settings not audited (--offline)\nread 1 workflow file, {jobs}; 1 signing job: sign-pr.yml `sign` (MINISIGN_SECRET_KEY)\nnew 0 findings: 0 high, 0 medium, 0 low, 0 info; baseline base.json: {findings} unchanged, 0 gone (--fail-on medium: ok)\n")
        );
    }

    // A new workflow with a new finding: it alone is shown, and fails.
    write(&wf.join("release.yml"), RELEASE_WRITE_ALL.as_bytes());
    let out = audit(t.path(), &["--baseline", "base.json"]).expect(1);
    insta::assert_snapshot!(out.stdout);

    // The old workflow removed: its findings are gone, the exit status follows the new ones.
    std::fs::remove_file(wf.join("sign-pr.yml")).unwrap();
    let out = audit(t.path(), &["--baseline", "base.json", "--format", "json"]).expect(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["baseline"]["unchanged"], 0);
    assert_eq!(doc["baseline"]["gone"].as_array().unwrap().len(), findings);
    assert_eq!(
        doc["baseline"]["gone"][0]["location"]
            .as_str()
            .map(|l| l.starts_with(".github/workflows/sign-pr.yml:")),
        Some(true)
    );

    // A baseline that is not a report is bad input.
    write(&t.path().join("bad.json"), b"{\"findings\": []}");
    let out = audit(t.path(), &["--baseline", "bad.json"]).expect(2);
    assert!(out.stderr.contains("bad.json"), "{}", out.stderr);
}

/// A signing job that runs one third-party action by a tag, then (the baseline recorded) a
/// different one, or the same finding at a higher severity.
const UNPINNED: &str = r#"name: release
on:
  push:
    tags: ["v*"]
permissions:
  contents: read
jobs:
  sign:
    runs-on: ubuntu-latest
    environment: release
    steps:
      - uses: example/setup-signer@v1
      - run: minisign -S -s key -m dist/app
        env:
          MINISIGN_SECRET_KEY: ${{ secrets.MINISIGN_SECRET_KEY }}
      - uses: actions/attest-build-provenance@977bb373ede98d70efbf0b7b13af9c3d6651dc60 # v4.1.0
        with:
          subject-path: dist/app
"#;

/// A baseline entry hides only the same finding: the same action (or expression, or trigger),
/// at most as severe as it was recorded.
#[test]
fn a_baseline_never_hides_another_subject_or_a_more_severe_finding() {
    let t = tempfile::tempdir().unwrap();
    let wf = t.path().join("repo/.github/workflows");
    write(&wf.join("release.yml"), UNPINNED.as_bytes());
    let base = audit(t.path(), &["--format", "json"]).expect(1);
    let recorded: serde_json::Value = serde_json::from_str(&base.stdout).unwrap();
    let finding = &recorded["findings"][0];
    assert_eq!(finding["id"], "signing-job-unpinned-action");
    assert_eq!(finding["subject"], "example/setup-signer@v1");
    assert_eq!(recorded["findings"].as_array().unwrap().len(), 1);
    write(&t.path().join("base.json"), base.stdout.as_bytes());
    audit(t.path(), &["--baseline", "base.json"]).expect(0);

    // Another unpinned action in its place: the same rule, job and key, another subject.
    write(
        &wf.join("release.yml"),
        UNPINNED
            .replace("example/setup-signer@v1", "other/tool@main")
            .as_bytes(),
    );
    let out = audit(t.path(), &["--baseline", "base.json", "--format", "json"]).expect(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["findings"][0]["subject"], "other/tool@main");
    assert_eq!(doc["baseline"]["gone"].as_array().unwrap().len(), 1);

    // The same finding, recorded at a lower severity than it has now: new.
    write(&wf.join("release.yml"), UNPINNED.as_bytes());
    assert_eq!(finding["severity"], "high");
    let mut lower = recorded.clone();
    lower["findings"][0]["severity"] = "medium".into();
    write(&t.path().join("lower.json"), lower.to_string().as_bytes());
    let out = audit(t.path(), &["--baseline", "lower.json", "--format", "json"]).expect(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["findings"][0]["severity"], "high");
    assert_eq!(doc["baseline"]["unchanged"], 0);
    // Recorded at least as severe as it is now (the first run above): the same finding.
}
