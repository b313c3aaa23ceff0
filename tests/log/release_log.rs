//! A release signed into the log verifies with `--require-log`; every way a signature can fail
//! to be logged fails with its own message, exit 1.

use super::*;

#[test]
fn a_logged_release_verifies_and_an_older_checkpoint_is_proved_consistent() {
    let r = LogRepo::new();
    let k = &r.key_id;
    let out = r.release("v1", true).expect(0);
    assert_eq!(
        out.stdout,
        format!("signed  dist-v1/app  -> dist-v1/app.minisig\nwrote   dist-v1/SHA256SUMS  -> dist-v1/SHA256SUMS.minisig\n1 artifact signed with key {k}\nentry 0      key {k}  dist-v1/SHA256SUMS.minisig  logged  → dist-v1/SHA256SUMS.log-proof\nlog log: 1 entry\n")
    );
    // The checkpoint a verifier saw at v1, pinned.
    std::fs::copy(r.dir().join("log/checkpoint"), r.dir().join("pinned")).unwrap();
    r.release("v2", true).expect(0);
    let out = r.verify("dist-v2", &[]).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist-v2/SHA256SUMS  key {k} (keys/release.pub)  tag v2  in the log\nOK    dist-v2/app  key {k} (keys/release.pub)  tag v2\n2 verified, 0 failed, 0 errors\n")
    );
    let out = r
        .verify("dist-v1", &["--log", "log", "--checkpoint", "pinned"])
        .expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist-v1/SHA256SUMS  key {k} (keys/release.pub)  tag v1  in the log\nOK    dist-v1/app  key {k} (keys/release.pub)  tag v1\n2 verified, 0 failed, 0 errors\n")
    );
    let out = run(warden(r.dir()).args(["log", "verify", "log", "--log-vkey", &r.vkey])).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK  log log: 2 entries, 1 tile, every entry signed by the key it names and every tile the one its entries give\n    key {k}: 2 entries\n")
    );
    // Appending again logs nothing twice: the proof is renewed against the grown log.
    let out = run(warden(r.dir())
        .args(["log", "append", "log", "--release", "dist-v1", "--log-key"])
        .arg(r.log_key()))
    .expect(0);
    assert_eq!(
        out.stdout,
        format!("entry 0      key {k}  dist-v1/SHA256SUMS.minisig  logged before, proof renewed  → dist-v1/SHA256SUMS.log-proof\nlog log: 2 entries\n")
    );
    let proof = std::fs::read_to_string(r.dir().join("dist-v1/SHA256SUMS.log-proof")).unwrap();
    assert!(
        proof.starts_with("c2sp.org/tlog-proof@v1\nindex 0\n"),
        "{proof}"
    );
    assert_eq!(
        proof.lines().filter(|l| l.len() == 44).count(),
        2,
        "one proof hash and the root: {proof}"
    );
}

#[test]
fn a_signature_that_is_not_in_the_log_is_refused() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    // The thief's laptop: the key signs a release that was never logged.
    r.release("evil", false).expect(0);
    let out = r.verify("dist-evil", &[]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-evil/SHA256SUMS  signature by key {k} is not in the log: no dist-evil/SHA256SUMS.log-proof beside dist-evil/SHA256SUMS.minisig (sign with --log, or run `warden log append`)\nFAIL  dist-evil/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
    );
    // A file alone, trusted by its own signature, is not a logged signature either.
    let out = r.verify("dist-evil/app", &[]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-evil/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 1 failed, 0 errors\n")
    );
    // The proof of a real release, copied beside the thief's: it proves another entry.
    std::fs::copy(
        r.dir().join("dist-v1/SHA256SUMS.log-proof"),
        r.dir().join("dist-evil/SHA256SUMS.log-proof"),
    )
    .unwrap();
    let out = r.verify("dist-evil", &[]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-evil/SHA256SUMS  dist-evil/SHA256SUMS.log-proof: signature by key {k} is not in the log: entry 0 of the log is not this signature (the proof does not lead to the checkpoint's root)\nFAIL  dist-evil/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
    );
    // With the log at hand, what differs is said.
    let sha = |d: &str| {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(
            std::fs::read(r.dir().join(d).join("SHA256SUMS")).unwrap(),
        ))
    };
    let out = r.verify("dist-evil", &["--log", "log"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-evil/SHA256SUMS  dist-evil/SHA256SUMS.log-proof: signature by key {k} is not in the log: entry 0 of the log differs from the release: its SHA256SUMS has SHA-256 {}, the release's has {}; its trusted comment is \"timestamp:1780000000\\tfile:SHA256SUMS\\thashed\\ttag:v1\", the release's is \"timestamp:1780000000\\tfile:SHA256SUMS\\thashed\\ttag:evil\"\nFAIL  dist-evil/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n", sha("dist-v1"), sha("dist-evil"))
    );
}

