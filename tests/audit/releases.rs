//! The signed-release check of `warden audit`: the latest releases' `SHA256SUMS` and
//! `SHA256SUMS.minisig` must verify against the repository's `keys/` and bind the release's tag,
//! repository and commit. Read from a snapshot written here (the same reads the live API gives),
//! and once live against a local server.

use std::path::Path;

use crate::common::*;
use base64::Engine as _;
use serde_json::{json, Value};

const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

/// `SHA256SUMS` and its signature for a release signed with `args` (in a folder of its own).
fn signed(t: &Path, name: &str, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let dir = t.join("build").join(name);
    write(&dir.join("app"), format!("app of {name}").as_bytes());
    let mut all = vec!["sign", "--secret-key"];
    let key = t.join("secret/demo.key");
    all.push(key.to_str().unwrap());
    all.push(dir.to_str().unwrap());
    all.extend_from_slice(args);
    run(warden(t).args(&all)).expect(0);
    (
        std::fs::read(dir.join("SHA256SUMS")).unwrap(),
        std::fs::read(dir.join("SHA256SUMS.minisig")).unwrap(),
    )
}

fn put(snap: &Path, route: &str, body: Value) {
    write(
        &snap.join(format!("{route}.json")),
        serde_json::to_string_pretty(&body).unwrap().as_bytes(),
    );
}

fn bytes(b: &[u8]) -> Value {
    json!({"base64": base64::engine::general_purpose::STANDARD.encode(b)})
}

/// `warden audit` of the repository at `root`, its settings from the snapshot `snap`, checking
/// the latest `releases`, as JSON.
fn audit_snapshot(root: &Path, snap: &Path, releases: &str) -> Run {
    run(warden(root)
        .args([
            "audit",
            "--repo",
            "o/r",
            "--releases",
            releases,
            "--format",
            "json",
            "--allow-empty",
            "--snapshot",
        ])
        .arg(snap))
}

