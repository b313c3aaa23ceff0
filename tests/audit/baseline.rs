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
    for text in [SIGN_PR.to_string(), sign_pr_moved()] {
        write(&wf.join("sign-pr.yml"), text.as_bytes());
        let out = audit(t.path(), &["--baseline", "base.json"]).expect(0);
        assert_eq!(
            out.stdout,
            format!("new 0 findings: 0 high, 0 medium, 0 low, 0 info; baseline base.json: {findings} unchanged, 0 gone (--fail-on medium: ok)\n")
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
