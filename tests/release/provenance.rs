//! Pipeline provenance (issue 26): `warden sign` in a (simulated) Actions run binds the run, and
//! `verify --release` checks it against a local server playing GitHub's records of runs,
//! deployments and asset uploads. Each way a stolen key's signature differs from the pipeline's
//! is a failure that says what differs.

use std::path::Path;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::*;

pub(super) const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";
const WORKFLOW_REF: &str = "o/r/.github/workflows/release.yml@refs/tags/v1.2.3";
/// 2025-11-30T00:00:00Z, inside the run below.
const SIGNED_AT: &str = "1764460800";

/// `warden sign` as the release job runs it, in run 555 attempt 1, environment `release`.
fn sign_in_run(t: &Path, extra_env: &[(&str, &str)]) -> Run {
    let mut cmd = warden(t);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_RUN_ID", "555")
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env("GITHUB_WORKFLOW_REF", WORKFLOW_REF)
        .env("SOURCE_DATE_EPOCH", SIGNED_AT);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    run(cmd.args([
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
        "--environment",
        "release",
    ]))
}

/// What the server plays: the release's assets (as the API lists them), the run attempt, and
/// the deployments with their statuses. Each test changes one thing.
pub(super) struct Records {
    assets: Vec<Value>,
    pub(super) files: Vec<(String, Vec<u8>)>,
    run: Option<Value>,
    deployments: Value,
    statuses: Value,
    /// The commit the tag names.
    commit: String,
}

impl Records {
    /// The same records for a release of `commit`.
    pub(super) fn set_commit(&mut self, commit: &str) {
        self.commit = commit.to_string();
        if let Some(run) = &mut self.run {
            run["head_sha"] = commit.into();
        }
        self.deployments[0]["sha"] = commit.into();
    }
}

pub(super) fn good_records(dist: &Path) -> Records {
    let files = super::verify_release::release_files(dist);
    let assets = files
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| {
            use sha2::Digest as _;
            json!({
                "id": 100 + i, "name": name, "size": bytes.len(),
                "digest": format!("sha256:{:x}", sha2::Sha256::digest(bytes)),
                "uploader": {"login": "github-actions[bot]", "type": "Bot"},
                "created_at": "2025-11-30T00:01:00Z", "updated_at": "2025-11-30T00:01:00Z"
            })
        })
        .collect();
    Records {
        assets,
        files,
        run: Some(json!({
            "id": 555, "run_attempt": 1, "path": ".github/workflows/release.yml",
            "head_sha": COMMIT, "head_repository": {"full_name": "o/r"},
            "event": "push", "head_branch": "v1.2.3",
            "run_started_at": "2025-11-29T23:58:00Z", "updated_at": "2025-11-30T00:05:00Z"
        })),
        deployments: json!([{"id": 9, "environment": "release", "sha": COMMIT}]),
        statuses: json!([{"state": "success", "log_url": "https://github.com/o/r/actions/runs/555/job/1"}]),
        commit: COMMIT.to_string(),
    }
}

pub(super) async fn serve(r: &Records) -> (MockServer, MockServer) {
    let api = MockServer::start().await;
    let storage = MockServer::start().await;
    let get = |p: String| Mock::given(method("GET")).and(path(p));
    get("/repos/o/r/releases/tags/v1.2.3".into())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": 7, "tag_name": "v1.2.3", "immutable": true})),
        )
        .mount(&api)
        .await;
    get("/repos/o/r/releases/7/assets".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(r.assets.clone()))
        .mount(&api)
        .await;
    super::verify_release::serve_asset_bytes(&api, &storage, &r.files).await;
    get("/repos/o/r/commits/v1.2.3".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"sha": r.commit})))
        .mount(&api)
        .await;
    if let Some(run) = &r.run {
        get("/repos/o/r/actions/runs/555/attempts/1".into())
            .respond_with(ResponseTemplate::new(200).set_body_json(run.clone()))
            .mount(&api)
            .await;
    }
    get("/repos/o/r/deployments".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(r.deployments.clone()))
        .mount(&api)
        .await;
    get("/repos/o/r/deployments/9/statuses".into())
        .respond_with(ResponseTemplate::new(200).set_body_json(r.statuses.clone()))
        .mount(&api)
        .await;
    (api, storage)
}

