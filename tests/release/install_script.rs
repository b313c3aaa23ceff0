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
