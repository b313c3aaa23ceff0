//! Faults: a kill -9 in the middle of signing, a write that fails, output paths that are not files.

use std::fs;
use std::time::Duration;

use crate::common::*;

#[test]
fn kill_9_while_signing_leaves_the_previous_outputs_intact() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = keypair(t.path(), "k");
    let dist = t.path().join("dist");
    write(&dist.join("small.bin"), b"first release");
    run(warden(t.path())
        .args(["sign", "dist", "--secret-key"])
        .arg(&sk))
    .expect(0);
    let before: Vec<(String, Vec<u8>)> = ["small.bin.minisig", "SHA256SUMS", "SHA256SUMS.minisig"]
        .iter()
        .map(|n| (n.to_string(), fs::read(dist.join(n)).unwrap()))
        .collect();
    // A 4 GiB (sparse) artifact keeps warden hashing for seconds; kill it a moment in.
    let big = fs::File::create(dist.join("big.bin")).unwrap();
    big.set_len(4 << 30).unwrap();
    let mut child = warden(t.path())
        .args(["sign", "dist", "--force", "--secret-key"])
        .arg(&sk)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "warden finished before the kill; the test needs a larger file"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    for (name, bytes) in before {
        assert_eq!(fs::read(dist.join(&name)).unwrap(), bytes, "{name} changed");
    }
    assert!(
        !dist.join("big.bin.minisig").exists(),
        "no partial signature"
    );
    let names: Vec<String> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with(".warden-")),
        "killed while hashing: nothing staged yet: {names:?}"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn a_write_that_fails_is_a_clear_error_and_leaves_nothing() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = keypair(t.path(), "k");
    // 40 artifacts: the SHA256SUMS (about 3 KiB) outgrows a 2 KiB file size limit.
    for i in 0..40 {
        write(
            &t.path().join(format!("dist/artifact-{i:02}.tar.gz")),
            format!("artifact {i}").as_bytes(),
        );
    }
    // `ulimit -f` with SIGXFSZ ignored makes the write fail with EFBIG, as a full disk would.
    let script = format!(
        "trap '' XFSZ; ulimit -f 2; exec {} sign dist --secret-key {}",
        warden_bin().display(),
        sk.display()
    );
    let out = run(std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(t.path()))
    .expect(2);
    // The cause is said once, without the temp file's path.
    assert_eq!(
        out.stderr,
        "warden: writing dist/SHA256SUMS: File too large (os error 27)\n"
    );
    let left: Vec<String> = fs::read_dir(t.path().join("dist"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".tar.gz"))
        .collect();
    assert!(
        left.is_empty(),
        "nothing written, no temp file left: {left:?}"
    );
}

#[test]
#[cfg(unix)]
fn an_output_path_that_is_not_a_regular_file_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("dist/a.bin"), b"a");
    // As root, renaming over this link's target would replace /dev/full itself.
    std::os::unix::fs::symlink("/dev/full", t.path().join("dist/SHA256SUMS")).unwrap();
    let out = run(warden(t.path())
        .args(["sign", "dist", "--force", "--secret-key"])
        .arg(&sk))
    .expect(2);
    assert!(
        out.stderr
            .contains("dist/SHA256SUMS exists and is not a regular file"),
        "{}",
        out.stderr
    );
    assert!(
        !t.path().join("dist/a.bin.minisig").exists(),
        "nothing written"
    );
    assert!(fs::symlink_metadata(t.path().join("dist/SHA256SUMS"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        fs::metadata("/dev/full").is_ok_and(|m| !m.is_file()),
        "/dev/full is still a device"
    );
    fs::create_dir(t.path().join("dist/out")).unwrap();
    let out = run(warden(t.path())
        .args([
            "sign",
            "dist",
            "--force",
            "--checksums",
            "dist/out",
            "--secret-key",
        ])
        .arg(&sk))
    .expect(2);
    assert!(
        out.stderr
            .contains("dist/out exists and is not a regular file"),
        "{}",
        out.stderr
    );
}

/// Runs `script` (bash, with `$1` = an empty directory) in a private mount namespace where a
/// 512 KiB tmpfs can be mounted on `$1` without touching the host. `None` when this machine
/// cannot (no `unshare`, user namespaces off): locally the test is then not run; under CI=true,
/// where the runner is root, that is a failure, so the test is never silently skipped there.
#[cfg(target_os = "linux")]
fn in_small_tmpfs(dir: &std::path::Path, script: &str) -> Option<Run> {
    let mnt = dir.join("mnt");
    fs::create_dir_all(&mnt).unwrap();
    let probe = std::process::Command::new("unshare")
        .args([
            "-rm",
            "sh",
            "-c",
            "mount -t tmpfs -o size=512k tmpfs \"$0\"",
        ])
        .arg(&mnt)
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let why = match &probe {
            Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
            Err(e) => e.to_string(),
        };
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("cannot mount a tmpfs in a user namespace under CI=true: {why}");
        }
        eprintln!("cannot mount a tmpfs here ({why}): full-device test not run");
        return None;
    }
    let script = format!("set -u\nmount -t tmpfs -o size=512k tmpfs \"$1\" || exit 90\n{script}");
    Some(run(std::process::Command::new("unshare")
        .args(["-rm", "bash", "-c", &script, "bash"])
        .arg(&mnt)
        .current_dir(dir)))
}

