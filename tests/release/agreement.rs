//! Issue 34: a release judged by `verify --release` and by the audit can never get different
//! answers. Release shapes are generated (who signs first, who co-signs, the policy, what the
//! signature binds, the run and GitHub's record of it, who uploaded, what the assets are), each
//! served by one local GitHub, and judged by `verify --release`, `audit` and `audit --deep`: the
//! release is trusted by all or by none, every problem the audit names is a failure verify
//! prints, and every failure verify prints is named by the audit.

use std::path::Path;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::verify_release::{file_contents, serve_asset_bytes, serve_revocations};
use crate::common::*;

const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";
const OTHER: &str = "ffffffffffffffffffffffffffffffffffffffff";
const WORKFLOW_REF: &str = "o/r/.github/workflows/release.yml@refs/tags/v1";
/// 2025-11-30T00:00:00Z, inside the run.
const SIGNED_AT: &str = "1764460800";

/// One release shape: each field is one way a release can be made.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// 0 the trusted key, 1 a thief's own key, 2 the trusted key revoked, 3 past its end, 4 the
    /// key the folder rotated to (`keys rotate`).
    first: u8,
    /// 0 none, 1 a second trusted key, 2 the first key again on a laptop (a thief with it).
    cosign: u8,
    /// 0 none, 1 threshold 2, 2 require_run.
    policy: u8,
    /// 0 good, 1 another tag, 2 the tag moved since, 3 no commit bound.
    bind: u8,
    /// 0 signed in run 555 as GitHub records it, 1 a run GitHub records otherwise, 2 a laptop.
    run: u8,
    /// 0 uploaded by the workflow, 1 by someone else.
    upload: u8,
    /// 0 intact, 1 GitHub's digest of the app differs, 2 an extra unlisted asset, 3 the app gone.
    asset: u8,
}

/// The shapes: each value of each field at least once, then a deterministic spread of mixes.
fn shapes() -> Vec<Shape> {
    let base = Shape {
        first: 0,
        cosign: 0,
        policy: 0,
        bind: 0,
        run: 0,
        upload: 0,
        asset: 0,
    };
    let mut out = vec![base];
    for v in 1..4 {
        out.push(Shape { first: v, ..base });
        out.push(Shape { bind: v, ..base });
        out.push(Shape { asset: v, ..base });
    }
    out.push(Shape { first: 4, ..base });
    out.push(Shape {
        first: 4,
        cosign: 2,
        policy: 1,
        ..base
    });
    for v in 1..3 {
        out.push(Shape { cosign: v, ..base });
        out.push(Shape { policy: v, ..base });
        out.push(Shape { run: v, ..base });
    }
    out.push(Shape { upload: 1, ..base });
    // The attacks of issue 34, exactly: a laptop co-signature beside a stranger's first one under
    // require_run, and one signature where two keys are required.
    out.push(Shape {
        first: 1,
        cosign: 2,
        policy: 2,
        run: 2,
        ..base
    });
    out.push(Shape {
        cosign: 1,
        policy: 1,
        ..base
    });
    let mut seed: u64 = 0x005e_ed34;
    for _ in 0..10 {
        let mut pick = |n: u8| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % u64::from(n)) as u8
        };
        out.push(Shape {
            first: pick(5),
            cosign: pick(3),
            policy: pick(3),
            bind: pick(4),
            run: pick(3),
            upload: pick(2),
            asset: pick(4),
        });
    }
    out
}

/// `warden sign` of `what` with `key`, bound as the shape says, in the run or on a laptop.
fn sign(t: &Path, shape: Shape, what: &str, key: &Path, extra: &[&str]) {
    let mut cmd = warden(t);
    cmd.args(["sign", what, "--secret-key"])
        .arg(key)
        .args(extra);
    cmd.args([
        "--tag",
        if shape.bind == 1 { "v0" } else { "v1" },
        "--repo",
        "o/r",
    ]);
    if shape.bind != 3 {
        cmd.args(["--commit", COMMIT]);
    }
    cmd.env("SOURCE_DATE_EPOCH", SIGNED_AT);
    if shape.run != 2 {
        cmd.env("GITHUB_ACTIONS", "true")
            .env("GITHUB_RUN_ID", "555")
            .env("GITHUB_RUN_ATTEMPT", "1")
            .env("GITHUB_WORKFLOW_REF", WORKFLOW_REF)
            .args(["--environment", "release"]);
    }
    run(&mut cmd).expect(0);
}