pub(super) async fn verify(t: &Path, api: &MockServer, extra: &[&str]) -> Run {
    let (dir, uri) = (t.to_path_buf(), api.uri());
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        run(warden(&dir)
            .args(["verify", "--release", "v1.2.3", "--repo", "o/r"])
            .args(["--api-url", &uri])
            .args(&extra))
    })
    .await
    .unwrap()
}

/// A signed release in `t/dist` and the records of the run that made it.
pub(super) fn release(t: &Path) -> Records {
    demo_keys(t);
    write(&t.join("dist/app"), b"the app");
    sign_in_run(t, &[]).expect(0);
    good_records(&t.join("dist"))
}

const PROVENANCE: &str =
    "got/SHA256SUMS.minisig (run 555 (attempt 1) of .github/workflows/release.yml in environment release)";

#[test]
fn sign_binds_the_run_and_refuses_hostile_values() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/app"), b"the app");
    sign_in_run(t.path(), &[]).expect(0);
    let sig = std::fs::read_to_string(t.path().join("dist/SHA256SUMS.minisig")).unwrap();
    assert_eq!(
        sig.lines().nth(2).unwrap(),
        format!("trusted comment: timestamp:1764460800\tfile:SHA256SUMS\thashed\ttag:v1.2.3\tcommit:{COMMIT}\trepo:o/r\trun:555\tattempt:1\tworkflow:{WORKFLOW_REF}\tenvironment:release")
    );
    let long = format!("o/r/{}.yml@refs/tags/v1", "a".repeat(1100));
    for (var, value, message) in [
        ("GITHUB_WORKFLOW_REF", "o/r/.github/workflows/x.yml@v1\ttag:v9", "warden: the runner's workflow reference \"o/r/.github/workflows/x.yml@v1\\ttag:v9\" is empty, over 1024 bytes, or holds spaces or control characters\n".to_string()),
        ("GITHUB_RUN_ID", "555\nrun:1", "warden: the runner's run id \"555\\nrun:1\" is not a number\n".to_string()),
        ("GITHUB_WORKFLOW_REF", long.as_str(), format!("warden: the runner's workflow reference {long} is empty, over 1024 bytes, or holds spaces or control characters\n")),
    ] {
        let out = sign_in_run(t.path(), &[(var, value)]).expect(2);
        assert_eq!(out.stderr, message);
    }
    // Outside Actions there is no run, and --environment is refused.
    let out = run(warden(t.path()).args([
        "sign",
        "dist",
        "--force",
        "--secret-key",
        "secret/demo.key",
        "--environment",
        "release",
    ]))
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: --environment binds the workflow run's environment: only inside GitHub Actions (GITHUB_ACTIONS=true)\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_made_by_its_pipeline_verifies_and_replays() {
    let t = tempfile::tempdir().unwrap();
    let records = release(t.path());
    let (api, _storage) = serve(&records).await;
    let out = verify(t.path(), &api, &["--out", "got", "--record", "snap"])
        .await
        .expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    got/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  run 555\nOK    got/app  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  run 555\nOK    {PROVENANCE}  the run and the uploads match GitHub's records\n3 verified, 0 failed, 0 errors\n")
    );
    drop(api);
    // Offline, from the recording: the same checks and the same output.
    let again = run(warden(t.path()).args([
        "verify",
        "--release",
        "v1.2.3",
        "--repo",
        "o/r",
        "--out",
        "got2",
        "--snapshot",
        "snap",
    ]))
    .expect(0);
    assert_eq!(again.stdout, out.stdout.replace("got/", "got2/"));
}

