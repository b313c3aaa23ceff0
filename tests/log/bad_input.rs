//! Hostile logs and proofs: a truncated tile, a hostile or huge checkpoint, a FIFO, a proof
//! hash of the wrong length. Each is a clear error naming the file, exit 2, and nothing is
//! written — not to the log, and not to the release.

use super::*;

fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_truncated_tile_stops_every_command_before_it_writes() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    r.release("v2", true).expect(0);
    let tile = r.dir().join("log/tile/0/000.p/2");
    let bytes = std::fs::read(&tile).unwrap();
    write(&tile, &bytes[..40]);
    let before = files_of(r.dir());

    let out = run(warden(r.dir()).args(["log", "verify", "log", "--log-vkey", &r.vkey])).expect(2);
    assert_eq!(out.stderr, "warden: log/tile/0/000.p/2: 40 bytes, a tile of width 2 has 64 (truncated or altered tile)\n");
    let out = run(warden(r.dir())
        .args(["log", "append", "log", "--release", "dist-v1", "--log-key"])
        .arg(r.log_key()))
    .expect(2);
    assert_eq!(out.stderr, "warden: log/tile/0/000.p/2: 40 bytes, a tile of width 2 has 64 (truncated or altered tile)\n");
    let out = r.verify("dist-v1", &["--log", "log"]).expect(2);
    assert_eq!(
        out.stdout,
        format!("ERROR dist-v1/SHA256SUMS  log/tile/0/000.p/2: 40 bytes, a tile of width 2 has 64 (truncated or altered tile)\nFAIL  dist-v1/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 1 failed, 1 errors\n", r.key_id)
    );
    // Signing into it is refused before anything is signed.
    write(&r.dir().join("dist-v3/app"), b"app v3");
    let out = run(warden(r.dir())
        .args(["sign", "dist-v3", "--tag", "v3", "--secret-key"])
        .arg(&r.secret_key)
        .args(["--log", "log", "--log-key"])
        .arg(r.log_key()))
    .expect(2);
    assert_eq!(out.all(), "warden: log/tile/0/000.p/2: 40 bytes, a tile of width 2 has 64 (truncated or altered tile)\n");
    let mut after = files_of(r.dir());
    after.retain(|(p, _)| !p.contains("dist-v3"));
    assert_eq!(after, before, "nothing written");
    assert_eq!(
        std::fs::read_dir(r.dir().join("dist-v3")).unwrap().count(),
        1,
        "nothing signed"
    );
}

#[test]
fn hostile_checkpoints_are_named_and_refused() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    let checkpoint = r.dir().join("log/checkpoint");
    let verify_log = || run(warden(r.dir()).args(["log", "verify", "log", "--log-vkey", &r.vkey]));
    for (bytes, why) in [
        (b"\x1b]8;;http://evil\x07hello\n\n\xe2\x80\x94 x AAAA\n".to_vec(), "not a signed note (text, an empty line, then lines `— name signature`)"),
        (format!("{ORIGIN}\n01\nAAAA\n\n— {ORIGIN} AAAAAAA=\n").into_bytes(), "not a checkpoint: expected the origin, the tree size and the base64 root hash, one per line"),
    ] {
        write(&checkpoint, &bytes);
        let out = verify_log().expect(2);
        assert_eq!(out.stderr, format!("warden: log/checkpoint: {why}\n"));
    }
    write(&checkpoint, &vec![b'a'; 70_000]);
    assert_eq!(
        verify_log().expect(2).stderr,
        "warden: reading log/checkpoint: larger than 64 KiB\n"
    );
    // A FIFO in its place does not block.
    std::fs::remove_file(&checkpoint).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(&checkpoint)
        .status()
        .unwrap();
    assert!(status.success());
    let out = verify_log().expect(2);
    assert_eq!(out.stderr, "warden: reading log/checkpoint: not a regular file (FIFOs, devices and directories are never read)\n");
}

#[test]
fn a_proof_hash_of_the_wrong_length_is_bad_input() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    r.release("v2", true).expect(0);
    let proof_path = r.dir().join("dist-v1/SHA256SUMS.log-proof");
    let proof = std::fs::read_to_string(&proof_path).unwrap();
    let broken = proof.replacen("\nindex 0\n", "\nindex 0\nAAAA\n", 1);
    write(&proof_path, broken.as_bytes());
    let out = r.verify("dist-v1", &[]).expect(2);
    assert_eq!(
        out.stdout,
        format!("ERROR dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: line 3: expected a base64 SHA-256 hash (44 characters)\nFAIL  dist-v1/app  signature by key {} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 1 failed, 1 errors\n", r.key_id)
    );
    // A proof too large to be one is named as such, not read.
    write(&proof_path, &vec![b'a'; 200_000]);
    let out = r.verify("dist-v1", &[]).expect(2);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        "ERROR dist-v1/SHA256SUMS  dist-v1/SHA256SUMS.log-proof: larger than 128 KiB: not a log proof"
    );
    // A vkey that is not one is a usage error, named by its flag.
    let out = run(warden(r.dir()).args([
        "verify",
        "dist-v1",
        "--require-log",
        "--log-vkey",
        "example.org+1234+AAAA",
    ]))
    .expect(2);
    assert_eq!(out.stderr, "warden: --log-vkey: not a log key: expected NAME+ID+KEY (8 hex digits, then base64 of the type byte and the Ed25519 key)\n");
}

#[test]
fn a_pinned_checkpoint_that_is_not_one_is_bad_input() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    write(&r.dir().join("pinned"), b"not a checkpoint\n");
    let out = r
        .verify("dist-v1", &["--log", "log", "--checkpoint", "pinned"])
        .expect(2);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        "ERROR dist-v1/SHA256SUMS  pinned: not a signed note (text, an empty line, then lines `— name signature`)"
    );
    std::fs::remove_file(r.dir().join("pinned")).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(r.dir().join("pinned"))
        .status()
        .unwrap()
        .success());
    let out = r
        .verify("dist-v1", &["--log", "log", "--checkpoint", "pinned"])
        .expect(2);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        "ERROR dist-v1/SHA256SUMS  reading pinned: not a regular file (FIFOs, devices and directories are never read)"
    );
}
