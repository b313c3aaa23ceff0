//! GitHub API faults against local servers: connection reset, read timeout, malformed JSON. Each
//! ends in a retry or an `unverifiable` finding: never a pass, never a panic.

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use release_warden::audit::SigningJob;
use release_warden::audit::SigningSecrets;
use release_warden::audit::{audit_settings, SettingsInput};
use release_warden::github::{ApiSource, Fetched, LiveApi, RetryPolicy, Shape, Token};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn quick() -> RetryPolicy {
    RetryPolicy {
        attempts: 3,
        base_delay: Duration::from_millis(10),
        max_wait: Duration::from_millis(50),
        read_timeout: Duration::from_millis(300),
        rate_limit_wait: Duration::from_secs(1),
    }
}

fn job() -> Vec<SigningJob> {
    vec![SigningJob {
        workflow: PathBuf::from(".github/workflows/release.yml"),
        job: "sign".into(),
        environment: Some("release".into()),
        secrets: Default::default(),
        line: 1,
    }]
}

/// Every settings read fails: the audit must say so for each, and pass nothing.
async fn audit_through(api: &LiveApi) -> Vec<(String, String)> {
    let jobs = job();
    let patterns = vec!["v*".to_string()];
    let secrets = SigningSecrets::default();
    let input = SettingsInput {
        repo: "o/r",
        signing_jobs: &jobs,
        tag_patterns: &patterns,
        secrets: &secrets,
        keys: None,
        releases: 0,
        deep: false,
        checks: release_warden::audit::settings_checks(),
    };
    audit_settings(api, &input)
        .await
        .into_iter()
        .map(|f| (f.rule.to_string(), f.message))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_reset_is_retried_then_unverifiable() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Accept, read a little, and drop the connection: a reset before any HTTP answer. Bounded.
    let server = std::thread::spawn(move || {
        let mut served = 0;
        listener.set_nonblocking(false).unwrap();
        for mut s in listener.incoming().take(40).flatten() {
            let mut buf = [0u8; 64];
            let _ = s.read(&mut buf);
            served += 1;
        }
        served
    });
    let api = LiveApi::new(
        &format!("http://{addr}"),
        Token::new("t".into()).as_ref(),
        quick(),
    )
    .unwrap();
    match api
        .get("repos/o/r/environments", Shape::Items("environments"))
        .await
    {
        Fetched::Failed {
            status: 0, message, ..
        } => assert!(!message.is_empty()),
        other => panic!("expected a failure, got {other:?}"),
    }
    let findings = audit_through(&api).await;
    assert!(
        !findings.is_empty() && findings.iter().all(|(id, _)| id == "unverifiable"),
        "{findings:?}"
    );
    drop(api);
    // Unblock the accept loop so the thread ends.
    for _ in 0..40 {
        if std::net::TcpStream::connect(addr).is_err() {
            break;
        }
    }
    assert!(server.join().unwrap() >= 3, "retried");
}

