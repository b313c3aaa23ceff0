//! Benchmark (not a test): a full online settings audit against a local server that answers every
//! request after 100 ms. One repository, three signing environments, three tag rulesets. The two
//! waves of concurrent reads should finish in about 2 × 100 ms (goal: ≤ 0.5 s).
//!
//!     cargo bench --bench audit_latency

use std::path::PathBuf;
use std::time::{Duration, Instant};

use release_warden::audit::SigningJob;
use release_warden::audit::SigningSecrets;
use release_warden::audit::{audit_settings, SettingsInput};
use release_warden::github::{LiveApi, RetryPolicy, Token};
use serde_json::json;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let server = MockServer::start().await;
        let delay = Duration::from_millis(100);
        let envs = ["release", "release-docker", "release-zk"];
        let ruleset = |id: u64| {
            json!({"id": id, "name": format!("tags {id}"), "target": "tag", "enforcement": "active",
                   "bypass_actors": [], "conditions": {"ref_name": {"include": ["refs/tags/v*"], "exclude": []}},
                   "rules": [{"type": "creation"}, {"type": "update"}, {"type": "deletion"}]})
        };
        let env = |name: &str| {
            json!({"name": name, "can_admins_bypass": false,
                   "protection_rules": [{"type": "required_reviewers", "prevent_self_review": true, "reviewers": [{"type": "User", "reviewer": {"id": 1}}]}],
                   "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}})
        };
        let answer = |body: serde_json::Value| ResponseTemplate::new(200).set_delay(delay).set_body_json(body);
        let mounts = vec![
            (r"^/repos/o/r/rulesets$".to_string(), json!([{"id": 1}, {"id": 2}, {"id": 3}])),
            (r"^/repos/o/r/environments$".to_string(), json!({"total_count": 3, "environments": envs.iter().map(|e| env(e)).collect::<Vec<_>>()})),
            (r"^/repos/o/r/actions/secrets$".to_string(), json!({"total_count": 0, "secrets": []})),
            (r"^/repos/o/r/actions/organization-secrets$".to_string(), json!({"total_count": 0, "secrets": []})),
            (r"^/repos/o/r/environments/[^/]+/secrets$".to_string(), json!({"total_count": 1, "secrets": [{"name": "MINISIGN_SECRET_KEY"}]})),
            (r"^/repos/o/r/environments/[^/]+/deployment-branch-policies$".to_string(), json!({"total_count": 1, "branch_policies": [{"name": "v*", "type": "tag"}]})),
        ];
        for (p, body) in mounts {
            Mock::given(method("GET")).and(path_regex(p)).respond_with(answer(body)).mount(&server).await;
        }
        for id in 1..=3 {
            Mock::given(method("GET")).and(path_regex(format!(r"^/repos/o/r/rulesets/{id}$"))).respond_with(answer(ruleset(id))).mount(&server).await;
        }
        let jobs: Vec<SigningJob> = envs
            .iter()
            .map(|e| SigningJob { workflow: PathBuf::from(".github/workflows/release.yml"), job: format!("sign-{e}"), environment: Some(e.to_string()), secrets: Default::default(), line: 1 })
            .collect();
        let patterns = vec!["v*".to_string()];
        let secrets = SigningSecrets::default();
        let input = SettingsInput { repo: "o/r", signing_jobs: &jobs, tag_patterns: &patterns, secrets: &secrets, keys: None, releases: 0, deep: false, checks: release_warden::audit::settings_checks() };
        let token = Token::new("bench".into());
        let mut best = Duration::MAX;
        for _ in 0..5 {
            let api = LiveApi::new(&server.uri(), token.as_ref(), RetryPolicy::default()).expect("client");
            let start = Instant::now();
            let findings = audit_settings(&api, &input).await;
            let took = start.elapsed();
            assert!(findings.is_empty(), "the benchmark repository is fully protected: {findings:?}");
            best = best.min(took);
        }
        let requests = server.received_requests().await.map_or(0, |r| r.len()) / 5;
        println!(
            "online audit, 100 ms per request, {requests} requests (3 environments, 3 tag rulesets): best of 5 = {:.0} ms ({:.1} latency waves; goal ≤ 500 ms)",
            best.as_secs_f64() * 1000.0,
            best.as_secs_f64() / delay.as_secs_f64()
        );
    });
}