/// The checkout `t` (its keys folder as the shape says) and the signed release in `t/dist`;
/// returns the release's files.
fn make(t: &Path, shape: Shape) -> Vec<(String, Vec<u8>)> {
    demo_keys(t);
    let (b_pub, b_key) = keypair(t, "bob");
    std::fs::copy(&b_pub, t.join("keys/bob.pub")).unwrap();
    let (_, thief) = keypair(t, "thief");
    let demo = t.join("secret/demo.key");
    let mut policy = String::new();
    match shape.policy {
        1 => policy.push_str("threshold = 2\n"),
        2 => policy.push_str("require_run = true\n"),
        _ => {}
    }
    if shape.first == 3 {
        policy.push_str(&format!("[keys.{DEMO_KEY_ID}]\nvalid_until = 2020-01-01\n"));
    }
    if !policy.is_empty() {
        write(&t.join("keys/policy.toml"), policy.as_bytes());
    }
    write(&t.join("dist/app"), b"the app");
    let (_, carol) = keypair(t, "carol");
    if shape.first == 4 {
        // The folder rotated from the demo key to carol's (both keys stay in it).
        run(warden(t)
            .args(["keys", "rotate", "--old-secret-key"])
            .arg(&demo)
            .arg("--new-secret-key")
            .arg(&carol))
        .expect(0);
    }
    let first = match shape.first {
        1 => &thief,
        4 => &carol,
        _ => &demo,
    };
    sign(t, shape, "dist", first, &[]);
    let cosigner = match shape.cosign {
        1 => Some((&b_key, id_of(&b_pub))),
        2 => Some((&demo, DEMO_KEY_ID.to_string())),
        _ => None,
    };
    if let Some((key, id)) = cosigner {
        std::fs::create_dir_all(t.join("laptop")).unwrap();
        std::fs::copy(t.join("dist/SHA256SUMS"), t.join("laptop/SHA256SUMS")).unwrap();
        let laptop = Shape {
            run: if shape.cosign == 2 { 2 } else { shape.run },
            ..shape
        };
        sign(t, laptop, "laptop/SHA256SUMS", key, &["--no-checksums"]);
        std::fs::rename(
            t.join("laptop/SHA256SUMS.minisig"),
            t.join(format!("dist/SHA256SUMS.{id}.minisig")),
        )
        .unwrap();
    }
    if shape.first == 2 {
        revoke_key(t, DEMO_KEY_ID, &demo).expect(0);
    }
    let mut files = super::verify_release::release_files(&t.join("dist"));
    match shape.asset {
        2 => files.push(("notes.txt".into(), b"unsigned".to_vec())),
        3 => files.retain(|(n, _)| n != "app"),
        _ => {}
    }
    files
}

fn id_of(file: &Path) -> String {
    release_warden::minisign::PublicKey::from_file(file)
        .unwrap()
        .key_id
        .to_string()
}

/// One local GitHub for the shape: the release (by tag and in the listing), its assets behind a
/// storage redirect, the tag's commit, the run and its deployment, and the repository's keys
/// folder as the contents API gives it.
async fn serve(t: &Path, shape: Shape, files: &[(String, Vec<u8>)]) -> (MockServer, MockServer) {
    use sha2::Digest as _;
    let api = github_with_repository("o/r").await;
    let storage = MockServer::start().await;
    let get = |p: String| Mock::given(method("GET")).and(path(p));
    let uploader = if shape.upload == 1 {
        "mallory"
    } else {
        "github-actions[bot]"
    };
    let assets: Vec<Value> = files
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| {
            let digest = if shape.asset == 1 && name == "app" {
                "0".repeat(64)
            } else {
                format!("{:x}", sha2::Sha256::digest(bytes))
            };
            json!({
                "id": 100 + i, "name": name, "size": bytes.len(),
                "digest": format!("sha256:{digest}"),
                "uploader": {"login": uploader},
                "created_at": "2025-11-30T00:01:00Z", "updated_at": "2025-11-30T00:01:00Z"
            })
        })
        .collect();
    let release = json!({"id": 7, "tag_name": "v1", "immutable": true, "assets": assets});
    get("/repos/o/r/releases/tags/v1".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(release.clone()))
        .mount(&api)
        .await;
    get("/repos/o/r/releases".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([release])))
        .mount(&api)
        .await;
    get("/repos/o/r/releases/7/assets".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(assets))
        .mount(&api)
        .await;
    serve_asset_bytes(&api, &storage, files).await;
    let tag_commit = if shape.bind == 2 { OTHER } else { COMMIT };
    get("/repos/o/r/commits/v1".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"sha": tag_commit})))
        .mount(&api)
        .await;
    let workflow = if shape.run == 1 {
        ".github/workflows/nightly.yml"
    } else {
        ".github/workflows/release.yml"
    };
    get("/repos/o/r/actions/runs/555/attempts/1".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": 555, "run_attempt": 1, "path": workflow,
            "head_sha": COMMIT, "head_repository": {"full_name": "o/r"},
            "event": "push", "head_branch": "v1",
            "run_started_at": "2025-11-29T23:58:00Z", "updated_at": "2025-11-30T00:05:00Z"
        })))
        .mount(&api)
        .await;
    get("/repos/o/r/deployments".into())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!([{"id": 9, "environment": "release", "sha": COMMIT}])),
        )
        .mount(&api)
        .await;
    get("/repos/o/r/deployments/9/statuses".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"state": "success", "log_url": "https://github.com/o/r/actions/runs/555/job/1"}
        ])))
        .mount(&api)
        .await;
    // The repository's keys folder, as `verify --release` reads it through the contents API.
    if let Ok(policy) = std::fs::read(t.join("keys/policy.toml")) {
        get("/repos/o/r/contents/keys/policy.toml".into())
            .respond_with(file_contents(&policy))
            .mount(&api)
            .await;
    }
    if t.join("keys/revoked").is_dir() {
        serve_revocations(&api, &t.join("keys/revoked")).await;
    }
    (api, storage)
}