#[tokio::test(flavor = "multi_thread")]
async fn read_timeout_is_unverifiable() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(Duration::from_secs(3))
                .set_body_json(serde_json::json!([])),
        )
        .mount(&server)
        .await;
    let api = LiveApi::new(
        &server.uri(),
        Token::new("t".into()).as_ref(),
        RetryPolicy {
            attempts: 1,
            ..quick()
        },
    )
    .unwrap();
    let start = std::time::Instant::now();
    let findings = audit_through(&api).await;
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "the read timeout applied"
    );
    assert!(
        !findings.is_empty() && findings.iter().all(|(id, _)| id == "unverifiable"),
        "{findings:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_is_unverifiable_not_a_pass() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/rulesets"))
        .respond_with(ResponseTemplate::new(200).set_body_string("[{\"id\": 7,"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>proxy error</html>"))
        .mount(&server)
        .await;
    let api = LiveApi::new(&server.uri(), Token::new("t".into()).as_ref(), quick()).unwrap();
    let findings = audit_through(&api).await;
    assert!(
        findings.iter().all(|(id, _)| id == "unverifiable"),
        "{findings:?}"
    );
    assert!(
        findings
            .iter()
            .any(|(_, m)| m.contains("rulesets") && m.contains("malformed JSON")),
        "{findings:?}"
    );
    assert!(
        findings.len() >= 4,
        "rulesets, environments, repo and org secrets: {findings:?}"
    );
}

/// A page that links to itself, or to an earlier page, is an error; an item listed on two pages
/// is kept once; a list longer than the page cap is refused, never cut short.
#[tokio::test(flavor = "multi_thread")]
async fn looping_repeating_and_endless_pagination_never_truncate() {
    let server = MockServer::start().await;
    let link = |page: usize| {
        format!(
            "<{}/repos/o/r/releases/7/assets?page={page}>; rel=\"next\"",
            server.uri()
        )
    };
    // Page 1 → page 2 → page 1 again.
    for (page, next, ids) in [(1, 2, [1, 2]), (2, 1, [2, 3])] {
        let body: Vec<serde_json::Value> = ids
            .iter()
            .map(|id| serde_json::json!({"id": id, "name": format!("a{id}")}))
            .collect();
        Mock::given(method("GET"))
            .and(path("/repos/o/r/releases/7/assets"))
            .and(wiremock::matchers::query_param("page", page.to_string()))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("link", link(next).as_str())
                    .set_body_json(body),
            )
            .mount(&server)
            .await;
    }
    let api = LiveApi::new(&server.uri(), Token::new("t".into()).as_ref(), quick()).unwrap();
    let looping = api
        .get("repos/o/r/releases/7/assets?page=1", Shape::Array)
        .await;
    assert_eq!(
        looping,
        Fetched::Failed {
            status: 0,
            message: "GET /repos/o/r/releases/7/assets?page=1: the next-page link points back to a page already read (repos/o/r/releases/7/assets?page=1): refusing a looping list".into(),
            permission: None,
        }
    );
    // Page 2 lists item 2 again, then ends: item 2 is kept once.
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/items"))
        .and(wiremock::matchers::query_param("page", "1"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header(
                    "link",
                    format!("<{}/items?page=2>; rel=\"next\"", server.uri()).as_str(),
                )
                .set_body_json(serde_json::json!([{"id": 1}, {"id": 2}])),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/items"))
        .and(wiremock::matchers::query_param("page", "2"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!([{"id": 2}, {"id": 3}])),
        )
        .mount(&server)
        .await;
    let api = LiveApi::new(&server.uri(), Token::new("t".into()).as_ref(), quick()).unwrap();
    assert_eq!(
        api.get("items?page=1", Shape::Array).await,
        Fetched::Ok(serde_json::json!([{"id": 1}, {"id": 2}, {"id": 3}]))
    );
    // Every page links to a new one: refused at the cap.
    let server = MockServer::start().await;
    let uri = server.uri();
    Mock::given(method("GET"))
        .and(path("/endless"))
        .respond_with(move |req: &wiremock::Request| {
            let page: usize = req
                .url
                .query_pairs()
                .find(|(k, _)| k == "page")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(1);
            ResponseTemplate::new(200)
                .insert_header(
                    "link",
                    format!("<{uri}/endless?page={}>; rel=\"next\"", page + 1).as_str(),
                )
                .set_body_json(serde_json::json!([{"id": page}]))
        })
        .mount(&server)
        .await;
    let api = LiveApi::new(&server.uri(), Token::new("t".into()).as_ref(), quick()).unwrap();
    assert_eq!(
        api.get("endless?page=1", Shape::Array).await,
        Fetched::Failed {
            status: 0,
            message:
                "GET /endless?page=1: more than 1000 pages: refusing a list that would be cut short"
                    .into(),
            permission: None,
        }
    );
}

/// An answer larger than the cap is refused after reading at most the cap, and not asked again.
#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_answer_is_refused_not_read_whole() {
    let server = MockServer::start().await;
    let big = format!("[\"{}\"]", "x".repeat(65 << 20));
    Mock::given(method("GET"))
        .and(path("/repos/o/r/rulesets"))
        .respond_with(ResponseTemplate::new(200).set_body_string(big))
        .expect(1)
        .mount(&server)
        .await;
    // Time enough to serve 64 MiB on a loaded machine: the size is what is judged.
    let policy = RetryPolicy {
        read_timeout: Duration::from_secs(30),
        ..quick()
    };
    let api = LiveApi::new(&server.uri(), Token::new("t".into()).as_ref(), policy).unwrap();
    assert_eq!(
        api.get("repos/o/r/rulesets", Shape::Array).await,
        Fetched::Failed {
            status: 0,
            message: "GET /repos/o/r/rulesets: the answer is larger than 64 MiB, the most warden reads of one answer: refusing it".into(),
            permission: None,
        }
    );
}

/// A server that accepts and then sends its answer one byte every 100 ms (or nothing at all).
fn slow_server(bytes_per_tick: Option<&'static [u8]>) -> std::net::SocketAddr {
    use std::io::Write as _;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        // Bounded: a few connections, each held for at most five seconds.
        for mut s in listener.incoming().take(4).flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let Some(answer) = bytes_per_tick else {
                    std::thread::sleep(Duration::from_secs(5));
                    return;
                };
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n");
                for b in answer.iter().take(50) {
                    if s.write_all(&[*b]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
        }
    });
    addr
}

/// An answer that trickles, or never starts, ends the command within its deadline (the read
/// timeout to start, then a minimum rate), with the line that says so; every later request is
/// answered at once with it, nothing more is sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_trickling_or_silent_answer_is_cut_off_at_its_deadline() {
    for (answer, said) in [
        (
            Some(&b"[                                                 ]"[..]),
            "the answer arrived too slowly (",
        ),
        (None, "no answer within 0.3 s from the GitHub API at"),
    ] {
        let addr = slow_server(answer);
        let api = LiveApi::new(
            &format!("http://{addr}"),
            Token::new("t".into()).as_ref(),
            quick(),
        )
        .unwrap();
        let start = std::time::Instant::now();
        let first = api.get("repos/o/r/rulesets", Shape::Array).await;
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        let Fetched::Failed {
            status: 0, message, ..
        } = first
        else {
            panic!("expected a failure, got {first:?}")
        };
        assert!(
            message.starts_with("GET /repos/o/r/rulesets: ") && message.contains(said),
            "{message}"
        );
        assert!(
            message.ends_with("(from the default): it is down or too slow; try again later"),
            "{message}"
        );
        // Stopped: the next read is answered with the same line, without a request.
        let start = std::time::Instant::now();
        let next = api
            .get("repos/o/r/environments", Shape::Items("environments"))
            .await;
        assert!(start.elapsed() < Duration::from_millis(100));
        assert!(matches!(next, Fetched::Failed { status: 0, message: m, .. } if m == message));
    }
}
