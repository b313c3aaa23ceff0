//! Witnesses: a checkpoint is cosigned only when the log key signed it and it extends the last
//! one the witness cosigned; a fork is refused and kept as evidence; verifiers count
//! cosignatures against `--witness-threshold`.

use super::*;

/// A witness key made by `log witness-key` in the secrets folder: its key file and vkey.
pub(super) fn witness_key(r: &LogRepo, name: &str) -> (PathBuf, String) {
    let file = r.secrets.path().join(format!("{name}.key"));
    let out = run(warden(r.dir())
        .args(["log", "witness-key", "--name", name, "--format", "json"])
        .arg(&file))
    .expect(0);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    (file, json["vkey"].as_str().unwrap().to_string())
}

fn witness(r: &LogRepo, key: &Path, state: &str) -> Run {
    run(warden(r.dir())
        .env("SOURCE_DATE_EPOCH", "1780000100")
        .args([
            "log",
            "witness",
            "log",
            "--log-vkey",
            &r.vkey,
            "--witness-key",
        ])
        .arg(key)
        .arg("--state")
        .arg(r.secrets.path().join(state)))
}

fn renew(r: &LogRepo, dist: &str) {
    run(warden(r.dir())
        .args(["log", "append", "log", "--release", dist, "--log-key"])
        .arg(r.log_key()))
    .expect(0);
}

fn last_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_string()
}

#[test]
fn verifiers_count_the_witnesses_that_cosigned() {
    let r = LogRepo::new();
    let k = &r.key_id;
    r.release("v1", true).expect(0);
    let (one, one_vkey) = witness_key(&r, "witness-one.example");
    let (two, two_vkey) = witness_key(&r, "witness-two.example");
    let both = ["--witness", &one_vkey, "--witness", &two_vkey];
    let out = r.verify("dist-v1", &both).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: 0 of 2 required witness cosignatures on the checkpoint of size 1 (none verified)\nFAIL  dist-v1/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
    );

    let out = witness(&r, &one, "one-state").expect(0);
    let line = last_line(&r.dir().join("log/checkpoint"));
    assert!(line.starts_with("— witness-one.example "), "{line}");
    assert_eq!(
        out.stdout,
        format!("cosigned  log log: size 1 (this witness cosigned size 0 before)\n{line}\n")
    );
    // The proof is renewed against the cosigned checkpoint: one of two.
    renew(&r, "dist-v1");
    let out = r.verify("dist-v1", &both).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: 1 of 2 required witness cosignatures on the checkpoint of size 1 (verified: witness-one.example)\nFAIL  dist-v1/app  signature by key {k} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
    );
    let ok = format!("OK    dist-v1/SHA256SUMS  key {k} (keys/release.pub)  tag v1  in the log\nOK    dist-v1/app  key {k} (keys/release.pub)  tag v1\n2 verified, 0 failed, 0 errors\n");
    let one_of_two = [&both[..], &["--witness-threshold", "1"]].concat();
    assert_eq!(r.verify("dist-v1", &one_of_two).expect(0).stdout, ok);

    witness(&r, &two, "two-state").expect(0);
    // With the log at hand its checkpoint carries the cosignatures; the proof need not.
    assert_eq!(
        r.verify("dist-v1", &[&both[..], &["--log", "log"]].concat())
            .expect(0)
            .stdout,
        ok
    );
    renew(&r, "dist-v1");
    assert_eq!(r.verify("dist-v1", &both).expect(0).stdout, ok);
}

#[test]
fn a_witness_refuses_a_fork_and_keeps_it_as_evidence() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    let (one, _) = witness_key(&r, "witness-one.example");
    witness(&r, &one, "state").expect(0);
    r.release("v2", true).expect(0);
    let out = witness(&r, &one, "state").expect(0);
    let line = last_line(&r.dir().join("log/checkpoint"));
    assert_eq!(
        out.stdout,
        format!("cosigned  log log: size 2 (this witness cosigned size 1 before)\n{line}\n")
    );

    // The log key's holder starts the log over: size 1 again, another root.
    std::fs::remove_dir_all(r.dir().join("log")).unwrap();
    run(warden(r.dir())
        .args(["log", "init", "log", "--origin", ORIGIN, "--log-key"])
        .arg(r.log_key()))
    .expect(0);
    r.release("evil", true).expect(0);
    let before = r.log_files();
    let out = witness(&r, &one, "state").expect(1);
    let evidence: Vec<PathBuf> = std::fs::read_dir(r.secrets.path().join("state"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("refused-")
        })
        .collect();
    assert_eq!(evidence.len(), 1);
    assert_eq!(
        filter_dir(&out.stdout, r.secrets.path()),
        format!(
            "REFUSED  log log: the log shrank: its checkpoint is of size 1, an earlier one was of size 2 (a rolled-back or forked log): not cosigned; the checkpoint is kept as evidence\n         evidence: [DIR]/state/{}\n",
            evidence[0].file_name().unwrap().to_str().unwrap()
        )
    );
    assert_eq!(
        std::fs::read(&evidence[0]).unwrap(),
        std::fs::read(r.dir().join("log/checkpoint")).unwrap()
    );
    assert_eq!(
        r.log_files(),
        before,
        "a refused checkpoint is not cosigned"
    );
    // Grown to the size the witness saw, the forked log is still refused.
    r.release("evil2", true).expect(0);
    let out = witness(&r, &one, "state").expect(1);
    let root = &out.stdout.rsplit_once("refused-2-").unwrap().1;
    assert_eq!(
        filter_dir(&out.stdout, r.secrets.path()),
        format!("REFUSED  log log: the log forked at size 2: two signed checkpoints of that size have different roots: not cosigned; the checkpoint is kept as evidence\n         evidence: [DIR]/state/refused-2-{root}")
    );
}

