//! `--root DIR` moves every default path (`keys/`, `known_issues/`, the doc, `.github/`) under
//! DIR, for every command that takes it; a path given explicitly stays relative to the working
//! directory. Each command runs from `elsewhere/`, which holds decoys of everything: reading one
//! would change the output.

use std::path::{Path, PathBuf};

use crate::common::*;
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// `repo/`: the ethrex-like checkout with its release workflow and a key; `elsewhere/`: the
/// working directory, with a broken registry, no doc, a broken key and a workflow that signs
/// outside an environment under a different environment name.
fn layout() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    copy_dir(&fixtures().join("ethrex"), &repo);
    // The registry names .github/workflows/tag_release.yaml: a release workflow that passes.
    std::fs::copy(
        fixtures().join("workflows/clean-release/.github/workflows/release.yml"),
        repo.join(".github/workflows/tag_release.yaml"),
    )
    .unwrap();
    demo_keypair(&repo.join("keys/demo.pub"), &t.path().join("demo.key"));
    let elsewhere = t.path().join("elsewhere");
    write(&elsewhere.join("known_issues/broken.toml"), b"title = 1\n");
    write(&elsewhere.join("keys/broken.pub"), b"not a key\n");
    copy_dir(&fixtures().join("workflows/write-all"), &elsewhere);
    t
}

fn in_elsewhere(t: &tempfile::TempDir, args: &[&str]) -> Run {
    run(warden(&t.path().join("elsewhere")).args(args))
}

#[test]
fn check_reads_keys_registry_doc_and_workflows_under_the_root() {
    let t = layout();
    let out = in_elsewhere(&t, &["check", "--root", "../repo"]).expect(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "ok    keys         keys/demo.pub: minisign public key 8F457D1A3C3B50B5",
            "ok    secret-keys  ./: no minisign secret key in 15 files read",
            "ok    known-issues known_issues/: 5 entries lint clean",
            "ok    docs         docs/known_issues.md: in sync with the registry",
            "ok    workflows    .github/workflows/: 1 workflow audited, no finding at medium or above",
            "check: 5 passed, 0 failed",
        ],
        "{}",
        out.stdout
    );
}

#[test]
fn known_issues_commands_read_the_registry_and_doc_under_the_root() {
    let t = layout();
    let out = in_elsewhere(&t, &["known-issues", "lint", "--root", "../repo"]).expect(0);
    assert_eq!(out.stdout, "known-issues lint: 5 entries, 0 problems\n");
    let out = in_elsewhere(
        &t,
        &["known-issues", "render", "--root", "../repo", "--check"],
    );
    assert_eq!(out.stdout, "../repo/docs/known_issues.md is up to date\n");
    assert_eq!(out.code, 0);
    // The same as in the repository itself.
    for args in [
        &["exclusions", "--format", "lines", "--suite", "rpc-compat"][..],
        &["summary", "--format", "text"][..],
    ] {
        let inside = run(warden(&t.path().join("repo"))
            .arg("known-issues")
            .args(args))
        .expect(0);
        let outside = in_elsewhere(
            &t,
            &[
                &["known-issues"],
                &args[..1],
                &["--root", "../repo"],
                &args[1..],
            ]
            .concat(),
        )
        .expect(0);
        assert_eq!(outside.stdout, inside.stdout);
        assert!(inside.stdout.lines().count() > 5, "{}", inside.stdout);
    }
    // Writing the doc goes under the root too.
    std::fs::remove_file(t.path().join("repo/docs/known_issues.md")).unwrap();
    let out = in_elsewhere(&t, &["known-issues", "render", "--root", "../repo"]).expect(0);
    assert_eq!(
        out.stdout,
        "wrote ../repo/docs/known_issues.md (5 entries)\n"
    );
    assert!(!t.path().join("elsewhere/docs").exists());
}

#[test]
fn an_explicit_relative_path_stays_relative_to_the_working_directory() {
    let t = layout();
    let out = in_elsewhere(
        &t,
        &[
            "known-issues",
            "lint",
            "--root",
            "../repo",
            "--registry",
            "known_issues",
        ],
    )
    .expect(1);
    assert!(
        out.stdout
            .starts_with("known_issues/broken.toml:1:9: invalid type"),
        "{}",
        out.stdout
    );
}

#[test]
fn audit_reads_the_workflows_under_the_root() {
    let t = layout();
    let out = in_elsewhere(&t, &["audit", "--offline", "--root", "../repo"]).expect(0);
    assert_eq!(
        out.stdout,
        "audited: workflows from the checkout (../repo); settings not audited (--offline)\nread 1 workflow file, 2 jobs; 1 signing job: tag_release.yaml `sign` (MINISIGN_SECRET_KEY)\n0 findings: 0 high, 0 medium, 0 low, 0 info (--fail-on medium: ok)\n"
    );
    // Without --root, the working directory's own workflow.
    let out = in_elsewhere(&t, &["audit", "--offline"]).expect(1);
    assert!(
        out.stdout.contains("signing-job-write-permissions"),
        "{}",
        out.stdout
    );
}

/// `audit snapshot --root`: the environments to read come from the root's workflows (`release`,
/// not the working directory's).
#[tokio::test(flavor = "multi_thread")]
async fn audit_snapshot_reads_the_environments_the_root_workflows_name() {
    let server = github_with_repository("o/r").await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(404).set_body_json(serde_json::json!({"message": "Not Found"})),
        )
        .mount(&server)
        .await;
    let t = layout();
    let uri = server.uri();
    let dir = t.path().join("elsewhere");
    let out = tokio::task::spawn_blocking(move || {
        run(warden(&dir).env("GH_TOKEN", "t").args([
            "audit",
            "snapshot",
            "--root",
            "../repo",
            "--repo",
            "o/r",
            "--api-url",
            &uri,
            "--out",
            "snap",
        ]))
    })
    .await
    .unwrap()
    .expect(0);
    assert!(out.stdout.starts_with("saved "), "{}", out.stdout);
    let asked: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert!(
        asked.contains(&"/repos/o/r/environments/release/secrets".to_string()),
        "{asked:?}"
    );
    assert!(t
        .path()
        .join("elsewhere/snap/repos/o/r/environments/release/secrets.error.json")
        .is_file());
}
