//! `warden verify --release TAG --repo OWNER/NAME` against two local servers: one plays the
//! GitHub API, the other the storage host that asset downloads redirect to.

use std::path::Path;

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";
const TOKEN: &str = "ghp_release_token_never_on_storage";

/// `warden verify` of release v1.2.3 of o/r against the keys in `keys/`.
const VERIFY_RELEASE: [&str; 7] = [
    "verify",
    "--release",
    "v1.2.3",
    "--repo",
    "o/r",
    "--keys-dir",
    "keys",
];

/// A release signed by `warden sign`: the files of `dist/` (artifacts, signatures, SHA256SUMS).
fn signed_release(t: &Path) -> Vec<(String, Vec<u8>)> {
    demo_keys(t);
    write(&t.join("dist/app-linux"), b"linux binary");
    write(&t.join("dist/app.tar.gz"), b"tarball");
    run(warden(t)
        .args([
            "sign",
            "dist",
            "--secret-key",
            "secret/demo.key",
            "--tag",
            "v1.2.3",
            "--repo",
            "o/r",
            "--commit",
            COMMIT,
        ])
        .env("SOURCE_DATE_EPOCH", "1764460800"))
    .expect(0);
    release_files(&t.join("dist"))
}

pub(super) use crate::common::release_server::release_files;

/// Each asset's bytes (asset `100 + i`), as GitHub serves them: the API redirects to a storage
/// host, which answers without the token.
pub(super) async fn serve_asset_bytes(
    api: &MockServer,
    storage: &MockServer,
    assets: &[(String, Vec<u8>)],
) {
    for (i, (_, bytes)) in assets.iter().enumerate() {
        let id = 100 + i;
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/releases/assets/{id}")))
            .respond_with(
                ResponseTemplate::new(302)
                    .insert_header("location", format!("{}/blob/{id}?sig=x", storage.uri())),
            )
            .mount(api)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/blob/{id}")))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes.clone()))
            .mount(storage)
            .await;
    }
}

/// The revocation statements in `revoked` (a keys folder's `revoked/`), as the contents API
/// gives o/r's `keys/revoked/`.
pub(super) async fn serve_revocations(api: &MockServer, revoked: &Path) {
    let mut listing = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(revoked)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for file in entries {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/contents/keys/revoked/{name}")))
            .respond_with(file_contents(&std::fs::read(&file).unwrap()))
            .mount(api)
            .await;
        listing.push(json!({"name": name, "type": "file"}));
    }
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/revoked"))
        .respond_with(ResponseTemplate::new(200).set_body_json(listing))
        .mount(api)
        .await;
}

/// The API and storage servers for `assets`, with the tag at `commit`.
pub(super) async fn servers(
    assets: &[(String, Vec<u8>)],
    commit: &str,
) -> (MockServer, MockServer) {
    let api = MockServer::start().await;
    let storage = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/tags/v1.2.3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"id": 7, "tag_name": "v1.2.3", "draft": false, "prerelease": true, "immutable": false}),
        ))
        .mount(&api)
        .await;
    let list: Vec<_> = assets
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| json!({"id": 100 + i, "name": name, "size": bytes.len()}))
        .collect();
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/7/assets"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list))
        .mount(&api)
        .await;
    serve_asset_bytes(&api, &storage, assets).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/commits/v1.2.3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"sha": commit})))
        .mount(&api)
        .await;
    (api, storage)
}

