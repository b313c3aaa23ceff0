//! Issue 11: each promise of README and SECURITY.md, attacked through the real binary. Every run
//! goes through `timeout 20`, so an attack that makes warden block fails (exit 124) instead of
//! hanging CI.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::*;

/// `warden ARGS` in `dir` under `timeout 20`, with the developer's environment cleared and a fixed
/// signing time.
fn attack(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new("timeout");
    cmd.arg("20").arg(warden_bin()).args(args).current_dir(dir);
    without_developer_env(&mut cmd);
    cmd.env("SOURCE_DATE_EPOCH", "1764460800");
    run(&mut cmd)
}

/// A signed release: `keys/demo.pub` (trusted), `secret/demo.key`, and `dist/` with two artifacts,
/// their signatures and a signed `SHA256SUMS` for tag v1.2.3.
/// `warden sign dist --secret-key secret/demo.key ARGS…` in `dir`.
fn sign_dist(dir: &Path, args: &[&str]) -> Run {
    let mut all = vec!["sign", "dist", "--secret-key", "secret/demo.key"];
    all.extend_from_slice(args);
    attack(dir, &all)
}

fn release(t: &Path) {
    demo_keys(t);
    write(&t.join("dist/a.tar.gz"), b"artifact a");
    write(&t.join("dist/b.bin"), b"artifact b");
    sign_dist(t, &["--tag", "v1.2.3"]).expect(0);
}

const VERIFIED: &str = "\
OK    dist/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
OK    dist/a.tar.gz  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
OK    dist/b.bin  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
";

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

// 1. Unverified content in a release directory.

#[test]
#[cfg(unix)]
fn every_unlisted_entry_fails_the_run_and_is_named() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    let dist = t.path().join("dist");
    write(&dist.join(".hidden"), b"h");
    write(&dist.join("orphan.minisig"), b"not a signature");
    write(&dist.join("sub/payload"), b"p");
    std::os::unix::fs::symlink("a.tar.gz", dist.join("link")).unwrap();
    write(&dist.join(".warden-x1.tmp"), b"half");
    use std::os::unix::ffi::OsStrExt;
    write(
        &dist.join(std::ffi::OsStr::from_bytes(b"bad\xffname")),
        b"x",
    );
    let out = attack(t.path(), &["verify", "dist"]).expect(1);
    let why = "not listed in SHA256SUMS: unverified content in the release (pass --allow-unlisted to accept it)";
    assert_eq!(
        out.stdout,
        format!(
            "{VERIFIED}\
FAIL  dist/.hidden  a hidden file, {why}
FAIL  dist/.warden-x1.tmp  a temp file of an interrupted `warden sign`, {why}
FAIL  \"dist/bad\\u{{fffd}}name\"  a file whose name is not UTF-8, {why}
FAIL  dist/link  a symbolic link, {why}
FAIL  dist/orphan.minisig  a signature of no listed file, {why}
FAIL  dist/sub  a directory, {why}
3 verified, 6 failed, 0 errors
"
        )
    );
    let out = attack(
        t.path(),
        &["verify", "dist", "--allow-unlisted", "--format", "json"],
    )
    .expect(0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let skipped: Vec<&str> = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(skipped.len(), 6, "{skipped:?}");
    assert!(skipped.contains(&"dist/sub"), "{skipped:?}");
}

#[test]
fn a_deleted_checksum_list_fails() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    fs::remove_file(t.path().join("dist/SHA256SUMS")).unwrap();
    let out = attack(t.path(), &["verify", "dist"]).expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        "FAIL  dist/SHA256SUMS  missing: dist/SHA256SUMS.minisig is here but SHA256SUMS is not (deleted, or an interrupted `warden sign`)"
    );
    fs::remove_file(t.path().join("dist/SHA256SUMS.minisig")).unwrap();
    let out = attack(t.path(), &["verify", "dist"]).expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  dist  no SHA256SUMS: a release directory is verified against its signed checksum list; pass --allow-no-checksums to check each file's own signature instead\n0 verified, 1 failed, 0 errors\n"
    );
    // File by file, every file must carry a valid signature.
    write(&t.path().join("dist/unsigned"), b"u");
    let out = attack(t.path(), &["verify", "dist", "--allow-no-checksums"]).expect(1);
    assert_eq!(
        out.stdout,
        "\
OK    dist/a.tar.gz  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
OK    dist/b.bin  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
FAIL  dist/unsigned  missing signature dist/unsigned.minisig
2 verified, 1 failed, 0 errors
"
    );
    fs::remove_file(t.path().join("dist/unsigned")).unwrap();
    fs::remove_file(t.path().join("dist/b.bin")).unwrap();
    let out = attack(t.path(), &["verify", "dist", "--allow-no-checksums"]).expect(1);
    assert!(
        out.stdout.contains(
            "FAIL  dist/b.bin.minisig  a signature without its artifact: b.bin is missing"
        ),
        "{}",
        out.stdout
    );
}