#[test]
fn a_log_rewritten_at_the_same_size_is_a_fork() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    std::fs::copy(r.dir().join("log/checkpoint"), r.dir().join("pinned")).unwrap();
    // A thief holding the log key starts the log again and logs their own release at size 1.
    std::fs::remove_dir_all(r.dir().join("log")).unwrap();
    run(warden(r.dir())
        .args(["log", "init", "log", "--origin", ORIGIN, "--log-key"])
        .arg(r.log_key()))
    .expect(0);
    r.release("evil", true).expect(0);
    let out = r
        .verify("dist-evil", &["--log", "log", "--checkpoint", "pinned"])
        .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-evil/SHA256SUMS  the log forked at size 1: two signed checkpoints of that size have different roots\nFAIL  dist-evil/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n", r.key_id)
    );
    // Grown past the pinned size, the fork still shows: the log does not extend the pin.
    r.release("evil2", true).expect(0);
    let out = r
        .verify("dist-evil2", &["--log", "log", "--checkpoint", "pinned"])
        .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-evil2/SHA256SUMS  the log forked at size 1: its tree of size 2 does not extend the earlier checkpoint\nFAIL  dist-evil2/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n", r.key_id)
    );
}

#[test]
fn a_checkpoint_the_log_key_did_not_sign_is_refused() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    let proof_path = r.dir().join("dist-v1/SHA256SUMS.log-proof");
    let proof = std::fs::read_to_string(&proof_path).unwrap();
    // One bit of the log's signature flipped.
    let (head, sig) = proof.rsplit_once(' ').unwrap();
    let mut bytes = base64_decode(sig.trim_end());
    bytes[10] ^= 1;
    write(
        &proof_path,
        format!("{head} {}\n", base64_encode(&bytes)).as_bytes(),
    );
    let id = &r.vkey.split('+').nth(1).unwrap();
    let out = r.verify("dist-v1", &[]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: the checkpoint's signature by {ORIGIN}+{id} does not verify (altered or forged checkpoint)\nFAIL  dist-v1/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n", r.key_id)
    );
    // A log of the same name under another key (a thief's own): not this log.
    write(&proof_path, proof.as_bytes());
    let out = run(warden(r.dir())
        .args([
            "log",
            "init",
            "thief-log",
            "--origin",
            ORIGIN,
            "--format",
            "json",
            "--log-key",
        ])
        .arg(r.secrets.path().join("thief.key")))
    .expect(0);
    let thief: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let thief = thief["vkey"].as_str().unwrap();
    let out =
        run(warden(r.dir()).args(["verify", "dist-v1", "--require-log", "--log-vkey", thief]))
            .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: the checkpoint is not signed by the log key {thief}\nFAIL  dist-v1/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n", r.key_id)
    );
}

#[test]
fn a_proof_for_another_tree_size_is_refused() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    r.release("v2", true).expect(0);
    // v1's proof was made at size 1 (no hashes); put the size-2 checkpoint under it.
    let proof_path = r.dir().join("dist-v1/SHA256SUMS.log-proof");
    let proof = std::fs::read_to_string(&proof_path).unwrap();
    let head = proof.split_once("\n\n").unwrap().0;
    let checkpoint = std::fs::read_to_string(r.dir().join("log/checkpoint")).unwrap();
    write(&proof_path, format!("{head}\n\n{checkpoint}").as_bytes());
    let out = r.verify("dist-v1", &[]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: signature by key {} is not in the log: the proof is for another tree size: it has 0 hashes, a proof of entry 0 in the checkpoint's tree of size 2 has 1\nFAIL  dist-v1/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n", r.key_id, r.key_id)
    );
}

pub(crate) fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

pub(crate) fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[test]
fn the_keys_folder_s_policy_can_require_the_log() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    r.release("evil", false).expect(0);
    let policy = r.dir().join("keys/policy.toml");
    write(
        &policy,
        format!("require_log = true\nlog_vkey = \"{}\"\n", r.vkey).as_bytes(),
    );
    let out = run(warden(r.dir()).args(["verify", "dist-v1"])).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist-v1/SHA256SUMS  key {k} (keys/release.pub)  tag v1  in the log\nOK    dist-v1/app  key {k} (keys/release.pub)  tag v1\n2 verified, 0 failed, 0 errors\n")
    );
    let out = run(warden(r.dir()).args(["verify", "dist-evil"])).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-evil/SHA256SUMS  signature by key {k} is not in the log: no dist-evil/SHA256SUMS.log-proof beside dist-evil/SHA256SUMS.minisig (sign with --log, or run `warden log append`)\nFAIL  dist-evil/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
    );
    for (text, why) in [
        ("threshold = 1\nrequire_log = true\n", "keys/policy.toml: line 2: require_log = true needs log_vkey, the log's verifier key"),
        ("require_log = true\nlog_vkey = \"nope\"\n", "keys/policy.toml: line 2: log_vkey: not a log key: expected NAME+ID+KEY (8 hex digits, then base64 of the type byte and the Ed25519 key)"),
    ] {
        write(&policy, text.as_bytes());
        let out = run(warden(r.dir()).args(["verify", "dist-v1"])).expect(2);
        assert_eq!(out.stderr, format!("warden: loading trusted keys (pass --public-key FILE or --keys-dir DIR): {why}\n"));
    }
}

