//! `warden sign` and `warden verify` end to end: round trip, bindings, tampering, checksums.
//! Releases are signed with the fixed demo key at a fixed time, so where the output is the
//! contract a test holds the whole transcript (command, stdout, stderr, exit) as a snapshot.

use std::fs;
use std::path::Path;

use crate::common::*;
use base64::Engine as _;

/// `dist/` with two artifacts, and the demo key pair (`k.pub`, `k.key`) beside it.
fn release(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (pk, sk) = (dir.join("k.pub"), dir.join("k.key"));
    demo_keypair(&pk, &sk);
    write(&dir.join("dist/app-linux-x86_64"), &[7u8; 4096]);
    write(&dir.join("dist/app.tar.gz"), b"tarball");
    (pk, sk)
}

fn sign_dist(dir: &Path, sk: &Path, extra: &[&str]) -> Run {
    run(&mut sign_cmd(dir, sk, extra))
}

fn sign_cmd(dir: &Path, sk: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = warden(dir);
    cmd.env("SOURCE_DATE_EPOCH", "1764460800")
        .args(["sign", "dist", "--secret-key"])
        .arg(sk)
        .args(extra);
    cmd
}

/// The transcript of `warden verify EXTRA… --public-key PK` in `dir`.
fn verify_transcript(dir: &Path, pk: &Path, extra: &[&str]) -> String {
    transcript(
        warden(dir)
            .arg("verify")
            .args(extra)
            .arg("--public-key")
            .arg(pk),
        dir,
    )
}

fn verify(dir: &Path, pk: &Path, extra: &[&str]) -> Run {
    run(warden(dir)
        .arg("verify")
        .args(extra)
        .arg("--public-key")
        .arg(pk))
}

#[test]
fn sign_then_verify_directory_and_files() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = release(t.path());
    let mut out = transcript(
        &mut sign_cmd(
            t.path(),
            &sk,
            &["--tag", "v1.2.3", "--commit", "deadbeef", "--repo", "o/n"],
        ),
        t.path(),
    );
    for f in [
        "app-linux-x86_64.minisig",
        "app.tar.gz.minisig",
        "SHA256SUMS",
        "SHA256SUMS.minisig",
    ] {
        assert!(t.path().join("dist").join(f).is_file(), "{f}");
    }
    let sums = fs::read_to_string(t.path().join("dist/SHA256SUMS")).unwrap();
    let names: Vec<&str> = sums.lines().map(|l| &l[66..]).collect();
    assert_eq!(
        names,
        ["app-linux-x86_64", "app.tar.gz"],
        "sorted, no signatures, not itself"
    );
    let sig = fs::read_to_string(t.path().join("dist/app.tar.gz.minisig")).unwrap();
    assert_eq!(
        sig.lines().nth(2).unwrap(),
        "trusted comment: timestamp:1764460800\tfile:app.tar.gz\thashed\ttag:v1.2.3\tcommit:deadbeef\trepo:o/n"
    );
    out += &verify_transcript(t.path(), &pk, &["dist", "--expect-tag", "v1.2.3"]);
    out += &verify_transcript(t.path(), &pk, &["dist/app.tar.gz"]);
    out += &verify_transcript(t.path(), &pk, &["dist", "--format", "json"]);
    insta::assert_snapshot!(out);
}

#[test]
fn sha256sum_accepts_names_with_space_and_backslash() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("dist/with space.bin"), b"a");
    write(&t.path().join("dist/back\\slash.bin"), b"b");
    sign_dist(t.path(), &sk, &[]).expect(0);
    let sums = fs::read_to_string(t.path().join("dist/SHA256SUMS")).unwrap();
    assert!(
        sums.contains("  back\\\\slash.bin\n") && sums.starts_with('\\'),
        "{sums}"
    );
    let out = std::process::Command::new("sha256sum")
        .args(["-c", "--strict", "SHA256SUMS"])
        .current_dir(t.path().join("dist"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("with space.bin: OK") && text.contains("back\\slash.bin: OK"),
        "{text}"
    );
    verify(t.path(), &pk, &["dist"]).expect(0);
}