// 2. The trust root must not come from the thing being verified.

#[test]
fn keys_inside_the_verified_directory_are_refused() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    let dist = t.path().join("dist");
    fs::create_dir_all(dist.join("keys")).unwrap();
    fs::copy(t.path().join("keys/demo.pub"), dist.join("keys/evil.pub")).unwrap();
    let out = attack(&dist, &["verify", "."]).expect(2);
    assert_eq!(
        out.stderr,
        "warden: the keys folder keys lies inside ., which is being verified: a release cannot vouch for itself; pass --keys-dir or --public-key outside it\n"
    );
    let out = attack(
        t.path(),
        &["verify", "dist", "--public-key", "dist/keys/evil.pub"],
    )
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: the key dist/keys/evil.pub lies inside dist, which is being verified: a release cannot vouch for itself; pass --keys-dir or --public-key outside it\n"
    );
    // A file of the download, verified from its own folder: the keys/ that came beside it are
    // not used either (nor a ./minisign.pub: tests/cli/first_hour.rs).
    let out = attack(&dist, &["verify", "a.tar.gz"]).expect(2);
    assert_eq!(
        out.all(),
        "warden: the keys folder keys is beside a.tar.gz, in the folder it came in: a download cannot vouch for itself; name the key you trust (-P KEY, or --public-key FILE)\n"
    );
    // Named by the user, a key is their word, as with minisign's -p.
    attack(
        &dist,
        &["verify", "a.tar.gz", "--public-key", "../keys/demo.pub"],
    )
    .expect(0);
}

// 3. Nothing may block.

#[test]
#[cfg(unix)]
fn fifos_in_place_of_signatures_and_lists_do_not_block() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    let dist = t.path().join("dist");
    fs::remove_file(dist.join("a.tar.gz.minisig")).unwrap();
    mkfifo(&dist.join("a.tar.gz.minisig"));
    let out = attack(t.path(), &["verify", "dist/a.tar.gz"]).expect(2);
    assert!(
        out.stdout
            .contains("ERROR dist/a.tar.gz  reading dist/a.tar.gz.minisig: not a regular file"),
        "{}",
        out.stdout
    );
    for name in ["SHA256SUMS", "SHA256SUMS.minisig"] {
        let t = tempfile::tempdir().unwrap();
        release(t.path());
        let path = t.path().join("dist").join(name);
        fs::remove_file(&path).unwrap();
        mkfifo(&path);
        let out = attack(t.path(), &["verify", "dist"]);
        assert_ne!(out.code, 0, "{name}: {}", out.stdout);
        assert_ne!(out.code, 124, "{name}: blocked");
        assert!(
            out.stdout.contains("not a regular file"),
            "{name}: {}",
            out.stdout
        );
    }
    // A key.
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    mkfifo(&t.path().join("keys/fifo.pub"));
    let out = attack(t.path(), &["verify", "dist"]).expect(2);
    assert!(
        out.stderr.contains("keys/fifo.pub: not a regular file"),
        "{}",
        out.stderr
    );
}

// 4. The name binding cannot be skipped.

/// A signature over `data` made by the minisign crate with the demo key and `comment`.
fn minisign_signature(t: &Path, data: &[u8], comment: &str) -> String {
    let text = fs::read_to_string(t.join("secret/demo.key")).unwrap();
    let sk = minisign::SecretKey::from_unencrypted_box(
        minisign::SecretKeyBox::from_string(&text).unwrap(),
    )
    .unwrap();
    minisign::sign(None, &sk, data, Some(comment), None)
        .unwrap()
        .to_string()
}

/// Issue 47: a comment that binds no file is accepted, as minisign accepts it, and said (it would
/// verify the same bytes under another name); one that binds another file fails, whatever flag.
#[test]
fn a_signature_bound_to_no_file_is_said_and_one_for_another_file_fails() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    let no_file = "warden: warning: dist/a.tar.gz: the trusted comment binds no file name, so the signature would verify the same bytes under another name\n";
    let nothing = "warden: warning: dist/a.tar.gz: the trusted comment binds no file or tag, so the signature would verify the same bytes under another name or release (minisign accepts it too)\n";
    for (comment, line, warning) in [
        ("timestamp:1764460800\ttag:v1.2.3", "  tag v1.2.3", no_file),
        (
            "timestamp:1764460800\tFILE:a.tar.gz",
            "  comment \"timestamp:1764460800\\tFILE:a.tar.gz\"",
            nothing,
        ),
        (
            "timestamp:1764460800\t file:a.tar.gz",
            "  file a.tar.gz",
            "",
        ),
        (
            "timestamp:1764460800\tfile:a.tar.gz\tfile:a.tar.gz",
            "  file a.tar.gz",
            "",
        ),
    ] {
        let sig = minisign_signature(t.path(), b"artifact a", comment);
        write(&t.path().join("dist/a.tar.gz.minisig"), sig.as_bytes());
        let out = attack(t.path(), &["verify", "dist/a.tar.gz"]).expect(0);
        assert_eq!(
            out.stdout,
            format!("OK    dist/a.tar.gz  key {DEMO_KEY_ID} (keys/demo.pub){line}\n1 verified, 0 failed, 0 errors\n"),
            "{comment:?}"
        );
        assert_eq!(out.stderr, warning, "{comment:?}");
    }
    // A file: field that names another file fails, and --allow-unbound (ignored now) changes
    // nothing.
    let sig = minisign_signature(t.path(), b"artifact a", "file:b.bin\tfile:b.bin");
    write(&t.path().join("dist/a.tar.gz.minisig"), sig.as_bytes());
    let out = attack(t.path(), &["verify", "dist/a.tar.gz", "--allow-unbound"]).expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  dist/a.tar.gz  the signature is for file:b.bin, not a.tar.gz (renamed or swapped artifact)\n0 verified, 1 failed, 0 errors\n"
    );
}

