//! Issue 47: releases other projects publish, each built here with Debian's `minisign` (not
//! warden) the way the named project publishes it, verified with no flag but the key. Every
//! signature `minisign -V` accepts here, warden accepts too, and prints what it bound; the
//! replays a comment contradicts fail, naming both values.
//!
//! Provenance of each shape (read through the public index; no file copied, contents made up):
//! - zig: `.github/workflows/build-tarballs.sh` of ziglang/www.ziglang.org (`echo | minisign -Sm
//!   <tarball>`, minisign's default comment, no checksum list);
//! - mise: `scripts/release.sh` of jdx/mise (`sha256sum ./* > SHASUMS256.txt`, `sha512sum ./* >
//!   SHASUMS512.txt`, both signed with `minisign -S -m SHASUMS256.txt SHASUMS512.txt`);
//! - dnscrypt-proxy: `.github/workflows/releases.yml` of DNSCrypt/dnscrypt-proxy (`minisign -Sm
//!   *.tar.gz *.zip`; users verify one archive with `minisign -Vm <archive> -P <key>`);
//! - libsodium: its "Integrity checking" page (`<tarball>.minisig`, `minisign -VP <key> -m`);
//! - goreleaser: goreleaser/goreleaser#1770's minisign recipe (`-t "{{ .ProjectName }} {{ .Tag
//!   }}"` over `<project>_<version>_checksums.txt`, as minio/kes names it);
//! - ethrex: `.github/scripts/sign-stateless-artifacts.sh` and `tag_release.yaml` of
//!   lambdaclass/ethrex (`minisign -S -m <file> -x <file>.minisig -t "<file> ethrex <tag> <sha>"`
//!   for each zkEVM guest ELF and verification key);
//! - configlet: `.github/bin/upload-signatures-and-checksums` of exercism/configlet (a comment
//!   shaped like the default with spaces, an ISO time and `./`);
//! - cargo-binstall: `.github/scripts/ephemeral-sign.sh` of cargo-bins/cargo-binstall (`<file>.sig`,
//!   `-t "gh=<repo> git=<sha> ts=<time> run=<id>"`);
//! - BSD lines: `sha256sum --tag` (OpenBSD's form; seen with signify, here signed with minisign);
//! - SHA-512: 3leaps/docprims `scripts/generate-checksums.sh` and `sign-release-assets.sh`
//!   (`shasum -a 512 > SHA512SUMS`, `-t "docprims <tag>"`);
//! - one download: a user who fetched one binary, `SHA256SUMS` and its `.minisig`;
//! - per-file checksums: a Rust CLI's release-signing page ("CLAT": a one-entry `<asset>.sha256`
//!   per platform archive, each signed as `<asset>.sha256.minisig` with `-t "CLAT <tag> release
//!   checksum manifests"`), and the many releases whose `<asset>.sha256` is unsigned beside a
//!   signed asset, or is the bare digest (`sha256sum <asset> | cut -d' ' -f1`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use release_warden::minisign::PublicKey;

use crate::common::*;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// A folder with a minisign key pair made by minisign itself.
struct Project {
    t: tempfile::TempDir,
    bin: PathBuf,
    id: String,
}

impl Project {
    fn new() -> Option<Project> {
        let bin = minisign()?;
        let t = tempfile::tempdir().unwrap();
        let project = Project {
            t,
            bin,
            id: String::new(),
        };
        project.mini(&["-G", "-W", "-p", "k.pub", "-s", "k.key"]);
        let id = PublicKey::from_file(&project.dir().join("k.pub"))
            .unwrap()
            .key_id
            .to_string();
        Some(Project { id, ..project })
    }

    fn dir(&self) -> &Path {
        self.t.path()
    }