#[test]
#[cfg(target_os = "linux")]
fn signing_on_a_full_device_is_a_clear_error_and_keeps_the_previous_outputs() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = keypair(t.path(), "k");
    // Inside the namespace: sign a release on the tmpfs, keep a copy of its outputs, change an
    // artifact, fill the device page by page, then sign again twice: with no page free, and with
    // one page free (the first signature fits, the second does not). After each failure the
    // directory listing and the outputs are saved outside the tmpfs for the assertions below.
    let script = format!(
        r#"
warden={warden}; sk={sk}; out="$PWD"
cd "$1" && mkdir dist || exit 91
for i in 0 1 2 3; do printf 'artifact %s' $i > dist/app-$i.tar.gz; done
"$warden" sign dist --secret-key "$sk" > /dev/null || exit 92
mkdir "$out/before" && cp dist/*.minisig dist/SHA256SUMS "$out/before/" || exit 93
echo changed >> dist/app-0.tar.gz
i=0; while head -c 4096 /dev/zero > fill.$i 2>/dev/null; do i=$((i+1)); done; rm -f fill.$i
for round in full one-page; do
  [ $round = one-page ] && rm fill.0
  "$warden" sign dist --force --secret-key "$sk" > "$out/$round.stdout" 2> "$out/$round.stderr"
  echo $? > "$out/$round.code"
  ls -A dist > "$out/$round.ls"
  mkdir "$out/$round" && cp dist/*.minisig dist/SHA256SUMS "$out/$round/"
done
# A key pair on the full device: neither half may be left behind.
rm -f fill.*; i=0; while head -c 4096 /dev/zero > fill.$i 2>/dev/null; do i=$((i+1)); done
"$warden" keygen --unencrypted --public-key k.pub --secret-key k.key 2> "$out/keygen.stderr"
echo $? > "$out/keygen.code"
ls -A . | grep -v '^fill\.' > "$out/keygen.ls"
exit 0
"#,
        warden = warden_bin().display(),
        sk = sk.display(),
    );
    let Some(ran) = in_small_tmpfs(t.path(), &script) else {
        return;
    };
    ran.expect(0);
    let read = |name: &str| fs::read_to_string(t.path().join(name)).unwrap();
    let artifacts_and_outputs = "SHA256SUMS\nSHA256SUMS.minisig\napp-0.tar.gz\napp-0.tar.gz.minisig\napp-1.tar.gz\napp-1.tar.gz.minisig\napp-2.tar.gz\napp-2.tar.gz.minisig\napp-3.tar.gz\napp-3.tar.gz.minisig\n";
    for round in ["full", "one-page"] {
        assert_eq!(read(&format!("{round}.code")).trim(), "2", "{round}");
        let stderr = read(&format!("{round}.stderr"));
        let first_unwritten = if round == "full" { 0 } else { 1 };
        assert_eq!(
            stderr,
            format!("warden: writing dist/app-{first_unwritten}.tar.gz.minisig: No space left on device (os error 28)\n"),
            "{round}"
        );
        assert_eq!(
            read(&format!("{round}.ls")),
            artifacts_and_outputs,
            "{round}: no temp file is left"
        );
        for entry in fs::read_dir(t.path().join("before")).unwrap() {
            let name = entry.unwrap().file_name();
            assert_eq!(
                fs::read(t.path().join("before").join(&name)).unwrap(),
                fs::read(t.path().join(round).join(&name)).unwrap(),
                "{round}: {name:?} changed"
            );
        }
    }
    assert_eq!(read("keygen.code").trim(), "2");
    let stderr = read("keygen.stderr");
    assert!(
        stderr.starts_with("warden: writing k.")
            && stderr.ends_with(": No space left on device (os error 28)\n"),
        "{stderr}"
    );
    assert_eq!(
        read("keygen.ls"),
        "dist\n",
        "no half of the key pair is left"
    );
}