/// Findings of the release rules: `id message`.
fn release_findings(out: &Run) -> Vec<String> {
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with("release-"))
        .map(|f| {
            format!(
                "{} {}",
                f["id"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn each_release_problem_is_a_finding() {
    let t = tempfile::tempdir().unwrap();
    demo_keypair(
        &t.path().join("repo/keys/demo.pub"),
        &t.path().join("secret/demo.key"),
    );
    let snap = t.path().join("snap");
    let good = signed(
        t.path(),
        "good",
        &["--tag", "v4", "--repo", "o/r", "--commit", COMMIT],
    );
    let other_repo = signed(
        t.path(),
        "fork",
        &["--tag", "v2", "--repo", "fork/r", "--commit", COMMIT],
    );
    let moved = signed(
        t.path(),
        "moved",
        &["--tag", "v1", "--repo", "o/r", "--commit", COMMIT],
    );
    let release = |id: u64, tag: &str, immutable: bool, signed: bool| {
        let assets = if signed {
            json!([
                {"id": id * 10, "name": "app"},
                {"id": id * 10 + 1, "name": "SHA256SUMS"},
                {"id": id * 10 + 2, "name": "SHA256SUMS.minisig"}
            ])
        } else {
            json!([{"id": id * 10, "name": "app"}])
        };
        json!({"id": id, "tag_name": tag, "immutable": immutable, "assets": assets})
    };
    put(
        &snap,
        "repos/o/r/releases",
        json!([
            release(4, "v4", true, true),
            release(3, "v3", true, false),
            release(2, "v2", true, true),
            release(1, "v1", false, true),
        ]),
    );
    for (id, (sums, sig)) in [(4, &good), (2, &other_repo), (1, &moved)] {
        put(
            &snap,
            &format!("repos/o/r/releases/assets/{}", id * 10 + 1),
            bytes(sums),
        );
        put(
            &snap,
            &format!("repos/o/r/releases/assets/{}", id * 10 + 2),
            bytes(sig),
        );
    }
    put(&snap, "repos/o/r/commits/v4", json!({"sha": COMMIT}));
    put(
        &snap,
        "repos/o/r/commits/v1",
        json!({"sha": "ffffffffffffffffffffffffffffffffffffffff"}),
    );
    let out = audit_snapshot(&t.path().join("repo"), &snap, "4");
    assert_eq!(
        release_findings(&out),
        [
            "release-binding-mismatch release v1: SHA256SUMS: tag v1 now points at ffffffffffffffffffffffffffffffffffffffff; the signatures bind 3470838ef50e566f292860fb1d8aee4937d11849: the tag was moved after signing",
            "release-binding-mismatch release v2: SHA256SUMS: signed for repository fork/r, expected o/r",
            "release-unsigned release v3: this release is not signed: it has no SHA256SUMS and no .minisig among its 1 assets",
            "release-mutable release v1 is not immutable: its assets and tag can still be changed",
        ]
    );
    // A signature that does not verify: v4's signature over another list.
    put(&snap, "repos/o/r/releases/assets/41", bytes(&other_repo.0));
    let out = audit_snapshot(&t.path().join("repo"), &snap, "1");
    let found = release_findings(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("release-signature-invalid release v4: SHA256SUMS: "),
        "{found:?}"
    );
    // The latest release published mutable: immutability is off unless the organisation
    // enforces it for the repository.
    let immutable_ids = |snap: &Path| {
        let out = audit_snapshot(&t.path().join("repo"), snap, "1");
        let doc: Value = serde_json::from_str(&out.stdout).unwrap();
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == "immutable-releases-disabled")
            .count()
    };
    put(
        &snap,
        "repos/o/r/releases",
        json!([release(1, "v1", false, true)]),
    );
    assert_eq!(immutable_ids(&snap), 1);
    put(
        &snap,
        "orgs/o/settings/immutable-releases",
        json!({"enforced_repositories": "selected"}),
    );
    put(
        &snap,
        "orgs/o/settings/immutable-releases/repositories",
        json!({"total_count": 1, "repositories": [{"full_name": "o/other"}]}),
    );
    assert_eq!(immutable_ids(&snap), 1);
    put(
        &snap,
        "orgs/o/settings/immutable-releases/repositories",
        json!({"total_count": 1, "repositories": [{"full_name": "o/r"}]}),
    );
    assert_eq!(immutable_ids(&snap), 0);
    put(
        &snap,
        "orgs/o/settings/immutable-releases",
        json!({"enforced_repositories": "all"}),
    );
    assert_eq!(immutable_ids(&snap), 0);
}

/// The rule `verify --release` applies: a signature that binds no `commit:` binds no release,
/// and a tag whose commit cannot be read leaves the signature unverifiable (never a pass).
#[test]
fn a_signature_without_commit_or_an_unreadable_tag_is_not_a_pass() {
    let t = tempfile::tempdir().unwrap();
    demo_keypair(
        &t.path().join("repo/keys/demo.pub"),
        &t.path().join("secret/demo.key"),
    );
    let snap = t.path().join("snap");
    let no_commit = signed(t.path(), "nocommit", &["--tag", "v1", "--repo", "o/r"]);
    put(
        &snap,
        "repos/o/r/releases",
        json!([{"id": 1, "tag_name": "v1", "immutable": true, "assets": [
            {"id": 10, "name": "app"},
            {"id": 11, "name": "SHA256SUMS"},
            {"id": 12, "name": "SHA256SUMS.minisig"}
        ]}]),
    );
    put(&snap, "repos/o/r/releases/assets/11", bytes(&no_commit.0));
    put(&snap, "repos/o/r/releases/assets/12", bytes(&no_commit.1));
    put(&snap, "repos/o/r/commits/v1", json!({"sha": COMMIT}));
    let out = audit_snapshot(&t.path().join("repo"), &snap, "1");
    assert_eq!(
        release_findings(&out),
        [format!("release-binding-mismatch release v1: SHA256SUMS: the trusted comment has no commit: field, expected commit {COMMIT}")]
    );
    let good = signed(
        t.path(),
        "good",
        &["--tag", "v1", "--repo", "o/r", "--commit", COMMIT],
    );
    put(&snap, "repos/o/r/releases/assets/11", bytes(&good.0));
    put(&snap, "repos/o/r/releases/assets/12", bytes(&good.1));
    assert_eq!(
        release_findings(&audit_snapshot(&t.path().join("repo"), &snap, "1")),
        Vec::<String>::new()
    );
    std::fs::remove_file(snap.join("repos/o/r/commits/v1.json")).unwrap();
    let doc: Value =
        serde_json::from_str(&audit_snapshot(&t.path().join("repo"), &snap, "1").stdout).unwrap();
    let unverifiable: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["message"].as_str().unwrap().contains("tag v1"))
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        unverifiable,
        [format!(
            "the commit that tag v1 names could not be read, so the signature's commit: cannot be checked: GET /repos/o/r/commits/v1 failed: not in the snapshot ({}/repos/o/r/commits/v1.json is missing)",
            snap.display()
        )]
    );
}

/// Issue 25 in the audit: a threshold the published signatures do not meet, a release signed
/// only by revoked keys, a signing workflow that still names a revoked key, and a keys folder
/// left inconsistent by the revocation.
#[test]
fn revoked_keys_and_thresholds_are_findings() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    demo_keypair(
        &repo.join("keys/demo.pub"),
        &t.path().join("secret/demo.key"),
    );
    let (bob_pk, bob_sk) = keypair(&t.path().join("secret"), "bob");
    std::fs::copy(&bob_pk, repo.join("keys/bob.pub")).unwrap();
    let bob = release_warden::minisign::PublicKey::from_file(&bob_pk)
        .unwrap()
        .key_id
        .to_string();
    write(&repo.join("keys/policy.toml"), b"threshold = 2\n");
    write(
        &repo.join(".github/workflows/release.yml"),
        b"on:\n  push:\n    tags: ['v*']\njobs:\n  sign:\n    runs-on: ubuntu-latest\n    steps:\n      - run: warden sign dist --public-key keys/demo.pub --secret-key-env MINISIGN_SECRET_KEY\n        env:\n          MINISIGN_SECRET_KEY: ${{ secrets.MINISIGN_SECRET_KEY }}\n",
    );
    let snap = t.path().join("snap");
    let binding = |tag: &'static str| ["--tag", tag, "--repo", "o/r", "--commit", COMMIT];
    let alone = signed(t.path(), "v1", &binding("v1"));
    let both = signed(t.path(), "v2", &binding("v2"));
    run(warden(&repo)
        .args(["sign", "--cosign"])
        .arg(t.path().join("build/v2"))
        .arg("--secret-key")
        .arg(&bob_sk))
    .expect(0);
    let cosig_name = format!("SHA256SUMS.{bob}.minisig");
    let cosig = std::fs::read(t.path().join("build/v2").join(&cosig_name)).unwrap();
    let assets = |id: u64, cosigned: bool| {
        let mut a = vec![
            json!({"id": id * 10, "name": "app"}),
            json!({"id": id * 10 + 1, "name": "SHA256SUMS"}),
            json!({"id": id * 10 + 2, "name": "SHA256SUMS.minisig"}),
        ];
        if cosigned {
            a.push(json!({"id": id * 10 + 3, "name": cosig_name}));
        }
        a
    };
    put(
        &snap,
        "repos/o/r/releases",
        json!([
            {"id": 2, "tag_name": "v2", "immutable": true, "assets": assets(2, true)},
            {"id": 1, "tag_name": "v1", "immutable": true, "assets": assets(1, false)},
        ]),
    );
    for (id, (sums, sig)) in [(1, &alone), (2, &both)] {
        put(
            &snap,
            &format!("repos/o/r/releases/assets/{id}1"),
            bytes(sums),
        );
        put(
            &snap,
            &format!("repos/o/r/releases/assets/{id}2"),
            bytes(sig),
        );
        put(
            &snap,
            &format!("repos/o/r/commits/v{id}"),
            json!({"sha": COMMIT}),
        );
    }
    put(&snap, "repos/o/r/releases/assets/23", bytes(&cosig));
    let out = audit_snapshot(&repo, &snap, "2");
    assert_eq!(
        release_findings(&out),
        ["release-signature-invalid release v1: SHA256SUMS: 1 of 2 required signatures (keys/policy.toml)"]
    );

    // The demo key leaks and is revoked: v1 now carries only a revoked signature, v2's first
    // signature is revoked (a revoked key's signature fails the release whatever signs beside
    // it: both are the revoked-key finding), the workflow still names the key, and one usable
    // key is left for a threshold of two.
    run(warden(&repo)
        .env("SOURCE_DATE_EPOCH", "1764644410")
        .args([
            "keys",
            "revoke",
            "8F457D1A3C3B50B5",
            "--reason",
            "leaked",
            "--secret-key",
        ])
        .arg(t.path().join("secret/demo.key")))
    .expect(0);
    let out = audit_snapshot(&repo, &snap, "2");
    assert_eq!(
        release_findings(&out),
        [
            "release-signed-by-revoked-key this signing workflow names demo.pub, the public key of key 8F457D1A3C3B50B5, which is revoked".to_string(),
            "release-signed-by-revoked-key release v1: SHA256SUMS: signed by key 8F457D1A3C3B50B5, revoked at 2025-12-02T03:00:10Z (leaked; keys/revoked/8F457D1A3C3B50B5.toml): not trusted".to_string(),
            "release-signed-by-revoked-key release v2: SHA256SUMS: signed by key 8F457D1A3C3B50B5, revoked at 2025-12-02T03:00:10Z (leaked; keys/revoked/8F457D1A3C3B50B5.toml): not trusted".to_string(),
        ]
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let keys: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "keys-folder-inconsistent")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["keys/ does not load: keys/policy.toml: threshold 2 is above the 1 usable signer (trusted, not revoked, not expired; a key and its successors are one): no release can be signed"]
    );
}

