//! Faults: a kill -9 in the middle of signing, a write that fails, output paths that are not files.

mod common;

use std::fs;
use std::time::Duration;

use common::*;

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
    assert!(
        out.stderr
            .contains("warden: writing dist/SHA256SUMS: File too large"),
        "{}",
        out.stderr
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