/// Each difference from the run GitHub recorded fails the release, saying what differs.
#[tokio::test(flavor = "multi_thread")]
async fn each_difference_from_the_recorded_run_fails() {
    let t = tempfile::tempdir().unwrap();
    let good = release(t.path());
    let fail_line = |stdout: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("FAIL  {PROVENANCE}")))
            .map(|l| l[format!("FAIL  {PROVENANCE}  ").len()..].to_string())
            .unwrap_or_else(|| panic!("no failed provenance line in:\n{stdout}"))
    };
    type Change = Box<dyn Fn(&mut Records)>;
    let cases: Vec<(Change, &str)> = vec![
        (
            Box::new(|r| r.run = None),
            "signed by run 555 of o/r, which GitHub does not have: not made by this repository's pipeline",
        ),
        (
            Box::new(|r| r.run.as_mut().unwrap()["path"] = json!(".github/workflows/ci.yml")),
            "the signature names .github/workflows/release.yml, but run 555 ran .github/workflows/ci.yml",
        ),
        (
            Box::new(|r| r.run.as_mut().unwrap()["head_sha"] = json!("ffffffffffffffffffffffffffffffffffffffff")),
            "run 555 built commit ffffffffffffffffffffffffffffffffffffffff, the signature is for 3470838ef50e566f292860fb1d8aee4937d11849; no deployment to environment release for commit ffffffffffffffffffffffffffffffffffffffff points at run 555: its protection rules were not shown to pass",
        ),
        (
            Box::new(|r| r.run.as_mut().unwrap()["head_repository"] = json!({"full_name": "mallory/r"})),
            "run 555 ran code from mallory/r, a fork, not o/r",
        ),
        (
            Box::new(|r| r.deployments = json!([])),
            "no deployment to environment release for commit 3470838ef50e566f292860fb1d8aee4937d11849 points at run 555: its protection rules were not shown to pass",
        ),
        (
            // A tag pushed by anyone starts the run; its signing job still waits for the
            // environment's reviewers (then is rejected), and a key used elsewhere names the run.
            Box::new(|r| {
                r.statuses = json!([
                    {"state": "failure", "log_url": "https://github.com/o/r/actions/runs/555/job/1"},
                    {"state": "waiting", "log_url": "https://github.com/o/r/actions/runs/555/job/1"}
                ])
            }),
            "run 555's deployment to environment release never started (its statuses: failure, waiting): its protection rules did not let it through",
        ),
        (
            // A status of the same run number in another repository is not this run's.
            Box::new(|r| {
                r.statuses = json!([{"state": "success", "log_url": "https://github.com/mallory/r/actions/runs/555/job/1"}])
            }),
            "no deployment to environment release for commit 3470838ef50e566f292860fb1d8aee4937d11849 points at run 555: its protection rules were not shown to pass",
        ),
        (
            Box::new(|r| {
                let run = r.run.as_mut().unwrap();
                run["run_started_at"] = json!("2025-11-30T02:00:00Z");
                run["updated_at"] = json!("2025-11-30T02:10:00Z");
                for a in &mut r.assets {
                    a["created_at"] = json!("2025-11-30T02:05:00Z");
                    a["updated_at"] = json!("2025-11-30T02:05:00Z");
                }
            }),
            "signed at 2025-11-30T00:00:00Z, outside run 555 (2025-11-30T02:00:00Z to 2025-11-30T02:10:00Z, 300 s of clock skew allowed)",
        ),
        (
            Box::new(|r| {
                let sig = r.assets.iter_mut().find(|a| a["name"] == "SHA256SUMS.minisig").unwrap();
                sig["uploader"] = json!({"login": "alice", "type": "User"});
                sig["updated_at"] = json!("2025-12-03T00:05:00Z");
            }),
            "SHA256SUMS.minisig was uploaded by @alice, not by the workflow (github-actions[bot])",
        ),
        (
            Box::new(|r| {
                let sig = r.assets.iter_mut().find(|a| a["name"] == "SHA256SUMS.minisig").unwrap();
                sig["updated_at"] = json!("2025-12-03T00:05:00Z");
            }),
            "SHA256SUMS.minisig was changed 3 days after run 555 ended",
        ),
    ];
    for (i, (change, expected)) in cases.iter().enumerate() {
        let mut records = good_records(&t.path().join("dist"));
        change(&mut records);
        let (api, _storage) = serve(&records).await;
        let out = verify(t.path(), &api, &["--out", &format!("out{i}")])
            .await
            .expect(1);
        let out = out.stdout.replace(&format!("out{i}/"), "got/");
        assert_eq!(fail_line(&out), *expected, "case {i}");
    }
    drop(good);
}