pub(super) async fn verify_release(dir: &Path, api: &MockServer, extra: &[&str]) -> Run {
    let (dir, uri) = (dir.to_path_buf(), api.uri());
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let mut cmd = std::process::Command::new("timeout");
        cmd.arg("60").arg(warden_bin()).current_dir(&dir);
        without_developer_env(&mut cmd);
        cmd.env("GH_TOKEN", TOKEN)
            .args(VERIFY_RELEASE)
            .args(["--api-url", &uri])
            .args(&extra);
        run(&mut cmd)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_good_release_verifies_and_the_token_stays_with_the_api() {
    let t = tempfile::tempdir().unwrap();
    let assets = signed_release(t.path());
    let (api, storage) = servers(&assets, COMMIT).await;
    let out = verify_release(t.path(), &api, &["--out", "got"])
        .await
        .expect(0);
    assert_eq!(
        out.stdout,
        "\
OK    got/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
OK    got/app-linux  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
OK    got/app.tar.gz  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
3 verified, 0 failed, 0 errors
"
    );
    assert_eq!(
        out.stderr,
        format!("warden: note: release v1.2.3 of o/r: 6 assets, tag at commit {COMMIT}, a prerelease\nwarden: note: GitHub says the release is not immutable: its assets and tag can still change\nwarden: note: from GitHub's attestations: no build provenance for app-linux, app.tar.gz\nwarden: warning: SHA256SUMS.minisig binds no workflow run: where it was made cannot be checked (`warden sign` in GitHub Actions binds one; keys/policy.toml's require_run makes it required)\n")
    );
    let to_storage = storage.received_requests().await.unwrap();
    assert_eq!(to_storage.len(), 6);
    for r in &to_storage {
        assert!(
            r.headers.get("authorization").is_none(),
            "the token reached the storage host: {:?}",
            r.headers
        );
    }
    let to_api = api.received_requests().await.unwrap();
    assert!(to_api.iter().all(|r| r
        .headers
        .get("authorization")
        .is_some_and(|v| v.to_str().unwrap().contains(TOKEN))));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_altered_missing_or_extra_asset_and_a_moved_tag_fail() {
    let t = tempfile::tempdir().unwrap();
    let good = signed_release(t.path());
    // One asset altered.
    let mut altered = good.clone();
    altered[2].1 = b"tampered".to_vec();
    let (api, _s) = servers(&altered, COMMIT).await;
    let out = verify_release(t.path(), &api, &[]).await.expect(1);
    assert!(out.stdout.contains("SHA-256 mismatch"), "{}", out.stdout);
    // SHA256SUMS.minisig missing.
    let missing: Vec<_> = good
        .iter()
        .filter(|(n, _)| n != "SHA256SUMS.minisig")
        .cloned()
        .collect();
    let (api, _s) = servers(&missing, COMMIT).await;
    let out = verify_release(t.path(), &api, &[]).await.expect(1);
    assert!(out.stdout.contains("missing signature"), "{}", out.stdout);
    // An extra unsigned asset.
    let mut extra = good.clone();
    extra.push(("notes.txt".into(), b"unsigned".to_vec()));
    let (api, _s) = servers(&extra, COMMIT).await;
    let out = verify_release(t.path(), &api, &[]).await.expect(1);
    assert!(
        out.stdout
            .contains("notes.txt  a file, not listed in SHA256SUMS"),
        "{}",
        out.stdout
    );
    // The tag now names another commit: moved or recreated after signing.
    let (api, _s) = servers(&good, "ffffffffffffffffffffffffffffffffffffffff").await;
    let out = verify_release(t.path(), &api, &[]).await.expect(1);
    assert!(
        out.stdout.contains(&format!(
            "tag v1.2.3 now points at ffffffffffffffffffffffffffffffffffffffff; the signatures bind {COMMIT}: the tag was moved after signing"
        )),
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tag_or_a_hostile_asset_name_is_bad_input() {
    let t = tempfile::tempdir().unwrap();
    let api = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/tags/v1.2.3"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"full_name": "o/r"})))
        .mount(&api)
        .await;
    demo_keys(t.path());
    let out = verify_release(t.path(), &api, &[]).await.expect(2);
    assert_eq!(
        out.stderr,
        "warden: release v1.2.3 of o/r: not found (GET /repos/o/r/releases/tags/v1.2.3 answered 404: Not Found)\n"
    );
    let (api, _s) = servers(&[("../escape".into(), b"x".to_vec())], COMMIT).await;
    let out = verify_release(t.path(), &api, &[]).await.expect(2);
    assert!(
        out.stderr
            .contains("the asset name \"../escape\" is not a plain file name"),
        "{}",
        out.stderr
    );
    assert!(!t.path().join("escape").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn only_downloads_and_verifies_the_chosen_assets() {
    let t = tempfile::tempdir().unwrap();
    let assets = signed_release(t.path());
    let (api, storage) = servers(&assets, COMMIT).await;
    let out = verify_release(t.path(), &api, &["--out", "got", "--only", "app-l*"])
        .await
        .expect(0);
    assert_eq!(
        out.stdout,
        "\
OK    got/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
OK    got/app-linux  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
SKIP  got/app.tar.gz  not selected by --only
2 verified, 0 failed, 0 errors, 1 skipped
"
    );
    let mut fetched: Vec<String> = storage
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    fetched.sort();
    assert_eq!(fetched.len(), 4, "{fetched:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_from_the_repository_are_trusted_and_said_so() {
    let t = tempfile::tempdir().unwrap();
    let assets = signed_release(t.path());
    let (api, _storage) = servers(&assets, COMMIT).await;
    let public = std::fs::read(t.path().join("keys/demo.pub")).unwrap();
    std::fs::remove_dir_all(t.path().join("keys")).unwrap();
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"name": "demo.pub", "type": "file"},
            {"name": "README.md", "type": "file"},
            {"name": "old", "type": "dir"}
        ])))
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/demo.pub"))
        .respond_with(file_contents(&public))
        .mount(&api)
        .await;
    let (dir, uri) = (t.path().to_path_buf(), api.uri());
    let out = tokio::task::spawn_blocking(move || {
        let mut cmd = std::process::Command::new("timeout");
        cmd.arg("60").arg(warden_bin()).current_dir(&dir);
        without_developer_env(&mut cmd);
        run(cmd.args([
            "verify",
            "--release",
            "v1.2.3",
            "--repo",
            "o/r",
            "--keys-from-repo",
            "--api-url",
            &uri,
        ]))
    })
    .await
    .unwrap()
    .expect(0);
    assert!(
        out.stderr.contains("warden: warning: trusting demo.pub from keys/ of o/r's default branch (--keys-from-repo): this trusts the repository itself"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.ends_with("3 verified, 0 failed, 0 errors\n"),
        "{}",
        out.stdout
    );
}

/// Releases can have hundreds of assets: the list is read across pages (`Link`); a signature for
/// another repository fails the binding.
#[tokio::test(flavor = "multi_thread")]
async fn assets_over_several_pages_and_another_repository() {
    use wiremock::matchers::query_param;
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    for i in 0..59 {
        write(
            &t.path().join(format!("dist/a{i:02}")),
            format!("artifact {i}").as_bytes(),
        );
    }
    run(warden(t.path()).args([
        "sign",
        "dist",
        "--secret-key",
        "secret/demo.key",
        "--tag",
        "v1.2.3",
        "--repo",
        "fork/r",
        "--commit",
        COMMIT,
    ]))
    .expect(0);
    let files = release_files(&t.path().join("dist"));
    assert_eq!(files.len(), 120);
    let (api, _storage) = servers(&files, COMMIT).await;
    // The same list, over two pages.
    let list: Vec<_> = files
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| json!({"id": 100 + i, "name": name, "size": bytes.len()}))
        .collect();
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/7/assets"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&list[100..]))
        .with_priority(1)
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/7/assets"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header(
                    "link",
                    format!(
                        "<{}/repos/o/r/releases/7/assets?per_page=100&page=2>; rel=\"next\"",
                        api.uri()
                    ),
                )
                .set_body_json(&list[..100]),
        )
        .with_priority(1)
        .mount(&api)
        .await;
    let out = verify_release(t.path(), &api, &[]).await.expect(1);
    assert!(out.stderr.contains("120 assets"), "{}", out.stderr);
    // Signed for fork/r, published as o/r: every signature fails the repository binding.
    assert!(
        out.stdout.ends_with("0 verified, 60 failed, 0 errors\n")
            && out
                .stdout
                .contains("signed for repository fork/r, expected o/r"),
        "{}",
        out.stdout
    );
}