// 5. Same base name in different folders.

#[test]
fn a_namesake_from_another_folder_is_caught() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/linux/ethrex"), b"linux build");
    write(&t.path().join("dist/macos/ethrex"), b"macos build");
    let out = attack(
        t.path(),
        &["sign", "-r", "dist", "--secret-key", "secret/demo.key"],
    )
    .expect(0);
    assert!(
        out.stderr.contains("warden: warning: 2 files are named ethrex (dist/linux/ethrex, dist/macos/ethrex): each signature binds its folder (path:)"),
        "{}",
        out.stderr
    );
    let sig = fs::read_to_string(t.path().join("dist/linux/ethrex.minisig")).unwrap();
    assert!(
        sig.contains("\tfile:ethrex\thashed\tpath:linux/ethrex"),
        "{sig}"
    );
    attack(t.path(), &["verify", "dist"]).expect(0);
    for (from, to) in [
        ("linux/ethrex", "macos/ethrex"),
        ("linux/ethrex.minisig", "macos/ethrex.minisig"),
    ] {
        fs::copy(
            t.path().join("dist").join(from),
            t.path().join("dist").join(to),
        )
        .unwrap();
    }
    let out = attack(t.path(), &["verify", "dist/macos/ethrex"]).expect(1);
    assert!(
        out.stdout
            .starts_with("FAIL  dist/macos/ethrex  the signature is for path:linux/ethrex, not "),
        "{}",
        out.stdout
    );
}

// 6. Legacy algorithm confusion.

#[test]
fn a_relabelled_prehashed_signature_is_refused() {
    use base64::Engine as _;
    use blake2::Digest as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    for comment in [None, Some("timestamp:1764460800\tfile:a.tar.gz")] {
        let dist = t.path().join("dist");
        let sig = match comment {
            None => fs::read_to_string(dist.join("a.tar.gz.minisig")).unwrap(),
            Some(c) => minisign_signature(t.path(), b"artifact a", c),
        };
        // The file becomes the 64 bytes the prehashed signature signed, and `ED` becomes `Ed`.
        let hash = blake2::Blake2b512::digest(b"artifact a");
        let forged = tempfile::tempdir().unwrap();
        write(&forged.path().join("a.tar.gz"), &hash);
        let mut lines: Vec<String> = sig.lines().map(str::to_string).collect();
        let mut raw = b64.decode(&lines[1]).unwrap();
        raw[..2].copy_from_slice(b"Ed");
        lines[1] = b64.encode(raw);
        write(
            &forged.path().join("a.tar.gz.minisig"),
            format!("{}\n", lines.join("\n")).as_bytes(),
        );
        let key = t.path().join("keys/demo.pub");
        let out = attack(
            forged.path(),
            &[
                "verify",
                "a.tar.gz",
                "--allow-legacy",
                "--public-key",
                key.to_str().unwrap(),
            ],
        )
        .expect(1);
        let expected = match comment {
            None => "FAIL  a.tar.gz  a legacy signature whose trusted comment says `hashed`: its algorithm was relabelled; refused\n",
            Some(_) => "FAIL  a.tar.gz  a legacy signature over exactly 64 bytes: refused, as it may be a relabelled prehashed signature (see SECURITY.md)\n",
        };
        assert!(out.stdout.starts_with(expected), "{}", out.stdout);
    }
}

// 7. A signature alone is a usage error.

#[test]
fn a_signature_without_its_artifact_is_a_usage_error() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    let out = attack(t.path(), &["verify", "dist/a.tar.gz.minisig"]).expect(2);
    assert_eq!(
        out.stderr,
        "warden: dist/a.tar.gz.minisig: give the artifact, not its signature (warden verify dist/a.tar.gz)\n"
    );
    let out = attack(
        t.path(),
        &["verify", "dist/a.tar.gz", "dist/a.tar.gz.minisig"],
    )
    .expect(0);
    assert!(
        out.stdout.contains(
            "SKIP  dist/a.tar.gz.minisig  the signature of dist/a.tar.gz, checked with it\n"
        ),
        "{}",
        out.stdout
    );
}