/// GitHub's digest of an asset disagrees with the signed list: the asset is reported replaced
/// and never downloaded.
#[tokio::test(flavor = "multi_thread")]
async fn a_replaced_asset_is_caught_by_its_digest_without_a_download() {
    let t = tempfile::tempdir().unwrap();
    let mut records = release(t.path());
    let app = records
        .assets
        .iter_mut()
        .find(|a| a["name"] == "app")
        .unwrap();
    app["digest"] = json!(format!("sha256:{}", "ab".repeat(32)));
    let (api, storage) = serve(&records).await;
    let out = verify(t.path(), &api, &["--out", "got"]).await.expect(1);
    let app_line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL  got/app"))
        .unwrap();
    let listed = {
        use sha2::Digest as _;
        format!("{:x}", sha2::Sha256::digest(b"the app"))
    };
    assert_eq!(
        app_line,
        format!("FAIL  got/app  GitHub's digest of the asset is sha256:{}, the signed SHA256SUMS lists {listed}: replaced after signing", "ab".repeat(32))
    );
    let app_id = records.files.iter().position(|(n, _)| n == "app").unwrap() + 100;
    let asked = storage.received_requests().await.unwrap();
    assert!(
        !asked
            .iter()
            .any(|r| r.url.path() == format!("/blob/{app_id}")),
        "the replaced asset was downloaded"
    );
}

/// `require_run` in the policy: a signature made outside a run fails, offline and online.
#[test]
fn require_run_refuses_an_unbound_signature() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/app"), b"the app");
    run(warden(t.path()).args(["sign", "dist", "--secret-key", "secret/demo.key"])).expect(0);
    write(
        &t.path().join("keys/policy.toml"),
        b"require_run = true\nworkflow = \".github/workflows/release.yml\"\nenvironment = \"release\"\n",
    );
    let out = run(warden(t.path()).args(["verify", "dist"])).expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  dist/SHA256SUMS  the signature binds no workflow run, and keys/policy.toml requires one (made outside the release pipeline?)\nFAIL  dist/app  the signature binds no workflow run, and keys/policy.toml requires one (made outside the release pipeline?)\n0 verified, 2 failed, 0 errors\n"
    );
}

/// Issue 34: every counted signature's run is checked against GitHub's records, a co-signature's
/// as well as the first one's: a second key that signs in a run GitHub records otherwise fails
/// the release, named.
#[tokio::test(flavor = "multi_thread")]
async fn a_cosignature_s_run_is_checked_against_github_too() {
    let t = tempfile::tempdir().unwrap();
    release(t.path());
    let bob = "B0B00000000000B0";
    seeded_keypair(
        &t.path().join("keys/bob.pub"),
        &t.path().join("bob.key"),
        b"bob's co-signing key............",
        bob,
    );
    run(warden(t.path())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_RUN_ID", "556")
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env("GITHUB_WORKFLOW_REF", WORKFLOW_REF)
        .env("SOURCE_DATE_EPOCH", SIGNED_AT)
        .args(["sign", "--cosign", "dist", "--secret-key", "bob.key"])
        .args(["--environment", "release"]))
    .expect(0);
    let records = good_records(&t.path().join("dist"));
    let (api, _storage) = serve(&records).await;
    // Run 556 is the nightly build's, not the release workflow's.
    let mut nightly = records.run.clone().unwrap();
    nightly["id"] = json!(556);
    nightly["path"] = json!(".github/workflows/nightly.yml");
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/runs/556/attempts/1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(nightly))
        .mount(&api)
        .await;
    let out = verify(t.path(), &api, &["--out", "got"]).await.expect(1);
    assert_eq!(
        out.stdout,
        format!("OK    got/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  co-signed by {bob}  tag v1.2.3  run 555\nOK    got/app  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  run 555\nOK    {PROVENANCE}  the run and the uploads match GitHub's records\nFAIL  got/SHA256SUMS.{bob}.minisig (run 556 (attempt 1) of .github/workflows/release.yml in environment release)  the signature names .github/workflows/release.yml, but run 556 ran .github/workflows/nightly.yml; no deployment to environment release for commit {COMMIT} points at run 556: its protection rules were not shown to pass\n3 verified, 1 failed, 0 errors\n")
    );
}