    fn mini(&self, args: &[&str]) {
        let out = Command::new(&self.bin)
            .args(args)
            .current_dir(self.dir())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "minisign {args:?}: {out:?}");
    }

    /// `rel` with bytes made from its name.
    fn file(&self, rel: &str) {
        write(&self.dir().join(rel), &content(rel));
    }

    /// `minisign -S` of `rel` (its default comment unless `comment`; `<rel>.minisig` unless
    /// `sig`).
    fn sign(&self, rel: &str, comment: Option<&str>, sig: Option<&str>) {
        let mut args = vec!["-S", "-s", "k.key", "-m", rel];
        if let Some(c) = comment {
            args.extend(["-t", c]);
        }
        if let Some(x) = sig {
            args.extend(["-x", x]);
        }
        self.mini(&args);
    }

    /// `minisign -V` accepts the signature `sig` of `rel`: the outside judge.
    fn minisign_accepts(&self, rel: &str, sig: &str) {
        self.mini(&["-V", "-p", "k.pub", "-m", rel, "-x", sig]);
    }

    /// A checksum list written by a shell command in `folder` (as the project's script does).
    fn shell(&self, folder: &str, script: &str) {
        let out = Command::new("sh")
            .args(["-c", script])
            .current_dir(self.dir().join(folder))
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
    }

    fn warden(&self, args: &[&str]) -> Run {
        run(warden(self.dir()).args(args).args(["-p", "k.pub"]))
    }
}

/// The bytes `Project::file` writes at `rel`.
fn content(rel: &str) -> Vec<u8> {
    format!("the bytes of {rel}\n").repeat(50).into_bytes()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

fn sha512_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha512::digest(bytes))
}

#[test]
fn zig_a_default_comment_beside_each_tarball() {
    let Some(p) = Project::new() else { return };
    for f in [
        "zig-x86_64-linux-0.14.1.tar.xz",
        "zig-x86_64-windows-0.14.1.zip",
    ] {
        p.file(&format!("dist/{f}"));
        p.sign(&format!("dist/{f}"), None, None);
        p.minisign_accepts(&format!("dist/{f}"), &format!("dist/{f}.minisig"));
    }
    let out = p.warden(&["verify", "dist"]).expect(0);
    let id = &p.id;
    assert_eq!(
        out.stdout,
        format!("OK    dist/zig-x86_64-linux-0.14.1.tar.xz  key {id} (k.pub)  file zig-x86_64-linux-0.14.1.tar.xz\nOK    dist/zig-x86_64-windows-0.14.1.zip  key {id} (k.pub)  file zig-x86_64-windows-0.14.1.zip\n2 verified, 0 failed, 0 errors\n")
    );
    // A tarball served under another version's name (a downgrade): its comment says which it
    // is.
    std::fs::rename(
        p.dir().join("dist/zig-x86_64-linux-0.14.1.tar.xz"),
        p.dir().join("dist/zig-x86_64-linux-0.15.1.tar.xz"),
    )
    .unwrap();
    std::fs::rename(
        p.dir().join("dist/zig-x86_64-linux-0.14.1.tar.xz.minisig"),
        p.dir().join("dist/zig-x86_64-linux-0.15.1.tar.xz.minisig"),
    )
    .unwrap();
    p.minisign_accepts(
        "dist/zig-x86_64-linux-0.15.1.tar.xz",
        "dist/zig-x86_64-linux-0.15.1.tar.xz.minisig",
    );
    let out = p
        .warden(&["verify", "dist/zig-x86_64-linux-0.15.1.tar.xz"])
        .expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  dist/zig-x86_64-linux-0.15.1.tar.xz  the signature is for file:zig-x86_64-linux-0.14.1.tar.xz, not zig-x86_64-linux-0.15.1.tar.xz (renamed or swapped artifact)\n0 verified, 1 failed, 0 errors\n"
    );
}

