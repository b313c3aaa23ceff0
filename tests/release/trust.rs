//! Issue 34: trust is decided in one place and a key is its bytes. Each attack below is one a key
//! thief (or the holder of a revoked key) made against the binary as it was, when every one of
//! them verified or went unseen; each now fails, and says why. Keys are made from fixed seeds,
//! so every output is asserted whole.

use std::path::{Path, PathBuf};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use super::verify_release::{file_contents, serve_revocations, servers, verify_release};
use crate::common::*;

const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

/// A key pair of `t` named `name` (`t/name.pub`, `t/name.key`), made from a seed of its name and
/// labelled `id`.
fn key(t: &Path, name: &str, id: &str) -> PathBuf {
    let mut seed = [b'.'; 32];
    seed[..name.len()].copy_from_slice(name.as_bytes());
    seeded_keypair(
        &t.join(format!("{name}.pub")),
        &t.join(format!("{name}.key")),
        &seed,
        id,
    );
    t.join(format!("{name}.key"))
}

const THIEF: &str = "7A1EF000000000A1";
const BOB: &str = "B0B00000000000B0";

/// `warden ARGS` in `t`.
fn warden_in(t: &Path, args: &[&str]) -> Run {
    run(warden(t).args(args))
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

/// `t/dist/SHA256SUMS` signed with `key` on a laptop, put beside it as the co-signature of `id`.
fn cosign_on_laptop(t: &Path, key: &Path, id: &str) {
    std::fs::create_dir_all(t.join("laptop")).unwrap();
    std::fs::copy(t.join("dist/SHA256SUMS"), t.join("laptop/SHA256SUMS")).unwrap();
    sign_on_laptop(t, "laptop/SHA256SUMS", key, &["--no-checksums"]);
    std::fs::rename(
        t.join("laptop/SHA256SUMS.minisig"),
        t.join(format!("dist/SHA256SUMS.{id}.minisig")),
    )
    .unwrap();
}

/// The release a thief holding the demo key makes in `t/dist`: `SHA256SUMS` signed by a key of
/// their own, and by the real key on a laptop as a "co-signature" `SHA256SUMS.<ID>.minisig`.
fn laptop_cosigned_release(t: &Path) {
    let thief = key(t, "thief", THIEF);
    write(&t.join("dist/app"), b"the thief's app");
    sign_on_laptop(t, "dist", &thief, &[]);
    std::fs::remove_file(t.join("dist/app.minisig")).unwrap();
    cosign_on_laptop(t, &t.join("secret/demo.key"), DEMO_KEY_ID);
}

#[test]
fn a_cosignature_does_not_carry_a_laptop_signature_past_require_run() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("keys/policy.toml"), b"require_run = true\n");
    laptop_cosigned_release(t.path());
    let out = warden_in(t.path(), &["verify", "dist"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  signed by key {THIEF}, which is not trusted (trusted: {DEMO_KEY_ID})\nFAIL  dist/app  not verified: dist/SHA256SUMS did not verify, and there is no dist/app.minisig\n0 verified, 2 failed, 0 errors\n")
    );
    // Without a run policy, a first signature by a key nobody trusts still fails the list: the
    // pipeline's signature is the first one, and a stranger's in its place is not a co-signer.
    std::fs::remove_file(t.path().join("keys/policy.toml")).unwrap();
    let again = warden_in(t.path(), &["verify", "dist"]).expect(1);
    assert_eq!(again.stdout, out.stdout);
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
    let untrusted = format!("signed by key {THIEF}, which is not trusted (trusted: {DEMO_KEY_ID})");
    assert_eq!(
        out.stdout,
        format!("FAIL  got/SHA256SUMS  {untrusted}\nFAIL  got/app  not downloaded: SHA256SUMS does not verify ({untrusted})\n0 verified, 2 failed, 0 errors\n")
    );
}

