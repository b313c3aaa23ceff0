//! What a second look at the log found: a release logged twice, a re-signed release, an altered
//! last bundle, a proof past the end of the tree, and a policy the flags must not lift.

use super::*;

/// The number of entries `log verify` counts.
fn size(r: &LogRepo) -> String {
    let out = run(warden(r.dir()).args(["log", "verify", "log", "--log-vkey", &r.vkey])).expect(0);
    out.stdout.lines().next().unwrap().to_string()
}

#[test]
fn a_release_appended_again_without_its_proof_is_not_logged_twice() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    let proof = r.dir().join("dist-v1/SHA256SUMS.log-proof");
    let first = std::fs::read(&proof).unwrap();
    // A crash between the checkpoint and the proof, or `log append` after `sign --log` on a
    // copy without the proof: the entry is found among the log's last ones.
    std::fs::remove_file(&proof).unwrap();
    let out = run(warden(r.dir())
        .args(["log", "append", "log", "--release", "dist-v1", "--log-key"])
        .arg(r.log_key()))
    .expect(0);
    assert_eq!(
        out.stdout,
        format!("entry 0      key {k}  dist-v1/SHA256SUMS.minisig  logged before, proof renewed  → dist-v1/SHA256SUMS.log-proof\nlog log: 1 entry\n")
    );
    assert_eq!(std::fs::read(&proof).unwrap(), first);
    assert_eq!(size(&r), "OK  log log: 1 entry, 1 tile, every entry signed by the key it names and every tile the one its entries give");
}

#[test]
fn a_release_signed_again_with_force_is_logged_again() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    // Re-signed (a later timestamp): the old proof beside it proves the old signature only.
    let out = run(warden(r.dir())
        .env("SOURCE_DATE_EPOCH", "1780000100")
        .args(["sign", "dist-v1", "--tag", "v1", "--force", "--secret-key"])
        .arg(&r.secret_key)
        .args(["--log", "log", "--log-key"])
        .arg(r.log_key()))
    .expect(0);
    assert_eq!(
        out.stdout,
        format!("signed  dist-v1/app  -> dist-v1/app.minisig\nwrote   dist-v1/SHA256SUMS  -> dist-v1/SHA256SUMS.minisig\n1 artifact signed with key {k}\nentry 1      key {k}  dist-v1/SHA256SUMS.minisig  logged  → dist-v1/SHA256SUMS.log-proof\nlog log: 2 entries\n")
    );
    r.verify("dist-v1", &["--log", "log"]).expect(0);
}

#[test]
fn an_altered_last_bundle_is_refused_before_anything_is_signed_or_written() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    let bundle = r.dir().join("log/tile/entries/000.p/1");
    let mut bytes = std::fs::read(&bundle).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    write(&bundle, &bytes);
    let before = r.log_files();
    write(&r.dir().join("dist-v2/app"), b"app v2");
    let out = run(warden(r.dir())
        .args(["sign", "dist-v2", "--tag", "v2", "--secret-key"])
        .arg(&r.secret_key)
        .args(["--log", "log", "--log-key"])
        .arg(r.log_key()))
    .expect(2);
    assert_eq!(out.all(), "warden: log/tile/entries/000.p/1: entry 0 does not hash to its leaf (altered entry bundle)\n");
    assert_eq!(r.log_files(), before, "nothing written to the log");
    assert_eq!(
        std::fs::read_dir(r.dir().join("dist-v2")).unwrap().count(),
        1,
        "nothing signed"
    );
    r.release("v3", false).expect(0);
    let out = run(warden(r.dir())
        .args(["log", "append", "log", "--release", "dist-v3", "--log-key"])
        .arg(r.log_key()))
    .expect(2);
    assert_eq!(out.all(), "warden: log/tile/entries/000.p/1: entry 0 does not hash to its leaf (altered entry bundle)\n");
    assert_eq!(r.log_files(), before, "nothing written to the log");
}

#[test]
fn a_proof_past_the_end_of_its_tree_is_a_failure_not_a_crash() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    let path = r.dir().join("dist-v1/SHA256SUMS.log-proof");
    let proof = std::fs::read_to_string(&path).unwrap();
    for index in ["5", "256", "18446744073709551615"] {
        write(
            &path,
            proof
                .replacen("index 0\n", &format!("index {index}\n"), 1)
                .as_bytes(),
        );
        let out = r.verify("dist-v1", &["--log", "log"]).expect(1);
        assert_eq!(
            out.stdout,
            format!("FAIL  dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: signature by key {k} is not in the log: the proof is for entry {index}, but the checkpoint's tree has 1 entries\nFAIL  dist-v1/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
        );
    }
}