#[test]
fn mise_two_signed_lists_with_dot_slash_names() {
    let Some(p) = Project::new() else { return };
    for f in [
        "mise-v2026.9.1-linux-x64",
        "mise-v2026.9.1-macos-arm64.tar.gz",
    ] {
        p.file(&format!("dist/{f}"));
    }
    p.shell(
        "dist",
        "sha256sum ./* > SHASUMS256.txt && sha512sum ./* > SHASUMS512.txt",
    );
    p.mini(&[
        "-S",
        "-s",
        "k.key",
        "-m",
        "dist/SHASUMS256.txt",
        "dist/SHASUMS512.txt",
    ]);
    p.minisign_accepts("dist/SHASUMS256.txt", "dist/SHASUMS256.txt.minisig");
    p.minisign_accepts("dist/SHASUMS512.txt", "dist/SHASUMS512.txt.minisig");
    let out = p.warden(&["verify", "dist"]).expect(0);
    let id = &p.id;
    assert_eq!(
        out.stdout,
        format!("OK    dist/SHASUMS256.txt  key {id} (k.pub)  file SHASUMS256.txt\nOK    dist/mise-v2026.9.1-linux-x64  sha256\nOK    dist/mise-v2026.9.1-macos-arm64.tar.gz  sha256\n3 verified, 0 failed, 0 errors\n")
    );
    assert_eq!(
        out.stderr,
        "warden: note: checked against SHASUMS256.txt; SHASUMS512.txt is signed too, and not used (--checksums NAME picks one)\n"
    );
    // The SHA-512 list, when asked for.
    let out = p
        .warden(&["verify", "dist", "--checksums", "SHASUMS512.txt"])
        .expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist/SHASUMS512.txt  key {id} (k.pub)  file SHASUMS512.txt\nOK    dist/SHASUMS256.txt  key {id} (k.pub)  file SHASUMS256.txt\nOK    dist/mise-v2026.9.1-linux-x64  sha512\nOK    dist/mise-v2026.9.1-macos-arm64.tar.gz  sha512\n4 verified, 0 failed, 0 errors\n")
    );
}

#[test]
fn dnscrypt_proxy_and_libsodium_one_archive_and_its_minisig() {
    let Some(p) = Project::new() else { return };
    for f in [
        "dnscrypt-proxy-linux_x86_64-2.1.5.tar.gz",
        "libsodium-1.0.20.tar.gz",
    ] {
        p.file(f);
        p.mini(&["-S", "-s", "k.key", "-m", f]);
        p.minisign_accepts(f, &format!("{f}.minisig"));
        let out = p.warden(&["verify", f]).expect(0);
        assert_eq!(
            out.stdout,
            format!(
                "OK    {f}  key {} (k.pub)  file {f}\n1 verified, 0 failed, 0 errors\n",
                p.id
            )
        );
    }
    // The key given inline, as libsodium's page shows it (`-P`).
    let inline = std::fs::read_to_string(p.dir().join("k.pub"))
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    run(warden(p.dir()).args(["verify", "libsodium-1.0.20.tar.gz", "-P", &inline])).expect(0);
}

#[test]
fn goreleaser_a_project_named_list_signed_with_name_and_tag() {
    let Some(p) = Project::new() else { return };
    for f in ["kes-darwin-arm64", "kes-linux-amd64"] {
        p.file(&format!("dist/{f}"));
    }
    p.shell(
        "dist",
        "sha256sum kes-darwin-arm64 kes-linux-amd64 > kes_0.22.0_checksums.txt",
    );
    p.sign("dist/kes_0.22.0_checksums.txt", Some("kes v0.22.0"), None);
    p.minisign_accepts(
        "dist/kes_0.22.0_checksums.txt",
        "dist/kes_0.22.0_checksums.txt.minisig",
    );
    let id = &p.id;
    let ok = format!("OK    dist/kes_0.22.0_checksums.txt  key {id} (k.pub)  tag v0.22.0\nOK    dist/kes-darwin-arm64  sha256\nOK    dist/kes-linux-amd64  sha256\n3 verified, 0 failed, 0 errors\n");
    assert_eq!(p.warden(&["verify", "dist"]).expect(0).stdout, ok);
    assert_eq!(
        p.warden(&["verify", "dist", "--expect-tag", "v0.22.0"])
            .expect(0)
            .stdout,
        ok
    );
    // A list signed for another version is that version's.
    let out = p
        .warden(&["verify", "dist", "--expect-tag", "v0.23.0"])
        .expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  dist/kes_0.22.0_checksums.txt  signed for tag v0.22.0, expected v0.23.0\nFAIL  dist/kes-darwin-arm64  not verified: dist/kes_0.22.0_checksums.txt did not verify, and there is no dist/kes-darwin-arm64.minisig\nFAIL  dist/kes-linux-amd64  not verified: dist/kes_0.22.0_checksums.txt did not verify, and there is no dist/kes-linux-amd64.minisig\n0 verified, 3 failed, 0 errors\n"
    );
}