/// A folder `keys/` holding the demo key, a downstream user's copy of it in `pinned/`, and a
/// release `dist/` signed by `signer`.
fn downstream(t: &Path, signer: &Path) {
    demo_keys(t);
    std::fs::create_dir_all(t.join("pinned")).unwrap();
    std::fs::copy(t.join("keys/demo.pub"), t.join("pinned/demo.pub")).unwrap();
    write(&t.join("dist/app"), b"the app");
    sign_on_laptop(t, "dist", signer, &[]);
}

/// `verify dist` with the pinned demo key, following the rotations of `keys/`.
fn verify_pinned(t: &Path) -> Run {
    warden_in(
        t,
        &[
            "verify",
            "dist",
            "--public-key",
            "pinned/demo.pub",
            "--follow-rotations",
        ],
    )
}

/// `keys rotate` in `t` (into `keys_dir`) from `old` to `new`.
fn rotate(t: &Path, keys_dir: &str, (old, new): (&Path, &Path)) -> Run {
    run(warden(t)
        .args(["keys", "rotate", "--keys-dir", keys_dir, "--old-secret-key"])
        .arg(old)
        .arg("--new-secret-key")
        .arg(new)
        .env("SOURCE_DATE_EPOCH", "1764460800"))
}

/// The thief's release line when the thief's key is not trusted: what every rejected chain says.
fn untrusted_thief(trusted: &str) -> String {
    format!("FAIL  dist/SHA256SUMS  signed by key {THIEF}, which is not trusted (trusted: {trusted})\nFAIL  dist/app  signed by key {THIEF}, which is not trusted (trusted: {trusted})\n0 verified, 2 failed, 0 errors\n")
}

#[test]
fn a_rotation_signed_by_a_look_alike_key_is_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let thief = key(t.path(), "thief", THIEF);
    downstream(t.path(), &thief);
    // A key pair that carries the demo key's id but is another key (its bytes differ).
    let fake_old = key(t.path(), "look-alike", DEMO_KEY_ID);
    // `keys rotate` itself refuses an old key that is not the one the folder holds under its id.
    let out = rotate(t.path(), "keys", (&fake_old, &thief)).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: the old secret key carries the id {DEMO_KEY_ID} but is another key than the one keys/demo.pub holds under that id (a look-alike): nothing rotated\n")
    );
    // Made elsewhere and copied in: the statement verifies on its own, but its old key is not
    // the pinned key, so the chain does not start there.
    std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    rotate(t.path(), "elsewhere", (&fake_old, &thief)).expect(0);
    copy_dir(&t.path().join("elsewhere"), &t.path().join("keys"));
    let statement = format!("keys/rotations/{DEMO_KEY_ID}-{THIEF}.toml");
    let out = verify_pinned(t.path()).expect(1);
    assert_eq!(out.stdout, untrusted_thief(DEMO_KEY_ID));
    assert_eq!(
        out.stderr,
        format!("warden: warning: {statement}: its old key carries the id {DEMO_KEY_ID} but is not the key trusted under that id (a look-alike): not followed\n")
    );
    let out = warden_in(t.path(), &["keys", "list"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("trusted  {THIEF}  keys/{THIEF}.pub\ntrusted  {DEMO_KEY_ID}  keys/demo.pub\nrotated  {DEMO_KEY_ID} -> {THIEF}  at 2025-11-30T00:00:00Z ({statement})\nFAIL     {statement}: its old key carries the id {DEMO_KEY_ID} but is not the folder's key under that id (a look-alike): not followed\nkeys: not usable until this is fixed\n")
    );
}

