//! Bad input: each case exits 2 with a message naming the file and line, panics nowhere, leaves
//! no temp file, and keeps existing signatures unchanged.

use std::fs;
use std::path::Path;

use crate::common::*;

const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn signed_release(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (pk, sk) = keypair(dir, "k");
    write(&dir.join("dist/a.bin"), b"");
    run(warden(dir).args(["sign", "dist", "--secret-key"]).arg(&sk)).expect(0);
    (pk, sk)
}

#[test]
fn bad_public_keys() {
    let t = tempfile::tempdir().unwrap();
    let (pk, _) = signed_release(t.path());
    let good = fs::read_to_string(&pk).unwrap();
    let cases = [
        (
            "truncated.pub",
            good[..80].to_string(),
            "truncated.pub: line 2: expected 56 base64 characters",
        ),
        (
            "garbled.pub",
            good.replacen("RW", "R!", 1),
            "garbled.pub: line 2: expected 56 base64 characters: not valid base64",
        ),
        (
            "nocomment.pub",
            good.lines().nth(1).unwrap().to_string(),
            "nocomment.pub: line 1: expected \"untrusted comment: ",
        ),
        ("empty.pub", String::new(), "empty.pub: line 1: empty file"),
    ];
    for (name, text, words) in cases {
        write(&t.path().join(name), text.as_bytes());
        let out = run(warden(t.path()).args(["verify", "dist", "--public-key", name])).expect(2);
        assert!(out.stderr.contains(words), "{name}: {}", out.stderr);
    }
}