/// Issue 38: `warden log monitor` flags exactly the entry no release run made — a laptop
/// signature that was logged — against a local server standing for GitHub.
#[tokio::test(flavor = "multi_thread")]
async fn the_log_monitor_flags_the_entry_made_outside_a_release_run() {
    let t = tempfile::tempdir().unwrap();
    let secrets = tempfile::tempdir().unwrap();
    let log_key = secrets.path().join("log.key");
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
        .arg(&log_key))
    .expect(0);
    let vkey = serde_json::from_str::<Value>(&out.stdout).unwrap()["vkey"]
        .as_str()
        .unwrap()
        .to_string();
    let vkey_text = vkey.clone();
    demo_keys(t.path());
    write(&t.path().join("dist/app"), b"the app");
    let log_flags = ["--log", "log", "--log-key", log_key.to_str().unwrap()];
    // The release job: run 555 signs and logs.
    let mut cmd = warden(t.path());
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_RUN_ID", "555")
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env("GITHUB_WORKFLOW_REF", WORKFLOW_REF)
        .env("SOURCE_DATE_EPOCH", SIGNED_AT)
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
            "--environment",
            "release",
        ])
        .args(log_flags);
    run(&mut cmd).expect(0);
    // The release run's signature verifies with --require-log.
    let out = run(warden(t.path()).args([
        "verify",
        "dist",
        "--require-log",
        "--log",
        "log",
        "--log-vkey",
        &vkey,
    ]))
    .expect(0);
    assert_eq!(
        out.stdout,
        "OK    dist/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  run 555  in the log\nOK    dist/app  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  run 555\n2 verified, 0 failed, 0 errors\n"
    );
    // A maintainer co-signs that release from a laptop (no run), logged: a co-signature of a
    // file a release run's entry backs, by a key of keys/, is that release's.
    seeded_keypair(
        &t.path().join("keys/bob.pub"),
        &secrets.path().join("bob.key"),
        b"monitor test co-signer key......",
        "B0B0B0B0B0B0B0B0",
    );
    run(warden(t.path())
        .args(["sign", "--cosign", "dist", "--secret-key"])
        .arg(secrets.path().join("bob.key"))
        .args(log_flags))
    .expect(0);
    // A laptop with the key: the same tag, other bytes, logged (so it verifies with --require-log).
    write(&t.path().join("laptop/app"), b"a backdoored app");
    run(warden(t.path())
        .env("SOURCE_DATE_EPOCH", SIGNED_AT)
        .args([
            "sign",
            "laptop",
            "--secret-key",
            "secret/demo.key",
            "--tag",
            "v1.2.3",
            "--repo",
            "o/r",
            "--commit",
            COMMIT,
        ])
        .args(log_flags))
    .expect(0);
    // The thief again, naming another repository in the comment: our key, so still judged.
    write(&t.path().join("elsewhere/app"), b"a backdoored app");
    let sign_for = |dir: &str, key: &std::path::Path, repo: &str, keys: &str| {
        run(warden(t.path())
            .env("SOURCE_DATE_EPOCH", SIGNED_AT)
            .args(["sign", dir, "--tag", "v9", "--repo", repo, "--secret-key"])
            .arg(key)
            .args(["--keys-dir", keys])
            .args(log_flags))
        .expect(0);
    };
    sign_for(
        "elsewhere",
        std::path::Path::new("secret/demo.key"),
        "evil/x",
        "keys",
    );
    // Another project's key and repository in the same log (its release job has keys of its
    // own): counted, not judged.
    let (_, other_key) = keypair(secrets.path(), "other");
    write(&t.path().join("other/app"), b"another project");
    sign_for("other", &other_key, "other/y", "other-project-keys");
    let records = good_records(&t.path().join("dist"));
    let (api, _storage) = serve(&records).await;
    let (dir, uri) = (t.path().to_path_buf(), api.uri());
    let state = secrets.path().join("monitor-state");
    let monitor = move |state: std::path::PathBuf| {
        let (dir, uri, vkey) = (dir.clone(), uri.clone(), vkey.clone());
        async move {
            tokio::task::spawn_blocking(move || {
                run(warden(&dir)
                    .args([
                        "log",
                        "monitor",
                        "log",
                        "--repo",
                        "o/r",
                        "--log-vkey",
                        &vkey,
                        "--api-url",
                        &uri,
                        "--state",
                    ])
                    .arg(&state))
            })
            .await
            .unwrap()
        }
    };
    let out = monitor(state.clone()).await.expect(1);
    assert_eq!(
        out.stdout,
        "\
OK       entry 0  key 8F457D1A3C3B50B5  tag v1.2.3  run 555 (attempt 1) of .github/workflows/release.yml in environment release
OK       entry 1  key B0B0B0B0B0B0B0B0  tag v1.2.3  co-signs entry 0
FLAGGED  entry 2  key 8F457D1A3C3B50B5  tag v1.2.3: its trusted comment binds no workflow run: signed outside a release run (a laptop, or a stolen key)
FLAGGED  entry 3  key 8F457D1A3C3B50B5  tag v9: signed by key 8F457D1A3C3B50B5 of o/r's keys folder for another repository, evil/x: a release key used outside its repository (a stolen key, or a key shared between repositories)
log log: entries 0 to 5 read, 4 of o/r (1 of other repositories), 2 flagged
"
    );
    assert!(
        !state.exists(),
        "a flagged entry does not advance the monitor's state"
    );

    // A log holding only the release run's entry: nothing flagged, and the state advances.
    let out = run(warden(t.path())
        .args([
            "log",
            "init",
            "good-log",
            "--origin",
            "example.org/log",
            "--log-key",
        ])
        .arg(&log_key))
    .expect(0);
    assert!(
        out.stdout
            .starts_with("log         good-log  (empty: checkpoint of size 0)\n"),
        "{}",
        out.stdout
    );
    // One proof file per signature: the proof of `log` gives way to one of `good-log`.
    std::fs::remove_file(t.path().join("dist/SHA256SUMS.log-proof")).unwrap();
    std::fs::remove_file(t.path().join("dist/SHA256SUMS.B0B0B0B0B0B0B0B0.log-proof")).unwrap();
    run(warden(t.path())
        .args([
            "log",
            "append",
            "good-log",
            "--release",
            "dist",
            "--log-key",
        ])
        .arg(&log_key))
    .expect(0);
    let good = |state: std::path::PathBuf| {
        let (dir, uri) = (t.path().to_path_buf(), api.uri());
        async move {
            tokio::task::spawn_blocking(move || {
                let vkey = std::fs::read_to_string(dir.join("log.vkey")).unwrap();
                run(warden(&dir)
                    .args([
                        "log",
                        "monitor",
                        "good-log",
                        "--repo",
                        "o/r",
                        "--log-vkey",
                        vkey.trim(),
                        "--api-url",
                        &uri,
                        "--state",
                    ])
                    .arg(&state))
            })
            .await
            .unwrap()
        }
    };
    std::fs::write(t.path().join("log.vkey"), &vkey_text).unwrap();
    let out = good(state.clone()).await.expect(0);
    assert_eq!(
        out.stdout,
        "OK       entry 0  key 8F457D1A3C3B50B5  tag v1.2.3  run 555 (attempt 1) of .github/workflows/release.yml in environment release\nOK       entry 1  key B0B0B0B0B0B0B0B0  tag v1.2.3  co-signs entry 0\nlog good-log: entries 0 to 2 read, 2 of o/r (0 of other repositories), 0 flagged\n"
    );
    assert_eq!(
        std::fs::read(&state).unwrap(),
        std::fs::read(t.path().join("good-log/checkpoint")).unwrap()
    );
    let out = good(state.clone()).await.expect(0);
    assert_eq!(
        out.stdout,
        "log good-log: entries 2 to 2 read, 0 of o/r (0 of other repositories), 0 flagged\n"
    );

    // Issue 51: a laptop with the release key signs v1.2.3's exact files again, labelled v2.0.0,
    // and logs it. The same bytes for another tag is a rollback, named with both entries; it
    // is never credited as a co-signature of entry 0, whose tag it does not share.
    write(&t.path().join("again/app"), b"the app");
    run(warden(t.path())
        .env("SOURCE_DATE_EPOCH", SIGNED_AT)
        .args([
            "sign",
            "again",
            "--secret-key",
            "secret/demo.key",
            "--tag",
            "v2.0.0",
            "--repo",
            "o/r",
            "--commit",
            COMMIT,
            "--log",
            "good-log",
            "--log-key",
        ])
        .arg(&log_key))
    .expect(0);
    assert_eq!(
        std::fs::read(t.path().join("again/SHA256SUMS")).unwrap(),
        std::fs::read(t.path().join("dist/SHA256SUMS")).unwrap(),
        "the same list, byte for byte"
    );
    let out = good(state.clone()).await.expect(1);
    assert_eq!(
        out.stdout,
        format!("FLAGGED  entry 2  key 8F457D1A3C3B50B5  tag v2.0.0: its trusted comment binds no workflow run: signed outside a release run (a laptop, or a stolen key); signs the same bytes as entry 0 (SHA256SUMS as tag:v1.2.3 commit:{COMMIT}), now as SHA256SUMS (tag:v2.0.0 commit:{COMMIT}): a rollback (an earlier release's file presented as another)\nlog good-log: entries 2 to 3 read, 1 of o/r (0 of other repositories), 1 flagged\n")
    );

    // `verify --require-log` with the log at hand applies the same rule: v2.0.0's files are
    // refused as the rollback they are, and v1.2.3's, logged first, still verify.
    let verify_logged = |dir: &str, tag: &str| {
        run(warden(t.path()).args([
            "verify",
            dir,
            "--require-log",
            "--log",
            "good-log",
            "--log-vkey",
            vkey_text.trim(),
            "--expect-tag",
            tag,
        ]))
    };
    let out = verify_logged("again", "v2.0.0").expect(1);
    assert_eq!(
        out.stdout,
        format!("FAIL  again/SHA256SUMS  signature by key 8F457D1A3C3B50B5 is entry 2 of the log, which signs the same bytes as entry 0 (SHA256SUMS as tag:v1.2.3 commit:{COMMIT}), now as SHA256SUMS (tag:v2.0.0 commit:{COMMIT}): a rollback (an earlier release's file presented as another)\nFAIL  again/app  signature by key 8F457D1A3C3B50B5 is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds SHA256SUMS)\n0 verified, 2 failed, 0 errors\n")
    );
    verify_logged("dist", "v1.2.3").expect(0);

    // Replay: `--record DIR` keeps GitHub's answers, `--snapshot DIR` judges from them alone
    // (no API: the server's address is not given), to the same words and exit code.
    let recorded = secrets.path().join("monitor-snapshot");
    let (dir, uri, vkey) = (
        t.path().to_path_buf(),
        api.uri(),
        vkey_text.trim().to_string(),
    );
    let (rec_dir, rec_vkey, rec_out) = (dir.clone(), vkey.clone(), recorded.clone());
    let live = tokio::task::spawn_blocking(move || {
        run(warden(&rec_dir)
            .args([
                "log",
                "monitor",
                "good-log",
                "--repo",
                "o/r",
                "--log-vkey",
                &rec_vkey,
            ])
            .args(["--api-url", &uri, "--record"])
            .arg(&rec_out))
    })
    .await
    .unwrap()
    .expect(1);
    assert!(live.stdout.contains("a rollback"), "{}", live.stdout);
    let replay = run(warden(&dir)
        .args([
            "log",
            "monitor",
            "good-log",
            "--repo",
            "o/r",
            "--log-vkey",
            &vkey,
        ])
        .arg("--snapshot")
        .arg(&recorded))
    .expect(1);
    assert_eq!(replay.stdout, live.stdout);
}