/// ethrex's zkEVM guest artifacts: each ELF and verification key signed with a comment naming
/// the file, the tag and the commit. The previous release's ELF and its signature served under
/// the new tag fail (the loader that consumes them checks the signature only, and takes them).
#[test]
fn ethrex_stateless_artifacts_and_the_replay_of_a_previous_release() {
    let Some(p) = Project::new() else { return };
    let base = "stateless-validator-ethrex-zisk-v1.0.0-alpha";
    for ext in ["elf", "vk"] {
        let f = format!("bin/{base}.{ext}");
        p.file(&f);
        let comment = format!("{base}.{ext} ethrex v10.0.0-rc.1 {SHA}");
        p.sign(&f, Some(&comment), Some(&format!("{f}.minisig")));
        p.minisign_accepts(&f, &format!("{f}.minisig"));
    }
    let id = &p.id;
    let out = p
        .warden(&["verify", "bin", "--expect-tag", "v10.0.0-rc.1"])
        .expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    bin/{base}.elf  key {id} (k.pub)  tag v10.0.0-rc.1  file {base}.elf  commit {SHA}\nOK    bin/{base}.vk  key {id} (k.pub)  tag v10.0.0-rc.1  file {base}.vk  commit {SHA}\n2 verified, 0 failed, 0 errors\n")
    );
    // The same files under the next tag: the comment says which release they are.
    let out = p
        .warden(&[
            "verify",
            &format!("bin/{base}.elf"),
            "--expect-tag",
            "v10.0.0-rc.2",
        ])
        .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  bin/{base}.elf  signed for tag v10.0.0-rc.1, expected v10.0.0-rc.2\n0 verified, 1 failed, 0 errors\n")
    );
    // The ELF renamed to another guest's name.
    std::fs::copy(
        p.dir().join(format!("bin/{base}.elf")),
        p.dir().join("bin/guest.elf"),
    )
    .unwrap();
    std::fs::copy(
        p.dir().join(format!("bin/{base}.elf.minisig")),
        p.dir().join("bin/guest.elf.minisig"),
    )
    .unwrap();
    p.minisign_accepts("bin/guest.elf", "bin/guest.elf.minisig");
    let out = p.warden(&["verify", "bin/guest.elf"]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  bin/guest.elf  the signature is for {base}.elf, not guest.elf (renamed or swapped artifact)\n0 verified, 1 failed, 0 errors\n")
    );
    // The dry run's signatures are rehearsals.
    let f = format!("bin/{base}.vk");
    p.sign(
        &f,
        Some(&format!("{base}.vk ethrex DRY-RUN v10.0.0-rc.1 {SHA}")),
        Some(&format!("{f}.minisig")),
    );
    let out = p.warden(&["verify", &f]).expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  {f}  dry-run (rehearsal) signature; pass --allow-dry-run to accept it\n0 verified, 1 failed, 0 errors\n")
    );
}