/// A draft is said so; an artifact missing from the assets fails; a 429 on the release read is
/// waited out and retried.
#[tokio::test(flavor = "multi_thread")]
async fn a_draft_a_missing_artifact_and_a_rate_limit() {
    let t = tempfile::tempdir().unwrap();
    let good = signed_release(t.path());
    let without_tarball: Vec<_> = good
        .iter()
        .filter(|(n, _)| n != "app.tar.gz")
        .cloned()
        .collect();
    let (api, _s) = servers(&without_tarball, COMMIT).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/tags/v1.2.3"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/tags/v1.2.3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"id": 7, "tag_name": "v1.2.3", "draft": true, "prerelease": false}),
        ))
        .with_priority(2)
        .mount(&api)
        .await;
    let out = verify_release(t.path(), &api, &["--out", "got"])
        .await
        .expect(1);
    assert!(
        out.stdout.contains(
            "FAIL  got/app.tar.gz  missing: got/app.tar.gz is not an asset of the release"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.starts_with(&format!(
            "warden: note: release v1.2.3 of o/r: 5 assets, tag at commit {COMMIT}, a draft\nwarden: note: the API does not say whether the release is immutable\n"
        )),
        "{}",
        out.stderr
    );
    let reads = api
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/repos/o/r/releases/tags/v1.2.3")
        .count();
    assert_eq!(reads, 2, "the 429 was retried");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_release_replays_offline_with_the_same_output() {
    let t = tempfile::tempdir().unwrap();
    let assets = signed_release(t.path());
    let (api, _storage) = servers(&assets, COMMIT).await;
    let live = verify_release(t.path(), &api, &["--out", "got", "--record", "snap"])
        .await
        .expect(0);
    let requests = api.received_requests().await.unwrap().len();
    drop(api);
    // No server now: every answer comes from the snapshot, the assets included.
    let replay = |out: &str| {
        run(warden(t.path())
            .args(VERIFY_RELEASE)
            .args(["--out", out, "--snapshot", "snap"]))
    };
    let again = replay("again").expect(0);
    assert_eq!(again.stdout, live.stdout.replace("got/", "again/"));
    assert_eq!(again.stderr, live.stderr);
    // The release, its assets, the tag's commit, the repository's keys/revoked/ and
    // keys/policy.toml (404 both), and GitHub's attestations of each asset (404 all).
    assert_eq!(requests, 5 + 2 * assets.len());
    // A replayed asset that was tampered with fails like a downloaded one (102: app-linux,
    // "linux binary" listed at 12 bytes): same length, other bytes.
    let asset = t.path().join("snap/repos/o/r/releases/assets/102.json");
    let tampered = serde_json::json!({"base64": "TElOVVggQklOQVJZ"});
    std::fs::write(&asset, tampered.to_string()).unwrap();
    let out = replay("third").expect(1);
    assert_eq!(
        out.stdout,
        "\
OK    third/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
FAIL  third/app-linux  SHA-256 mismatch: 6e19f8ee94bd465d67f62861d35a8f7c2c59c111f73a22f17e6c013e9641f651 listed, 275f1bda8c77ea950bceffd49ef4a3c573db3f58cd575b399106fab5770a0400 found
OK    third/app.tar.gz  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
2 verified, 1 failed, 0 errors
"
    );
    // An asset longer or shorter than its listed size stops its download.
    for (bytes, why) in [
        (
            "bGludXggYmluYXJ5IGFuZCBtb3Jl",
            "more bytes than its listed size (12)",
        ),
        ("bGludXg=", "5 bytes, fewer than its listed size (12)"),
    ] {
        std::fs::write(&asset, serde_json::json!({ "base64": bytes }).to_string()).unwrap();
        let out = replay(&format!("fourth-{}", bytes.len())).expect(2);
        assert_eq!(
            out.stderr,
            format!("warden: downloading app-linux: {why}\n")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_signed_without_commit_fails_verify_as_it_fails_the_audit() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/app-linux"), b"linux binary");
    run(warden(t.path()).args([
        "sign",
        "dist",
        "--secret-key",
        "secret/demo.key",
        "--tag",
        "v1.2.3",
        "--repo",
        "o/r",
    ]))
    .expect(0);
    let assets = release_files(&t.path().join("dist"));
    let (api, _storage) = servers(&assets, COMMIT).await;
    let out = verify_release(t.path(), &api, &["--out", "got"])
        .await
        .expect(1);
    assert_eq!(
        out.stdout,
        format!(
            "\
FAIL  got/SHA256SUMS  the trusted comment has no commit: field, expected commit {COMMIT}
FAIL  got/app-linux  not downloaded: SHA256SUMS does not verify (the trusted comment has no commit: field, expected commit {COMMIT})
0 verified, 2 failed, 0 errors
"
        )
    );
}

/// The caller's `--expect-*` are required in addition to what the API says: a tag or repository
/// that contradicts `--release`/`--repo` is a usage error before any download, and an expected
/// commit the signature does not bind fails even when the tag names the signed commit.
#[tokio::test(flavor = "multi_thread")]
async fn the_callers_expectations_are_kept_beside_the_apis() {
    let t = tempfile::tempdir().unwrap();
    let assets = signed_release(t.path());
    let (api, _storage) = servers(&assets, COMMIT).await;
    let out = verify_release(t.path(), &api, &["--expect-tag", "v9.9.9"])
        .await
        .expect(2);
    assert_eq!(
        out.stderr,
        "warden: --expect-tag v9.9.9 contradicts --release v1.2.3: a release is verified for its own tag\n"
    );
    let out = verify_release(t.path(), &api, &["--expect-repo", "fork/r"])
        .await
        .expect(2);
    assert_eq!(
        out.stderr,
        "warden: --expect-repo fork/r contradicts --repo o/r: a release is verified for its own repository\n"
    );
    assert_eq!(api.received_requests().await.unwrap().len(), 0);
    let other = "ffffffffffffffffffffffffffffffffffffffff";
    let out = verify_release(t.path(), &api, &["--out", "got", "--expect-commit", other])
        .await
        .expect(1);
    assert_eq!(
        out.stdout,
        format!(
            "\
FAIL  got/SHA256SUMS  signed for commit {COMMIT}, expected {other}
FAIL  got/app-linux  not downloaded: SHA256SUMS does not verify (signed for commit {COMMIT}, expected {other})
FAIL  got/app.tar.gz  not downloaded: SHA256SUMS does not verify (signed for commit {COMMIT}, expected {other})
0 verified, 3 failed, 0 errors
"
        )
    );
    // Agreeing expectations change nothing.
    verify_release(
        t.path(),
        &api,
        &[
            "--out",
            "again",
            "--expect-tag",
            "v1.2.3",
            "--expect-commit",
            COMMIT,
        ],
    )
    .await
    .expect(0);
}

/// A body that trickles (one byte every 100 ms, forever claiming more) cannot hold a release
/// workflow: the download stops at its deadline, and nothing is left in the folder.
#[tokio::test(flavor = "multi_thread")]
async fn a_trickling_download_stops_at_its_deadline() {
    use release_warden::github::{download_within, Asset};
    use release_warden::github::{LiveApi, RetryPolicy, Token};
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: 1000000\r\n\r\n",
        );
        for _ in 0..200 {
            if stopped.load(std::sync::atomic::Ordering::Relaxed) || s.write_all(b"x").is_err() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    let api = LiveApi::new(
        &format!("http://{addr}"),
        Token::new("t".into()).as_ref(),
        RetryPolicy::default(),
    )
    .unwrap();
    let t = tempfile::tempdir().unwrap();
    let asset = Asset {
        id: 1,
        name: "app.tar.gz".into(),
        size: 1_000_000,
        digest: None,
        uploader: None,
        created_at: None,
        updated_at: None,
    };
    let start = std::time::Instant::now();
    let err = download_within(&api, "o/r", &[asset], t.path(), |_| {
        std::time::Duration::from_secs(1)
    })
    .await
    .unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        err.to_string(),
        "downloading app.tar.gz: not complete after 1 s, the most warden waits for 1000000 bytes (at least 256 KiB/s)"
    );
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap();
    // The deadline a real download gets: a minute, and its size at 256 KiB/s.
    assert_eq!(
        release_warden::github::download_deadline(4 << 30).as_secs(),
        60 + 16_384
    );
}

/// The repository revoked the key that signed the release: `verify --release` reads
/// `keys/revoked/` from the default branch and fails the release, even with the key pinned.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_revoked_in_the_repository_fails_the_release_even_when_pinned() {
    let t = tempfile::tempdir().unwrap();
    let good = signed_release(t.path());
    let (api, _s) = servers(&good, COMMIT).await;
    // Before any revocation (the folder answers 404): the release verifies.
    verify_release(t.path(), &api, &["--out", "before"])
        .await
        .expect(0);
    // The maintainers revoke the key, in another checkout, and push keys/revoked/.
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("keys")).unwrap();
    std::fs::copy(
        t.path().join("keys/demo.pub"),
        repo.path().join("keys/demo.pub"),
    )
    .unwrap();
    revoke_key(repo.path(), DEMO_KEY_ID, &t.path().join("secret/demo.key")).expect(0);
    serve_revocations(&api, &repo.path().join("keys/revoked")).await;
    let out = verify_release(
        t.path(),
        &api,
        &["--out", "after", "--public-key", "keys/demo.pub"],
    )
    .await
    .expect(1);
    assert!(
        out.stdout.contains(&format!(
            "FAIL  after/SHA256SUMS  signed by key {DEMO_KEY_ID}, revoked at 2025-12-02T03:00:10Z (leaked; "
        )),
        "{}",
        out.stdout
    );
    // A recording keeps the revocations, and its replay applies them offline.
    verify_release(
        t.path(),
        &api,
        &["--out", "recorded", "--record", "snap-revoked"],
    )
    .await
    .expect(1);
    let replay = run(warden(t.path()).args(VERIFY_RELEASE).args([
        "--out",
        "replayed",
        "--snapshot",
        "snap-revoked",
    ]))
    .expect(1);
    assert!(
        replay.stdout.starts_with(&format!(
            "FAIL  replayed/SHA256SUMS  signed by key {DEMO_KEY_ID}, revoked at 2025-12-02T03:00:10Z (leaked; snap-revoked/repo-keys/revoked/{DEMO_KEY_ID}.toml): not trusted\n"
        )),
        "{}",
        replay.stdout
    );
    // A revocations folder the API cannot read is not "no revocation".
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/revoked"))
        .respond_with(ResponseTemplate::new(500))
        .with_priority(1)
        .mount(&api)
        .await;
    verify_release(t.path(), &api, &["--out", "failed"])
        .await
        .expect(2);
}