/// Issue 46: a run that could not be read (a truncated answer, a redirect to another host) is
/// the command's failure to read (exit 2, nothing judged), never a verdict about the release.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_could_not_be_read_is_an_api_error_not_a_verdict() {
    for (answer, said) in [
        (
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/json")
                .set_body_string("{\"id\": 555, \"run_attempt\": 1, \"path\": \".github/wor"),
            "answered 200: malformed JSON from GET /repos/o/r/actions/runs/555/attempts/1: EOF while parsing a string at line 1 column 50",
        ),
        (
            ResponseTemplate::new(302).insert_header("location", "https://example.invalid/run"),
            "answered 302: a redirect to https://example.invalid/run, where an API answer was expected: not followed",
        ),
    ] {
        let t = tempfile::tempdir().unwrap();
        let mut r = release(t.path());
        r.run = None;
        let (api, _storage) = serve(&r).await;
        Mock::given(method("GET"))
            .and(path("/repos/o/r/actions/runs/555/attempts/1"))
            .respond_with(answer)
            .mount(&api)
            .await;
        let out = verify(t.path(), &api, &["--out", "got"]).await.expect(2);
        assert_eq!(out.stdout, "", "{said}");
        assert_eq!(
            out.stderr,
            format!("warden: reading run 555 (attempt 1) of .github/workflows/release.yml in environment release, which the signature names: GET /repos/o/r/actions/runs/555/attempts/1 {said}\n")
        );
    }
}