/// Issue 26 in the audit: every asset's GitHub digest against the signed list (no download),
/// and the run the signature binds against GitHub's records of it and of the uploads.
#[test]
fn pipeline_provenance_and_replaced_assets_are_findings() {
    use sha2::Digest as _;
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    demo_keypair(
        &repo.join("keys/demo.pub"),
        &t.path().join("secret/demo.key"),
    );
    let dir = t.path().join("build/v1");
    write(&dir.join("app"), b"app of v1");
    run(warden(t.path())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_RUN_ID", "555")
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env(
            "GITHUB_WORKFLOW_REF",
            "o/r/.github/workflows/release.yml@refs/tags/v1",
        )
        .env("SOURCE_DATE_EPOCH", "1764460800")
        .args(["sign", "--secret-key"])
        .arg(t.path().join("secret/demo.key"))
        .arg(&dir)
        .args([
            "--tag",
            "v1",
            "--repo",
            "o/r",
            "--commit",
            COMMIT,
            "--environment",
            "release",
        ]))
    .expect(0);
    let sums = std::fs::read(dir.join("SHA256SUMS")).unwrap();
    let sig = std::fs::read(dir.join("SHA256SUMS.minisig")).unwrap();
    let digest = |b: &[u8]| format!("sha256:{:x}", sha2::Sha256::digest(b));
    let bot = json!({"login": "github-actions[bot]"});
    let at = "2025-11-30T00:01:00Z";
    let assets = json!([
        {"id": 10, "name": "app", "digest": digest(b"app of v1"), "uploader": bot, "created_at": at, "updated_at": at},
        {"id": 11, "name": "SHA256SUMS", "digest": digest(&sums), "uploader": bot, "created_at": at, "updated_at": at},
        {"id": 12, "name": "SHA256SUMS.minisig", "digest": digest(&sig), "uploader": bot, "created_at": at, "updated_at": at},
    ]);
    let snap = t.path().join("snap");
    let release =
        |assets: &Value| json!([{"id": 1, "tag_name": "v1", "immutable": true, "assets": assets}]);
    put(&snap, "repos/o/r/releases", release(&assets));
    put(&snap, "repos/o/r/releases/assets/11", bytes(&sums));
    put(&snap, "repos/o/r/releases/assets/12", bytes(&sig));
    put(&snap, "repos/o/r/commits/v1", json!({"sha": COMMIT}));
    let good_run = json!({
        "id": 555, "run_attempt": 1, "path": ".github/workflows/release.yml",
        "head_sha": COMMIT, "head_repository": {"full_name": "o/r"},
        "event": "push", "head_branch": "v1",
        "run_started_at": "2025-11-29T23:58:00Z", "updated_at": "2025-11-30T00:05:00Z"
    });
    put(
        &snap,
        "repos/o/r/actions/runs/555/attempts/1",
        good_run.clone(),
    );
    put(
        &snap,
        "repos/o/r/deployments",
        json!([{"id": 9, "environment": "release", "sha": COMMIT}]),
    );
    put(
        &snap,
        "repos/o/r/deployments/9/statuses",
        json!([{"state": "success", "log_url": "https://github.com/o/r/actions/runs/555/job/1"}]),
    );
    assert_eq!(
        release_findings(&audit_snapshot(&repo, &snap, "1")),
        Vec::<String>::new()
    );

    // The app replaced after signing, the signature re-uploaded by a person, and the run
    // recorded for another workflow.
    let mut changed = assets.clone();
    changed[0]["digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    changed[2]["uploader"] = json!({"login": "mallory"});
    put(&snap, "repos/o/r/releases", release(&changed));
    let mut other = good_run.clone();
    other["path"] = json!(".github/workflows/nightly.yml");
    put(&snap, "repos/o/r/actions/runs/555/attempts/1", other);
    assert_eq!(
        release_findings(&audit_snapshot(&repo, &snap, "1")),
        [
            format!("release-asset-replaced release v1: app: GitHub's digest of the asset is sha256:{}, the signed SHA256SUMS lists {}: replaced after signing", "0".repeat(64), &digest(b"app of v1")[7..]),
            "release-asset-replaced release v1: SHA256SUMS.minisig (run 555 (attempt 1) of .github/workflows/release.yml in environment release): SHA256SUMS.minisig was uploaded by @mallory, not by the workflow (github-actions[bot])".to_string(),
            "release-signed-outside-pipeline release v1: SHA256SUMS.minisig (run 555 (attempt 1) of .github/workflows/release.yml in environment release): the signature names .github/workflows/release.yml, but run 555 ran .github/workflows/nightly.yml".to_string(),
        ]
    );

    // A policy requiring a run, and a release signed on a laptop.
    write(&repo.join("keys/policy.toml"), b"require_run = true\n");
    let laptop = signed(
        t.path(),
        "laptop",
        &["--tag", "v1", "--repo", "o/r", "--commit", COMMIT],
    );
    put(
        &snap,
        "repos/o/r/releases",
        release(&json!([
            {"id": 11, "name": "SHA256SUMS"}, {"id": 12, "name": "SHA256SUMS.minisig"}
        ])),
    );
    put(&snap, "repos/o/r/releases/assets/11", bytes(&laptop.0));
    put(&snap, "repos/o/r/releases/assets/12", bytes(&laptop.1));
    assert_eq!(
        release_findings(&audit_snapshot(&repo, &snap, "1")),
        ["release-signed-outside-pipeline release v1: SHA256SUMS: the signature binds no workflow run, and keys/policy.toml requires one (made outside the release pipeline?)"]
    );
}

/// Live: the two files come through the asset route and its redirect to the storage host (no
/// token there), and `audit snapshot` records them for a replay with the same findings.
#[tokio::test(flavor = "multi_thread")]
async fn live_reads_follow_the_storage_redirect_and_are_recorded() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let t = tempfile::tempdir().unwrap();
    demo_keypair(
        &t.path().join("repo/keys/demo.pub"),
        &t.path().join("secret/demo.key"),
    );
    let (sums, sig) = signed(
        t.path(),
        "good",
        &["--tag", "v4", "--repo", "o/r", "--commit", COMMIT],
    );
    let api = github_with_repository("o/r").await;
    let storage = MockServer::start().await;
    let get = |p: &str| Mock::given(method("GET")).and(path(p.to_string()));
    get("/repos/o/r/releases")
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{
            "id": 4, "tag_name": "v4", "immutable": true,
            "assets": [{"id": 40, "name": "app"}, {"id": 41, "name": "SHA256SUMS"}, {"id": 42, "name": "SHA256SUMS.minisig"}]
        }])))
        .mount(&api)
        .await;
    let app = std::fs::read(t.path().join("build/good/app")).unwrap();
    for (id, body) in [(40, app), (41, sums), (42, sig)] {
        get(&format!("/repos/o/r/releases/assets/{id}"))
            .respond_with(
                ResponseTemplate::new(302)
                    .insert_header("location", format!("{}/b/{id}", storage.uri())),
            )
            .mount(&api)
            .await;
        get(&format!("/b/{id}"))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(body))
            .mount(&storage)
            .await;
    }
    get("/repos/o/r/commits/v4")
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"sha": COMMIT})))
        .mount(&api)
        .await;
    let (root, uri, snap) = (t.path().join("repo"), api.uri(), t.path().join("snap"));
    let out = tokio::task::spawn_blocking(move || {
        let live = run(warden(&root).env("GH_TOKEN", "ghp_t").args([
            "audit",
            "--repo",
            "o/r",
            "--releases",
            "1",
            "--format",
            "json",
            "--allow-empty",
            "--api-url",
            &uri,
        ]));
        run(warden(&root)
            .env("GH_TOKEN", "ghp_t")
            .args([
                "audit",
                "snapshot",
                "--repo",
                "o/r",
                "--releases",
                "1",
                "--api-url",
                &uri,
                "--out",
            ])
            .arg(&snap))
        .expect(0);
        let replay = audit_snapshot(&root, &snap, "1");
        // --deep hashes every asset as it streams.
        let deep = run(warden(&root).env("GH_TOKEN", "ghp_t").args([
            "audit",
            "--repo",
            "o/r",
            "--releases",
            "1",
            "--deep",
            "--format",
            "json",
            "--allow-empty",
            "--api-url",
            &uri,
        ]));
        assert_eq!(
            release_findings(&deep),
            Vec::<String>::new(),
            "{}",
            deep.stdout
        );
        (live, replay)
    })
    .await
    .unwrap();
    assert_eq!(
        release_findings(&out.0),
        Vec::<String>::new(),
        "{}",
        out.0.stdout
    );
    assert_eq!(
        release_findings(&out.1),
        Vec::<String>::new(),
        "{}",
        out.1.stdout
    );
    for r in storage.received_requests().await.unwrap() {
        assert!(
            r.headers.get("authorization").is_none(),
            "token on the storage host"
        );
    }
    // The app asset replaced after signing: --deep catches it.
    Mock::given(method("GET"))
        .and(path("/b/40"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"replaced".to_vec()))
        .with_priority(1)
        .mount(&storage)
        .await;
    let (root, uri) = (t.path().join("repo"), api.uri());
    let deep = tokio::task::spawn_blocking(move || {
        run(warden(&root).env("GH_TOKEN", "ghp_t").args([
            "audit",
            "--repo",
            "o/r",
            "--releases",
            "1",
            "--deep",
            "--format",
            "json",
            "--allow-empty",
            "--api-url",
            &uri,
        ]))
    })
    .await
    .unwrap();
    let found = release_findings(&deep);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("release-signature-invalid release v4: app: SHA-256 mismatch: "),
        "{found:?}"
    );
}

