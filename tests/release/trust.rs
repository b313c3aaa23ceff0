//! Issue 34: trust is decided in one place and a key is its bytes. Each attack below is one a key
//! thief (or the holder of a revoked key) made against the binary as it was, when every one of
//! them verified or went unseen; each now fails, and says why.

use std::path::{Path, PathBuf};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use super::verify_release::{file_contents, servers, verify_release};
use crate::common::*;

const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

/// The id of the public key in `file`.
fn id_of(file: &Path) -> String {
    release_warden::release::PublicKey::from_file(file)
        .unwrap()
        .key_id
        .to_string()
}

/// `warden sign` of `what` with the secret key `key`, bound to v1.2.3 of o/r at COMMIT, made
/// outside any workflow run (a laptop).
fn sign_on_laptop(t: &Path, what: &str, key: &Path, extra: &[&str]) {
    run(warden(t)
        .args(["sign", what, "--secret-key"])
        .arg(key)
        .args(["--tag", "v1.2.3", "--repo", "o/r", "--commit", COMMIT])
        .args(extra)
        .env("SOURCE_DATE_EPOCH", "1764460800"))
    .expect(0);
}

/// The release a thief holding the demo key makes in `t/dist`: `SHA256SUMS` signed by a key of
/// their own, and by the real key on a laptop as a "co-signature" `SHA256SUMS.<ID>.minisig`.
fn laptop_cosigned_release(t: &Path) {
    let (_, thief) = keypair(t, "thief");
    write(&t.join("dist/app"), b"the thief's app");
    sign_on_laptop(t, "dist", &thief, &[]);
    std::fs::remove_file(t.join("dist/app.minisig")).unwrap();
    std::fs::create_dir_all(t.join("laptop")).unwrap();
    std::fs::copy(t.join("dist/SHA256SUMS"), t.join("laptop/SHA256SUMS")).unwrap();
    let key = t.join("secret/demo.key");
    sign_on_laptop(t, "laptop/SHA256SUMS", &key, &["--no-checksums"]);
    std::fs::rename(
        t.join("laptop/SHA256SUMS.minisig"),
        t.join(format!("dist/SHA256SUMS.{DEMO_KEY_ID}.minisig")),
    )
    .unwrap();
}

#[test]
fn a_cosignature_does_not_carry_a_laptop_signature_past_require_run() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("keys/policy.toml"), b"require_run = true\n");
    laptop_cosigned_release(t.path());
    let out = run(warden(t.path()).args(["verify", "dist"])).expect(1);
    assert!(
        out.stdout.starts_with("FAIL  dist/SHA256SUMS  "),
        "{}",
        out.stdout
    );
    // Without a run policy, a first signature by a key nobody trusts still fails the list: the
    // pipeline's signature is the first one, and a stranger's in its place is not a co-signer.
    std::fs::remove_file(t.path().join("keys/policy.toml")).unwrap();
    let out = run(warden(t.path()).args(["verify", "dist"])).expect(1);
    assert!(
        out.stdout.starts_with("FAIL  dist/SHA256SUMS  "),
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_laptop_cosignature_fails_verify_release_under_the_repository_s_policy() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    laptop_cosigned_release(t.path());
    let assets = super::verify_release::release_files(&t.path().join("dist"));
    let (api, _storage) = servers(&assets, COMMIT).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/policy.toml"))
        .respond_with(file_contents(b"require_run = true\n"))
        .mount(&api)
        .await;
    let out = verify_release(t.path(), &api, &["--out", "got"])
        .await
        .expect(1);
    assert!(
        out.stdout.starts_with("FAIL  got/SHA256SUMS  "),
        "{}",
        out.stdout
    );
}

/// A folder `keys/` holding the demo key, a downstream user's copy of it in `pinned/`, and a
/// release `dist/` signed by the key in `secret` (id `signer`).
fn downstream(t: &Path, signer: &Path) {
    demo_keys(t);
    std::fs::create_dir_all(t.join("pinned")).unwrap();
    std::fs::copy(t.join("keys/demo.pub"), t.join("pinned/demo.pub")).unwrap();
    write(&t.join("dist/app"), b"the app");
    sign_on_laptop(t, "dist", signer, &[]);
}

/// A key pair that carries the demo key's id but is another key (its bytes differ).
fn look_alike(t: &Path) -> (PathBuf, PathBuf) {
    let (public, secret) = (t.join("look-alike.pub"), t.join("look-alike.key"));
    seeded_keypair(
        &public,
        &secret,
        b"a look-alike of the demo key....",
        DEMO_KEY_ID,
    );
    (public, secret)
}