/// The repository's `keys/policy.toml` applies on top of the verifier's own keys (it only removes
/// trust): a threshold of two fails a release one key signed, even with that key pinned; a
/// workflow no run can match together with the local policy's is an error; a policy the API
/// cannot read is not "no policy"; a recording keeps it and its replay applies it.
#[tokio::test(flavor = "multi_thread")]
async fn the_repository_s_policy_applies_to_local_keys() {
    let t = tempfile::tempdir().unwrap();
    let good = signed_release(t.path());
    let (api, _s) = servers(&good, COMMIT).await;
    let policy = |text: &str| file_contents(text.as_bytes());
    // A policy that asks nothing more: the release verifies as before.
    let relaxed = Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/policy.toml"))
        .respond_with(policy("threshold = 1\n"))
        .mount_as_scoped(&api)
        .await;
    verify_release(t.path(), &api, &["--out", "one"])
        .await
        .expect(0);
    drop(relaxed);
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/policy.toml"))
        .respond_with(policy("threshold = 2\n"))
        .mount(&api)
        .await;
    let out = verify_release(
        t.path(),
        &api,
        &["--out", "two", "--public-key", "keys/demo.pub"],
    )
    .await
    .expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  two/SHA256SUMS  1 of 2 required signatures (keys/policy.toml of o/r)\nFAIL  two/app-linux  not downloaded: SHA256SUMS does not verify (1 of 2 required signatures (keys/policy.toml of o/r))\nFAIL  two/app.tar.gz  not downloaded: SHA256SUMS does not verify (1 of 2 required signatures (keys/policy.toml of o/r))\n0 verified, 3 failed, 0 errors\n"
    );
    // Recorded, then replayed offline: the same failure.
    verify_release(t.path(), &api, &["--out", "rec", "--record", "snap-policy"])
        .await
        .expect(1);
    assert!(t.path().join("snap-policy/repo-keys/policy.toml").is_file());
    let replay = run(warden(t.path()).args(VERIFY_RELEASE).args([
        "--out",
        "replayed",
        "--snapshot",
        "snap-policy",
    ]))
    .expect(1);
    assert!(
        replay.stdout.starts_with(
            "FAIL  replayed/SHA256SUMS  1 of 2 required signatures (keys/policy.toml of o/r)\n"
        ),
        "{}",
        replay.stdout
    );
    // A run the repository requires, and no local policy: its file is named.
    let (api, _s) = servers(&good, COMMIT).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/policy.toml"))
        .respond_with(policy("require_run = true\n"))
        .mount(&api)
        .await;
    let out = verify_release(t.path(), &api, &["--out", "run"])
        .await
        .expect(1);
    assert!(
        out.stdout.starts_with("FAIL  run/SHA256SUMS  the signature binds no workflow run, and keys/policy.toml of o/r requires one (made outside the release pipeline?)\n"),
        "{}",
        out.stdout
    );
    // A workflow the local policy names otherwise: no run could be both.
    write(
        &t.path().join("keys/policy.toml"),
        b"workflow = \".github/workflows/release.yml\"\n",
    );
    let (api, _s) = servers(&good, COMMIT).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/policy.toml"))
        .respond_with(policy("workflow = \".github/workflows/other.yml\"\n"))
        .mount(&api)
        .await;
    let out = verify_release(t.path(), &api, &["--out", "conflict"])
        .await
        .expect(2);
    assert_eq!(
        out.stderr,
        "warden: keys/policy.toml of o/r: workflow \".github/workflows/other.yml\", but the local keys/policy.toml asks \".github/workflows/release.yml\": no run can be both\n"
    );
    std::fs::remove_file(t.path().join("keys/policy.toml")).unwrap();
    // A policy the API cannot read is not "no policy".
    let (api, _s) = servers(&good, COMMIT).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/keys/policy.toml"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&api)
        .await;
    verify_release(t.path(), &api, &["--out", "failed"])
        .await
        .expect(2);
}