#[test]
fn two_release_jobs_appending_at_once_take_turns() {
    let r = LogRepo::new();
    // Eight signed, unlogged releases, then all appended at once.
    for i in 0..8 {
        r.release(&format!("v{i}"), false).expect(0);
    }
    let children: Vec<_> = (0..8)
        .map(|i| {
            warden(r.dir())
                .args([
                    "log",
                    "append",
                    "log",
                    "--release",
                    &format!("dist-v{i}"),
                    "--log-key",
                ])
                .arg(r.log_key())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut indexes = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let index: u64 = stdout
            .strip_prefix("entry ")
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        indexes.push(index);
    }
    indexes.sort();
    assert_eq!(
        indexes,
        (0..8).collect::<Vec<u64>>(),
        "every release logged once, none lost"
    );
    let out = run(warden(r.dir()).args(["log", "verify", "log", "--log-vkey", &r.vkey])).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK  log log: 8 entries, 1 tile, every entry signed by the key it names and every tile the one its entries give\n    key {}: 8 entries\n", r.key_id)
    );
    for i in 0..8 {
        r.verify(&format!("dist-v{i}"), &["--log", "log"]).expect(0);
    }
}

#[test]
fn a_co_signature_must_be_logged_too() {
    let r = LogRepo::new();
    let (bob_pub, bob_key) = keypair(r.secrets.path(), "bob");
    std::fs::copy(&bob_pub, r.dir().join("keys/bob.pub")).unwrap();
    let b = PublicKey::from_file(&bob_pub).unwrap().key_id.to_string();
    let k = &r.key_id;
    write(&r.dir().join("keys/policy.toml"), b"threshold = 2\n");
    r.release("v1", true).expect(0);
    let cosign = |log: bool| {
        let mut cmd = warden(r.dir());
        cmd.args(["sign", "--cosign", "dist-v1", "--secret-key"])
            .arg(&bob_key);
        if log {
            cmd.args(["--log", "log", "--log-key"]).arg(r.log_key());
        }
        run(&mut cmd)
    };
    cosign(false).expect(0);
    let out = r.verify("dist-v1", &[]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-v1/SHA256SUMS  signature by key {b} is not in the log: no dist-v1/SHA256SUMS.{b}.log-proof beside dist-v1/SHA256SUMS.{b}.minisig (sign with --log, or run `warden log append`)\nFAIL  dist-v1/app  1 of 2 required signatures (keys/policy.toml)\n0 verified, 2 failed, 0 errors\n")
    );
    std::fs::remove_file(r.dir().join(format!("dist-v1/SHA256SUMS.{b}.minisig"))).unwrap();
    let out = cosign(true).expect(0);
    assert_eq!(
        out.stdout,
        format!("co-signed dist-v1/SHA256SUMS  -> dist-v1/SHA256SUMS.{b}.minisig\nkey {b}: 2 of 2 required signatures\nentry 0      key {k}  dist-v1/SHA256SUMS.minisig  logged before, proof renewed  → dist-v1/SHA256SUMS.log-proof\nentry 1      key {b}  dist-v1/SHA256SUMS.{b}.minisig  logged  → dist-v1/SHA256SUMS.{b}.log-proof\nlog log: 2 entries\n")
    );
    let out = r.verify("dist-v1", &["--log", "log"]).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist-v1/SHA256SUMS  key {k} (keys/release.pub)  co-signed by {b}  (2 of 2 required)  tag v1  in the log\nOK    dist-v1/app  key {k} (keys/release.pub)  tag v1\n2 verified, 0 failed, 0 errors\n")
    );
}

#[test]
fn with_the_log_at_hand_a_release_without_its_proof_is_found_in_it() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    r.release("v2", true).expect(0);
    r.release("evil", false).expect(0);
    // A mirror that copied the signatures but not the proof.
    std::fs::remove_file(r.dir().join("dist-v2/SHA256SUMS.log-proof")).unwrap();
    let out = r.verify("dist-v2", &["--log", "log"]).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist-v2/SHA256SUMS  key {k} (keys/release.pub)  tag v2  in the log\nOK    dist-v2/app  key {k} (keys/release.pub)  tag v2\n2 verified, 0 failed, 0 errors\n")
    );
    let out = r.verify("dist-evil", &["--log", "log"]).expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        format!("FAIL  dist-evil/SHA256SUMS  signature by key {k} is not in the log: no dist-evil/SHA256SUMS.log-proof beside dist-evil/SHA256SUMS.minisig, and no entry of the log (size 2) is this signature")
    );
}