#[test]
fn a_self_revocation_by_a_look_alike_key_revokes_nothing() {
    let t = tempfile::tempdir().unwrap();
    downstream(t.path(), &t.path().join("secret/demo.key"));
    let fake = key(t.path(), "look-alike", DEMO_KEY_ID);
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
    // In the folder that holds the real key, `keys revoke` refuses the look-alike outright.
    let out = run(warden(t.path())
        .args([
            "keys",
            "revoke",
            DEMO_KEY_ID,
            "--reason",
            "x",
            "--secret-key",
        ])
        .arg(&fake))
    .expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: the secret key carries the id {DEMO_KEY_ID} but is not the key keys holds under that id (a look-alike): nothing revoked\n")
    );
    copy_dir(
        &t.path().join("elsewhere/revoked"),
        &t.path().join("keys/revoked"),
    );
    let why = format!("keys/revoked/{DEMO_KEY_ID}.toml: its public_key carries the id {DEMO_KEY_ID} but is another key than the one trusted under that id (a look-alike): as a statement about {DEMO_KEY_ID} by another key, keys/revoked/{DEMO_KEY_ID}.toml.minisig: signed by key {DEMO_KEY_ID}, neither the revoked key nor a key trusted here");
    let out = warden_in(t.path(), &["keys", "list"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL     {why}\nkeys: not usable until this is fixed\n")
    );
    // The statement is not the demo key's: it does not revoke it, and a folder holding a
    // statement that does not verify is not used (as any other such statement).
    let out = warden_in(t.path(), &["verify", "dist"]).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: loading trusted keys (pass --public-key FILE or --keys-dir DIR): {why}\n")
    );
}

#[test]
fn trust_never_passes_through_a_revoked_key() {
    let t = tempfile::tempdir().unwrap();
    let bob = key(t.path(), "bob", BOB);
    let thief = key(t.path(), "thief", THIEF);
    downstream(t.path(), &thief);
    let demo = t.path().join("secret/demo.key");
    rotate(t.path(), "keys", (&demo, &bob)).expect(0);
    // Bob's holder makes bob -> thief while bob is still good, then bob is revoked (leaked).
    rotate(t.path(), "keys", (&bob, &thief)).expect(0);
    revoke_key(t.path(), BOB, &bob).expect(0);
    let out = verify_pinned(t.path()).expect(1);
    assert_eq!(out.stdout, untrusted_thief(DEMO_KEY_ID));
    let out = warden_in(t.path(), &["keys", "list"]).expect(1);
    let from_bob = format!("keys/rotations/{BOB}-{THIEF}.toml");
    assert_eq!(
        out.stdout,
        format!("trusted  {THIEF}  keys/{THIEF}.pub\ntrusted  {DEMO_KEY_ID}  keys/demo.pub\nrevoked  {BOB}  at 2025-12-02T03:00:10Z: leaked (signed by itself; keys/revoked/{BOB}.toml)\nrotated  {DEMO_KEY_ID} -> {BOB}  at 2025-11-30T00:00:00Z (keys/rotations/{DEMO_KEY_ID}-{BOB}.toml)\nrotated  {BOB} -> {THIEF}  at 2025-11-30T00:00:00Z ({from_bob})\nsigner   {THIEF}, {DEMO_KEY_ID} are one signer: a key and its successors count once ({from_bob}, keys/rotations/{DEMO_KEY_ID}-{BOB}.toml)\nFAIL     {from_bob}: a rotation out of revoked key {BOB}: trust does not pass through a revoked key, so it is not followed\nkeys: not usable until this is fixed\n")
    );
    // `keys rotate` refuses a revoked old key.
    let carol = key(t.path(), "carol", "CA201000000000CA");
    std::fs::remove_file(t.path().join(&from_bob)).unwrap();
    let out = rotate(t.path(), "keys", (&bob, &carol)).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: key {BOB} is revoked (leaked; keys/revoked/{BOB}.toml): trust does not pass through a revoked key, so it cannot rotate to a successor\n")
    );
}

#[test]
fn one_key_under_two_ids_is_one_signer() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    // The demo key's seed, labelled with another id: the same key under two ids.
    let (twin_pub, twin_key) = (t.path().join("twin.pub"), t.path().join("twin.key"));
    seeded_keypair(
        &twin_pub,
        &twin_key,
        b"release-warden README demo key!!",
        "0123456789ABCDEF",
    );
    std::fs::copy(&twin_pub, t.path().join("keys/twin.pub")).unwrap();
    write(&t.path().join("keys/policy.toml"), b"threshold = 2\n");
    write(&t.path().join("dist/app"), b"the app");
    sign_on_laptop(t.path(), "dist", &t.path().join("secret/demo.key"), &[]);
    let why = format!("keys/twin.pub: key 0123456789ABCDEF is the same key as {DEMO_KEY_ID} in keys/demo.pub under another id: one key under two ids would count as two signers");
    let out = run(warden(t.path())
        .args(["sign", "--cosign", "dist", "--secret-key"])
        .arg(&twin_key))
    .expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: loading the keys folder (pass --keys-dir DIR): {why}\n")
    );
    // Made by hand: the twin's signature named as a co-signature. The folder does not load.
    cosign_on_laptop(t.path(), &twin_key, "0123456789ABCDEF");
    let out = warden_in(t.path(), &["verify", "dist"]).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: loading trusted keys (pass --public-key FILE or --keys-dir DIR): {why}\n")
    );
    let out = warden_in(t.path(), &["keys", "list"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL     {why}\nkeys: not usable until this is fixed\n")
    );
}