#[test]
fn every_single_byte_flip_fails_verification() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    let artifact: Vec<u8> = (0u8..48).collect();
    write(&t.path().join("dist/a.bin"), &artifact);
    sign_dist(t.path(), &sk, &["--no-checksums", "--tag", "v1"]).expect(0);
    let a = t.path().join("dist/a.bin");
    let s = t.path().join("dist/a.bin.minisig");
    let sig_text = fs::read_to_string(&s).unwrap();
    let check = |label: &str| {
        let r = run(warden(t.path())
            .arg("verify")
            .arg(&a)
            .arg("--public-key")
            .arg(&pk));
        assert_eq!(r.code, 1, "{label}: {}", r.all());
    };
    // The artifact: every byte.
    for i in 0..artifact.len() {
        let mut bad = artifact.clone();
        bad[i] ^= 0x01;
        fs::write(&a, &bad).unwrap();
        check(&format!("artifact byte {i}"));
    }
    fs::write(&a, &artifact).unwrap();
    let lines: Vec<&str> = sig_text.lines().collect();
    let b64 = base64::engine::general_purpose::STANDARD;
    // The signature line (algorithm, key id, signature) and the global signature: every decoded byte.
    for line_no in [1usize, 3] {
        let raw = b64.decode(lines[line_no]).unwrap();
        for i in 0..raw.len() {
            let mut bad = raw.clone();
            bad[i] ^= 0x01;
            let mut l = lines.clone();
            let enc = b64.encode(&bad);
            l[line_no] = &enc;
            fs::write(&s, l.join("\n") + "\n").unwrap();
            check(&format!("line {} byte {i}", line_no + 1));
        }
    }
    // The trusted comment: every byte after the prefix.
    let prefix = "trusted comment: ".len();
    for i in prefix..lines[2].len() {
        let mut bad = lines[2].as_bytes().to_vec();
        bad[i] ^= 0x01;
        let mut l = lines.clone();
        let bad = String::from_utf8(bad).unwrap();
        l[2] = &bad;
        fs::write(&s, l.join("\n") + "\n").unwrap();
        check(&format!("comment byte {i}"));
    }
    fs::write(&s, &sig_text).unwrap();
    run(warden(t.path())
        .arg("verify")
        .arg(&a)
        .arg("--public-key")
        .arg(&pk))
    .expect(0);
}

#[test]
fn tampered_checksum_file_and_artifact_in_a_directory_fail() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = release(t.path());
    sign_dist(t.path(), &sk, &[]).expect(0);
    let sums = t.path().join("dist/SHA256SUMS");
    let orig = fs::read(&sums).unwrap();
    let mut bad = orig.clone();
    bad[0] = if bad[0] == b'0' { b'1' } else { b'0' };
    fs::write(&sums, &bad).unwrap();
    let mut out = verify_transcript(t.path(), &pk, &["dist"]);
    fs::write(&sums, &orig).unwrap();
    // Replace an artifact and remove its own signature: the checksum still catches it.
    fs::write(t.path().join("dist/app.tar.gz"), b"evil").unwrap();
    fs::remove_file(t.path().join("dist/app.tar.gz.minisig")).unwrap();
    out += &verify_transcript(t.path(), &pk, &["dist"]);
    insta::assert_snapshot!(out);
}

#[test]
fn signature_copied_to_another_name_fails_on_the_file_binding() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = release(t.path());
    sign_dist(t.path(), &sk, &[]).expect(0);
    let d = t.path().join("dist");
    fs::copy(d.join("app.tar.gz"), d.join("renamed.tar.gz")).unwrap();
    fs::copy(
        d.join("app.tar.gz.minisig"),
        d.join("renamed.tar.gz.minisig"),
    )
    .unwrap();
    insta::assert_snapshot!(verify_transcript(t.path(), &pk, &["dist/renamed.tar.gz"]));
}

#[test]
fn tag_mismatch_missing_tag_and_dry_run_fail() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = release(t.path());
    sign_dist(t.path(), &sk, &["--tag", "v1.0.0", "--dry-run"]).expect(0);
    let mut out = verify_transcript(
        t.path(),
        &pk,
        &[
            "dist/app.tar.gz",
            "--allow-dry-run",
            "--expect-tag",
            "v2.0.0",
        ],
    );
    out += &verify_transcript(t.path(), &pk, &["dist"]);
    out += &verify_transcript(
        t.path(),
        &pk,
        &["dist", "--allow-dry-run", "--expect-tag", "v1.0.0"],
    );
    let u = tempfile::tempdir().unwrap();
    let (pk, sk) = release(u.path());
    sign_dist(u.path(), &sk, &[]).expect(0);
    out += &verify_transcript(u.path(), &pk, &["dist/app.tar.gz", "--expect-tag", "v1"]);
    insta::assert_snapshot!(out);
}