/// A note key's text (`PRIVATE+KEY+name+id+base64(type ‖ seed)`) for the same seed as `text`,
/// under the name `name` and the type byte `kind` (0x01 a log key, 0x04 a witness key), with the
/// key id signed notes derive from the name, the type and the public key. Returns the secret
/// key's text and its verifier key.
fn renamed_key(text: &str, name: &str, kind: u8) -> (String, String) {
    use sha2::Digest as _;
    let b64 = super::release_log::base64_encode;
    let encoded = text.trim().splitn(5, '+').nth(4).unwrap();
    let bytes = super::release_log::base64_decode(encoded);
    let seed: [u8; 32] = bytes[1..].try_into().unwrap();
    let public = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key();
    let mut typed = vec![kind];
    typed.extend_from_slice(public.as_bytes());
    let mut h = sha2::Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update(&typed);
    let id = u32::from_be_bytes(h.finalize()[..4].try_into().unwrap());
    let mut secret = vec![kind];
    secret.extend_from_slice(&seed);
    (
        format!("PRIVATE+KEY+{name}+{id:08x}+{}\n", b64(&secret)),
        format!("{name}+{id:08x}+{}", b64(&typed)),
    )
}

#[test]
fn one_witness_key_under_two_names_is_one_witness() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    let (one, one_vkey) = witness_key(&r, "witness-one.example");
    // The same key under a second name: its cosignature verifies under either vkey.
    let (twin, twin_vkey) = renamed_key(
        &std::fs::read_to_string(&one).unwrap(),
        "witness-two.example",
        0x04,
    );
    let twin_file = r.secrets.path().join("twin.key");
    write(&twin_file, twin.as_bytes());
    witness(&r, &one, "one-state").expect(0);
    witness(&r, &twin_file, "twin-state").expect(0);
    renew(&r, "dist-v1");
    let out = r
        .verify(
            "dist-v1",
            &["--witness", &one_vkey, "--witness", &twin_vkey],
        )
        .expect(2);
    assert_eq!(
        out.stderr,
        "warden: --witness witness-two.example: the same key as the witness witness-one.example under another name: one witness counts once\n"
    );
    // Nor in keys/policy.toml.
    write(
        &r.dir().join("keys/policy.toml"),
        format!(
            "require_log = true\nlog_vkey = \"{}\"\nwitnesses = [\"{one_vkey}\", \"{twin_vkey}\"]\n",
            r.vkey
        )
        .as_bytes(),
    );
    let out = run(warden(r.dir()).args(["verify", "dist-v1"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: loading trusted keys (pass --public-key FILE or --keys-dir DIR): keys/policy.toml: line 3: witnesses: witness-two.example: the same key as the witness witness-one.example under another name: one witness counts once\n"
    );
}

#[test]
fn the_log_s_own_key_is_never_a_witness() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    // The log operator makes a witness key from the log key's own bytes, and cosigns.
    let (operator, operator_vkey) = renamed_key(
        &std::fs::read_to_string(r.log_key()).unwrap(),
        "witness.example",
        0x04,
    );
    let operator_file = r.secrets.path().join("operator-witness.key");
    write(&operator_file, operator.as_bytes());
    witness(&r, &operator_file, "state").expect(0);
    renew(&r, "dist-v1");
    let out = r
        .verify(
            "dist-v1",
            &["--witness", &operator_vkey, "--witness-threshold", "1"],
        )
        .expect(2);
    assert_eq!(
        out.stderr,
        format!("warden: --witness witness.example: this is the key of the log {ORIGIN} made into a witness key: the log's operator cannot witness their own log\n")
    );
}
