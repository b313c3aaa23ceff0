//! One test per crash the fuzzers found (reproducers in tests/fixtures/fuzz).

use std::path::Path;

use crate::common::*;

fn reproducer(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fuzz")
            .join(name),
    )
    .unwrap()
}

/// minisign_formats, 21.6M runs in: an untrusted comment of CRs before the LF did not round-trip
/// (each parse stripped one CR as part of a CRLF ending). Now a CR inside a comment is malformed.
#[test]
fn untrusted_comment_with_carriage_returns() {
    let t = tempfile::tempdir().unwrap();
    let (pk, _) = keypair(t.path(), "k");
    write(&t.path().join("d/small.bin"), b"small");
    write(
        &t.path().join("d/small.bin.minisig"),
        &reproducer("minisign_formats-untrusted-comment-cr"),
    );
    let out = run(warden(t.path())
        .args(["verify", "d/small.bin", "--public-key"])
        .arg(&pk))
    .expect(2);
    assert!(
        out.stdout.contains(
            "d/small.bin.minisig: line 1: the untrusted comment contains a carriage return"
        ),
        "{}",
        out.stdout
    );
}

/// checksums: a SHA256SUMS of blank lines parsed as an empty list (and printed back as an empty
/// file, which did not parse). Now both are malformed: an empty release list is suspect.
#[test]
fn checksum_file_of_blank_lines() {
    let t = tempfile::tempdir().unwrap();
    write(&t.path().join("d/a.bin"), b"a");
    let out =
        verify_signed_checksums(t.path(), "d", &reproducer("checksums-blank-lines-only")).expect(2);
    assert!(
        out.stdout.contains("d/SHA256SUMS: no checksum lines"),
        "{}",
        out.stdout
    );
}

/// checksums: `././name` parsed to `./name`, which printed and parsed to `name`. Names are now
/// normalised (`.` components dropped), and verify finds the file under either spelling.
#[test]
fn checksum_names_with_repeated_dot_slash() {
    let text = String::from_utf8(reproducer("checksums-dot-slash-prefixes")).unwrap();
    let parsed = release_warden::minisign::ChecksumFile::parse(&text).unwrap();
    assert!(parsed.names().all(|n| !n.starts_with("./")));
    assert_eq!(
        release_warden::minisign::ChecksumFile::parse(&parsed.to_string()).unwrap(),
        parsed
    );
    let t = tempfile::tempdir().unwrap();
    write(&t.path().join("d/sub/a.bin"), b"a");
    let sha = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb";
    let out = verify_signed_checksums(
        t.path(),
        "d",
        format!(
            "{sha}  ././sub/./a.bin
"
        )
        .as_bytes(),
    )
    .expect(0);
    assert!(
        out.stdout.contains("OK    d/sub/a.bin  sha256"),
        "{}",
        out.stdout
    );
}
