//! `scripts/install-warden.sh` (the GitHub Action's installer) against a local server: it installs
//! a release whose signature verifies against the given key and names the file and tag, and
//! never installs anything else. Needs `minisign` (CI installs it).

use std::path::Path;
use std::process::Command;

use crate::common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn platform() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" if cfg!(target_os = "linux") => Some("linux-x86_64"),
        "aarch64" if cfg!(target_os = "linux") => Some("linux-aarch64"),
        _ => None,
    }
}

/// The release files of warden `tag` for this platform, signed with the demo key for `signed_tag`.
fn release(t: &Path, tag: &str, signed_tag: &str) -> Vec<(String, Vec<u8>)> {
    let name = format!("warden-{tag}-{}", platform().unwrap());
    let dir = t.join(format!("dist-{signed_tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(warden_bin(), dir.join(&name)).unwrap();
    run(warden(t)
        .args([
            "sign",
            "--no-checksums",
            "--secret-key",
            "secret/demo.key",
            "--tag",
            signed_tag,
        ])
        .arg(dir.join(&name)))
    .expect(0);
    let sig = format!("{name}.minisig");
    vec![
        (name.clone(), std::fs::read(dir.join(&name)).unwrap()),
        (sig.clone(), std::fs::read(dir.join(&sig)).unwrap()),
    ]
}

async fn serve(files: &[(String, Vec<u8>)]) -> MockServer {
    let server = MockServer::start().await;
    for (name, bytes) in files {
        Mock::given(method("GET"))
            .and(path(format!("/o/r/releases/download/v9.9.9/{name}")))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes.clone()))
            .mount(&server)
            .await;
    }
    server
}