#[test]
fn a_rotation_signed_by_a_look_alike_key_is_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let (_, thief) = keypair(t.path(), "thief");
    downstream(t.path(), &thief);
    let (_, fake_old) = look_alike(t.path());
    // `keys rotate` itself refuses an old key that is not the one the folder holds under its id.
    let out = run(warden(t.path())
        .args(["keys", "rotate", "--old-secret-key"])
        .arg(&fake_old)
        .arg("--new-secret-key")
        .arg(&thief))
    .expect(2);
    assert!(out.stderr.contains("look-alike"), "{}", out.stderr);
    // Made elsewhere and copied in: the statement verifies on its own, but its old key is not
    // the pinned key, so the chain does not start there.
    std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    run(warden(t.path())
        .args([
            "keys",
            "rotate",
            "--keys-dir",
            "elsewhere",
            "--old-secret-key",
        ])
        .arg(&fake_old)
        .arg("--new-secret-key")
        .arg(&thief))
    .expect(0);
    copy_dir(&t.path().join("elsewhere"), &t.path().join("keys"));
    let out = run(warden(t.path()).args([
        "verify",
        "dist",
        "--public-key",
        "pinned/demo.pub",
        "--follow-rotations",
    ]))
    .expect(1);
    assert!(
        out.stdout.starts_with("FAIL  dist/SHA256SUMS  "),
        "{}",
        out.stdout
    );
    let out = run(warden(t.path()).args(["keys", "list"])).expect(1);
    assert!(out.stdout.contains("look-alike"), "{}", out.stdout);
}

#[test]
fn a_self_revocation_by_a_look_alike_key_revokes_nothing() {
    let t = tempfile::tempdir().unwrap();
    downstream(t.path(), &t.path().join("secret/demo.key"));
    let (_, fake) = look_alike(t.path());
    std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    std::fs::copy(
        t.path().join("look-alike.pub"),
        t.path().join("elsewhere/x.pub"),
    )
    .unwrap();
    run(warden(t.path())
        .args(["keys", "revoke", DEMO_KEY_ID, "--keys-dir", "elsewhere"])
        .args(["--reason", "a stranger's word", "--secret-key"])
        .arg(&fake))
    .expect(0);
    copy_dir(
        &t.path().join("elsewhere/revoked"),
        &t.path().join("keys/revoked"),
    );
    let out = run(warden(t.path()).args(["keys", "list"])).expect(1);
    assert!(out.stdout.contains("look-alike"), "{}", out.stdout);
    // The statement is not the demo key's: it does not revoke it, and a folder holding a
    // statement that does not verify is not used (as any other such statement).
    let out = run(warden(t.path()).args(["verify", "dist"])).expect(2);
    assert!(out.stderr.contains("look-alike"), "{}", out.stderr);
}

#[test]
fn trust_never_passes_through_a_revoked_key() {
    let t = tempfile::tempdir().unwrap();
    let (_, b) = keypair(t.path(), "b");
    let (_, thief) = keypair(t.path(), "thief");
    downstream(t.path(), &thief);
    let demo = t.path().join("secret/demo.key");
    let rotate = |old: &Path, new: &Path, code: i32| {
        run(warden(t.path())
            .args(["keys", "rotate", "--old-secret-key"])
            .arg(old)
            .arg("--new-secret-key")
            .arg(new)
            .env("SOURCE_DATE_EPOCH", "1764460800"))
        .expect(code)
    };
    rotate(&demo, &b, 0);
    // B's holder makes B -> thief while B is still good, then B is revoked (leaked).
    rotate(&b, &thief, 0);
    let b_id = id_of(&t.path().join("b.pub"));
    run(warden(t.path())
        .args([
            "keys",
            "revoke",
            &b_id,
            "--reason",
            "leaked",
            "--secret-key",
        ])
        .arg(&b))
    .expect(0);
    let out = run(warden(t.path()).args([
        "verify",
        "dist",
        "--public-key",
        "pinned/demo.pub",
        "--follow-rotations",
    ]))
    .expect(1);
    assert!(
        out.stdout.starts_with("FAIL  dist/SHA256SUMS  "),
        "{}",
        out.stdout
    );
    let out = run(warden(t.path()).args(["keys", "list"])).expect(1);
    assert!(out.stdout.contains("revoked"), "{}", out.stdout);
    // `keys rotate` refuses a revoked old key.
    let (_, c) = keypair(t.path(), "c");
    std::fs::remove_dir_all(t.path().join("keys/rotations")).unwrap();
    let out = rotate(&b, &c, 2);
    assert!(out.stderr.contains("revoked"), "{}", out.stderr);
}