#[test]
fn a_missing_keys_directory_is_named_and_its_cause_said_once() {
    let t = tempfile::tempdir().unwrap();
    signed_release(t.path());
    let out = run(warden(t.path()).args(["verify", "dist"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: loading trusted keys (pass --public-key FILE or --keys-dir DIR): \
         reading keys: No such file or directory (os error 2)\n"
    );
}

/// Keys and signatures are small; a huge one is refused by size, not read into memory whole.
#[test]
fn oversized_keys_and_signatures_are_refused_by_size() {
    let t = tempfile::tempdir().unwrap();
    let (pk, _) = signed_release(t.path());
    let big = "A".repeat(100_000);
    write(&t.path().join("big.pub"), big.as_bytes());
    write(&t.path().join("big.key"), big.as_bytes());
    let out = run(warden(t.path()).args(["verify", "dist", "--public-key", "big.pub"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: big.pub: larger than 64 KiB: not a minisign public key\n"
    );
    let out = run(warden(t.path()).args(["sign", "dist", "--force", "--secret-key", "big.key"]))
        .expect(2);
    assert_eq!(
        out.stderr,
        "warden: big.key: larger than 64 KiB: not a minisign secret key\n"
    );
    let out = run(warden(t.path())
        .args(["sign", "dist", "--force", "--secret-key-stdin"])
        .stdin(fs::File::open(t.path().join("big.key")).unwrap()))
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: <stdin>: larger than 64 KiB: not a minisign secret key\n"
    );
    write(&t.path().join("bad.key"), b"untrusted comment: \xff\n");
    let out = run(warden(t.path()).args(["sign", "dist", "--force", "--secret-key", "bad.key"]))
        .expect(2);
    assert_eq!(
        out.stderr,
        "warden: bad.key: not UTF-8 text: not a minisign secret key\n"
    );
    write(&t.path().join("dist/a.bin.minisig"), big.as_bytes());
    let out = run(warden(t.path())
        .args(["verify", "dist/a.bin", "--public-key"])
        .arg(&pk))
    .expect(2);
    assert!(
        out.stdout
            .contains("dist/a.bin.minisig: larger than 64 KiB: not a minisign signature"),
        "{}",
        out.stdout
    );
}

#[test]
fn bad_signature_files() {
    let t = tempfile::tempdir().unwrap();
    let (pk, _) = signed_release(t.path());
    let sig_path = t.path().join("dist/a.bin.minisig");
    let good = fs::read_to_string(&sig_path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let cases = [
        (lines[..2].join("\n"), "line 3: missing"),
        (String::new(), "line 1: missing"),
        (
            good.replacen("RU", "R#", 1),
            "line 2: expected 100 base64 characters",
        ),
        (
            format!(
                "{}\n{}\n{}\n{}\n",
                lines[0],
                lines[1],
                lines[2],
                &lines[3][..20]
            ),
            "line 4: expected 88 base64 characters",
        ),
        (
            good.replace("\ntrusted comment: ", "\ncomment: "),
            "line 3: expected \"trusted comment: ",
        ),
        (
            "garbage".to_string(),
            "line 1: expected \"untrusted comment: ",
        ),
    ];
    for (text, words) in cases {
        fs::write(&sig_path, &text).unwrap();
        let out = run(warden(t.path())
            .args(["verify", "dist/a.bin", "--public-key"])
            .arg(&pk))
        .expect(2);
        assert!(
            out.stdout.contains("dist/a.bin.minisig: ") && out.stdout.contains(words),
            "{text:?}: {}",
            out.stdout
        );
    }
}

#[test]
fn bad_checksum_lines() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = signed_release(t.path());
    let cases = [
        (
            format!("zz{}  a.bin\n", &SHA[2..]),
            "SHA256SUMS: line 1: ",
            "is not 64 (SHA-256) or 128 (SHA-512) hex digits",
        ),
        (
            format!("{SHA}  a.bin\n{SHA}\n"),
            "SHA256SUMS: line 2: ",
            "missing file name",
        ),
        (format!("{SHA}  ../x\n"), "SHA256SUMS: line 1: ", "\"..\""),
        (
            format!("{SHA}  /etc/passwd\n"),
            "SHA256SUMS: line 1: ",
            "absolute",
        ),
        (
            format!("{SHA}  a.bin\r\n"),
            "SHA256SUMS: line 1: ",
            "carriage return",
        ),
    ];
    for (text, at, words) in cases {
        // Signed so that only the format is at fault.
        write(&t.path().join("dist/SHA256SUMS"), text.as_bytes());
        let sums = t.path().join("dist/SHA256SUMS");
        fs::remove_file(t.path().join("dist/SHA256SUMS.minisig")).unwrap();
        run(warden(t.path())
            .args(["sign", "--no-checksums", "--secret-key"])
            .arg(&sk)
            .arg(&sums))
        .expect(0);
        let out = run(warden(t.path())
            .args(["verify", "dist", "--public-key"])
            .arg(&pk))
        .expect(2);
        assert!(
            out.stdout.contains(at) && out.stdout.contains(words),
            "{text:?}: {}",
            out.stdout
        );
    }
}

#[test]
fn bad_secret_keys_and_failed_runs_leave_everything_as_it_was() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = signed_release(t.path());
    let before = fs::read(t.path().join("dist/a.bin.minisig")).unwrap();
    let good = fs::read_to_string(&sk).unwrap();
    let b64 = good.lines().nth(1).unwrap();
    let cases = [
        (
            "trunc.key",
            format!("untrusted comment: k\n{}\n", &b64[..100]),
            "trunc.key: line 2: expected 212 base64 characters, found 100",
        ),
        (
            "garbled.key",
            format!("untrusted comment: k\n{}*{}\n", &b64[..10], &b64[11..]),
            "garbled.key: line 2: expected 212 base64 characters: not valid base64",
        ),
        ("empty.key", String::new(), "empty.key: empty"),
        (
            "three.key",
            format!("untrusted comment: k\n{b64}\nmore\n"),
            "three.key: line 3: unexpected text",
        ),
    ];
    for (name, text, words) in cases {
        write(&t.path().join(name), text.as_bytes());
        let out =
            run(warden(t.path()).args(["sign", "dist", "--force", "--secret-key", name])).expect(2);
        assert!(out.stderr.contains(words), "{name}: {}", out.stderr);
        assert_eq!(
            fs::read(t.path().join("dist/a.bin.minisig")).unwrap(),
            before
        );
        assert!(temp_files(&t.path().join("dist")).is_empty());
    }
    // A corrupted (but well-formed) unencrypted key: checksum mismatch.
    let mut raw = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64).unwrap();
    raw[100] ^= 1;
    let corrupt = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &raw);
    write(&t.path().join("corrupt.key"), corrupt.as_bytes());
    let out =
        run(warden(t.path()).args(["sign", "dist", "--force", "--secret-key", "corrupt.key"]))
            .expect(2);
    assert!(
        out.stderr.contains("checksum does not match"),
        "{}",
        out.stderr
    );
    // An encrypted key whose scrypt limits ask for more than minisign allows: refused at once,
    // not hours of key derivation.
    let b64_engine = &base64::engine::general_purpose::STANDARD;
    let (_, enc_sk) = encrypted_keypair(t.path(), "enc", "pw");
    let enc = fs::read_to_string(enc_sk).unwrap();
    let mut raw = base64::Engine::decode(b64_engine, enc.lines().nth(1).unwrap()).unwrap();
    let sign_with = |key: &[u8]| {
        write(
            &t.path().join("forged.key"),
            base64::Engine::encode(b64_engine, key).as_bytes(),
        );
        run(warden(t.path()).env("PW", "pw").args([
            "sign",
            "dist",
            "--force",
            "--secret-key",
            "forged.key",
            "--password-env",
            "PW",
        ]))
        .expect(2)
    };
    for (range, value) in [(38..46, 1u64 << 40), (46..54, 1u64 << 31)] {
        let mut forged = raw.clone();
        forged[range].copy_from_slice(&value.to_le_bytes());
        let out = sign_with(&forged);
        assert!(
            out.stderr.contains(
                "forged.key: the secret key's scrypt parameters are outside minisign's limits"
            ),
            "{}",
            out.stderr
        );
    }
    // A flipped bit in the encrypted part reads as a wrong password: the checksum catches it.
    raw[70] ^= 1;
    let out = sign_with(&raw);
    assert!(out.stderr.contains("wrong password"), "{}", out.stderr);
    assert_eq!(
        fs::read(t.path().join("dist/a.bin.minisig")).unwrap(),
        before
    );
    // A missing artifact path: usage error, nothing written.
    let out = run(warden(t.path())
        .args(["sign", "nope", "--secret-key"])
        .arg(&sk))
    .expect(2);
    assert!(out.stderr.contains("nope"), "{}", out.stderr);
}

