//! warden's checkpoints, cosignatures, tiles and proofs read by the Go originals
//! (golang.org/x/mod/sumdb/note and sumdb/tlog, Debian's golang-golang-x-mod-dev), through the
//! checker in tests/tools/tlogcheck. Required under CI=true (`.ci/run` installs Go and x/mod).

use super::*;

/// `go` and the x/mod sources, or `None` locally when they are missing (a failure under CI=true).
fn go_checker() -> Option<Command> {
    let gopath = Path::new("/usr/share/gocode");
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("go"))
            .find(|p| p.is_file())
    });
    let ready = found.filter(|_| gopath.join("src/golang.org/x/mod/sumdb/tlog").is_dir());
    if ready.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("go and golang.org/x/mod are required under CI=true (apt-get install golang-go golang-golang-x-mod-dev)");
    }
    let go = ready.or_else(|| {
        eprintln!(
            "go or golang.org/x/mod missing: Go interop test not run (required under CI=true)"
        );
        None
    })?;
    let cache = std::env::temp_dir().join("warden-test-gocache");
    let mut cmd = Command::new(go);
    cmd.env("GO111MODULE", "off")
        .env("GOPATH", gopath)
        .env("GOCACHE", cache)
        .env("GOFLAGS", "")
        .arg("run")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/tlogcheck/main.go"));
    Some(cmd)
}

use std::process::Command;

fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn go_s_note_and_tlog_packages_check_warden_s_log() {
    let Some(mut go) = go_checker() else { return };
    let r = LogRepo::new();
    // 258 entries: a full level-0 tile, a partial one, and a level-1 tile above them.
    for i in 0..258 {
        r.release(&format!("v{i}"), true).expect(0);
    }
    let witness_key = r.secrets.path().join("w.key");
    let out = run(warden(r.dir())
        .args([
            "log",
            "witness-key",
            "--name",
            "witness.example",
            "--format",
            "json",
        ])
        .arg(&witness_key))
    .expect(0);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let witness_vkey = json["vkey"].as_str().unwrap();
    run(warden(r.dir())
        .args([
            "log",
            "witness",
            "log",
            "--log-vkey",
            &r.vkey,
            "--witness-key",
        ])
        .arg(&witness_key)
        .arg("--state")
        .arg(r.secrets.path().join("state")))
    .expect(0);
    assert!(r.dir().join("log/tile/1/000.p/1").is_file());
    assert!(r.dir().join("log/tile/0/000").is_file());

    // An early entry, proved at size 4, and the grown log consistent with it.
    let dist = r.dir().join("dist-v3");
    let out = go
        .arg(r.dir().join("log"))
        .arg(&r.vkey)
        .arg(dist.join("SHA256SUMS.log-proof"))
        .arg(sha256_of(&dist.join("SHA256SUMS")))
        .arg(witness_vkey)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("checkpoint: size 258, signed by {ORIGIN}, witness.example\ntiles: hash to the checkpoint's root\nproof: entry 3 is in the tree of size 4\nconsistency: the tree of size 258 extends the one of size 4\n"),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());

    // The last entry, after its proof is renewed against the cosigned checkpoint.
    run(warden(r.dir())
        .args([
            "log",
            "append",
            "log",
            "--release",
            "dist-v257",
            "--log-key",
        ])
        .arg(r.log_key()))
    .expect(0);
    let dist = r.dir().join("dist-v257");
    let mut go = go_checker().unwrap();
    let out = go
        .arg(r.dir().join("log"))
        .arg(&r.vkey)
        .arg(dist.join("SHA256SUMS.log-proof"))
        .arg(sha256_of(&dist.join("SHA256SUMS")))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "checkpoint: size 258, signed by example.org/releases-log\ntiles: hash to the checkpoint's root\nproof: entry 257 is in the tree of size 258\nconsistency: the tree of size 258 extends the one of size 258\n",
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // And a tampered proof is refused by Go too: one hash of the path replaced.
    let proof = dist.join("SHA256SUMS.log-proof");
    let text = std::fs::read_to_string(&proof).unwrap();
    let first_hash = text.lines().nth(2).unwrap().to_string();
    let other = super::release_log::base64_encode(&[7u8; 32]);
    write(&proof, text.replacen(&first_hash, &other, 1).as_bytes());
    let mut go = go_checker().unwrap();
    let out = go
        .arg(r.dir().join("log"))
        .arg(&r.vkey)
        .arg(&proof)
        .arg(sha256_of(&dist.join("SHA256SUMS")))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tlogcheck: inclusion proof: invalid transparency proof\nexit status 1\n"
    );
}