#[test]
fn configlet_and_cargo_binstall_comments_of_their_own() {
    let Some(p) = Project::new() else { return };
    let tarball = "configlet_4.0.0-beta.13_linux_x86-64.tar.gz";
    p.file(tarball);
    let comment = format!("timestamp:2022-04-15T12:00:00Z   file:./{tarball}    hashed");
    p.sign(tarball, Some(&comment), None);
    p.minisign_accepts(tarball, &format!("{tarball}.minisig"));
    assert_eq!(
        p.warden(&["verify", tarball]).expect(0).stdout,
        format!(
            "OK    {tarball}  key {} (k.pub)  file {tarball}\n1 verified, 0 failed, 0 errors\n",
            p.id
        )
    );
    // cargo-binstall: a minisign signature named `.sig`, binding the repository and commit.
    let tgz = "cargo-binstall-x86_64-unknown-linux-musl.tgz";
    p.file(tgz);
    let comment =
        format!("gh=cargo-bins/cargo-binstall git={SHA} ts=2025-01-01T00:00:00+00:00 run=42");
    p.sign(tgz, Some(&comment), Some(&format!("{tgz}.sig")));
    p.minisign_accepts(tgz, &format!("{tgz}.sig"));
    let out = p.warden(&["verify", tgz]).expect(0);
    assert_eq!(
        out.stdout,
        format!(
            "OK    {tgz}  key {} (k.pub)  commit {SHA}\n1 verified, 0 failed, 0 errors\n",
            p.id
        )
    );
    assert_eq!(
        out.stderr,
        format!("warden: warning: {tgz}: the trusted comment binds no file name, so the signature would verify the same bytes under another name\n")
    );
    let out = p
        .warden(&["verify", tgz, "--expect-repo", "someone/else"])
        .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  {tgz}  signed for repository cargo-bins/cargo-binstall, expected someone/else\n0 verified, 1 failed, 0 errors\n")
    );
}

#[test]
fn bsd_and_sha512_lists() {
    let Some(p) = Project::new() else { return };
    for f in ["bsd/app-linux-x64.tar.gz", "bsd/app-macos-arm64.zip"] {
        p.file(f);
    }
    p.shell(
        "bsd",
        "sha256sum --tag app-linux-x64.tar.gz app-macos-arm64.zip > SHA256SUMS",
    );
    p.sign("bsd/SHA256SUMS", None, None);
    p.minisign_accepts("bsd/SHA256SUMS", "bsd/SHA256SUMS.minisig");
    let id = &p.id;
    assert_eq!(
        p.warden(&["verify", "bsd"]).expect(0).stdout,
        format!("OK    bsd/SHA256SUMS  key {id} (k.pub)  file SHA256SUMS\nOK    bsd/app-linux-x64.tar.gz  sha256\nOK    bsd/app-macos-arm64.zip  sha256\n3 verified, 0 failed, 0 errors\n")
    );
    for f in [
        "docprims/docprims-linux-amd64",
        "docprims/docprims-darwin-arm64",
    ] {
        p.file(f);
    }
    p.shell(
        "docprims",
        "printf '%s\\n' docprims-darwin-arm64 docprims-linux-amd64 | LC_ALL=C sort | xargs sha512sum > SHA512SUMS",
    );
    p.sign(
        "docprims/SHA512SUMS",
        Some("docprims v1.2.3"),
        Some("docprims/SHA512SUMS.minisig"),
    );
    p.minisign_accepts("docprims/SHA512SUMS", "docprims/SHA512SUMS.minisig");
    assert_eq!(
        p.warden(&["verify", "docprims", "--expect-tag", "v1.2.3"])
            .expect(0)
            .stdout,
        format!("OK    docprims/SHA512SUMS  key {id} (k.pub)  tag v1.2.3\nOK    docprims/docprims-darwin-arm64  sha512\nOK    docprims/docprims-linux-amd64  sha512\n3 verified, 0 failed, 0 errors\n")
    );
    write(&p.dir().join("docprims/docprims-linux-amd64"), b"replaced");
    let out = p.warden(&["verify", "docprims"]).expect(1);
    assert_eq!(
        out.stdout,
        format!(
            "OK    docprims/SHA512SUMS  key {id} (k.pub)  tag v1.2.3\nOK    docprims/docprims-darwin-arm64  sha512\nFAIL  docprims/docprims-linux-amd64  SHA-512 mismatch: {} listed, {} found\n2 verified, 1 failed, 0 errors\n",
            sha512_hex(&content("docprims/docprims-linux-amd64")),
            sha512_hex(b"replaced")
        )
    );
}

