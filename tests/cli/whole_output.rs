//! Whole outputs where the output is the contract: `check`, `verify`, `hive check` (text and
//! markdown), `known-issues lint` and `audit` (settings from a snapshot, with the fix plan), each
//! as a snapshot file holding the command, stdout, stderr and exit status, with temporary paths
//! written `[DIR]`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A repository with something wrong in every check.
fn broken_repository(dir: &Path) {
    copy_dir(&fixtures().join("ethrex"), dir);
    demo_keypair(&dir.join("keys/demo.pub"), &dir.join("ci/leaked.key"));
    fs::copy(dir.join("keys/demo.pub"), dir.join("keys/copy.pub")).unwrap();
    write(&dir.join("keys/broken.pub"), b"untrusted comment: x\nRWQ\n");
    write(
        &dir.join("known_issues/stale.toml"),
        b"title = \"Stale\"\nwhy = \"x\"\nremoval = \"y\"\nreview_by = 2020-01-01\n\n[[where]]\npath = \"crates/gone.rs\"\n",
    );
    fs::create_dir_all(dir.join(".github/workflows")).unwrap();
    fs::copy(
        fixtures().join("workflows/write-all/.github/workflows/release.yml"),
        dir.join(".github/workflows/release.yml"),
    )
    .unwrap();
}

#[test]
fn check_text_and_annotations() {
    let t = tempfile::tempdir().unwrap();
    broken_repository(t.path());
    let mut out = transcript(warden(t.path()).arg("check"), t.path());
    out += &transcript(
        warden(t.path()).env("GITHUB_ACTIONS", "true").arg("check"),
        t.path(),
    );
    insta::assert_snapshot!("check_text", out);
}

#[test]
fn verify_text() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = (
        t.path().join("keys/demo.pub"),
        t.path().join("home/demo.key"),
    );
    demo_keypair(&pk, &sk);
    write(&t.path().join("dist/a.tar.gz"), b"alpha\n");
    write(&t.path().join("dist/b.bin"), b"beta\n");
    run(warden(t.path())
        .env("SOURCE_DATE_EPOCH", "1764460800")
        .args(["sign", "dist", "--tag", "v1.2.3", "--secret-key"])
        .arg(&sk))
    .expect(0);
    let mut out = transcript(
        warden(t.path()).args(["verify", "dist", "--expect-tag", "v1.2.3"]),
        t.path(),
    );
    write(&t.path().join("dist/b.bin"), b"beta, altered\n");
    write(&t.path().join("dist/c.txt"), b"unlisted\n");
    out += &transcript(warden(t.path()).args(["verify", "dist"]), t.path());
    out += &transcript(
        warden(t.path()).args(["verify", "dist/a.tar.gz", "--expect-tag", "v1.2.4"]),
        t.path(),
    );
    insta::assert_snapshot!("verify_text", out);
}

#[test]
fn hive_check_text_and_markdown() {
    let hive = fixtures().join("hive");
    let mut out = String::new();
    for format in ["text", "markdown"] {
        out += &transcript(
            warden(&hive).args([
                "hive",
                "check",
                "current-format",
                "--registry",
                "registry-current",
                "--client",
                "ethrex",
                "--format",
                format,
            ]),
            &hive,
        );
    }
    out += &transcript(
        warden(&hive).args([
            "hive",
            "check",
            "berachain-launch-failed",
            "--registry",
            "registry-polard",
        ]),
        &hive,
    );
    insta::assert_snapshot!("hive_check", out);
}

#[test]
fn known_issues_lint_text() {
    let t = tempfile::tempdir().unwrap();
    broken_repository(&t.path().join("ethrex"));
    write(
        &t.path().join("ethrex/known_issues/typo.toml"),
        b"title = \"x\"\nwhy = \"y\"\nremovall = \"z\"\n",
    );
    let mut out = transcript(
        warden(t.path()).args(["known-issues", "lint", "--root", "ethrex"]),
        t.path(),
    );
    out += &transcript(
        warden(t.path()).env("GITHUB_ACTIONS", "true").args([
            "known-issues",
            "lint",
            "--root",
            "ethrex",
        ]),
        t.path(),
    );
    insta::assert_snapshot!("known_issues_lint", out);
}

#[test]
fn audit_settings_from_a_snapshot_with_the_fix_plan() {
    let root = fixtures().join("workflows/clean-release");
    let snapshot = fixtures().join("github-snapshot");
    let out = transcript(
        warden(&root)
            .args(["audit", "--repo", "o/r", "--fix-plan", "--snapshot"])
            .arg(&snapshot),
        &fixtures(),
    );
    insta::assert_snapshot!("audit_snapshot_text", out);
}