#[test]
fn key_rotation_trusts_old_and_new_keys_by_key_id() {
    let t = tempfile::tempdir().unwrap();
    let keys = t.path().join("keys");
    fs::create_dir(&keys).unwrap();
    let (old_pk, old_sk) = keypair(&keys, "old");
    let (_new_pk, new_sk) = keypair(&keys, "new");
    for p in [&old_sk, &new_sk] {
        // secret keys must not sit among the trusted public keys
        fs::rename(p, t.path().join(p.file_name().unwrap())).unwrap();
    }
    write(&t.path().join("a/x"), b"x");
    write(&t.path().join("b/y"), b"y");
    run(warden(t.path()).args(["sign", "a", "--secret-key", "old.key"])).expect(0);
    run(warden(t.path()).args(["sign", "b", "--secret-key", "new.key"])).expect(0);
    let out = run(warden(t.path()).args(["verify", "a", "b"])).expect(0);
    assert!(out.stdout.contains("4 verified"), "{}", out.stdout);
    // Trusting only the old key: the new release fails, naming the unknown key id.
    let out = run(warden(t.path())
        .args(["verify", "b", "--public-key"])
        .arg(&old_pk))
    .expect(1);
    assert!(
        out.stdout.contains("which is not trusted"),
        "{}",
        out.stdout
    );
}

#[test]
fn directory_problems_missing_unlisted_and_unsigned() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = release(t.path());
    sign_dist(t.path(), &sk, &[]).expect(0);
    write(&t.path().join("dist/extra.txt"), b"extra");
    let mut out = verify_transcript(t.path(), &pk, &["dist"]);
    out += &verify_transcript(t.path(), &pk, &["dist", "--allow-unlisted"]);
    fs::remove_file(t.path().join("dist/extra.txt")).unwrap();
    fs::remove_file(t.path().join("dist/app.tar.gz")).unwrap();
    out += &verify_transcript(t.path(), &pk, &["dist"]);
    fs::remove_file(t.path().join("dist/SHA256SUMS.minisig")).unwrap();
    out += &verify_transcript(t.path(), &pk, &["dist"]);
    let empty = t.path().join("empty");
    fs::create_dir(&empty).unwrap();
    write(&empty.join("unsigned"), b"u");
    out += &verify_transcript(t.path(), &pk, &["empty"]);
    out += &verify_transcript(t.path(), &pk, &["empty", "--allow-no-checksums"]);
    // A classic release: a `sha256sum` list and no signature at all. The list is what failed.
    let classic = t.path().join("classic");
    fs::create_dir(&classic).unwrap();
    write(&classic.join("app"), b"app");
    write(
        &classic.join("SHA256SUMS"),
        b"a6a75ccf8dc6ae4b3e3bb1e51e6a1bb8ee43bb3dbb35ac11c5b4d1d6de1e7c17  app\n",
    );
    out += &verify_transcript(t.path(), &pk, &["classic"]);
    insta::assert_snapshot!(out);
}

#[test]
fn existing_signatures_need_force_and_stay_unchanged() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = release(t.path());
    sign_dist(t.path(), &sk, &["--tag", "v1"]).expect(0);
    let before = fs::read(t.path().join("dist/app.tar.gz.minisig")).unwrap();
    let out = sign_dist(t.path(), &sk, &["--tag", "v2"]).expect(2);
    assert!(
        out.stderr.contains("already exist") && out.stderr.contains("--force"),
        "{}",
        out.stderr
    );
    assert_eq!(
        fs::read(t.path().join("dist/app.tar.gz.minisig")).unwrap(),
        before
    );
    assert!(temp_files(&t.path().join("dist")).is_empty());
    sign_dist(t.path(), &sk, &["--tag", "v2", "--force"]).expect(0);
    let after = fs::read_to_string(t.path().join("dist/app.tar.gz.minisig")).unwrap();
    assert!(after.contains("tag:v2"), "{after}");
}

#[test]
fn reproducible_with_source_date_epoch() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = release(t.path());
    let sign = || {
        run(warden(t.path())
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .args(["sign", "dist", "--force", "--secret-key"])
            .arg(&sk))
        .expect(0)
    };
    sign();
    let first = fs::read(t.path().join("dist/SHA256SUMS.minisig")).unwrap();
    sign();
    assert_eq!(
        fs::read(t.path().join("dist/SHA256SUMS.minisig")).unwrap(),
        first
    );
    assert!(String::from_utf8_lossy(&first).contains("timestamp:1700000000\t"));
}