/// The most common case: one downloaded binary, the release's `SHA256SUMS` and its signature.
#[test]
fn one_downloaded_file_of_a_list_signed_release() {
    let Some(p) = Project::new() else { return };
    for f in ["rel/app-linux-x86_64", "rel/app-macos-aarch64"] {
        p.file(f);
    }
    p.shell(
        "rel",
        "sha256sum app-linux-x86_64 app-macos-aarch64 > SHA256SUMS",
    );
    p.sign("rel/SHA256SUMS", Some("app v2.0.0"), None);
    std::fs::create_dir_all(p.dir().join("dl")).unwrap();
    for f in ["app-linux-x86_64", "SHA256SUMS", "SHA256SUMS.minisig"] {
        std::fs::copy(p.dir().join("rel").join(f), p.dir().join("dl").join(f)).unwrap();
    }
    p.minisign_accepts("dl/SHA256SUMS", "dl/SHA256SUMS.minisig");
    let out = p.warden(&["verify", "dl/app-linux-x86_64"]).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dl/SHA256SUMS  key {} (k.pub)  tag v2.0.0\nOK    dl/app-linux-x86_64  sha256\n2 verified, 0 failed, 0 errors\n", p.id)
    );
    assert_eq!(
        out.stderr,
        "warden: note: SHA256SUMS names 1 other file that is not here: not downloaded, so not checked\n"
    );
    // Renamed to another listed name: its bytes are not that file's.
    std::fs::rename(
        p.dir().join("dl/app-linux-x86_64"),
        p.dir().join("dl/app-macos-aarch64"),
    )
    .unwrap();
    let out = p.warden(&["verify", "dl/app-macos-aarch64"]).expect(1);
    let id = &p.id;
    assert_eq!(
        out.stdout,
        format!(
            "OK    dl/SHA256SUMS  key {id} (k.pub)  tag v2.0.0\nFAIL  dl/app-macos-aarch64  SHA-256 mismatch: {} listed, {} found\n1 verified, 1 failed, 0 errors\n",
            sha256_hex(&content("rel/app-macos-aarch64")),
            sha256_hex(&content("rel/app-linux-x86_64"))
        )
    );
    // A folder verify stays strict about what is present: nothing missing is excused there.
    let out = p.warden(&["verify", "dl"]).expect(1);
    assert_eq!(
        out.stdout,
        format!(
            "OK    dl/SHA256SUMS  key {id} (k.pub)  tag v2.0.0\nFAIL  dl/app-linux-x86_64  missing: dl/app-linux-x86_64 does not exist\nFAIL  dl/app-macos-aarch64  SHA-256 mismatch: {} listed, {} found\n1 verified, 2 failed, 0 errors\n",
            sha256_hex(&content("rel/app-macos-aarch64")),
            sha256_hex(&content("rel/app-linux-x86_64"))
        )
    );
}

