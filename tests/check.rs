//! `warden check`: the repository's keys parse and have unique key ids.

mod common;

use std::fs;
use std::path::Path;

use common::*;

#[test]
fn this_repository_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run(warden(root).arg("check")).expect(0);
    assert!(
        out.stdout
            .contains("ok    keys         keys/minisign.pub: minisign public key "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("check: 4 passed, 0 failed\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn broken_duplicate_and_missing_keys_fail() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    let out = run(warden(t.path()).args(["check", "--root", "repo"])).expect(1);
    assert!(
        out.stdout.contains("FAIL  keys         keys/:"),
        "{}",
        out.stdout
    );
    fs::create_dir_all(root.join("keys")).unwrap();
    let out = run(warden(t.path()).args(["check", "--root", "repo"])).expect(1);
    assert!(out.stdout.contains("no *.pub file"), "{}", out.stdout);

    let (pk, _) = keypair(t.path(), "a");
    fs::copy(&pk, root.join("keys/a.pub")).unwrap();
    fs::copy(&pk, root.join("keys/copy.pub")).unwrap();
    write(
        &root.join("keys/broken.pub"),
        b"untrusted comment: x\nRWQ\n",
    );
    let out = run(warden(t.path()).args(["check", "--root", "repo"])).expect(1);
    assert!(
        out.stdout.contains(
            "FAIL  keys         keys/broken.pub: line 2: expected 56 base64 characters, found 3"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("appears in keys/a.pub, keys/copy.pub"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("check: 4 passed, 2 failed"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_unsafe_workflow_fails_the_check() {
    let t = tempfile::tempdir().unwrap();
    let (pk, _) = keypair(t.path(), "k");
    fs::create_dir_all(t.path().join("keys")).unwrap();
    fs::rename(&pk, t.path().join("keys/k.pub")).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/workflows/write-all/.github/workflows/release.yml");
    fs::create_dir_all(t.path().join(".github/workflows")).unwrap();
    fs::copy(src, t.path().join(".github/workflows/release.yml")).unwrap();
    let out = run(warden(t.path()).arg("check")).expect(1);
    assert!(out.stdout.contains("FAIL  workflows    .github/workflows/release.yml:11:5 (job sign): signing-job-write-permissions"), "{}", out.stdout);
}