#[test]
fn sign_refuses_a_key_that_does_not_match_the_public_key() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = release(t.path());
    let (other_pk, _) = keypair(t.path(), "other");
    let out = sign_dist(t.path(), &sk, &["--public-key", other_pk.to_str().unwrap()]).expect(2);
    assert!(
        out.stderr.contains("does not belong to the public key"),
        "{}",
        out.stderr
    );
    assert!(!t.path().join("dist/app.tar.gz.minisig").exists());
}

#[test]
fn sign_rejects_bad_metadata_values() {
    let t = tempfile::tempdir().unwrap();
    let (_pk, sk) = release(t.path());
    for bad in ["v1\tx", "v1 ", " v1", "v1\nx"] {
        let out = sign_dist(t.path(), &sk, &["--tag", bad]).expect(2);
        assert!(out.stderr.contains("--tag"), "{}", out.stderr);
    }
    assert!(!t.path().join("dist/SHA256SUMS").exists());
}

#[test]
fn verify_output_signatures_are_accepted_by_minisign_verify_crate() {
    // An independent implementation (minisign-verify 0.3) agrees with warden's signatures.
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = release(t.path());
    sign_dist(t.path(), &sk, &["--tag", "v1"]).expect(0);
    let pk_text = fs::read_to_string(&pk).unwrap();
    let key = minisign_verify::PublicKey::decode(&pk_text).unwrap();
    for name in ["app.tar.gz", "SHA256SUMS"] {
        let data = fs::read(t.path().join("dist").join(name)).unwrap();
        let sig = minisign_verify::Signature::decode(
            &fs::read_to_string(t.path().join(format!("dist/{name}.minisig"))).unwrap(),
        )
        .unwrap();
        key.verify(&data, &sig, false).unwrap();
    }
}

#[test]
fn every_byte_of_sha256sums_matters_and_the_untrusted_comment_does_not() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("dist/a.bin"), b"alpha");
    write(&t.path().join("dist/b.bin"), b"beta");
    sign_dist(t.path(), &sk, &["--tag", "v1"]).expect(0);
    let sums = t.path().join("dist/SHA256SUMS");
    let orig = fs::read(&sums).unwrap();
    for i in 0..orig.len() {
        let mut bad = orig.clone();
        bad[i] ^= 0x01;
        fs::write(&sums, &bad).unwrap();
        let r = run(warden(t.path())
            .arg("verify")
            .arg("dist")
            .arg("--public-key")
            .arg(&pk));
        // Signed bytes: any flip breaks SHA256SUMS.minisig (1), or the line no longer parses (2).
        assert!(
            r.code == 1 || r.code == 2,
            "byte {i}: exit {}\n{}",
            r.code,
            r.stdout
        );
        assert!(
            r.stdout.contains("dist/SHA256SUMS"),
            "byte {i}: {}",
            r.stdout
        );
    }
    fs::write(&sums, &orig).unwrap();
    // The untrusted comment is not signed (minisign's design): changing it cannot change what
    // verifies, so every flip still verifies. The signed metadata lives in the trusted comment.
    let sig = t.path().join("dist/a.bin.minisig");
    let text = fs::read_to_string(&sig).unwrap();
    let first = text.lines().next().unwrap().to_string();
    let prefix = "untrusted comment: ".len();
    for i in prefix..first.len() {
        let mut bytes = first.clone().into_bytes();
        bytes[i] ^= 0x01;
        let changed = text.replacen(&first, &String::from_utf8(bytes).unwrap(), 1);
        fs::write(&sig, changed).unwrap();
        run(warden(t.path())
            .arg("verify")
            .arg("dist/a.bin")
            .arg("--public-key")
            .arg(&pk))
        .expect(0);
    }
}

/// `--only` selects listed files; a pattern that selects none fails the run instead of passing
/// over nothing.
#[test]
fn an_only_pattern_that_matches_no_listed_file_fails() {
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = release(t.path());
    sign_dist(t.path(), &sk, &[]).expect(0);
    let mut out = verify_transcript(t.path(), &pk, &["dist", "--only", "app.tar.gz"]);
    out += &verify_transcript(
        t.path(),
        &pk,
        &["dist", "--only", "app.tar.gz", "--only", "app-windows*"],
    );
    insta::assert_snapshot!(out);
}
