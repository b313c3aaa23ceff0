//! `warden known-issues summary --post`: the sticky PR comment, against a local wiremock server.

use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::{json, Value};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MARKER: &str = "<!-- warden:known-issues -->";

fn ethrex() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ethrex")
}

/// The body warden would post for the ethrex-like registry.
fn expected_body() -> String {
    run(warden(&ethrex()).args(["known-issues", "summary"]))
        .expect(0)
        .stdout
}

async fn post(server: &MockServer, extra: &[(&str, String)], args: &[&str]) -> Run {
    let uri = server.uri();
    let extra: Vec<(String, String)> = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        // Under `timeout`: a regression that waits on the server fails instead of hanging CI.
        let mut cmd = std::process::Command::new("timeout");
        cmd.arg("60").arg(warden_bin()).current_dir(ethrex());
        without_developer_env(&mut cmd);
        cmd.env("GH_TOKEN", "ghp_comment_token")
            .env("GITHUB_REPOSITORY", "o/r");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        run(cmd
            .args(["known-issues", "summary", "--post", "--api-url", &uri])
            .args(&args))
    })
    .await
    .unwrap()
}

/// A comment written with an Actions `GITHUB_TOKEN` (the identity warden posts as when `/user`
/// is not readable).
fn comment(id: u64, body: &str) -> Value {
    authored(id, body, "github-actions[bot]")
}

fn authored(id: u64, body: &str, login: &str) -> Value {
    json!({"id": id, "body": body, "user": {"login": login}})
}

async fn writes(server: &MockServer) -> Vec<(String, String, Value)> {
    server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() != "GET")
        .map(|r| {
            (
                r.method.to_string(),
                r.url.path().to_string(),
                serde_json::from_slice(&r.body).unwrap_or(Value::Null),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn no_comment_yet_creates_one() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([comment(1, "LGTM")])))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(comment(99, "x")))
        .mount(&server)
        .await;
    // The PR number comes from the event payload.
    let t = tempfile::tempdir().unwrap();
    let event = t.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"action": "synchronize", "pull_request": {"number": 7}}"#,
    )
    .unwrap();
    let out = post(
        &server,
        &[("GITHUB_EVENT_PATH", event.display().to_string())],
        &[],
    )
    .await
    .expect(0);
    assert!(
        out.stderr
            .contains("posted the known-issues comment on o/r#7"),
        "{}",
        out.stderr
    );
    let w = writes(&server).await;
    assert_eq!(w.len(), 1);
    assert_eq!(
        (w[0].0.as_str(), w[0].1.as_str()),
        ("POST", "/repos/o/r/issues/7/comments")
    );
    assert_eq!(w[0].2["body"].as_str().unwrap(), expected_body());
    assert!(w[0].2["body"].as_str().unwrap().contains(MARKER));
}

