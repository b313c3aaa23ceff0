//! A log served as static files over HTTP (`--log URL`): read like a folder, authenticated the
//! same way; a redirect or an oversized file is a named error, exit 2.

use super::*;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Serves the files below `root`, 404 for anything else.
struct Files(PathBuf);

impl Respond for Files {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let rel = request.url.path().trim_start_matches("/log/");
        match std::fs::read(self.0.join(rel)) {
            Ok(bytes) if !rel.contains("..") => ResponseTemplate::new(200).set_body_bytes(bytes),
            _ => ResponseTemplate::new(404),
        }
    }
}

async fn blocking(cmd: impl FnOnce() -> Run + Send + 'static) -> Run {
    tokio::task::spawn_blocking(cmd).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_log_served_over_http_verifies_like_a_folder() {
    let r = std::sync::Arc::new(LogRepo::new());
    r.release("v1", true).expect(0);
    r.release("v2", true).expect(0);
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("GET"))
        .respond_with(Files(r.dir().join("log")))
        .mount(&server)
        .await;
    let url = format!("{}/log", server.uri());
    let k = r.key_id.clone();

    let (r2, u) = (r.clone(), url.clone());
    let out = blocking(move || r2.verify("dist-v1", &["--log", &u]))
        .await
        .expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    dist-v1/SHA256SUMS  key {k} (keys/release.pub)  tag v1  in the log\nOK    dist-v1/app  key {k} (keys/release.pub)  tag v1\n2 verified, 0 failed, 0 errors\n")
    );
    let (r2, u) = (r.clone(), url.clone());
    let out =
        blocking(move || run(warden(r2.dir()).args(["log", "verify", &u, "--log-vkey", &r2.vkey])))
            .await
            .expect(0);
    assert_eq!(
        out.stdout,
        format!("OK  log {url}: 2 entries, 1 tile, every entry signed by the key it names and every tile the one its entries give\n    key {k}: 2 entries\n")
    );
    // A witness of a served log prints its cosignature for the log's operator; the log is as it was.
    let before = r.log_files();
    let (r2, u) = (r.clone(), url.clone());
    let out = blocking(move || {
        let key = r2.secrets.path().join("w.key");
        run(warden(r2.dir())
            .args(["log", "witness-key", "--name", "witness.example"])
            .arg(&key))
        .expect(0);
        run(warden(r2.dir())
            .args([
                "log",
                "witness",
                &u,
                "--log-vkey",
                &r2.vkey,
                "--witness-key",
            ])
            .arg(&key)
            .arg("--state")
            .arg(r2.secrets.path().join("state")))
    })
    .await
    .expect(0);
    let line = out.stdout.lines().nth(1).unwrap().to_string();
    assert!(line.starts_with("— witness.example "), "{line}");
    assert_eq!(
        out.stdout,
        format!("cosigned  log {url}: size 2 (this witness cosigned size 0 before)\n{line}\n")
    );
    assert_eq!(r.log_files(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_or_an_oversized_file_is_named() {
    let r = std::sync::Arc::new(LogRepo::new());
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::path("/moved/checkpoint"))
        .respond_with(
            ResponseTemplate::new(302).insert_header("location", "https://evil.example/checkpoint"),
        )
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::path("/huge/checkpoint"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(vec![b'a'; 200_000]))
        .mount(&server)
        .await;
    for (prefix, why) in [
        (
            "moved",
            "HTTP 302: a redirect (the log's files are read where the URL says, never elsewhere)",
        ),
        ("huge", "larger than 64 KiB"),
    ] {
        let url = format!("{}/{prefix}", server.uri());
        let r2 = r.clone();
        let u = url.clone();
        let out = blocking(move || {
            run(warden(r2.dir()).args(["log", "verify", &u, "--log-vkey", &r2.vkey]))
        })
        .await
        .expect(2);
        assert_eq!(
            out.stderr,
            format!("warden: reading {url}/checkpoint: {why}\n")
        );
    }
}
