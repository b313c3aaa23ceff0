//! README's install lines, run as written from an empty folder against a local GitHub: the
//! `verify --release` line (its inline `-P` key swapped for a test key, as the real key's secret
//! is not here), and the names and signatures `cargo binstall` fetches (rendered from
//! Cargo.toml's binstall templates, checked with `minisign-verify`, the crate binstall verifies
//! with). The keys of README, Cargo.toml and `keys/minisign.pub` are one key, by its bytes.

use std::path::Path;

use wiremock::MockServer;

use crate::common::release_server::serve_release;
use crate::common::*;

const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The lines of README's `## Install` shell block, comments dropped.
fn install_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let section = readme.split("## Install\n").nth(1).unwrap();
    let block = section.split("```sh\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    block
        .lines()
        .map(|l| l.split(" #").next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The key's base64 line, decoded: one key is the same bytes however it is written.
fn key_bytes(line: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(line.trim())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn readme_install_lines_work_from_an_empty_folder() {
    let cargo: toml::Value =
        toml::from_str(&std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap()).unwrap();
    let version = cargo["package"]["version"].as_str().unwrap();
    let repository = cargo["package"]["repository"].as_str().unwrap();
    let slug = repository.trim_start_matches("https://github.com/");
    let tag = format!("v{version}");
    let binstall = &cargo["package"]["metadata"]["binstall"];
    let lines = install_lines();
    assert_eq!(
        lines.len(),
        3,
        "three ways to install: cargo install, cargo binstall, warden verify: {lines:?}"
    );
    assert_eq!(lines[1], "cargo binstall release-warden");

    // One key: README's inline -P, Cargo.toml's binstall pubkey, keys/minisign.pub.
    let words: Vec<&str> = lines[2].split_whitespace().collect();
    let p = words.iter().position(|w| *w == "-P").unwrap();
    let committed = std::fs::read_to_string(repo_root().join("keys/minisign.pub")).unwrap();
    let committed = key_bytes(committed.lines().nth(1).unwrap());
    assert_eq!(key_bytes(words[p + 1]), committed, "README's -P key");
    let pubkey = binstall["signing"]["pubkey"].as_str().unwrap();
    assert_eq!(key_bytes(pubkey), committed, "Cargo.toml's binstall pubkey");

    // The release as the release workflow names it, signed by a test key.
    let t = tempfile::tempdir().unwrap();
    demo_keypair(&t.path().join("demo.pub"), &t.path().join("demo.key"));
    let platforms = [
        "linux-x86_64",
        "linux-aarch64",
        "macos-aarch64",
        "macos-x86_64",
    ];
    for platform in platforms {
        write(
            &t.path().join(format!("dist/warden-{tag}-{platform}")),
            platform.as_bytes(),
        );
    }
    run(warden(t.path())
        .args(["sign", "dist", "--secret-key", "demo.key"])
        .args(["--tag", &tag, "--repo", slug, "--commit", COMMIT]))
    .expect(0);
    let (api, storage) = (MockServer::start().await, MockServer::start().await);
    serve_release(&api, &storage, (slug, &tag, COMMIT), &t.path().join("dist")).await;

    // README's line, word for word but the key, from an empty folder.
    let demo = std::fs::read_to_string(t.path().join("demo.pub")).unwrap();
    let demo_line = demo.lines().nth(1).unwrap().to_string();
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(words[0], "warden");
    let args: Vec<String> = words[1..]
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == p {
                demo_line.clone()
            } else {
                w.to_string()
            }
        })
        .collect();
    let uri = api.uri();
    let out = tokio::task::spawn_blocking(move || {
        run(warden(&empty).env("GITHUB_API_URL", uri).args(&args))
    })
    .await
    .unwrap()
    .expect(0);
    let key = format!("key {DEMO_KEY_ID} ({demo_line})");
    let mut expected = format!("OK    warden-{tag}/SHA256SUMS  {key}  tag {tag}\n");
    let mut sorted = platforms;
    sorted.sort();
    for platform in sorted {
        expected.push_str(&format!(
            "OK    warden-{tag}/warden-{tag}-{platform}  {key}  tag {tag}\n"
        ));
    }
    expected.push_str("5 verified, 0 failed, 0 errors\n");
    assert_eq!(out.stdout, expected, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        format!("warden: note: release {tag} of {slug}: 10 assets, tag at commit {COMMIT}\nwarden: note: GitHub says the release is not immutable: its assets and tag can still change\nwarden: note: from GitHub's attestations: no build provenance for warden-v0.1.0-linux-aarch64, warden-v0.1.0-linux-x86_64, warden-v0.1.0-macos-aarch64 and 1 more\nwarden: warning: SHA256SUMS.minisig binds no workflow run: where it was made cannot be checked (`warden sign` in GitHub Actions binds one; keys/policy.toml's require_run makes it required)\n")
    );

    // What `cargo binstall` fetches for each target (pkg-url, then `file` for the signature),
    // verified as binstall verifies it.
    let render = |template: &str| {
        template
            .replace("{ repo }", repository)
            .replace("{ version }", version)
    };
    let file = binstall["signing"]["file"].as_str().unwrap();
    let mut urls = vec![render(binstall["pkg-url"].as_str().unwrap())];
    for (_, o) in binstall["overrides"].as_table().unwrap() {
        urls.push(render(o["pkg-url"].as_str().unwrap()));
    }
    assert_eq!(urls.len(), platforms.len(), "a binstall target per binary");
    let key = minisign_verify::PublicKey::from_base64(&demo_line).unwrap();
    for url in urls {
        let prefix = format!("{repository}/releases/download/{tag}/");
        let name = url.strip_prefix(&prefix).unwrap();
        let sig_name = file.replace("{ url }", &url);
        let sig_name = sig_name.strip_prefix(&prefix).unwrap();
        let got = t.path().join(format!("empty/warden-{tag}"));
        let bytes = std::fs::read(got.join(name)).unwrap();
        let sig = std::fs::read_to_string(got.join(sig_name)).unwrap();
        let sig = minisign_verify::Signature::decode(&sig).unwrap();
        key.verify(&bytes, &sig, false).unwrap();
    }
}