/// Issue 27's `verify --release`: results name the assets (not a temporary folder), facts are
/// notes, a list that fails stops before any large download, `--out` must be new or empty, and
/// an unsigned release says so.
#[tokio::test(flavor = "multi_thread")]
async fn verify_release_speaks_of_the_release() {
    let t = tempfile::tempdir().unwrap();
    let good = signed_release(t.path());
    let (api, storage) = servers(&good, COMMIT).await;
    let out = verify_release(t.path(), &api, &[]).await.expect(0);
    assert_eq!(
        out.stdout,
        "OK    SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3\nOK    app-linux  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3\nOK    app.tar.gz  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3\n3 verified, 0 failed, 0 errors\n"
    );
    // A list signed for another tag: nothing but the list and its signatures is downloaded.
    let before = storage.received_requests().await.unwrap().len();
    let out = verify_release(t.path(), &api, &["--expect-commit", &"f".repeat(40)])
        .await
        .expect(1);
    assert!(
        out.stdout
            .contains("not downloaded: SHA256SUMS does not verify"),
        "{}",
        out.stdout
    );
    let fetched = storage.received_requests().await.unwrap().len() - before;
    assert_eq!(fetched, 2, "only SHA256SUMS and SHA256SUMS.minisig");
    // --out into a folder that holds something is refused before any request.
    write(&t.path().join("busy/mine.txt"), b"the user's own file");
    let out = verify_release(t.path(), &api, &["--out", "busy"])
        .await
        .expect(2);
    assert_eq!(
        out.stderr,
        "warden: --out busy: not empty; give a new or empty folder (its files would be judged as the release's)\n"
    );
    // A release with neither SHA256SUMS nor signatures is not signed, and says so.
    let unsigned: Vec<_> = good
        .iter()
        .filter(|(n, _)| !n.ends_with(".minisig") && n != "SHA256SUMS")
        .cloned()
        .collect();
    let (api, _storage) = servers(&unsigned, COMMIT).await;
    let out = verify_release(t.path(), &api, &[]).await.expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  release v1.2.3 of o/r  this release is not signed: it has no SHA256SUMS and no .minisig among its 2 assets\n0 verified, 1 failed, 0 errors\n"
    );
}

