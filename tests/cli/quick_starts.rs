//! README's quick starts, the newcomer path of each kind of user, run line by line from their
//! own folders against local servers: a user verifying a download, a maintainer signing in a tag
//! job, a security team auditing (a checkout, a repository through the API, an organisation),
//! and a CI maintainer tracking known failures (init, a hive run, the PR comment). What a line
//! leaves to the reader is filled in: `RWQ…` (a test key), `GH_TOKEN=…` (a test token),
//! `owner/name` and `my-org` (the local organisation's).

use std::path::Path;

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::org_server::{OrgServer, ORG};
use crate::common::release_server::serve_release;
use crate::common::*;

const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `sh` blocks of README's quick starts, each a list of commands (continuations joined,
/// comments dropped), and the section's text.
fn quick_starts() -> (Vec<Vec<String>>, String) {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let section = readme.split("## Quick starts\n").nth(1).unwrap();
    let section = section.split("\n## ").next().unwrap().to_string();
    let blocks = section
        .split("```sh\n")
        .skip(1)
        .map(|b| {
            let body = b.split("```").next().unwrap().replace("\\\n", " ");
            body.lines()
                .map(|l| l.split(" # ").next().unwrap().trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .collect();
    (blocks, section)
}

/// `line` run by bash in `dir`, with warden on PATH and `env`; the transcript of it.
async fn shell(dir: &Path, line: &str, env: &[(&str, String)], t: &Path) -> (i32, String) {
    let (dir, line, t) = (dir.to_path_buf(), line.to_string(), t.to_path_buf());
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    tokio::task::spawn_blocking(move || {
        let bin = warden_bin();
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap()
        );
        let mut cmd = std::process::Command::new("timeout");
        without_developer_env(&mut cmd);
        cmd.current_dir(&dir)
            .args(["120", "bash", "-c", &line])
            .env("PATH", path)
            .envs(env);
        let out = run(&mut cmd);
        let shown = format!(
            "$ {line}\n{}{}--- exit {}\n",
            out.stdout, out.stderr, out.code
        );
        (out.code, filter_dir(&shown, &t))
    })
    .await
    .unwrap()
}

fn fill(line: &str, key: &str) -> String {
    line.replace("RWQ…", key)
        .replace("GH_TOKEN=…", "GH_TOKEN=ghs_test")
        .replace("owner/name", &format!("{ORG}/repo-000"))
        .replace("my-org", ORG)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_quick_start_runs_from_a_newcomer_s_folder() {
    let t = tempfile::tempdir().unwrap();
    let t = t.path();
    let (blocks, section) = quick_starts();
    assert_eq!(blocks.len(), 3, "verify, sign, audit: {blocks:?}");
    demo_keypair(&t.join("demo.pub"), &t.join("demo.key"));
    let demo = std::fs::read_to_string(t.join("demo.pub")).unwrap();
    let key = demo.lines().nth(1).unwrap().to_string();
    let mut transcript = String::new();

    // A user verifying a download: a release of lambdaclass/ethrex, and a file beside its
    // signature with the project's key fetched from the project's site.
    write(&t.join("dist/ethrex-linux-x86_64"), b"ethrex binary");
    run(warden(t)
        .args(["sign", "dist", "--secret-key", "demo.key"])
        .args([
            "--tag",
            "v1.2.3",
            "--repo",
            "lambdaclass/ethrex",
            "--commit",
            COMMIT,
        ]))
    .expect(0);
    let (api, storage) = (MockServer::start().await, MockServer::start().await);
    serve_release(
        &api,
        &storage,
        ("lambdaclass/ethrex", "v1.2.3", COMMIT),
        &t.join("dist"),
    )
    .await;
    let user = t.join("user");
    for name in ["ethrex-linux-x86_64", "ethrex-linux-x86_64.minisig"] {
        write(
            &user.join(name),
            &std::fs::read(t.join("dist").join(name)).unwrap(),
        );
    }
    write(&user.join("minisign.pub"), demo.as_bytes());
    let env = [("GITHUB_API_URL", api.uri())];
    for line in &blocks[0] {
        let (code, shown) = shell(&user, &fill(line, &key), &env, t).await;
        transcript += &shown.replace(&api.uri(), "[API]");
        assert_eq!(code, 0, "{shown}");
    }

    // A maintainer signing in the job that runs on tags.
    let maintainer = t.join("maintainer");
    write(&maintainer.join("keys/minisign.pub"), demo.as_bytes());
    write(
        &maintainer.join("dist/ethrex-linux-x86_64"),
        b"ethrex binary",
    );
    std::fs::create_dir(maintainer.join(".git")).unwrap();
    let env = [
        (
            "MINISIGN_SECRET_KEY",
            std::fs::read_to_string(t.join("demo.key")).unwrap(),
        ),
        ("GITHUB_REF_NAME", "v1.2.3".to_string()),
        ("GITHUB_SHA", COMMIT.to_string()),
        ("GITHUB_REPOSITORY", "lambdaclass/ethrex".to_string()),
        ("SOURCE_DATE_EPOCH", "1764460800".to_string()),
    ];
    for line in &blocks[1] {
        let (code, shown) = shell(&maintainer, &fill(line, &key), &env, t).await;
        transcript += &shown;
        assert_eq!(code, 0, "{shown}");
    }

    // A security team: a checkout's workflows (ethrex's release workflow), then a repository
    // and an organisation through the API, from a folder that is no checkout.
    let checkout = t.join("checkout");
    copy_dir(
        &repo_root().join("tests/fixtures/workflows/ethrex-release"),
        &checkout,
    );
    let security = t.join("security");
    std::fs::create_dir(&security).unwrap();
    let github = MockServer::start().await;
    // GitHub's REST and GraphQL APIs, as the organisation audit reads both.
    Mock::given(wiremock::matchers::any())
        .respond_with(
            OrgServer::new(5, &github.uri(), std::time::Duration::ZERO).without_org_secrets(),
        )
        .mount(&github)
        .await;
    let env = [("GITHUB_API_URL", github.uri())];
    for line in &blocks[2] {
        // The checkout's own lines run in it; those naming a repository or an organisation
        // from a folder that is no checkout.
        let remote = line.contains("--repo") || line.contains("--org");
        let dir = if remote { &security } else { &checkout };
        let (code, shown) = shell(dir, &fill(line, &key), &env, t).await;
        transcript += &shown.replace(&github.uri(), "[API]");
        assert!(
            code == 0 || code == 1,
            "findings, not a usage error: {shown}"
        );
    }

    // A CI maintainer: the commands the section names, in order.
    let ci = t.join("ci");
    std::fs::create_dir_all(ci.join(".git")).unwrap();
    copy_dir(
        &repo_root().join("tests/fixtures/hive/current-format"),
        &ci.join("workspace/logs"),
    );
    write(&t.join("event.json"), br#"{"pull_request": {"number": 7}}"#);
    let comments = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&comments)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
        .mount(&comments)
        .await;
    let env = [
        ("GITHUB_API_URL", comments.uri()),
        ("GH_TOKEN", "ghs_test".to_string()),
        ("GITHUB_REPOSITORY", "o/r".to_string()),
        (
            "GITHUB_EVENT_PATH",
            t.join("event.json").display().to_string(),
        ),
    ];
    let named = regex::Regex::new(r"`(warden (?:known-issues|hive) [^`]*)`").unwrap();
    let ci_lines: Vec<&str> = named
        .captures_iter(section.split("**Track known failures").nth(1).unwrap())
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert_eq!(
        ci_lines.len(),
        3,
        "init, hive check, summary --post: {ci_lines:?}"
    );
    for line in ci_lines {
        let (code, shown) = shell(&ci, line, &env, t).await;
        transcript += &shown.replace(&comments.uri(), "[API]");
        assert!(code == 0 || code == 1, "{shown}");
    }
    let posted = comments.received_requests().await.unwrap();
    let post = posted
        .iter()
        .find(|r| r.method.as_str() == "POST")
        .expect("the PR comment");
    let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    transcript += &format!("--- posted to o/r#7:\n{}\n", body["body"].as_str().unwrap());
    let demo_id = regex::Regex::new(r"\d+(\.\d+)? ?(ms|s)\b").unwrap();
    insta::assert_snapshot!(demo_id.replace_all(&transcript, "[TIME]"));
}
