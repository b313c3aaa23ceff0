//! Benchmark (not a test): `warden audit --org` against a local server playing an organisation of
//! 200 repositories (`tests/common/org_server.rs`) that answers every request after 100 ms, REST
//! and GraphQL. The first run reads everything (goal: ≤ 10 s, ≤ 3 requests per audited
//! repository, GraphQL queries counted); the second, with the cache (goal: ≤ 3 s); the third
//! builds the key inventory (`--inventory --releases 3`, no cache: goal ≤ 20 s, ≤ 3 requests per
//! repository); the fourth reads REST only (the server refuses GraphQL), the alternative the
//! first is measured against.
//!
//!     cargo bench --bench org_audit              # --jobs 32 (the default)
//!     JOBS="8 16 32" cargo bench --bench org_audit

#[path = "../tests/common/org_server.rs"]
#[allow(dead_code)]
mod org_server;

use std::process::Command;
use std::time::{Duration, Instant};

use org_server::{OrgServer, ORG};
use wiremock::matchers::{any, method};
use wiremock::{Mock, MockServer};

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime.block_on(MockServer::start());
    let org = OrgServer::new(200, &server.uri(), Duration::from_millis(100));
    let log = org.log.clone();
    runtime.block_on(Mock::given(any()).respond_with(org).mount(&server));
    // The same organisation without GraphQL (a refused POST), for the REST-only figures.
    let rest_server = runtime.block_on(MockServer::start());
    let rest_org = OrgServer::new(200, &rest_server.uri(), Duration::from_millis(100));
    let rest_log = rest_org.log.clone();
    runtime.block_on(
        Mock::given(method("GET"))
            .respond_with(rest_org)
            .mount(&rest_server),
    );
    let jobs = std::env::var("JOBS").unwrap_or_else(|_| "32".into());
    for jobs in jobs.split_whitespace() {
        let cache = tempfile::tempdir().expect("cache");
        for pass in ["first", "cached", "inventory", "REST-only"] {
            let (uri, log) = match pass {
                "REST-only" => (rest_server.uri(), &rest_log),
                _ => (server.uri(), &log),
            };
            let before = log.lock().map(|l| l.len()).unwrap_or(0);
            let started = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_warden"))
                .env("GH_TOKEN", "bench")
                .args(["audit", "--org", ORG, "--api-url", &uri, "--format", "json"])
                .args(["--jobs", jobs])
                .args(match pass {
                    "inventory" => vec!["--inventory".into(), "--releases".into(), "3".into()],
                    "REST-only" => vec![],
                    _ => vec!["--cache".into(), cache.path().display().to_string()],
                })
                .output()
                .expect("warden");
            let took = started.elapsed();
            // The largest resident set of any warden run so far (the runs are one at a time).
            let peak_mib = {
                let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
                // SAFETY: getrusage writes into the struct it is given.
                unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
                usage.ru_maxrss as f64 / 1024.0
            };
            let doc: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("a JSON report");
            let audited = doc["repositories"].as_array().map_or(0, Vec::len);
            if pass == "inventory" {
                let requests = log.lock().map(|l| l.len()).unwrap_or(0) - before;
                println!(
                    "--jobs {jobs}, inventory run: {:.2} s, peak RSS so far {peak_mib:.0} MiB, {audited} repositories, {} keys, {requests} requests received ({:.1} per repository)",
                    took.as_secs_f64(),
                    doc["keys"].as_array().map_or(0, Vec::len),
                    requests as f64 / audited.max(1) as f64,
                );
                continue;
            }
            // The server logs what it answers: a refused GraphQL query is counted by warden.
            let requests = doc["requests"]["sent"].as_u64().unwrap_or(0) as usize;
            let received = log.lock().map(|l| l.len()).unwrap_or(0) - before;
            println!(
                "--jobs {jobs}, {pass} run: {:.2} s, peak RSS so far {peak_mib:.0} MiB, {audited} repositories audited, {requests} requests sent, {received} answered ({:.1} sent per audited repository; {})",
                took.as_secs_f64(),
                requests as f64 / audited.max(1) as f64,
                doc["requests"]
            );
        }
    }
}