/// The contents API's answer for a file holding `bytes` (base64, as GitHub sends it).
pub(super) fn file_contents(bytes: &[u8]) -> ResponseTemplate {
    use base64::Engine as _;
    ResponseTemplate::new(200).set_body_json(json!({
        "encoding": "base64",
        "content": base64::engine::general_purpose::STANDARD.encode(bytes)
    }))
}

/// A tag moved after signing is named as such before any asset beyond the list and its
/// signatures is downloaded.
#[tokio::test(flavor = "multi_thread")]
async fn a_moved_tag_is_named_before_any_download() {
    let t = tempfile::tempdir().unwrap();
    let good = signed_release(t.path());
    let moved = "f".repeat(40);
    let (api, storage) = servers(&good, &moved).await;
    let out = verify_release(t.path(), &api, &[]).await;
    let downloaded: Vec<String> = storage
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    insta::assert_snapshot!(format!(
        "{}{}--- exit {:?}\ndownloaded: {downloaded:?}\n",
        out.stdout, out.stderr, out.code
    ));
}

/// A typo'd repository, a tag with no release, and an API URL that serves web pages are each
/// one line, exit 2, saying which.
#[tokio::test(flavor = "multi_thread")]
async fn a_typo_d_repository_or_tag_is_named_as_such() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    let api = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"full_name": "o/r"})))
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
        .mount(&api)
        .await;
    let (dir, uri) = (t.path().to_path_buf(), api.uri());
    let out = tokio::task::spawn_blocking(move || {
        run(warden(&dir)
            .args(["verify", "--release", "v1.2.3", "--repo", "o/nope"])
            .args(["--keys-dir", "keys", "--api-url", &uri]))
    })
    .await
    .unwrap()
    .expect(2);
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str()),
        ("", "warden: no repository o/nope, or the token cannot see it: check the name (from --repo), or the token's repository access\n")
    );
    let out = verify_release(t.path(), &api, &[]).await.expect(2);
    assert_eq!(
        out.stderr,
        "warden: release v1.2.3 of o/r: not found (GET /repos/o/r/releases/tags/v1.2.3 answered 404: Not Found)\n"
    );
    let web = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404).set_body_raw(
            "<!DOCTYPE html>\n<html>\n<body>\n<h1>Not here</h1>\n</body></html>\n",
            "text/html; charset=utf-8",
        ))
        .mount(&web)
        .await;
    let out = verify_release(t.path(), &web, &[]).await.expect(2);
    assert_eq!(
        filter_dir(&out.stderr, t.path()).replace(&web.uri(), "[API]"),
        "warden: release v1.2.3 of o/r: not found (GET /repos/o/r/releases/tags/v1.2.3 answered 404: a web page, not a GitHub API answer (63 bytes of text/html): is the API URL right?)\n"
    );
}