#[test]
fn a_flag_adds_a_log_requirement_and_never_lifts_the_policy_s_witnesses() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    let witness = r.secrets.path().join("witness.key");
    let out = run(warden(r.dir())
        .args([
            "log",
            "witness-key",
            "--name",
            "example.org/witness",
            "--format",
            "json",
        ])
        .arg(&witness))
    .expect(0);
    let wvkey = serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["vkey"]
        .as_str()
        .unwrap()
        .to_string();
    write(
        &r.dir().join("keys/policy.toml"),
        format!(
            "require_log = true\nlog_vkey = \"{}\"\nwitnesses = [\"{wvkey}\"]\nwitness_threshold = 1\n",
            r.vkey
        )
        .as_bytes(),
    );
    // No witness has cosigned: the policy refuses, with or without the flags.
    let policy_only = run(warden(r.dir()).args(["verify", "dist-v1"])).expect(1);
    let with_flags = r.verify("dist-v1", &[]).expect(1);
    assert_eq!(with_flags.stdout, policy_only.stdout);
    assert_eq!(
        policy_only.stdout,
        format!("FAIL  dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: 0 of 1 required witness cosignatures on the checkpoint of size 1 (none verified)\nFAIL  dist-v1/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n", r.key_id)
    );
}

#[test]
fn a_log_served_behind_the_proof_is_said_to_be_stale_not_forked() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    // A mirror that copied the log at size 1, then not again.
    copy_dir(&r.dir().join("log"), &r.dir().join("mirror"));
    r.release("v2", true).expect(0);
    let out = r.verify("dist-v2", &["--log", "mirror"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-v2/SHA256SUMS  dist-v2/SHA256SUMS.log-proof: the log given with --log is behind this proof (its checkpoint has 1 entries, the proof's 2): a stale mirror or cache, or a rolled-back log; verify against the log's origin, or once the mirror has caught up\nFAIL  dist-v2/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
    );
    // The proof alone (its checkpoint is signed by the log key) still verifies.
    r.verify("dist-v2", &[]).expect(0);
}

/// Issue 46: the log takes what a verification would count, judged by the one decider: a
/// rehearsal, a signature bound to another file, or one the run policy refuses is not logged.
#[test]
fn the_log_takes_only_what_a_verification_counts() {
    let r = LogRepo::new();
    // `sign --dry-run --log` is refused before anything is signed.
    write(&r.dir().join("dist/app"), b"the app");
    let out = run(warden(r.dir())
        .args(["sign", "dist", "--dry-run", "--secret-key"])
        .arg(&r.secret_key)
        .args(["--log", "log", "--log-key"])
        .arg(r.log_key()))
    .expect(2);
    assert_eq!(
        out.stderr,
        "error: the argument '--dry-run' cannot be used with '--log <DIR>'\n\nUsage: warden sign --dry-run --secret-key <FILE> --log-key <FILE> <PATH>...\n\nFor more information, try '--help'.\n"
    );
    assert!(!r.dir().join("dist/SHA256SUMS").exists());
    let append = || {
        run(warden(r.dir())
            .args(["log", "append", "log", "--release", "dist", "--log-key"])
            .arg(r.log_key()))
    };
    // A rehearsal made without --log, then appended.
    run(warden(r.dir())
        .args(["sign", "dist", "--dry-run", "--secret-key"])
        .arg(&r.secret_key))
    .expect(0);
    let before = r.log_files();
    let out = append().expect(2);
    assert_eq!(
        out.stderr,
        "warden: dist/SHA256SUMS: no signature beside it that a verification would count, so nothing was logged (dist/SHA256SUMS.minisig: dry-run (rehearsal) signature; pass --allow-dry-run to accept it: not logged)\n"
    );
    // The list's exact bytes, signed under another name: the signature is not for this file.
    std::fs::create_dir_all(r.dir().join("laptop")).unwrap();
    std::fs::copy(
        r.dir().join("dist/SHA256SUMS"),
        r.dir().join("laptop/OTHER"),
    )
    .unwrap();
    run(warden(r.dir())
        .args(["sign", "laptop/OTHER", "--no-checksums", "--secret-key"])
        .arg(&r.secret_key))
    .expect(0);
    std::fs::rename(
        r.dir().join("laptop/OTHER.minisig"),
        r.dir().join("dist/SHA256SUMS.minisig"),
    )
    .unwrap();
    let out = append().expect(2);
    assert_eq!(
        out.stderr,
        "warden: dist/SHA256SUMS: no signature beside it that a verification would count, so nothing was logged (dist/SHA256SUMS.minisig: the signature is for file:OTHER, not SHA256SUMS (renamed or swapped artifact): not logged)\n"
    );
    // Signed outside any run where the policy requires one.
    write(&r.dir().join("keys/policy.toml"), b"require_run = true\n");
    run(warden(r.dir())
        .args(["sign", "dist", "--force", "--secret-key"])
        .arg(&r.secret_key))
    .expect(0);
    let out = append().expect(2);
    assert_eq!(
        out.stderr,
        "warden: dist/SHA256SUMS: no signature beside it that a verification would count, so nothing was logged (dist/SHA256SUMS.minisig: the signature binds no workflow run, and keys/policy.toml requires one (made outside the release pipeline?): not logged)\n"
    );
    assert_eq!(r.log_files(), before);
}