#[test]
fn a_revocation_beside_a_pinned_key_file_applies() {
    let t = tempfile::tempdir().unwrap();
    downstream(t.path(), &t.path().join("secret/demo.key"));
    revoke_key(t.path(), DEMO_KEY_ID, &t.path().join("secret/demo.key")).expect(0);
    // The minisign habit: the key file given by path, its folder's revocation beside it.
    let out = warden_in(
        t.path(),
        &["verify", "dist", "--public-key", "keys/demo.pub"],
    )
    .expect(1);
    let revoked = format!("signed by key {DEMO_KEY_ID}, revoked at 2025-12-02T03:00:10Z (leaked; keys/revoked/{DEMO_KEY_ID}.toml): not trusted");
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  {revoked}\nFAIL  dist/app  {revoked}\n0 verified, 2 failed, 0 errors\n")
    );
    // A keys folder named beside a pinned key elsewhere applies too.
    let out = warden_in(
        t.path(),
        &[
            "verify",
            "dist",
            "--public-key",
            "pinned/demo.pub",
            "--keys-dir",
            "keys",
        ],
    )
    .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  {revoked}\nFAIL  dist/app  {revoked}\n0 verified, 2 failed, 0 errors\n")
    );
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
    let r = repo.path();
    std::fs::create_dir_all(r.join("keys")).unwrap();
    let old_id = "01D0000000000001";
    for (name, id) in [
        ("old", old_id),
        ("m1", "0E10000000000001"),
        ("m2", "0E20000000000002"),
    ] {
        key(r, name, id);
        std::fs::copy(
            r.join(format!("{name}.pub")),
            r.join(format!("keys/{name}.pub")),
        )
        .unwrap();
    }
    write(&r.join("keys/policy.toml"), b"threshold = 2\n");
    for signer in ["m1", "m2"] {
        revoke_key(r, old_id, &r.join(format!("{signer}.key"))).expect(0);
    }
    let (api, _storage) = servers(&assets, COMMIT).await;
    serve_revocations(&api, &r.join("keys/revoked")).await;
    let out = verify_release(
        t.path(),
        &api,
        &["--out", "got", "--public-key", "keys/demo.pub"],
    )
    .await
    .expect(0);
    assert_eq!(
        out.stderr,
        format!("warden: note: release v1.2.3 of o/r: 4 assets, tag at commit {COMMIT}, a prerelease\nwarden: note: GitHub says the release is not immutable: its assets and tag can still change\nwarden: note: from GitHub's attestations: no build provenance for app\nwarden: warning: o/r:keys/revoked/{old_id}.toml revokes key {old_id}, which is not trusted here, and cannot be checked with the keys here (o/r:keys/revoked/{old_id}.toml.minisig: signed by key 0E10000000000001, neither the revoked key nor a key trusted here): ignored\nwarden: warning: SHA256SUMS.minisig binds no workflow run: where it was made cannot be checked (`warden sign` in GitHub Actions binds one; keys/policy.toml's require_run makes it required)\n")
    );
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
        assert_eq!(
            out.stderr,
            "warden: the commit of tag v1.2.3: GET /repos/o/r/commits/v1.2.3 failed: the answer has no commit SHA (40 hex digits)\n",
            "{answer}"
        );
        assert_eq!(out.stdout, "", "{answer}");
    }
}