#[test]
fn symlink_leaving_the_release_directory_is_rejected() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("outside.bin"), b"outside");
    write(&t.path().join("dist/a.bin"), b"a");
    #[cfg(unix)]
    std::os::unix::fs::symlink(t.path().join("outside.bin"), t.path().join("dist/link.bin"))
        .unwrap();
    // Sign the link explicitly (the walk skips links), then put it into a checksum file.
    run(warden(t.path())
        .args(["sign", "dist", "dist/link.bin", "--secret-key"])
        .arg(&sk))
    .expect(0);
    let out = run(warden(t.path())
        .args(["verify", "dist", "--public-key"])
        .arg(&pk))
    .expect(1);
    assert!(
        out.stdout.contains("outside the release directory"),
        "{}",
        out.stdout
    );
}

/// A FIFO named in a signed SHA256SUMS (as a hostile tarball can hold) would block the open
/// forever; a FIFO named on the command line likewise. Both fail at once. (`timeout` turns a
/// regression into exit 124 instead of a hung test.)
#[test]
#[cfg(unix)]
fn a_fifo_is_never_opened_as_an_artifact() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("dist/a.bin"), b"a");
    let made = std::process::Command::new("mkfifo")
        .arg(t.path().join("dist/pipe.bin"))
        .status()
        .unwrap();
    assert!(made.success());
    let within = |args: &[&str]| {
        run(std::process::Command::new("timeout")
            .arg("20")
            .arg(warden_bin())
            .args(args)
            .current_dir(t.path()))
    };
    let (sk, pk) = (sk.to_str().unwrap(), pk.to_str().unwrap());
    let out = within(&[
        "sign",
        "dist/pipe.bin",
        "--no-checksums",
        "--secret-key",
        sk,
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    // A valid signature for the name, made on a regular file elsewhere: verify gets as far as
    // reading the artifact.
    write(&t.path().join("elsewhere/pipe.bin"), b"");
    within(&[
        "sign",
        "elsewhere/pipe.bin",
        "--no-checksums",
        "--secret-key",
        sk,
    ])
    .expect(0);
    fs::copy(
        t.path().join("elsewhere/pipe.bin.minisig"),
        t.path().join("dist/pipe.bin.minisig"),
    )
    .unwrap();
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    write(
        &t.path().join("dist/SHA256SUMS"),
        format!("{empty}  pipe.bin\n").as_bytes(),
    );
    within(&[
        "sign",
        "dist/SHA256SUMS",
        "--no-checksums",
        "--secret-key",
        sk,
    ])
    .expect(0);
    for target in ["dist", "dist/pipe.bin"] {
        let out = within(&["verify", target, "--public-key", pk]).expect(1);
        assert!(
            out.stdout.contains(
                "FAIL  dist/pipe.bin  not a regular file (FIFOs, devices and directories are never read)"
            ),
            "{target}: {}",
            out.stdout
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let t = tempfile::tempdir().unwrap();
    let out = run(warden(t.path()).args(["verify", "x"])).expect(2);
    assert!(out.stderr.contains("keys"), "{}", out.stderr);
    run(warden(t.path()).args(["sign", "x"])).expect(2);
    let (pk, _) = keypair(t.path(), "k");
    let out = run(warden(t.path())
        .args(["verify", "does-not-exist", "--public-key"])
        .arg(&pk))
    .expect(2);
    assert!(
        out.stdout
            .contains("ERROR does-not-exist  no such file or directory"),
        "{}",
        out.stdout
    );
    run(warden(t.path()).args(["frobnicate"])).expect(2);
}