async fn install(t: &Path, server: &MockServer) -> Run {
    let (t, uri) = (t.to_path_buf(), server.uri());
    tokio::task::spawn_blocking(move || {
        run(Command::new("timeout")
            .arg("120")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-warden.sh"))
            .current_dir(&t)
            .env("WARDEN_VERSION", "v9.9.9")
            .env("WARDEN_REPO", "o/r")
            .env("WARDEN_DOWNLOAD_URL", &uri)
            .env("WARDEN_PUBLIC_KEY", t.join("keys/demo.pub"))
            .env("WARDEN_BIN_DIR", t.join("bin"))
            .env_remove("GITHUB_PATH"))
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn installs_only_a_binary_that_verifies_for_its_name_and_tag() {
    if minisign().is_none() || platform().is_none() {
        return; // minisign() fails the test under CI=true when the CLI is missing
    }
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    let good = release(t.path(), "v9.9.9", "v9.9.9");
    let server = serve(&good).await;
    let out = install(t.path(), &server).await.expect(0);
    assert!(
        out.stdout.contains("installed warden v9.9.9"),
        "{}",
        out.all()
    );
    let version = Command::new(t.path().join("bin/warden"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    std::fs::remove_dir_all(t.path().join("bin")).unwrap();

    // A tampered binary.
    let mut tampered = good.clone();
    tampered[0].1.extend_from_slice(b"tampered");
    let server = serve(&tampered).await;
    let out = install(t.path(), &server).await;
    assert_ne!(out.code, 0, "{}", out.all());
    assert!(!t.path().join("bin/warden").exists());

    // A genuine signature, but for another tag (an old release served as a new one).
    let replayed = release(t.path(), "v9.9.9", "v9.9.8");
    let server = serve(&replayed).await;
    let out = install(t.path(), &server).await;
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains("the signature is not for tag v9.9.9"),
        "{}",
        out.stderr
    );
    assert!(!t.path().join("bin/warden").exists());
}

/// Runs the installer with `url` as the download host and nothing listening: only the URL check.
fn install_from(t: &Path, url: &str) -> Run {
    run(Command::new("timeout")
        .arg("60")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-warden.sh"))
        .current_dir(t)
        .env("WARDEN_VERSION", "v9.9.9")
        .env("WARDEN_DOWNLOAD_URL", url)
        .env("WARDEN_BIN_DIR", t.join("bin")))
}

/// The download URL is parsed, not prefix-matched: a user name that looks like the loopback
/// host, plain HTTP elsewhere, and odd hosts are refused before anything is fetched.
#[test]
fn a_download_url_that_fools_a_prefix_match_is_refused() {
    let t = tempfile::tempdir().unwrap();
    for (url, why) in [
        (
            "http://localhost:x@evil.example/",
            "a user name or password in it",
        ),
        (
            "http://127.0.0.1:1@evil.example",
            "a user name or password in it",
        ),
        (
            "https://user:pw@github.com",
            "a user name or password in it",
        ),
        (
            "http://evil.example",
            "not HTTPS (plain HTTP only to the loopback address)",
        ),
        (
            "http://127.0.0.1.evil.example:80/",
            "not HTTPS (plain HTTP only to the loopback address)",
        ),
        ("ftp://github.com", "not HTTPS"),
        ("https://git hub.com", "not a host name"),
        ("https:///releases", "not a host name"),
    ] {
        let out = install_from(t.path(), url).expect(2);
        assert_eq!(
            out.stderr,
            format!("install-warden: refusing the download URL {url}: {why}\n"),
            "{url}"
        );
        assert_eq!(out.stdout, "");
    }
}

/// Signed with the right key for the right name and tag, and still refused: a legacy
/// (non-prehashed) signature, and a file that is not an executable for this machine.
#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_signature_or_a_signed_non_executable_is_not_installed() {
    let Some(minisign) = minisign() else {
        return; // minisign() fails the test under CI=true when the CLI is missing
    };
    if platform().is_none() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    let name = format!("warden-v9.9.9-{}", platform().unwrap());
    let dir = t.path().join("legacy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(warden_bin(), dir.join(&name)).unwrap();
    let signed = Command::new(&minisign)
        .args(["-S", "-l", "-s"])
        .arg(t.path().join("secret/demo.key"))
        .args(["-t", &format!("file:{name}\ttag:v9.9.9"), "-m"])
        .arg(dir.join(&name))
        .output()
        .unwrap();
    assert!(signed.status.success(), "{signed:?}");
    let legacy = vec![
        (name.clone(), std::fs::read(dir.join(&name)).unwrap()),
        (
            format!("{name}.minisig"),
            std::fs::read(dir.join(format!("{name}.minisig"))).unwrap(),
        ),
    ];
    let server = serve(&legacy).await;
    let out = install(t.path(), &server).await;
    assert_ne!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .contains("Legacy (non-prehashed) signature found"),
        "{}",
        out.stderr
    );
    assert!(!t.path().join("bin/warden").exists());

    // A shell script, properly signed by warden for this name and tag: not an ELF for here.
    let dir = t.path().join("script");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&name), "#!/bin/sh\necho owned\n").unwrap();
    run(warden(t.path())
        .args([
            "sign",
            "--no-checksums",
            "--secret-key",
            "secret/demo.key",
            "--tag",
            "v9.9.9",
        ])
        .arg(dir.join(&name)))
    .expect(0);
    let script = vec![
        (name.clone(), std::fs::read(dir.join(&name)).unwrap()),
        (
            format!("{name}.minisig"),
            std::fs::read(dir.join(format!("{name}.minisig"))).unwrap(),
        ),
    ];
    let server = serve(&script).await;
    let out = install(t.path(), &server).await.expect(1);
    assert_eq!(
        out.stderr,
        format!(
            "install-warden: {name} is not a {} executable\n",
            platform().unwrap()
        )
    );
    assert!(!t.path().join("bin/warden").exists());
}

/// The action's `args`: a multi-line block reaches warden whole (never cut to its first line),
/// quotes group words as in a shell, and nothing is expanded (no globs, variables or commands).
#[test]
fn the_actions_args_are_split_over_every_line_with_quotes_and_no_expansion() {
    let t = tempfile::tempdir().unwrap();
    // A stand-in for warden that prints each argument on its own line.
    let bin = t.path().join("print-args");
    std::fs::write(&bin, "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n").unwrap();
    // A file the pattern below would match, were it globbed.
    std::fs::create_dir_all(t.path().join("keys")).unwrap();
    std::fs::write(t.path().join("keys/a.pub"), "").unwrap();
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run_with = |args: &str| {
        run(
            Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/run-warden.sh"))
                .current_dir(t.path())
                .env("WARDEN_BIN", &bin)
                .env("HOME", "/nonexistent")
                .env("WARDEN_ARGS", args),
        )
    };
    let out =
        run_with("verify --release v1.2.3\n  --repo o/r\n\n--public-key keys/*.pub\n").expect(0);
    assert_eq!(
        out.stdout,
        "[verify]\n[--release]\n[v1.2.3]\n[--repo]\n[o/r]\n[--public-key]\n[keys/*.pub]\n"
    );
    let out =
        run_with("keys revoke ABC --reason \"key leaked\" --x 'a $HOME `id`' b\\ c").expect(0);
    assert_eq!(
        out.stdout,
        "[keys]\n[revoke]\n[ABC]\n[--reason]\n[key leaked]\n[--x]\n[a $HOME `id`]\n[b c]\n"
    );
    let out = run_with("sign --reason \"unbalanced").expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "run-warden: args: an unbalanced quote (quote with '…' or \"…\", or escape with \\)\n"
    );
    let out = run_with("").expect(0);
    assert_eq!(out.stdout, "");
}