#[tokio::test(flavor = "multi_thread")]
async fn marker_on_page_two_of_three_is_patched() {
    let server = MockServer::start().await;
    let link = |p: u64| {
        format!(
            "<{}/repos/o/r/issues/7/comments?per_page=100&page={p}>; rel=\"next\"",
            server.uri()
        )
    };
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .and(query_param("page", "2"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("link", link(3))
                .set_body_json(json!([comment(20, &format!("## old summary\n{MARKER}"))])),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .and(query_param("page", "3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([comment(30, "thanks")])))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("link", link(2))
                .set_body_json(json!([comment(10, "first")])),
        )
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/o/r/issues/comments/20"))
        .respond_with(ResponseTemplate::new(200).set_body_json(comment(20, "x")))
        .mount(&server)
        .await;
    let out = post(&server, &[], &["--pr", "7"]).await.expect(0);
    assert!(
        out.stderr
            .contains("updated the known-issues comment 20 on o/r#7"),
        "{}",
        out.stderr
    );
    let w = writes(&server).await;
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        (w[0].0.as_str(), w[0].1.as_str()),
        ("PATCH", "/repos/o/r/issues/comments/20")
    );
    let pages = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        .count();
    assert_eq!(pages, 3, "every page is read");
}

/// Anyone can write the marker into a comment of their own: warden edits only its own comment.
/// Here the token's user is `warden-bot` (`/user` answers); a marker comment by `mallory` is left
/// alone, the one by `warden-bot` is updated.
#[tokio::test(flavor = "multi_thread")]
async fn only_a_comment_by_the_posting_identity_is_edited() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"login": "warden-bot"})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            authored(10, &format!("approved {MARKER}"), "mallory"),
            comment(11, &format!("by the Actions bot {MARKER}")),
            authored(12, &format!("old {MARKER}"), "warden-bot"),
        ])))
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/o/r/issues/comments/12"))
        .respond_with(ResponseTemplate::new(200).set_body_json(comment(12, "x")))
        .mount(&server)
        .await;
    post(&server, &[], &["--pr", "7"]).await.expect(0);
    let w = writes(&server).await;
    assert_eq!(
        w.iter()
            .map(|(m, p, _)| (m.as_str(), p.as_str()))
            .collect::<Vec<_>>(),
        [("PATCH", "/repos/o/r/issues/comments/12")]
    );
}

/// With only someone else's marker comment on the pull request, warden writes a new one.
#[tokio::test(flavor = "multi_thread")]
async fn a_hijacked_marker_gets_a_new_comment_instead() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([authored(
            10,
            &format!("LGTM {MARKER}"),
            "mallory"
        )])))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(comment(40, "x")))
        .mount(&server)
        .await;
    post(&server, &[], &["--pr", "7"]).await.expect(0);
    let w = writes(&server).await;
    assert_eq!(
        w.iter()
            .map(|(m, p, _)| (m.as_str(), p.as_str()))
            .collect::<Vec<_>>(),
        [("POST", "/repos/o/r/issues/7/comments")]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unchanged_comment_is_not_written() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!([comment(5, &expected_body())])),
        )
        .mount(&server)
        .await;
    let out = post(&server, &[], &["--pr", "7"]).await.expect(0);
    assert!(
        out.stderr.contains("is up to date; nothing written"),
        "{}",
        out.stderr
    );
    assert!(writes(&server).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn forbidden_falls_back_to_the_step_summary() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("X-Accepted-GitHub-Permissions", "pull_requests=write")
                .set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .mount(&server)
        .await;
    let t = tempfile::tempdir().unwrap();
    let step = t.path().join("summary.md");
    let out = post(
        &server,
        &[("GITHUB_STEP_SUMMARY", step.display().to_string())],
        &["--pr", "7"],
    )
    .await
    .expect(0);
    assert!(out.stderr.contains("cannot comment on o/r#7: 403 Resource not accessible by integration (needs pull_requests=write)"), "{}", out.stderr);
    assert!(
        out.stderr.contains("a pull request from a fork?"),
        "{}",
        out.stderr
    );
    let written = std::fs::read_to_string(&step).unwrap();
    assert!(
        written.contains("## Known issues — intentionally skipped tests")
            && written.contains(MARKER),
        "{written}"
    );
    assert!(!out.all().contains("ghp_comment_token"));
    // Without a step summary to fall back to, the failure is an error.
    let out = post(&server, &[], &["--pr", "7"]).await.expect(2);
    assert!(out.stderr.contains("GITHUB_STEP_SUMMARY"), "{}", out.stderr);
}

/// A post GitHub refuses prints the error and no body: the summary went nowhere.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_post_prints_the_error_not_the_body() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(
            ResponseTemplate::new(422).set_body_json(json!({"message": "Validation Failed"})),
        )
        .mount(&server)
        .await;
    let out = post(&server, &[], &["--pr", "7"]).await.expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "warden: --post: commenting on o/r#7 failed: 422 Validation Failed\n"
    );
}
