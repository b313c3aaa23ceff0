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
        out.stdout.contains(
            "ok    binstall     Cargo.toml [package.metadata.binstall.signing]: binstall checks each binary's { url }.minisig against keys/minisign.pub (key 981DB189DCB6BB54)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("check: 6 passed, 0 failed\n"),
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

/// The `binstall` lines of `warden check` in `root`, after writing `manifest` as its Cargo.toml.
fn binstall_lines(root: &Path, manifest: &str) -> String {
    write(&root.join("Cargo.toml"), manifest.as_bytes());
    let out = run(warden(root).arg("check"));
    out.stdout
        .lines()
        .filter(|l| l.contains(" binstall "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn cargo_binstall_must_check_with_a_key_of_keys() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    demo_keys(root);
    let demo = fs::read_to_string(root.join("keys/demo.pub")).unwrap();
    let demo = demo.lines().nth(1).unwrap();
    let head = "[package]\nname = \"app\"\nversion = \"1.0.0\"\n\n[package.metadata.binstall]\npkg-url = \"{ repo }/releases/download/v{ version }/app\"\npkg-fmt = \"bin\"\n";
    let safe = "disabled-strategies = [\"quick-install\", \"compile\"]\n";
    // No binstall metadata: nothing installs, nothing to say.
    assert_eq!(binstall_lines(root, "[package]\nname = \"app\"\n"), "");
    // Metadata without a signing section: binaries installed unchecked.
    assert_eq!(
        binstall_lines(root, &format!("{head}{safe}")),
        "FAIL  binstall     Cargo.toml [package.metadata.binstall]: `cargo binstall` installs this crate's binaries unchecked: add [package.metadata.binstall.signing] with algorithm = \"minisign\", pubkey = the key of keys/ (its second line) and file = \"{ url }.minisig\"\n"
    );
    let signing = |pubkey: &str, file: &str| {
        format!("{head}{safe}\n[package.metadata.binstall.signing]\nalgorithm = \"minisign\"\npubkey = \"{pubkey}\"\n{file}")
    };
    // The key of keys/, at the signature warden writes: checked.
    assert_eq!(
        binstall_lines(root, &signing(demo, "file = \"{ url }.minisig\"\n")),
        format!("ok    binstall     Cargo.toml [package.metadata.binstall.signing]: binstall checks each binary's {{ url }}.minisig against keys/demo.pub (key {DEMO_KEY_ID})\n")
    );
    // binstall's default `{ url }.sig` is a file warden never writes: every install would fail.
    assert_eq!(
        binstall_lines(root, &signing(demo, "")),
        "FAIL  binstall     Cargo.toml [package.metadata.binstall.signing]: file = \"{ url }.sig\": binstall would fetch that, and warden writes FILE.minisig: set file = \"{ url }.minisig\"\n"
    );
    // Without disabled-strategies, a failed signature falls back to a third-party build.
    let open = signing(demo, "file = \"{ url }.minisig\"\n").replace(safe, "");
    assert_eq!(
        binstall_lines(root, &open),
        "ok    binstall     Cargo.toml [package.metadata.binstall.signing]: binstall checks each binary's { url }.minisig against keys/demo.pub (key 8F457D1A3C3B50B5)\nFAIL  binstall     Cargo.toml [package.metadata.binstall]: a binary that fails its signature is not the end: binstall then installs a third-party build (quick-install) that no key here signed; add disabled-strategies = [\"quick-install\", \"compile\"]\n"
    );
    // A key with the demo key's id and other bytes is not the demo key: a key is its bytes.
    seeded_keypair(
        &root.join("look-alike.pub"),
        &root.join("look-alike.key"),
        &[7; 32],
        DEMO_KEY_ID,
    );
    let look_alike = fs::read_to_string(root.join("look-alike.pub")).unwrap();
    let look_alike = look_alike.lines().nth(1).unwrap().to_string();
    fs::remove_file(root.join("look-alike.key")).unwrap();
    assert_eq!(
        binstall_lines(root, &signing(&look_alike, "file = \"{ url }.minisig\"\n")),
        "FAIL  binstall     Cargo.toml [package.metadata.binstall.signing]: pubkey is key 8F457D1A3C3B50B5, which is not a key of keys/ (a key there has its id, and other bytes)\n"
    );
    // A per-target override with its own key is judged too.
    let with_override = format!(
        "{}\n[package.metadata.binstall.overrides.aarch64-apple-darwin.signing]\nalgorithm = \"minisign\"\npubkey = \"{look_alike}\"\nfile = \"{{ url }}.minisig\"\n",
        signing(demo, "file = \"{ url }.minisig\"\n")
    );
    assert_eq!(
        binstall_lines(root, &with_override),
        "ok    binstall     Cargo.toml [package.metadata.binstall.signing]: binstall checks each binary's { url }.minisig against keys/demo.pub (key 8F457D1A3C3B50B5)\nFAIL  binstall     Cargo.toml [package.metadata.binstall.overrides.aarch64-apple-darwin.signing]: pubkey is key 8F457D1A3C3B50B5, which is not a key of keys/ (a key there has its id, and other bytes)\n"
    );
    // A revoked key: binstall would go on accepting what the thief signs.
    revoke_key(root, DEMO_KEY_ID, &root.join("secret/demo.key")).expect(0);
    assert_eq!(
        binstall_lines(root, &signing(demo, "file = \"{ url }.minisig\"\n")),
        "FAIL  binstall     Cargo.toml [package.metadata.binstall.signing]: pubkey is key 8F457D1A3C3B50B5, revoked by keys/revoked/8F457D1A3C3B50B5.toml: binstall would accept binaries signed with it; put the current key\n"
    );
}
