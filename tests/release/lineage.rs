//! Issue 46: trust is one decider, and a signer is a key lineage. Each attack below passed on
//! the code before this change (a rule applied by one decider and not another); each now fails
//! and says why. Keys are made from fixed seeds, so every output is asserted whole.

use std::path::{Path, PathBuf};

use crate::common::*;

const TESS: &str = "7E5500000000007E";
const BOB: &str = "B0B00000000000B0";
const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

/// A key pair of `t` named `name` (`t/name.pub`, `t/name.key`), made from a seed of its name and
/// labelled `id`; returns the secret key.
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

fn warden_in(t: &Path, args: &[&str]) -> Run {
    run(warden(t).args(args))
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

/// `t/dist` (one app) signed by `key` for v1.2.3 of o/r.
fn sign(t: &Path, key: &Path) {
    write(&t.join("dist/app"), b"the app");
    run(warden(t)
        .args(["sign", "dist", "--secret-key"])
        .arg(key)
        .args(["--tag", "v1.2.3", "--repo", "o/r", "--commit", COMMIT])
        .env("SOURCE_DATE_EPOCH", "1764460800"))
    .expect(0);
}

/// `t/dist/SHA256SUMS` co-signed by `key`, checked against `keys_dir` (threshold lifted: the
/// co-signature is what is missing).
fn cosign(t: &Path, keys_dir: &str, key: &Path) -> Run {
    run(warden(t)
        .args([
            "sign",
            "--cosign",
            "dist",
            "--keys-dir",
            keys_dir,
            "--secret-key",
        ])
        .arg(key)
        .env("SOURCE_DATE_EPOCH", "1764460800"))
}

/// `t/dist/SHA256SUMS` signed with `key` outside warden's co-signing (a laptop), put beside it
/// as the co-signature of `id`.
fn cosign_by_hand(t: &Path, key: &Path, id: &str) {
    std::fs::create_dir_all(t.join("laptop")).unwrap();
    std::fs::copy(t.join("dist/SHA256SUMS"), t.join("laptop/SHA256SUMS")).unwrap();
    run(warden(t)
        .args([
            "sign",
            "laptop/SHA256SUMS",
            "--no-checksums",
            "--secret-key",
        ])
        .arg(key)
        .args(["--tag", "v1.2.3", "--repo", "o/r", "--commit", COMMIT])
        .env("SOURCE_DATE_EPOCH", "1764460800"))
    .expect(0);
    std::fs::rename(
        t.join("laptop/SHA256SUMS.minisig"),
        t.join(format!("dist/SHA256SUMS.{id}.minisig")),
    )
    .unwrap();
}

/// A project with two release managers (demo and bob) and a threshold of 2.
fn two_managers(t: &Path) -> PathBuf {
    demo_keys(t);
    let bob = key(t, "bob", BOB);
    std::fs::copy(t.join("bob.pub"), t.join("keys/bob.pub")).unwrap();
    write(&t.join("keys/policy.toml"), b"threshold = 2\n");
    bob
}

#[test]
fn a_key_and_its_successor_are_one_signer() {
    let t = tempfile::tempdir().unwrap();
    two_managers(t.path());
    let demo = t.path().join("secret/demo.key");
    let tess = key(t.path(), "tess", TESS);
    // The demo key's holder rotates to tess, then signs with the old key and co-signs with the
    // new one: two keys, one holder.
    rotate(t.path(), "keys", (&demo, &tess)).expect(0);
    sign(t.path(), &demo);
    let rotation = format!("keys/rotations/{DEMO_KEY_ID}-{TESS}.toml");
    // `sign --cosign` refuses a co-signature that would not count.
    let out = cosign(t.path(), "keys", &tess).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: key {DEMO_KEY_ID} signed dist/SHA256SUMS already, and key {TESS} succeeds key {DEMO_KEY_ID} ({rotation}): one signer: a co-signature by key {TESS} would not count; nothing written\n")
    );
    // Made by hand, it is not counted.
    cosign_by_hand(t.path(), &tess, TESS);
    let out = warden_in(t.path(), &["verify", "dist"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  1 of 2 required signatures (keys/policy.toml); dist/SHA256SUMS.{TESS}.minisig not counted: key {TESS} succeeds key {DEMO_KEY_ID} ({rotation}): one signer\nFAIL  dist/app  1 of 2 required signatures (keys/policy.toml)\n0 verified, 2 failed, 0 errors\n")
    );
    // `keys list` says which keys are one signer.
    let out = warden_in(t.path(), &["keys", "list"]).expect(0);
    assert_eq!(
        out.stdout,
        format!("trusted  {TESS}  keys/{TESS}.pub\ntrusted  {BOB}  keys/bob.pub\ntrusted  {DEMO_KEY_ID}  keys/demo.pub\nrotated  {DEMO_KEY_ID} -> {TESS}  at 2025-11-30T00:00:00Z ({rotation})\npolicy   2 distinct signers must sign a release (keys/policy.toml)\nsigner   {TESS}, {DEMO_KEY_ID} are one signer: a key and its successors count once ({rotation})\nkeys: 3 trusted, 0 revoked\n")
    );
    // Bob's co-signature makes two signers.
    cosign(t.path(), "keys", &t.path().join("bob.key")).expect(0);
    warden_in(t.path(), &["verify", "dist"]).expect(0);
}

#[test]
fn a_follower_counts_a_rotation_written_by_a_thief_once() {
    let t = tempfile::tempdir().unwrap();
    let bob = two_managers(t.path());
    let _ = bob;
    // A downstream user pins demo and bob, and follows the project's rotations.
    std::fs::create_dir_all(t.path().join("pinned")).unwrap();
    std::fs::copy(
        t.path().join("keys/demo.pub"),
        t.path().join("pinned/demo.pub"),
    )
    .unwrap();
    std::fs::copy(t.path().join("bob.pub"), t.path().join("pinned/bob.pub")).unwrap();
    // A thief holding the demo key writes demo -> tess into the followed folder, and signs with
    // both.
    let demo = t.path().join("secret/demo.key");
    let tess = key(t.path(), "tess", TESS);
    rotate(t.path(), "keys", (&demo, &tess)).expect(0);
    sign(t.path(), &demo);
    cosign_by_hand(t.path(), &tess, TESS);
    let out = warden_in(
        t.path(),
        &[
            "verify",
            "dist",
            "-p",
            "pinned/demo.pub",
            "-p",
            "pinned/bob.pub",
            "--follow-rotations",
        ],
    )
    .expect(1);
    let rotation = format!("keys/rotations/{DEMO_KEY_ID}-{TESS}.toml");
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  1 of 2 required signatures (keys/policy.toml); dist/SHA256SUMS.{TESS}.minisig not counted: key {TESS} succeeds key {DEMO_KEY_ID} ({rotation}): one signer\nFAIL  dist/app  1 of 2 required signatures (keys/policy.toml)\n0 verified, 2 failed, 0 errors\n")
    );
}