#[test]
fn one_key_under_two_ids_is_one_signer() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    let seed = b"release-warden README demo key!!";
    let (twin_pub, twin_key) = (t.path().join("twin.pub"), t.path().join("twin.key"));
    seeded_keypair(&twin_pub, &twin_key, seed, "0123456789ABCDEF");
    std::fs::copy(&twin_pub, t.path().join("keys/twin.pub")).unwrap();
    write(&t.path().join("keys/policy.toml"), b"threshold = 2\n");
    write(&t.path().join("dist/app"), b"the app");
    sign_on_laptop(t.path(), "dist", &t.path().join("secret/demo.key"), &[]);
    let out = run(warden(t.path())
        .args(["sign", "--cosign", "dist", "--secret-key"])
        .arg(&twin_key))
    .expect(2);
    assert!(out.stderr.contains("same key"), "{}", out.stderr);
    // Made by hand: the twin's signature named as a co-signature.
    std::fs::create_dir_all(t.path().join("laptop")).unwrap();
    std::fs::copy(
        t.path().join("dist/SHA256SUMS"),
        t.path().join("laptop/SHA256SUMS"),
    )
    .unwrap();
    sign_on_laptop(
        t.path(),
        "laptop/SHA256SUMS",
        &twin_key,
        &["--no-checksums"],
    );
    std::fs::rename(
        t.path().join("laptop/SHA256SUMS.minisig"),
        t.path().join("dist/SHA256SUMS.0123456789ABCDEF.minisig"),
    )
    .unwrap();
    let out = run(warden(t.path()).args(["verify", "dist"]));
    assert_ne!(out.code, 0, "{}", out.all());
    let out = run(warden(t.path()).args(["keys", "list"])).expect(1);
    assert!(out.stdout.contains("same key"), "{}", out.stdout);
}

#[test]
fn a_revocation_beside_a_pinned_key_file_applies() {
    let t = tempfile::tempdir().unwrap();
    downstream(t.path(), &t.path().join("secret/demo.key"));
    run(warden(t.path())
        .args([
            "keys",
            "revoke",
            DEMO_KEY_ID,
            "--reason",
            "leaked",
            "--secret-key",
        ])
        .arg(t.path().join("secret/demo.key")))
    .expect(0);
    // The minisign habit: the key file given by path, its folder's revocation beside it.
    let out =
        run(warden(t.path()).args(["verify", "dist", "--public-key", "keys/demo.pub"])).expect(1);
    assert!(out.stdout.contains("revoked"), "{}", out.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_statement_about_a_key_not_trusted_here_is_noted_and_ignored() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/app"), b"the app");
    sign_on_laptop(t.path(), "dist", &t.path().join("secret/demo.key"), &[]);
    let assets = super::verify_release::release_files(&t.path().join("dist"));
    // The repository revoked an old key of its own with two other keys of its own, none of
    // which this verifier trusts.
    let repo = tempfile::tempdir().unwrap();
    let (old_pub, old) = keypair(repo.path(), "old");
    let (m1_pub, m1) = keypair(repo.path(), "m1");
    let (m2_pub, m2) = keypair(repo.path(), "m2");
    std::fs::create_dir_all(repo.path().join("keys")).unwrap();
    for (p, n) in [(&old_pub, "old"), (&m1_pub, "m1"), (&m2_pub, "m2")] {
        std::fs::copy(p, repo.path().join(format!("keys/{n}.pub"))).unwrap();
    }
    write(&repo.path().join("keys/policy.toml"), b"threshold = 2\n");
    let old_id = id_of(&old_pub);
    for signer in [&m1, &m2] {
        run(warden(repo.path())
            .args([
                "keys",
                "revoke",
                &old_id,
                "--reason",
                "retired",
                "--secret-key",
            ])
            .arg(signer))
        .expect(0);
    }
    drop(old);
    let (api, _storage) = servers(&assets, COMMIT).await;
    let mut listing = Vec::new();
    for entry in std::fs::read_dir(repo.path().join("keys/revoked")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        listing.push(json!({"name": name, "type": "file"}));
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/contents/keys/revoked/{name}")))
            .respond_with(file_contents(&std::fs::read(entry.path()).unwrap()))
            .mount(&api)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/revoked"))
        .respond_with(ResponseTemplate::new(200).set_body_json(listing))
        .mount(&api)
        .await;
    let out = verify_release(
        t.path(),
        &api,
        &["--out", "got", "--public-key", "keys/demo.pub"],
    )
    .await
    .expect(0);
    assert!(out.stderr.contains(&old_id), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_answer_without_a_full_sha_is_an_api_error() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/app"), b"the app");
    let other = "ffffffffffffffffffffffffffffffffffffffff";
    run(warden(t.path())
        .args(["sign", "dist", "--secret-key", "secret/demo.key"])
        .args(["--tag", "v1.2.3", "--repo", "o/r", "--commit", other]))
    .expect(0);
    let assets = super::verify_release::release_files(&t.path().join("dist"));
    for (i, answer) in [
        json!({}),
        json!({"sha": null}),
        json!({"sha": ""}),
        json!({"sha": "3470838e"}),
    ]
    .into_iter()
    .enumerate()
    {
        let (api, _storage) = servers(&assets, COMMIT).await;
        Mock::given(method("GET"))
            .and(path("/repos/o/r/commits/v1.2.3"))
            .respond_with(ResponseTemplate::new(200).set_body_json(answer.clone()))
            .with_priority(1)
            .mount(&api)
            .await;
        let out = verify_release(t.path(), &api, &["--out", &format!("got{i}")])
            .await
            .expect(2);
        assert!(
            out.stderr.contains("/repos/o/r/commits/v1.2.3"),
            "{answer}: {}",
            out.stderr
        );
    }
}