// 8. An output that is another output or an input.

#[test]
fn clashing_outputs_are_refused_before_anything_is_written() {
    for force in [false, true] {
        for (checksums, clash) in [
            ("dist/b.bin.minisig", "dist/b.bin.minisig would be both the signature of dist/b.bin and the checksum list"),
            ("dist/a.tar.gz", "dist/a.tar.gz would be both the artifact dist/a.tar.gz and the checksum list"),
        ] {
            let t = tempfile::tempdir().unwrap();
            demo_keys(t.path());
            write(&t.path().join("dist/a.tar.gz"), b"artifact a");
            write(&t.path().join("dist/b.bin"), b"artifact b");
            let mut args = vec!["sign", "dist", "--secret-key", "secret/demo.key", "--checksums", checksums];
            if force {
                args.push("--force");
            }
            let out = attack(t.path(), &args).expect(2);
            assert_eq!(
                out.stderr,
                format!("warden: {clash}: refusing before anything is written (choose another --checksums PATH)\n")
            );
            let mut left: Vec<String> = fs::read_dir(t.path().join("dist"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            left.sort();
            assert_eq!(left, ["a.tar.gz", "b.bin"], "force {force}");
            assert_eq!(fs::read(t.path().join("dist/a.tar.gz")).unwrap(), b"artifact a");
        }
    }
}

#[test]
fn force_replaces_an_earlier_list_never_another_file() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    write(&t.path().join("notes.txt"), b"not a checksum list\n");
    let out = sign_dist(t.path(), &["--checksums", "notes.txt", "--force"]).expect(2);
    assert_eq!(
        out.stderr,
        "warden: notes.txt exists and is not a checksum list: refusing to replace it, even with --force\n"
    );
    assert_eq!(
        fs::read(t.path().join("notes.txt")).unwrap(),
        b"not a checksum list\n"
    );
    // An earlier run's list is replaced.
    sign_dist(t.path(), &["--tag", "v1.2.3", "--force"]).expect(0);
    attack(t.path(), &["verify", "dist"]).expect(0);
}

// 9. Two runs on one directory; stale temp files.

#[test]
fn stale_temp_files_are_removed_and_a_second_run_is_refused() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/a.tar.gz"), b"artifact a");
    write(
        &t.path().join("dist/.warden-AbC123.tmp"),
        b"half a signature",
    );
    // A temp file of an interrupted run is unverified content.
    let out = attack(
        t.path(),
        &["sign", "dist", "--secret-key", "secret/demo.key"],
    )
    .expect(0);
    assert!(
        out.stderr
            .contains("warden: warning: removed 1 temp file an interrupted run left behind: "),
        "{}",
        out.stderr
    );
    assert!(!t.path().join("dist/.warden-AbC123.tmp").exists());
    attack(t.path(), &["verify", "dist"]).expect(0);
    // Hold the directory's lock as a running `warden sign` would.
    let dir = fs::File::open(t.path().join("dist")).unwrap();
    dir.lock().unwrap();
    let out = attack(
        t.path(),
        &["sign", "dist", "--secret-key", "secret/demo.key", "--force"],
    )
    .expect(2);
    assert!(
        out.stderr
            .ends_with("dist: another warden command is writing here; wait for it to finish\n"),
        "{}",
        out.stderr
    );
}

// 10. Thousands of artifacts.

#[test]
fn more_artifacts_than_open_files_are_signed() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    for i in 0..1100 {
        write(&t.path().join(format!("dist/f{i:04}")), b"x");
    }
    // 256 descriptors: a handle per staged output would run out.
    let out = run(Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 256 && exec timeout 60 {} sign dist --secret-key secret/demo.key",
            warden_bin().display()
        ))
        .current_dir(t.path())
        .env_remove("SOURCE_DATE_EPOCH"))
    .expect(0);
    assert!(
        out.stdout
            .ends_with("1100 artifacts signed with key 8F457D1A3C3B50B5\n"),
        "{}",
        out.stdout
    );
}

// 11. Skipped inputs are named.

#[test]
fn signatures_and_lists_skipped_as_inputs_are_named() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    // The run's own outputs (replaced with --force) are not news; a signature of no artifact is.
    write(
        &t.path().join("dist/gone.bin.minisig"),
        b"a stray signature",
    );
    let out = sign_dist(t.path(), &["--tag", "v1.2.3", "--force"]).expect(0);
    assert_eq!(
        out.stderr,
        "warden: warning: skipped dist/gone.bin.minisig: a signature: never signed\n"
    );
}

// 12. keygen with one file for both keys.

#[test]
fn keygen_refuses_one_file_for_both_keys() {
    let t = tempfile::tempdir().unwrap();
    for force in [false, true] {
        let mut args = vec![
            "keygen",
            "--unencrypted",
            "--secret-key",
            "k",
            "--public-key",
            "./k",
        ];
        if force {
            args.push("--force");
        }
        let out = attack(t.path(), &args).expect(2);
        assert_eq!(
            out.stderr,
            "warden: --secret-key and --public-key are the same file (k): refusing before anything is written\n"
        );
        assert!(!t.path().join("k").exists());
    }
}