/// A signed one-entry checksum beside each archive, in place of the archive's own signature;
/// the archive verifies against it, alone or in its folder, and a checksum renamed to another
/// archive's is refused by its comment's `file:`.
#[test]
fn per_file_signed_checksums_and_unsigned_ones_beside_signed_files() {
    let Some(p) = Project::new() else { return };
    let archives = [
        "clat-aarch64-apple-darwin.tar.gz",
        "clat-x86_64-unknown-linux-gnu.tar.gz",
    ];
    for f in archives {
        p.file(&format!("dist/{f}"));
        p.shell("dist", &format!("sha256sum {f} > {f}.sha256"));
        let sums = format!("dist/{f}.sha256");
        p.sign(&sums, Some("CLAT v0.4.0 release checksum manifests"), None);
        p.minisign_accepts(&sums, &format!("{sums}.minisig"));
    }
    let id = &p.id;
    let [mac, linux] = archives;
    let out = p.warden(&["verify", "dist"]).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist/{mac}.sha256  key {id} (k.pub)  tag v0.4.0\nOK    dist/{linux}.sha256  key {id} (k.pub)  tag v0.4.0\nOK    dist/{mac}  sha256\nOK    dist/{linux}  sha256\n4 verified, 0 failed, 0 errors\n")
    );
    assert_eq!(out.stderr, "");
    // One downloaded archive and its checksum.
    let out = p
        .warden(&["verify", &format!("dist/{linux}"), "--expect-tag", "v0.4.0"])
        .expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist/{linux}.sha256  key {id} (k.pub)  tag v0.4.0\nOK    dist/{linux}  sha256\n2 verified, 0 failed, 0 errors\n")
    );
    // Under another release's tag: refused before the archive is read.
    let out = p
        .warden(&["verify", &format!("dist/{linux}"), "--expect-tag", "v0.5.0"])
        .expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  dist/{linux}.sha256  signed for tag v0.4.0, expected v0.5.0\nFAIL  dist/{linux}  not verified: dist/{linux}.sha256 did not verify, and there is no dist/{linux}.minisig\n0 verified, 2 failed, 0 errors\n")
    );
    // The bare digest, signed with minisign's default comment; the same digest and signature
    // moved to another name are refused by what the comment binds.
    p.file("bare/guest-v1.elf");
    p.shell(
        "bare",
        "sha256sum guest-v1.elf | cut -d' ' -f1 > guest-v1.elf.sha256",
    );
    p.sign("bare/guest-v1.elf.sha256", None, None);
    let out = p.warden(&["verify", "bare"]).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    bare/guest-v1.elf.sha256  key {id} (k.pub)  file guest-v1.elf.sha256\nOK    bare/guest-v1.elf  sha256\n2 verified, 0 failed, 0 errors\n")
    );
    for (from, to) in [
        ("guest-v1.elf", "guest.elf"),
        ("guest-v1.elf.sha256", "guest.elf.sha256"),
        ("guest-v1.elf.sha256.minisig", "guest.elf.sha256.minisig"),
    ] {
        std::fs::rename(
            p.dir().join("bare").join(from),
            p.dir().join("bare").join(to),
        )
        .unwrap();
    }
    p.minisign_accepts("bare/guest.elf.sha256", "bare/guest.elf.sha256.minisig");
    let out = p.warden(&["verify", "bare"]).expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  bare/guest.elf.sha256  the signature is for file:guest-v1.elf.sha256, not guest.elf.sha256 (renamed or swapped artifact)\nFAIL  bare/guest.elf  not verified: bare/guest.elf.sha256 did not verify, and there is no bare/guest.elf.minisig\n0 verified, 2 failed, 0 errors\n"
    );
    // An unsigned checksum beside a signed file: shown, relied on by nothing.
    p.file("signed/app.tar.gz");
    p.shell("signed", "sha256sum app.tar.gz > app.tar.gz.sha256");
    p.sign("signed/app.tar.gz", None, None);
    let out = p.warden(&["verify", "signed"]).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    signed/app.tar.gz  key {id} (k.pub)  file app.tar.gz\nSKIP  signed/app.tar.gz.sha256  an unsigned checksum of app.tar.gz, which is verified by its own signature\n1 verified, 0 failed, 0 errors, 1 skipped\n")
    );
}