/// A key revoked on the repository's default branch (or beside the trusted key) installs
/// nothing, and a revocation folder that cannot be read stops the install too.
#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_key_installs_nothing() {
    if minisign().is_none() || platform().is_none() {
        return; // minisign() fails the test under CI=true when the CLI is missing
    }
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    let good = release(t.path(), "v9.9.9", "v9.9.9");
    // The maintainers revoked the key in another checkout and pushed it.
    let other = t.path().join("other");
    std::fs::create_dir_all(other.join("keys")).unwrap();
    std::fs::copy(t.path().join("keys/demo.pub"), other.join("keys/demo.pub")).unwrap();
    revoke_key(&other, DEMO_KEY_ID, &t.path().join("secret/demo.key")).expect(0);
    let server = serve(&good).await;
    for suffix in ["", ".minisig"] {
        let name = format!("{DEMO_KEY_ID}.toml{suffix}");
        Mock::given(method("GET"))
            .and(path(format!("/o/r/raw/HEAD/keys/revoked/{name}")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_bytes(std::fs::read(other.join("keys/revoked").join(&name)).unwrap()),
            )
            .mount(&server)
            .await;
    }
    let out = install(t.path(), &server).await.expect(1);
    assert_eq!(
        out.stderr,
        format!("install-warden: key {DEMO_KEY_ID} is revoked (\"leaked\"): not installing\n")
    );
    assert!(!t.path().join("bin/warden").exists());

    // The revocations cannot be read: not installed either.
    let server = serve(&good).await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/o/r/raw/HEAD/keys/revoked/{DEMO_KEY_ID}.toml"
        )))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    let out = install(t.path(), &server).await.expect(1);
    assert!(
        out.stderr
            .ends_with("/o/r/raw/HEAD/keys/revoked/ (HTTP 503): not installing\n"),
        "{}",
        out.stderr
    );

    // Revoked beside the trusted key (the action's own checkout): the same.
    std::fs::create_dir_all(t.path().join("keys/revoked")).unwrap();
    for entry in std::fs::read_dir(other.join("keys/revoked")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(
            &p,
            t.path().join("keys/revoked").join(p.file_name().unwrap()),
        )
        .unwrap();
    }
    let server = serve(&good).await;
    let out = install(t.path(), &server).await.expect(1);
    assert_eq!(
        out.stderr,
        format!("install-warden: key {DEMO_KEY_ID} is revoked (\"leaked\"): not installing\n")
    );
}