// 13. `secret-keys` finds real shapes.

/// The demo secret key's base64 line (a consistent, unencrypted key).
fn demo_secret_line(t: &Path) -> String {
    demo_keypair(&t.join("k.pub"), &t.join("k.key"));
    let text = fs::read_to_string(t.join("k.key")).unwrap();
    fs::remove_file(t.join("k.key")).unwrap();
    fs::remove_file(t.join("k.pub")).unwrap();
    text.lines().nth(1).unwrap().to_string()
}

#[test]
fn secret_keys_are_found_in_every_shape_they_are_pasted_in() {
    let t = tempfile::tempdir().unwrap();
    let key = demo_secret_line(t.path());
    let unpadded = key.trim_end_matches('=');
    let wrapped: Vec<&str> = key
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            format!("KEY={key}\r\n")
                .encode_utf16()
                .flat_map(|u| u.to_le_bytes()),
        )
        .collect();
    let files: Vec<(&str, Vec<u8>)> = vec![
        (".env", format!("MINISIGN_SECRET_KEY={key}\n").into_bytes()),
        (
            "ci/vars.yml",
            format!("release:\n  key: \"{unpadded}\"\n").into_bytes(),
        ),
        (
            "ci/vars.json",
            format!("{{\"key\": \"{key}\"}}").into_bytes(),
        ),
        (
            "scripts/env.sh",
            format!("export MINISIGN_SECRET_KEY={unpadded}\n").into_bytes(),
        ),
        (
            "notes/wrapped.txt",
            format!("key:\n{}\n", wrapped.join("\n")).into_bytes(),
        ),
        (
            "notes/latin1.txt",
            [b"cl\xe9: ".as_slice(), key.as_bytes()].concat(),
        ),
        ("notes/utf16.txt", utf16),
        (
            "notes/big.log",
            [vec![b'.'; 100_000].as_slice(), b"\n", key.as_bytes()].concat(),
        ),
        ("deploy/target/key.txt", key.clone().into_bytes()),
        ("web/node_modules/key.txt", key.clone().into_bytes()),
        // Build output at the root is not searched.
        ("target/key.txt", key.clone().into_bytes()),
        // A look-alike: the right prefix, an inconsistent key.
        (
            "tests/lookalike.txt",
            format!("RWQAAEIy{}", "A".repeat(204)).into_bytes(),
        ),
    ];
    for (name, bytes) in &files {
        write(&t.path().join(name), bytes);
    }
    let out = attack(t.path(), &["check"]);
    let found: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("secret-keys"))
        .map(|l| l.split_whitespace().nth(2).unwrap().trim_end_matches(':'))
        .collect();
    assert_eq!(
        found,
        [
            ".env:1",
            "ci/vars.json:1",
            "ci/vars.yml:2",
            "deploy/target/key.txt:1",
            "notes/big.log:2",
            "notes/latin1.txt:1",
            "notes/utf16.txt:1",
            "notes/wrapped.txt:2",
            "scripts/env.sh:1",
            "web/node_modules/key.txt:1",
        ],
        "{}",
        out.stdout
    );
}

// 14. Lint is not a read oracle.

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .unwrap();
    assert!(ok.success(), "git {args:?}");
}

const ENTRY: &str = "title = \"t\"\nstatus = \"open\"\nadded = 2025-01-01\nreview_by = 2999-01-01\nwhy = \"w\"\nremoval = \"r\"\n";

#[test]
fn lint_reads_only_files_git_tracks_and_never_git_internals() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path();
    git(repo, &["init", "-q"]);
    write(&repo.join("src/lib.rs"), b"fn tracked() {}\n");
    write(
        &repo.join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    git(repo, &["add", "src/lib.rs", "known_issues/registry.toml"]);
    write(&repo.join("untracked.env"), b"TOKEN=ghp_secret\n");
    let entry = format!(
        "{ENTRY}\n[[where]]\npath = \".git/config\"\nsymbol = \"ghp_guess\"\n\n[[where]]\npath = \"untracked.env\"\nsymbol = \"ghp_guess\"\n\n[[where]]\npath = \"src/lib.rs\"\nsymbol = \"tracked\"\n"
    );
    write(&repo.join("known_issues/oracle.toml"), entry.as_bytes());
    let out = attack(repo, &["known-issues", "lint"]).expect(1);
    assert_eq!(
        out.stdout,
        "\
known_issues/oracle.toml:9:8: where.path \".git/config\" must be a relative path inside the repository (no `..`, no `.git`, not absolute)
known_issues/oracle.toml:13:8: where.path \"untracked.env\" is not tracked by git: not read
known-issues lint: 1 entry, 2 problems
"
    );
}

// 15. The registry's doc path.

