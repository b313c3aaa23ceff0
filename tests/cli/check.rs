//! `warden check`: the repository's keys parse and have unique key ids.

use std::fs;
use std::path::Path;

use crate::common::*;

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
        out.stdout.ends_with("check: 5 passed, 0 failed\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn broken_duplicate_and_missing_keys_fail() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    // A root that does not exist is bad input, not a repository with nothing in it.
    let out = run(warden(t.path()).args(["check", "--root", "repo"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: repo: no such directory (pass the repository with --root)\n"
    );
    fs::create_dir_all(&root).unwrap();
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
        out.stdout.contains("check: 5 passed, 2 failed"),
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

#[test]
fn a_secret_key_anywhere_in_the_repository_fails_the_check() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    let repo = t.path().join("repo");
    write(&repo.join("keys/k.pub"), &fs::read(&pk).unwrap());
    let secret = fs::read(&sk).unwrap();
    write(&repo.join("keys/k.key"), &secret);
    write(
        &repo.join("deploy/notes.txt"),
        &[b"pasted here:\n".as_slice(), &secret].concat(),
    );
    // Build output is not searched.
    write(&repo.join("target/tmp/k.key"), &secret);
    let (_, enc_sk) = encrypted_keypair(t.path(), "enc", "pw");
    write(&repo.join("ci/enc.key"), &fs::read(enc_sk).unwrap());
    let out = run(warden(&repo).arg("check")).expect(1);
    let failing: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("FAIL"))
        .collect();
    assert_eq!(
        failing,
        [
            "FAIL  secret-keys  ci/enc.key:2: an encrypted minisign secret key is in the repository: delete it, generate a new key pair (`warden keygen`), and remove the old key from git history",
            "FAIL  secret-keys  deploy/notes.txt:3: an unencrypted minisign secret key is in the repository: delete it, generate a new key pair (`warden keygen`), and remove the old key from git history",
            "FAIL  secret-keys  keys/k.key:2: an unencrypted minisign secret key is in the repository: delete it, generate a new key pair (`warden keygen`), and remove the old key from git history",
        ],
        "{}",
        out.stdout
    );
    // On GitHub Actions, each failure is also an annotation on the file and line.
    let out = run(warden(&repo).env("GITHUB_ACTIONS", "true").arg("check")).expect(1);
    assert!(
        out.stdout.contains(
            "::error file=ci/enc.key,line=2,title=warden check secret-keys::ci/enc.key:2: an encrypted minisign secret key is in the repository"
        ),
        "{}",
        out.stdout
    );
    // The key itself is never shown.
    let line = String::from_utf8(secret).unwrap();
    let b64 = line.lines().nth(1).unwrap();
    assert!(!out.all().contains(&b64[..20]), "{}", out.all());
}