#[test]
fn a_key_past_its_date_hands_no_trust_on() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(
        &t.path().join("keys/policy.toml"),
        format!("[keys.{DEMO_KEY_ID}]\nvalid_until = 2025-06-30\n").as_bytes(),
    );
    let demo = t.path().join("secret/demo.key");
    let tess = key(t.path(), "tess", TESS);
    // `keys rotate` refuses a key whose trust has ended.
    let out = rotate(t.path(), "keys", (&demo, &tess)).expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: key {DEMO_KEY_ID} was trusted until 2025-06-30 (keys/policy.toml): trust does not pass on from a key past its date, so it cannot rotate to a successor\n")
    );
    // Written anyway (in a folder without the date, then copied in): not followed.
    std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    rotate(t.path(), "elsewhere", (&demo, &tess)).expect(0);
    copy_dir(
        &t.path().join("elsewhere/rotations"),
        &t.path().join("keys/rotations"),
    );
    std::fs::create_dir_all(t.path().join("pinned")).unwrap();
    std::fs::copy(
        t.path().join("keys/demo.pub"),
        t.path().join("pinned/demo.pub"),
    )
    .unwrap();
    sign(t.path(), &tess);
    let out = warden_in(
        t.path(),
        &[
            "verify",
            "dist",
            "-p",
            "pinned/demo.pub",
            "--follow-rotations",
        ],
    )
    .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/SHA256SUMS  signed by key {TESS}, which is not trusted (trusted: none)\nFAIL  dist/app  signed by key {TESS}, which is not trusted (trusted: none)\n0 verified, 2 failed, 0 errors\n")
    );
    let rotation = format!("keys/rotations/{DEMO_KEY_ID}-{TESS}.toml");
    let out = warden_in(t.path(), &["keys", "list"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("expired  {DEMO_KEY_ID}  keys/demo.pub  until 2025-06-30\nrotated  {DEMO_KEY_ID} -> {TESS}  at 2025-11-30T00:00:00Z ({rotation})\npolicy   1 distinct signer must sign a release (keys/policy.toml)\nFAIL     {rotation}: a rotation out of key {DEMO_KEY_ID}, trusted until 2025-06-30: trust does not pass on from a key past its date, so it is not followed\nFAIL     keys/policy.toml: threshold 1 is above the 0 usable signers (trusted, not revoked, not expired; a key and its successors are one): no release can be signed\nkeys: not usable until these are fixed\n")
    );
}