/// Issue 48 in the audit: GitHub's release attestation of a published release, found through
/// one artifact's digest and one other asset's, is held against the release and its signatures
/// (here GitHub's real attestation of release v6 of bdehamer/delme, served for a release that
/// calls itself v7).
#[test]
fn a_release_attestation_that_disagrees_is_a_finding() {
    use sha2::Digest as _;
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    demo_keypair(
        &repo.join("keys/demo.pub"),
        &t.path().join("secret/demo.key"),
    );
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/attestations");
    let zip = std::fs::read(fixtures.join("github_release_artifact.zip")).unwrap();
    let dir = t.path().join("build/v7");
    write(&dir.join("artifact.zip"), &zip);
    let commit = "c5e17a62e06a1d201570249c61fae531e9244e1b";
    run(warden(t.path())
        .args(["sign", "--secret-key"])
        .arg(t.path().join("secret/demo.key"))
        .arg(&dir)
        .args([
            "--tag",
            "v7",
            "--repo",
            "bdehamer/delme",
            "--commit",
            commit,
        ]))
    .expect(0);
    let sums = std::fs::read(dir.join("SHA256SUMS")).unwrap();
    let sig = std::fs::read(dir.join("SHA256SUMS.minisig")).unwrap();
    let hex = |b: &[u8]| format!("{:x}", sha2::Sha256::digest(b));
    let assets = json!([
        {"id": 10, "name": "artifact.zip", "digest": format!("sha256:{}", hex(&zip))},
        {"id": 11, "name": "SHA256SUMS", "digest": format!("sha256:{}", hex(&sums))},
        {"id": 12, "name": "SHA256SUMS.minisig", "digest": format!("sha256:{}", hex(&sig))},
    ]);
    let snap = t.path().join("snap");
    let base = "repos/bdehamer/delme";
    put(
        &snap,
        &format!("{base}/releases"),
        json!([{"id": 1, "tag_name": "v7", "immutable": true, "assets": assets}]),
    );
    put(&snap, &format!("{base}/releases/assets/11"), bytes(&sums));
    put(&snap, &format!("{base}/releases/assets/12"), bytes(&sig));
    put(&snap, &format!("{base}/commits/v7"), json!({"sha": commit}));
    let bundle: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("github_release_bundle.json")).unwrap(),
    )
    .unwrap();
    put(
        &snap,
        &format!("{base}/attestations/sha256:{}", hex(&zip)),
        json!({"attestations": [{"bundle": bundle}]}),
    );
    write(
        &snap.join(format!(
            "{base}/attestations/sha256:{}.error.json",
            hex(&sums)
        )),
        br#"{"status": 404, "message": "Not Found"}"#,
    );
    let out = run(warden(&repo)
        .args(["audit", "--repo", "bdehamer/delme", "--releases", "1"])
        .args(["--format", "json", "--allow-empty", "--snapshot"])
        .arg(&snap));
    assert_eq!(
        release_findings(&out),
        [
            "release-asset-replaced release v7: SHA256SUMS: not in GitHub's release attestation: SHA256SUMS (sha256:".to_string() + &hex(&sums) + ") was not an asset when the release was published",
            "release-asset-replaced release v7: SHA256SUMS.minisig: not in GitHub's release attestation: SHA256SUMS.minisig (sha256:".to_string() + &hex(&sig) + ") was not an asset when the release was published",
            "release-attestation-mismatch release v7: release attestation: GitHub attests tag v6; the release is v7".to_string(),
        ]
    );
}
