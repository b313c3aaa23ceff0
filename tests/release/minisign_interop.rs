//! Interop with the Debian `minisign` CLI (0.11), both directions. These run when `minisign` is
//! on PATH and fail under CI=true when it is absent (see common::minisign).

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;

fn mini(bin: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs minisign with `input` on stdin: it reads passwords from stdin when it is not a terminal.
fn mini_with_input(bin: &Path, dir: &Path, args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn assert_ok(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn warden_signatures_verify_with_minisign() {
    let Some(bin) = minisign() else { return };
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("dist/app.bin"), &vec![42u8; 300_000]);
    run(warden(t.path())
        .args(["sign", "dist", "--tag", "v1.2.3", "--secret-key"])
        .arg(&sk))
    .expect(0);
    let pk = pk.to_str().unwrap();
    for f in ["dist/app.bin", "dist/SHA256SUMS"] {
        let out = mini(&bin, t.path(), &["-Vm", f, "-p", pk]);
        assert_ok(&out, f);
        assert!(String::from_utf8_lossy(&out.stdout).contains("tag:v1.2.3"));
    }
    // Prehashed only: minisign -H (require prehashed) accepts it too.
    assert_ok(
        &mini(&bin, t.path(), &["-VHm", "dist/app.bin", "-p", pk]),
        "-H",
    );
}

#[test]
fn minisign_w_key_signs_for_warden_and_warden_signs_with_it_byte_for_byte() {
    let Some(bin) = minisign() else { return };
    let t = tempfile::tempdir().unwrap();
    assert_ok(
        &mini(&bin, t.path(), &["-G", "-W", "-p", "m.pub", "-s", "m.key"]),
        "keygen -W",
    );
    let key_b64 = fs::read_to_string(t.path().join("m.key")).unwrap();
    let raw = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        key_b64.lines().nth(1).unwrap(),
    )
    .unwrap();
    assert!(
        raw[126..].iter().all(|b| *b == 0),
        "precondition: -W keys have an all-zero checksum"
    );

    // minisign -S → warden verify
    write(&t.path().join("by-minisign.bin"), b"signed by the C tool");
    assert_ok(
        &mini(
            &bin,
            t.path(),
            &["-S", "-s", "m.key", "-m", "by-minisign.bin"],
        ),
        "minisign -S",
    );
    let out = run(warden(t.path()).args(["verify", "by-minisign.bin", "--public-key", "m.pub"]))
        .expect(0);
    assert!(
        out.stdout.contains("OK    by-minisign.bin  key "),
        "{}",
        out.stdout
    );

    // warden sign with the -W key → identical bytes to minisign -S with the same trusted comment.
    write(&t.path().join("w/a.bin"), b"same bytes");
    run(warden(t.path()).args([
        "sign",
        "w",
        "--no-checksums",
        "--secret-key",
        "m.key",
        "--public-key",
        "m.pub",
        "--tag",
        "v9",
    ]))
    .expect(0);
    let ours = fs::read_to_string(t.path().join("w/a.bin.minisig")).unwrap();
    let comment = ours
        .lines()
        .nth(2)
        .unwrap()
        .strip_prefix("trusted comment: ")
        .unwrap()
        .to_string();
    fs::create_dir(t.path().join("c")).unwrap();
    fs::copy(t.path().join("w/a.bin"), t.path().join("c/a.bin")).unwrap();
    assert_ok(
        &mini(
            &bin,
            t.path(),
            &["-S", "-s", "m.key", "-m", "c/a.bin", "-t", &comment],
        ),
        "minisign -S -t",
    );
    assert_eq!(
        fs::read_to_string(t.path().join("c/a.bin.minisig")).unwrap(),
        ours
    );
    assert_ok(
        &mini(&bin, t.path(), &["-Vm", "w/a.bin", "-p", "m.pub"]),
        "minisign -V of warden's",
    );

    // The key as a bare base64 line in an environment variable (a CI secret).
    write(&t.path().join("e/b.bin"), b"env");
    run(warden(t.path())
        .env("MINISIGN_SECRET_KEY", key_b64.lines().nth(1).unwrap())
        .args([
            "sign",
            "e",
            "--secret-key-env",
            "MINISIGN_SECRET_KEY",
            "--public-key",
            "m.pub",
        ]))
    .expect(0);
    assert_ok(
        &mini(&bin, t.path(), &["-Vm", "e/b.bin", "-p", "m.pub"]),
        "env key",
    );
}

#[test]
fn password_protected_minisign_key_through_password_env() {
    let Some(bin) = minisign() else { return };
    let t = tempfile::tempdir().unwrap();
    assert_ok(
        &mini_with_input(
            &bin,
            t.path(),
            &["-G", "-p", "p.pub", "-s", "p.key"],
            "hunter2-secret\nhunter2-secret\n",
        ),
        "minisign -G with a password",
    );
    write(&t.path().join("d/x.bin"), b"payload");
    let out = run(warden(t.path())
        .env("MINISIGN_PASSWORD", "hunter2-secret")
        .args([
            "sign",
            "d",
            "--secret-key",
            "p.key",
            "--password-env",
            "MINISIGN_PASSWORD",
            "--public-key",
            "p.pub",
        ]))
    .expect(0);
    assert!(!out.all().contains("hunter2"), "{}", out.all());
    assert_ok(
        &mini(&bin, t.path(), &["-Vm", "d/x.bin", "-p", "p.pub"]),
        "minisign -V",
    );
    // Wrong password: exit 2, no signature, the password is not echoed.
    write(&t.path().join("f/y.bin"), b"payload");
    let out = run(warden(t.path())
        .env("MINISIGN_PASSWORD", "wrong-guess-value")
        .args([
            "sign",
            "f",
            "--secret-key",
            "p.key",
            "--password-env",
            "MINISIGN_PASSWORD",
        ]))
    .expect(2);
    assert!(out.stderr.contains("wrong password"), "{}", out.stderr);
    assert!(!out.all().contains("wrong-guess-value"));
    assert!(!t.path().join("f/y.bin.minisig").exists());
}

#[test]
fn a_key_encrypted_by_warden_keygen_signs_with_minisign() {
    let Some(bin) = minisign() else { return };
    let t = tempfile::tempdir().unwrap();
    run(warden(t.path()).env("PW", "open-sesame-42").args([
        "keygen",
        "--password-env",
        "PW",
        "--public-key",
        "w.pub",
        "--secret-key",
        "w.key",
    ]))
    .expect(0);
    write(
        &t.path().join("x.bin"),
        b"signed by minisign with a warden key",
    );
    let sign = |password: &str| {
        mini_with_input(
            &bin,
            t.path(),
            &["-S", "-s", "w.key", "-m", "x.bin"],
            &format!("{password}\n"),
        )
    };
    let wrong = sign("open-sesame-43");
    assert!(
        !wrong.status.success(),
        "minisign accepted a wrong password"
    );
    assert_ok(&sign("open-sesame-42"), "minisign -S with the warden key");
    assert_ok(
        &mini(&bin, t.path(), &["-Vm", "x.bin", "-p", "w.pub"]),
        "minisign -V",
    );
    run(warden(t.path()).args(["verify", "x.bin", "--public-key", "w.pub"])).expect(0);
}

#[test]
fn minisign_comment_with_trailing_space_verifies() {
    let Some(bin) = minisign() else { return };
    let t = tempfile::tempdir().unwrap();
    assert_ok(
        &mini(&bin, t.path(), &["-G", "-W", "-p", "m.pub", "-s", "m.key"]),
        "keygen",
    );
    write(&t.path().join("r.bin"), b"release");
    assert_ok(
        &mini(
            &bin,
            t.path(),
            &["-S", "-s", "m.key", "-m", "r.bin", "-t", "release v1 "],
        ),
        "sign",
    );
    // A comment that binds no name is accepted, as `minisign -V` accepts it, shown in full and
    // said (issue 47).
    let out = run(warden(t.path()).args(["verify", "r.bin", "--public-key", "m.pub"])).expect(0);
    let id = out.stdout.split("key ").nth(1).unwrap()[..16].to_string();
    assert_eq!(
        out.stdout,
        format!("OK    r.bin  key {id} (m.pub)  comment \"release v1 \"\n1 verified, 0 failed, 0 errors\n")
    );
    assert_eq!(
        out.stderr,
        "warden: warning: r.bin: the trusted comment binds no file or tag, so the signature would verify the same bytes under another name or release (minisign accepts it too)\n"
    );
    // Legacy (-l) signatures are refused unless --allow-legacy.
    write(&t.path().join("l.bin"), b"legacy");
    assert_ok(
        &mini(&bin, t.path(), &["-S", "-l", "-s", "m.key", "-m", "l.bin"]),
        "sign -l",
    );
    let out = run(warden(t.path()).args(["verify", "l.bin", "--public-key", "m.pub"])).expect(1);
    assert!(out.stdout.contains("legacy"), "{}", out.stdout);
    run(warden(t.path()).args(["verify", "l.bin", "--allow-legacy", "--public-key", "m.pub"]))
        .expect(0);
}