#[test]
#[cfg(unix)]
fn the_doc_path_stays_inside_and_is_read_guarded() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    write(
        &repo.join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\ndoc = \"../outside/x.md\"\n",
    );
    write(&repo.join("known_issues/e.toml"), ENTRY.as_bytes());
    let out = attack(&repo, &["known-issues", "lint"]).expect(1);
    assert!(
        out.stdout.starts_with("known_issues/registry.toml:2:1: doc \"../outside/x.md\" must be a relative path inside the repository"),
        "{}",
        out.stdout
    );
    attack(&repo, &["known-issues", "render"]).expect(2);
    assert!(!t.path().join("outside").exists());
    // A committed link from the doc's folder out of the repository is not written through.
    write(
        &repo.join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(t.path().join("elsewhere"), repo.join("docs")).unwrap();
    let out = attack(&repo, &["known-issues", "render"]).expect(2);
    assert!(
        out.stderr
            .contains("resolves outside the repository: refusing to write the doc there"),
        "{}",
        out.stderr
    );
    assert_eq!(fs::read_dir(t.path().join("elsewhere")).unwrap().count(), 0);
    // The doc as a link to /dev/zero, or as a FIFO: `check` neither grows nor blocks.
    fs::remove_file(repo.join("docs")).unwrap();
    fs::create_dir_all(repo.join("docs")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", repo.join("docs/known_issues.md")).unwrap();
    let out = attack(&repo, &["check"]);
    assert!(
        out.stdout
            .contains("FAIL  docs         docs/known_issues.md: out of date"),
        "{}",
        out.stdout
    );
    fs::remove_file(repo.join("docs/known_issues.md")).unwrap();
    mkfifo(&repo.join("docs/known_issues.md"));
    let out = attack(&repo, &["check"]);
    assert!(
        out.stdout
            .contains("FAIL  docs         docs/known_issues.md: out of date"),
        "{}",
        out.stdout
    );
}

// 16. Workflow-command injection.

/// Under Actions, the only lines that start with `::` are warden's own annotations, whose data
/// is escaped (a line break is `%0A`).
fn assert_no_injected_commands(stdout: &str) {
    for line in stdout.lines() {
        if line.trim_start().starts_with("::") {
            assert!(
                ["::error ", "::warning ", "::notice "]
                    .iter()
                    .any(|p| line.starts_with(p)),
                "injected: {line:?}\n{stdout}"
            );
            assert!(
                !line.contains("::stop-commands::") || line.contains("%0A"),
                "{line:?}"
            );
        }
    }
}

#[test]
#[cfg(unix)]
fn job_ids_and_file_names_cannot_issue_workflow_commands() {
    let t = tempfile::tempdir().unwrap();
    let wf = t.path().join(".github/workflows");
    let job = "sign\\n::stop-commands::pwned\\n::warning::fake";
    let text = format!(
        "on:\n  push:\n    tags: ['v*']\njobs:\n  \"{job}\":\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo \"$K\"\n        env:\n          K: ${{{{ secrets.MINISIGN_SECRET_KEY }}}}\n"
    );
    write(&wf.join("release.yml"), text.as_bytes());
    write(&wf.join("x\n::error::forged.yml"), b"on: [\n");
    let mut cmd = Command::new("timeout");
    cmd.arg("20")
        .arg(warden_bin())
        .args(["audit", "--offline"])
        .current_dir(t.path());
    without_developer_env(&mut cmd);
    cmd.env("GITHUB_ACTIONS", "true");
    let out = run(&mut cmd);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_no_injected_commands(&out.stdout);
    assert!(
        out.stdout
            .contains("(job \"sign\\n::stop-commands::pwned\\n::warning::fake\")"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\".github/workflows/x\\n::error::forged.yml\":2:1"),
        "{}",
        out.stdout
    );
}

/// What the audit now reads as a key's sink comes from the workflow too: a key file's path given
/// to an action, and an `env:` name read as a key's. Neither issues a command, nor reaches the
/// markdown as markup.
#[test]
fn key_file_paths_and_key_variable_names_cannot_issue_workflow_commands() {
    let t = tempfile::tempdir().unwrap();
    let text = "on: {push: {tags: ['v*']}}\njobs:\n  x:\n    runs-on: ubuntu-latest\n    env:\n      \"A\\n::stop-commands::p1\\n_SIGNING_KEY\": ${{ secrets.BLOB1 }}\n    steps:\n      - uses: timheuer/base64-to-file@v1\n        with:\n          fileName: \"x\\n::stop-commands::p2\\n<img src=x>.jks\"\n          encodedString: ${{ secrets.BLOB2 }}\n";
    write(&t.path().join(".github/workflows/a.yml"), text.as_bytes());
    let mut cmd = Command::new("timeout");
    cmd.arg("20")
        .arg(warden_bin())
        .args(["audit", "--offline"])
        .current_dir(t.path());
    without_developer_env(&mut cmd);
    cmd.env("GITHUB_ACTIONS", "true");
    let out = run(&mut cmd).expect(1);
    assert_no_injected_commands(&out.stdout);
    assert!(
        out.stdout
            .contains("holds BLOB1 (handed to `A\\n::stop-commands::p1\\n_SIGNING_KEY`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("BLOB2 (written to `x\\n::stop-commands::p2\\n<img src=x>.jks`"),
        "{}",
        out.stdout
    );
    let mut cmd = Command::new("timeout");
    cmd.arg("20")
        .arg(warden_bin())
        .args(["audit", "--offline", "--format", "markdown"])
        .current_dir(t.path());
    without_developer_env(&mut cmd);
    let md = run(&mut cmd).expect(1);
    assert!(!md.stdout.contains("\n::stop-commands::"), "{}", md.stdout);
}

#[test]
fn test_names_and_registry_titles_cannot_issue_workflow_commands() {
    let t = tempfile::tempdir().unwrap();
    let title = "t\\n::stop-commands::x";
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    write(
        &t.path().join("known_issues/e.toml"),
        format!(
            "{}\n[[exclude]]\nsuite = \"s\"\ntest = \"a\"\n",
            ENTRY.replace("title = \"t\"", &format!("title = \"{title}\""))
        )
        .as_bytes(),
    );
    let suite = serde_json::json!({
        "name": "s\n::warning::suite",
        "testCases": {
            "1": {"name": "a (ethrex)", "summaryResult": {"pass": false, "details": "x\n::error::details\r::notice::cr"}},
            "2": {"name": "b\n::stop-commands::y (ethrex)", "summaryResult": {"pass": false}}
        }
    });
    write(&t.path().join("logs/1.json"), suite.to_string().as_bytes());
    // A title is one line: the registry is refused, and the error cannot issue a command either.
    let out = attack(t.path(), &["hive", "check", "logs", "--client", "ethrex"]).expect(2);
    assert_eq!(
        out.stderr,
        "warden: known_issues/e.toml:1:1: title holds a line break or control character: names and titles are one line (run `warden known-issues lint`)\n"
    );
    let out = attack(t.path(), &["known-issues", "lint"]).expect(1);
    assert_no_injected_commands(&out.stdout);
    // With a clean registry, the suite's own names and failure text are escaped.
    write(
        &t.path().join("known_issues/e.toml"),
        format!("{ENTRY}\n[[exclude]]\nsuite = \"s\"\ntest = \"a\"\n").as_bytes(),
    );
    let out = attack(t.path(), &["hive", "check", "logs", "--client", "ethrex"]).expect(1);
    assert_no_injected_commands(&out.stdout);
    assert!(
        out.stdout
            .contains("    | …\n    | \"::error::details\\r::notice::cr\"\n"),
        "{}",
        out.stdout
    );
    let out = attack(
        t.path(),
        &[
            "known-issues",
            "summary",
            "--format",
            "text",
            "--results",
            "logs",
        ],
    );
    assert_no_injected_commands(&out.stdout);
}

// 17. Markdown and HTML in the PR comment.

#[test]
fn the_pr_comment_cannot_mention_link_or_forge_the_marker() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n\n[upstream]\n\"@org/team\" = \"<b>v1</b>\"\n",
    );
    let entry = ENTRY
        .replace("title = \"t\"", "title = \"**Approved** by @org/security <!-- warden:known-issues -->\"")
        .replace("why = \"w\"", "why = \"See [docs](https://evil.example) <img src=x onerror=alert(1)> `code @x` and cc @alice\"");
    write(
        &t.path().join("known_issues/e.toml"),
        format!("{entry}\n[[exclude]]\nsuite = \"s\"\ntest = \"a @bob\"\n").as_bytes(),
    );
    let out = attack(t.path(), &["known-issues", "summary"]).expect(0);
    insta::assert_snapshot!(out.stdout, @r"
    ## Known issues — intentionally skipped tests

    1 known issue, 1 excluded test.
    Pinned upstream: @&#8203;org/team `<b>v1</b>`.

    ### \*\*Approved\*\* by @&#8203;org/security  (`e`, open)

    See \[docs\](https:&#8203;//evil.example) &lt;img src=x onerror=alert(1)&gt; `code @x` and cc @&#8203;alice

    1 exclusion.

    <!-- warden:known-issues -->
    ");
    assert_eq!(
        out.stdout.matches("<!-- warden:known-issues -->").count(),
        1
    );
}

// 19. Limits on hostile input.

#[test]
fn oversized_workflows_are_refused_before_parsing() {
    let t = tempfile::tempdir().unwrap();
    let wf = t.path().join(".github/workflows");
    let nested = format!(
        "on: push\njobs: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    write(&wf.join("nested.yml"), nested.as_bytes());
    let mut many = String::from("on: push\njobs:\n");
    for i in 0..4000 {
        many.push_str(&format!(
            "  j{i}:\n    runs-on: x\n    steps:\n      - run: echo\n"
        ));
    }
    write(&wf.join("many.yml"), many.as_bytes());
    let out = attack(t.path(), &["audit", "--offline", "--format", "json"]).expect(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let messages: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "this workflow could not be parsed, so it was not audited: 4000 jobs, more than 500: not audited",
            "this workflow could not be parsed, so it was not audited: nested more than 64 levels deep: not audited",
        ]
    );
}

#[test]
fn an_oversized_signature_regex_is_a_lint_error() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    write(
        &t.path().join("known_issues/e.toml"),
        format!("{ENTRY}\n[[exclude]]\nsuite = \"s\"\ntest = \"a\"\nsignature = \"(\\\\w{{100}}){{100}}\"\n").as_bytes(),
    );
    let out = attack(t.path(), &["known-issues", "lint"]).expect(1);
    assert!(
        out.stdout.contains("known_issues/e.toml:11:13: exclude[0]: signature is not a valid regex: Compiled regex exceeds size limit of 262144 bytes. (a repeated Unicode class such as \\w{10}? an ASCII class such as [A-Za-z0-9_] is far smaller)"),
        "{}",
        out.stdout
    );
}

// 20. A duplicated suite name.

#[test]
fn a_suite_file_with_two_names_is_bad_input() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    write(
        &t.path().join("logs/1.json"),
        br#"{"name":"rpc-compat","testCases":{"1":{"name":"a (ethrex)","summaryResult":{"pass":false}}},"name":"engine"}"#,
    );
    let out = attack(t.path(), &["hive", "check", "logs", "--client", "ethrex"]).expect(2);
    assert!(
        out.stderr
            .contains("not a hive suite file: byte 98: duplicate field `name` in the suite object"),
        "{}",
        out.stderr
    );
}

// Issue 13: `repo:` and `commit:` are read, not only written.

#[test]
fn repo_and_commit_bindings_are_checked_and_reported() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/a.tar.gz"), b"artifact a");
    let commit = "3470838ef50e566f292860fb1d8aee4937d11849";
    sign_dist(
        t.path(),
        &[
            "--tag",
            "v1.2.3",
            "--repo",
            "lambdaclass/ethrex",
            "--commit",
            commit,
        ],
    )
    .expect(0);
    let out = attack(
        t.path(),
        &[
            "verify",
            "dist/a.tar.gz",
            "--expect-repo",
            "LambdaClass/Ethrex",
            "--expect-commit",
            "3470838ef50e",
            "--format",
            "json",
        ],
    )
    .expect(0);
    insta::assert_snapshot!(out.stdout, @r#"
    {
      "results": [
        {
          "name": "dist/a.tar.gz",
          "status": "ok",
          "key_id": "8F457D1A3C3B50B5",
          "key_file": "keys/demo.pub",
          "tag": "v1.2.3",
          "commit": "3470838ef50e566f292860fb1d8aee4937d11849",
          "repo": "lambdaclass/ethrex",
          "file": "a.tar.gz",
          "timestamp": 1764460800,
          "checked": [
            "signature"
          ],
          "signers": [
            {
              "key_id": "8F457D1A3C3B50B5",
              "signature": "dist/a.tar.gz.minisig",
              "counted": true
            }
          ]
        }
      ],
      "skipped": [],
      "warnings": [
        "--expect-commit 3470838ef50e is a prefix: any signed commit that begins with it is accepted"
      ],
      "verified": 1,
      "failed": 0,
      "errors": 0,
      "exit_code": 0
    }
    "#);
    let fail = |args: &[&str]| {
        let mut all = vec!["verify", "dist/a.tar.gz"];
        all.extend_from_slice(args);
        attack(t.path(), &all)
            .expect(1)
            .stdout
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        fail(&["--expect-repo", "paradigmxyz/reth"]),
        "FAIL  dist/a.tar.gz  signed for repository lambdaclass/ethrex, expected paradigmxyz/reth"
    );
    assert_eq!(
        fail(&["--expect-commit", "ffffffffffff"]),
        format!("FAIL  dist/a.tar.gz  signed for commit {commit}, expected ffffffffffff")
    );
    let out = attack(
        t.path(),
        &["verify", "dist/a.tar.gz", "--expect-commit", "3470"],
    )
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: --expect-commit \"3470\": give the commit as 12 to 40 hex digits\n"
    );
    // A signature without repo: fails an --expect-repo.
    write(&t.path().join("dist/b.bin"), b"b");
    attack(
        t.path(),
        &[
            "sign",
            "dist/b.bin",
            "--secret-key",
            "secret/demo.key",
            "--no-checksums",
        ],
    )
    .expect(0);
    let out = attack(
        t.path(),
        &[
            "verify",
            "dist/b.bin",
            "--expect-repo",
            "lambdaclass/ethrex",
        ],
    )
    .expect(1);
    assert!(out.stdout.starts_with("FAIL  dist/b.bin  the trusted comment has no repo: field, expected repository lambdaclass/ethrex"), "{}", out.stdout);
}