/// The verifier's `require_log` and the repository's are two requirements: the repository's
/// witnesses are not dropped because the verifier names a log of its own.
#[tokio::test(flavor = "multi_thread")]
async fn a_local_log_policy_adds_to_the_repository_s_and_never_replaces_it() {
    use super::verify_release::{file_contents, servers, verify_release};
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    let r = crate::log::LogRepo::new();
    write(&r.dir().join("dist/app"), b"the app");
    run(warden(r.dir())
        .args([
            "sign", "dist", "--tag", "v1.2.3", "--repo", "o/r", "--commit", COMMIT,
        ])
        .arg("--secret-key")
        .arg(&r.secret_key)
        .args(["--log", "log", "--log-key"])
        .arg(r.log_key())
        .env("SOURCE_DATE_EPOCH", "1780000000"))
    .expect(0);
    let witness = r.secrets.path().join("witness.key");
    let out = run(warden(r.dir())
        .args([
            "log",
            "witness-key",
            "--name",
            "w.example",
            "--format",
            "json",
        ])
        .arg(&witness))
    .expect(0);
    let wvkey = serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["vkey"]
        .as_str()
        .unwrap()
        .to_string();
    let local = format!("require_log = true\nlog_vkey = \"{}\"\n", r.vkey);
    write(&r.dir().join("keys/policy.toml"), local.as_bytes());
    let theirs = format!(
        "require_log = true\nlog_vkey = \"{}\"\nwitnesses = [\"{wvkey}\"]\nwitness_threshold = 1\n",
        r.vkey
    );
    let assets = crate::common::release_server::release_files(&r.dir().join("dist"));
    let (api, _storage) = servers(&assets, COMMIT).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/policy.toml"))
        .respond_with(file_contents(theirs.as_bytes()))
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/revoked"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&api)
        .await;
    let out = verify_release(r.dir(), &api, &["--out", "got"])
        .await
        .expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  got/SHA256SUMS  got/SHA256SUMS.log-proof: 0 of 1 required witness cosignatures on the checkpoint of size 1 (none verified)\nFAIL  got/app  not downloaded: SHA256SUMS does not verify (got/SHA256SUMS.log-proof: 0 of 1 required witness cosignatures on the checkpoint of size 1 (none verified))\n0 verified, 2 failed, 0 errors\n"
    );
}