/// What `verify --release` said: its exit code and each failing line (name, reason).
fn verify_says(t: &Path, uri: &str) -> (i32, Vec<(String, String)>) {
    let out = run(warden(t)
        .env("GH_TOKEN", "ghp_t")
        .args([
            "verify",
            "--release",
            "v1",
            "--repo",
            "o/r",
            "--format",
            "json",
        ])
        .args(["--api-url", uri]));
    assert!(out.code <= 2, "{}", out.all());
    let doc: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.all()));
    let failing = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] != "ok")
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (out.code, failing)
}

/// What the audit said of release v1: its findings about the release's trust (not about its
/// mutability), each as `<subject>: <why>`.
fn audit_says(t: &Path, uri: &str, deep: bool) -> Vec<String> {
    let mut cmd = warden(t);
    cmd.env("GH_TOKEN", "ghp_t")
        .args([
            "audit",
            "--repo",
            "o/r",
            "--releases",
            "1",
            "--format",
            "json",
        ])
        .args(["--allow-empty", "--api-url", uri]);
    if deep {
        cmd.arg("--deep");
    }
    let out = run(&mut cmd);
    let doc: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.all()));
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            let id = f["id"].as_str().unwrap();
            let message = f["message"].as_str().unwrap();
            (id.starts_with("release-")
                && id != "release-mutable"
                && !message.contains("names demo.pub"))
                || (id == "unverifiable" && message.starts_with("release v1"))
        })
        .map(|f| {
            let m = f["message"].as_str().unwrap();
            m.strip_prefix("release v1: ").unwrap_or(m).to_string()
        })
        .collect()
}

/// Whether verify's failing line `(name, reason)` says the audit's problem `said`.
fn says_the_same(said: &str, (name, reason): &(String, String)) -> bool {
    said == reason
        || said == format!("{name}: {reason}")
        || reason
            .split("; ")
            .any(|part| said == format!("{name}: {part}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_release_and_the_audit_agree_on_every_release_shape() {
    let shapes = shapes();
    for (i, shape) in shapes.iter().enumerate() {
        let t = tempfile::tempdir().unwrap();
        let files = make(t.path(), *shape);
        let (api, _storage) = serve(t.path(), *shape, &files).await;
        let (dir, uri) = (t.path().to_path_buf(), api.uri());
        let (verify, audit, deep) = tokio::task::spawn_blocking(move || {
            (
                verify_says(&dir, &uri),
                audit_says(&dir, &uri, false),
                audit_says(&dir, &uri, true),
            )
        })
        .await
        .unwrap();
        let (code, failing) = verify;
        let context =
            format!("shape {i} {shape:?}\nverify {code}: {failing:#?}\naudit: {audit:#?}");
        assert_eq!(
            audit, deep,
            "{context}\n(the audit without --deep read everything that decides it)"
        );
        assert_eq!(code == 0, audit.is_empty(), "{context}");
        for said in &audit {
            assert!(
                failing.iter().any(|f| says_the_same(said, f)),
                "the audit says what verify does not: {said}\n{context}"
            );
        }
        for f in failing
            .iter()
            .filter(|(_, r)| !r.contains("does not verify ("))
        {
            assert!(
                audit.iter().any(|said| says_the_same(said, f)),
                "verify says what the audit does not: {f:?}\n{context}"
            );
        }
    }
}