/// Issue 38: `verify --release --require-log` reads the checksum list's log proof from the
/// release's assets, and fails a release whose signature was never logged.
#[tokio::test(flavor = "multi_thread")]
async fn a_published_release_s_log_proof_is_read_from_its_assets() {
    let t = tempfile::tempdir().unwrap();
    let secrets = tempfile::tempdir().unwrap();
    let out = run(warden(t.path())
        .args([
            "log",
            "init",
            "log",
            "--origin",
            "example.org/log",
            "--format",
            "json",
            "--log-key",
        ])
        .arg(secrets.path().join("log.key")))
    .expect(0);
    let vkey = serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["vkey"]
        .as_str()
        .unwrap()
        .to_string();
    let unlogged = signed_release(t.path());
    let (api, _storage) = servers(&unlogged, COMMIT).await;
    let out = verify_release(t.path(), &api, &["--require-log", "--log-vkey", &vkey])
        .await
        .expect(1);
    assert_eq!(
        out.stdout,
        "\
FAIL  SHA256SUMS  signature by key 8F457D1A3C3B50B5 is not in the log: no SHA256SUMS.log-proof beside SHA256SUMS.minisig (sign with --log, or run `warden log append`)
FAIL  app-linux  not downloaded: SHA256SUMS does not verify (signature by key 8F457D1A3C3B50B5 is not in the log: no SHA256SUMS.log-proof beside SHA256SUMS.minisig (sign with --log, or run `warden log append`))
FAIL  app.tar.gz  not downloaded: SHA256SUMS does not verify (signature by key 8F457D1A3C3B50B5 is not in the log: no SHA256SUMS.log-proof beside SHA256SUMS.minisig (sign with --log, or run `warden log append`))
0 verified, 3 failed, 0 errors
"
    );
    run(warden(t.path())
        .args(["log", "append", "log", "--release", "dist", "--log-key"])
        .arg(secrets.path().join("log.key")))
    .expect(0);
    let logged = release_files(&t.path().join("dist"));
    assert_eq!(logged.len(), unlogged.len() + 1);
    let (api, _storage) = servers(&logged, COMMIT).await;
    let out = verify_release(t.path(), &api, &["--require-log", "--log-vkey", &vkey])
        .await
        .expect(0);
    assert_eq!(
        out.stdout,
        "\
OK    SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  in the log
OK    app-linux  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
OK    app.tar.gz  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3
3 verified, 0 failed, 0 errors
"
    );
}
