//! `warden audit` online, against a local wiremock server fed with GitHub's own example responses
//! (tests/fixtures/github-api) and synthetic tag-ruleset / environment scenarios.

use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::{json, Value};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const REPO: &str = "o/r";

fn fixture(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/github-api")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn workflows(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/workflows")
        .join(case)
}

/// A repository with every protection in place (synthetic): the scenario tests take it apart.
struct Scenario {
    rulesets: Value,
    ruleset: Value,
    environments: Value,
    policies: Value,
    repo_secrets: Value,
    org_secrets: Value,
    env_secrets: Value,
}

fn protected() -> Scenario {
    Scenario {
        // synthetic: a tag ruleset (GitHub's examples are all branch rulesets)
        rulesets: json!([{"id": 7, "name": "release tags", "target": "tag", "source_type": "Repository", "source": REPO, "enforcement": "active"}]),
        ruleset: json!({
            "id": 7, "name": "release tags", "target": "tag", "source_type": "Repository", "source": REPO, "enforcement": "active",
            "bypass_actors": [{"actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"}],
            "conditions": {"ref_name": {"include": ["refs/tags/v*"], "exclude": []}},
            "rules": [{"type": "creation"}, {"type": "update"}, {"type": "deletion"}, {"type": "non_fast_forward"}]
        }),
        // synthetic: a protected `release` environment
        environments: json!({"total_count": 1, "environments": [{
            "id": 1, "name": "release", "can_admins_bypass": false,
            "protection_rules": [{"id": 2, "type": "required_reviewers", "prevent_self_review": true, "reviewers": [{"type": "Team", "reviewer": {"id": 9, "slug": "release-managers"}}]}],
            "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
        }]}),
        // synthetic: GitHub's tag-policy example is named `v1`, which does not cover `v*` releases
        policies: json!({"total_count": 1, "branch_policies": [{"id": 364663, "node_id": "MDE2OkdhdGVCcmFuY2hQb2xpY3kzNjQ2NjM=", "name": "v*", "type": "tag"}]}),
        repo_secrets: fixture("repos-actions-secrets-list.json"),
        org_secrets: json!({"total_count": 0, "secrets": []}),
        env_secrets: json!({"total_count": 1, "secrets": [{"name": "MINISIGN_SECRET_KEY", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}]}),
    }
}

async fn mount(server: &MockServer, s: &Scenario) {
    let routes: [(&str, &Value); 7] = [
        ("/repos/o/r/rulesets", &s.rulesets),
        ("/repos/o/r/rulesets/7", &s.ruleset),
        ("/repos/o/r/environments", &s.environments),
        (
            "/repos/o/r/environments/release/deployment-branch-policies",
            &s.policies,
        ),
        ("/repos/o/r/actions/secrets", &s.repo_secrets),
        ("/repos/o/r/actions/organization-secrets", &s.org_secrets),
        ("/repos/o/r/environments/release/secrets", &s.env_secrets),
    ];
    for (p, body) in routes {
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(server)
            .await;
    }
    // No release published yet: nothing for the signed-release check to judge.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([])))
        .mount(server)
        .await;
}

/// `warden audit` of the workflows of `case`, its settings from the server at `uri`, in
/// `format` (the signed-release check has its own tests, tests/audit/releases.rs).
fn audit_cmd(uri: &str, case: &str, format: &str, extra: &[String]) -> std::process::Command {
    let mut cmd = warden(&workflows(case));
    cmd.env("GH_TOKEN", "ghp_test_token_value")
        .args([
            "audit",
            "--repo",
            REPO,
            "--api-url",
            uri,
            "--format",
            format,
        ])
        .args(["--releases", "0"])
        .args(extra);
    cmd
}

/// Runs `warden audit` (JSON) against the server (blocking work off the async runtime).
async fn audit(server: &MockServer, case: &str, extra: &[&str]) -> Run {
    let (uri, case) = (server.uri(), case.to_string());
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || run(&mut audit_cmd(&uri, &case, "json", &extra)))
        .await
        .unwrap()
}

/// The whole text output of the same audit, as a transcript: the server is written `[API]`.
async fn audit_text(server: &MockServer, case: &str, extra: &[&str]) -> String {
    let (uri, case) = (server.uri(), case.to_string());
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let t = transcript(
            &mut audit_cmd(&uri, &case, "text", &extra),
            &workflows(&case),
        );
        t.replace(&uri, "[API]")
    })
    .await
    .unwrap()
}

fn ids(r: &Run) -> Vec<String> {
    let doc: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", r.stdout, r.stderr));
    let mut v: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn messages(r: &Run) -> String {
    r.stdout.clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn fully_protected_repository_has_no_findings() {
    let server = github_with_repository("o/r").await;
    mount(&server, &protected()).await;
    let out = audit(&server, "clean-release", &[]).await.expect(0);
    assert_eq!(ids(&out), Vec::<String>::new(), "{}", out.stdout);
    assert!(
        !out.all().contains("ghp_test_token_value"),
        "the token never appears"
    );
    // The token was sent on every request, relative routes only.
    for req in server.received_requests().await.unwrap() {
        assert_eq!(
            req.headers.get("authorization").unwrap().to_str().unwrap(),
            "Bearer ghp_test_token_value",
            "{}",
            req.url
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn github_examples_branch_rulesets_only_and_no_release_environment() {
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    // GitHub's own examples: two branch rulesets (enforcement "enabled"), a `staging` environment.
    s.rulesets = fixture("repos-rulesets-list.json");
    s.ruleset = fixture("repos-ruleset-get.json");
    s.environments = fixture("environments-list.json");
    mount(&server, &s).await;
    for id in [42, 314] {
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/rulesets/{id}")))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(fixture("repos-ruleset-get.json")),
            )
            .mount(&server)
            .await;
    }
    let out = audit(&server, "clean-release", &[]).await.expect(1);
    assert_eq!(
        ids(&out),
        ["environment-missing", "no-tag-ruleset"],
        "{}",
        out.stdout
    );
    assert!(
        messages(&out).contains(
            "environment `release` (used by .github/workflows/release.yml:sign) does not exist"
        ),
        "{}",
        out.stdout
    );
    // The list uses "enabled" (not in GitHub's enum): tolerated, not a parse failure.
    assert!(!messages(&out).contains("unverifiable"), "{}", out.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_finding_per_ruleset_problem() {
    type Change = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "tag-ruleset-incomplete",
            Box::new(|r: &mut Value| {
                r["rules"] = json!([{"type": "creation"}, {"type": "non_fast_forward"}])
            }),
        ),
        (
            "tag-ruleset-bypass",
            Box::new(|r: &mut Value| {
                r["bypass_actors"] = json!([{"actor_id": 4, "actor_type": "RepositoryRole", "bypass_mode": "always"}])
            }),
        ),
        (
            "tag-ruleset-bypass",
            Box::new(|r: &mut Value| {
                r["bypass_actors"] = json!([{"actor_id": 11, "actor_type": "DeployKey"}])
            }),
        ),
        (
            "unverifiable",
            Box::new(|r: &mut Value| {
                r.as_object_mut().unwrap().remove("bypass_actors");
            }),
        ),
        (
            "no-tag-ruleset",
            Box::new(|r: &mut Value| r["enforcement"] = json!("evaluate")),
        ),
        (
            "no-tag-ruleset",
            Box::new(|r: &mut Value| {
                r["conditions"]["ref_name"]["include"] = json!(["refs/tags/pkg-v*"])
            }),
        ),
        (
            "no-tag-ruleset",
            Box::new(|r: &mut Value| {
                r["conditions"]["ref_name"]["exclude"] = json!(["refs/tags/v1*"])
            }),
        ),
        // Narrower than the release tags `v*`: v2.0.0 or vfoo would still run the release.
        (
            "no-tag-ruleset",
            Box::new(|r: &mut Value| {
                r["conditions"]["ref_name"]["include"] = json!(["refs/tags/v1.*"])
            }),
        ),
        (
            "no-tag-ruleset",
            Box::new(|r: &mut Value| {
                r["conditions"]["ref_name"]["include"] = json!(["refs/tags/v[0-9]*"])
            }),
        ),
    ];
    // Each case: exactly its finding, and the whole text report (which names, for a narrower
    // ruleset, a release tag it misses).
    let mut texts = String::new();
    for (expected, change) in cases {
        let server = github_with_repository("o/r").await;
        let mut s = protected();
        change(&mut s.ruleset);
        mount(&server, &s).await;
        let out = audit(&server, "clean-release", &[]).await;
        assert_eq!(ids(&out), [expected], "{}", out.stdout);
        assert_eq!(out.code, 1);
        texts += &audit_text(&server, "clean-release", &[]).await;
    }
    insta::assert_snapshot!(texts);
    // ~ALL covers every tag; a write-role bypass only "for pull requests" is not a bypass.
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    s.ruleset["conditions"]["ref_name"]["include"] = json!(["~ALL"]);
    s.ruleset["bypass_actors"] =
        json!([{"actor_id": 4, "actor_type": "RepositoryRole", "bypass_mode": "pull_request"}]);
    mount(&server, &s).await;
    audit(&server, "clean-release", &[]).await.expect(0);
}

/// GHES ≤ 3.19 may protect tags the legacy way; it is read only when no ruleset covers them.
#[tokio::test(flavor = "multi_thread")]
async fn legacy_tag_protection_is_read_when_no_ruleset_covers_the_tags() {
    async fn legacy(server: &MockServer, status: u16, body: Value) -> wiremock::MockGuard {
        Mock::given(method("GET"))
            .and(path("/repos/o/r/tags/protection"))
            .respond_with(ResponseTemplate::new(status).set_body_json(body))
            .expect(1..)
            .mount_as_scoped(server)
            .await
    }
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    s.rulesets = json!([]);
    mount(&server, &s).await;

    // GHES's own example protects `v1.*`, which does not cover `v*` releases.
    {
        let _m = legacy(
            &server,
            200,
            fixture("ghes-3.19-repos-tag-protection-list.json"),
        )
        .await;
        let out = audit(&server, "clean-release", &[]).await.expect(1);
        assert_eq!(ids(&out), ["no-tag-ruleset"]);
        insta::assert_snapshot!(
            "legacy_v1_does_not_cover_the_tags",
            audit_text(&server, "clean-release", &[]).await
        );
    }
    // synthetic: a legacy protection of `v*` protects them, less well than a ruleset.
    {
        let _m = legacy(&server, 200, json!([{"id": 3, "pattern": "v*"}])).await;
        let out = audit(&server, "clean-release", &[]).await.expect(1);
        assert_eq!(ids(&out), ["legacy-tag-protection"]);
        let doc: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(doc["findings"][0]["severity"], "medium");
        // --fail-on high lets it pass; the fix plan replaces it with a ruleset.
        let mut text = audit_text(&server, "clean-release", &["--fail-on", "high"]).await;
        text += &audit_text(&server, "clean-release", &["--fix-plan"]).await;
        insta::assert_snapshot!("legacy_v_star_protects_the_tags", text);
    }
    // github.com: 410 Gone means there is none.
    {
        let gone = json!({"message": "Tag protections have been fully deprecated. Please use tag rulesets instead.", "documentation_url": "https://github.blog/changelog/2024-05-29-sunset-notice-tag-protections/", "status": "410"});
        let _m = legacy(&server, 410, gone).await;
        let out = audit(&server, "clean-release", &[]).await.expect(1);
        assert_eq!(ids(&out), ["no-tag-ruleset"]);
    }
    // With a covering ruleset the legacy endpoint is not asked at all.
    let server = github_with_repository("o/r").await;
    mount(&server, &protected()).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/tags/protection"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(0)
        .mount(&server)
        .await;
    audit(&server, "clean-release", &[]).await.expect(0);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_finding_per_environment_problem() {
    let env = |f: &dyn Fn(&mut Value)| {
        let mut s = protected();
        f(&mut s.environments["environments"][0]);
        s
    };
    let cases = vec![
        (
            "environment-no-reviewers",
            env(&|e| e["protection_rules"] = json!([])),
        ),
        (
            "environment-self-review",
            env(&|e| e["protection_rules"][0]["prevent_self_review"] = json!(false)),
        ),
        (
            "environment-admin-bypass",
            env(&|e| e["can_admins_bypass"] = json!(true)),
        ),
        (
            "environment-any-ref",
            env(&|e| e["deployment_branch_policy"] = Value::Null),
        ),
        ("environment-no-tag-policy", {
            let mut s = protected();
            s.policies = fixture("deployment-branch-policies-list.json"); // GitHub's example: branch policies only
            s
        }),
        ("environment-no-tag-policy", {
            let mut s = protected();
            // GitHub's tag-policy example: a tag policy for `v1` only.
            s.policies = json!({"total_count": 1, "branch_policies": [fixture("deployment-branch-policy-create-tag.json")]});
            s
        }),
        ("environment-no-tag-policy", {
            let mut s = protected();
            // synthetic: `v1.*` is narrower than the release tags `v*`
            s.policies = json!({"total_count": 1, "branch_policies": [{"id": 1, "name": "v1.*", "type": "tag"}]});
            s
        }),
    ];
    let mut texts = String::new();
    for (expected, s) in cases {
        let server = github_with_repository("o/r").await;
        mount(&server, &s).await;
        let out = audit(&server, "clean-release", &[]).await;
        assert_eq!(ids(&out), [expected], "{}", out.stdout);
        texts += &audit_text(&server, "clean-release", &[]).await;
    }
    // GitHub's own environment example: no can_admins_bypass field → unverifiable (low), plus self-review.
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    let mut e = fixture("environment-get.json");
    e["name"] = json!("release");
    s.environments = json!({"total_count": 1, "environments": [e]});
    mount(&server, &s).await;
    let out = audit(&server, "clean-release", &[]).await;
    assert_eq!(
        ids(&out),
        ["environment-self-review", "unverifiable"],
        "{}",
        out.stdout
    );
    texts += &audit_text(&server, "clean-release", &[]).await;
    insta::assert_snapshot!(texts);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_finding_per_secret_problem() {
    let named = |n: &str| json!({"total_count": 1, "secrets": [{"name": n, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}]});
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    s.repo_secrets = named("MINISIGN_SECRET_KEY");
    mount(&server, &s).await;
    let out = audit(&server, "clean-release", &[]).await.expect(1);
    assert_eq!(
        ids(&out),
        ["secret-repo-level", "secret-shadowed"],
        "{}",
        out.stdout
    );
    let mut texts = audit_text(&server, "clean-release", &[]).await;

    let server = github_with_repository("o/r").await;
    let mut s = protected();
    s.org_secrets = named("MINISIGN_SECRET_KEY");
    s.env_secrets = json!({"total_count": 0, "secrets": []});
    mount(&server, &s).await;
    let out = audit(&server, "clean-release", &[]).await.expect(1);
    assert_eq!(ids(&out), ["secret-org-visible"], "{}", out.stdout);
    texts += &audit_text(&server, "clean-release", &[]).await;
    insta::assert_snapshot!(texts);
}

#[tokio::test(flavor = "multi_thread")]
async fn permission_failures_are_unverifiable_with_the_permission_named() {
    let server = github_with_repository("o/r").await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/rulesets"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("X-Accepted-GitHub-Permissions", "administration=read")
                .set_body_json(json!({"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com", "status": "403"})),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/secrets"))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_json(json!({"message": "Not Found", "status": "404"})),
        )
        .mount(&server)
        .await;
    let mut s = protected();
    s.rulesets = json!([]);
    mount(&server, &s).await;
    let out = audit(&server, "clean-release", &[]).await.expect(1);
    assert_eq!(
        ids(&out),
        ["unverifiable", "unverifiable"],
        "{}",
        out.stdout
    );
    insta::assert_snapshot!(audit_text(&server, "clean-release", &[]).await);
}

/// A GitHub that keeps answering 500 is said once, with each wait before the next try: exit 2,
/// not findings about the repository.
#[tokio::test(flavor = "multi_thread")]
async fn a_github_that_keeps_failing_is_exit_2_not_findings() {
    let server = github_with_repository("o/r").await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/rulesets"))
        .respond_with(ResponseTemplate::new(502).set_body_json(json!({"message": "Server Error"})))
        .mount(&server)
        .await;
    mount(&server, &protected()).await;
    let out = audit_text(&server, "clean-release", &[]).await;
    // How long it took, to the second, depends on the machine.
    let out = regex::Regex::new(r"4 times in \d+ s")
        .unwrap()
        .replace(&out, "4 times in [N] s");
    insta::assert_snapshot!(out);
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_and_rate_limits_are_retried() {
    let server = github_with_repository("o/r").await;
    // 500 once, then the real answer.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/environments"))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    // 429 with retry-after once, then the real answer.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/rulesets"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"message": "You have exceeded a secondary rate limit"})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount(&server, &protected()).await;
    let out = audit(&server, "clean-release", &[]).await.expect(0);
    assert_eq!(ids(&out), Vec::<String>::new(), "{}", out.stdout);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests
            .iter()
            .filter(|r| r.url.path() == "/repos/o/r/rulesets")
            .count(),
        2
    );
    assert_eq!(
        requests
            .iter()
            .filter(|r| r.url.path() == "/repos/o/r/environments")
            .count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_page_of_a_list_is_read() {
    let server = github_with_repository("o/r").await;
    let s = protected();
    let release = s.environments["environments"][0].clone();
    let page = |n: u64, envs: Value, next: Option<u64>| {
        let mut t = ResponseTemplate::new(200)
            .set_body_json(json!({"total_count": 3, "environments": envs}));
        if let Some(p) = next {
            // An absolute next link: warden must follow it as a relative route (keeping the token).
            t = t.insert_header("link", format!("<{}/repos/o/r/environments?per_page=100&page={p}>; rel=\"next\", <{}/repos/o/r/environments?per_page=100&page=3>; rel=\"last\"", server.uri(), server.uri()));
        }
        (n, t)
    };
    for (n, t) in [
        page(
            2,
            json!([{"name": "staging", "protection_rules": []}]),
            Some(3),
        ),
        page(3, json!([release]), None),
    ] {
        Mock::given(method("GET"))
            .and(path("/repos/o/r/environments"))
            .and(query_param("page", n.to_string()))
            .respond_with(t)
            .with_priority(1)
            .mount(&server)
            .await;
    }
    let (_, first) = page(
        1,
        json!([{"name": "docs", "protection_rules": []}]),
        Some(2),
    );
    Mock::given(method("GET"))
        .and(path("/repos/o/r/environments"))
        .respond_with(first)
        .with_priority(2)
        .mount(&server)
        .await;
    mount(&server, &s).await;
    let out = audit(&server, "clean-release", &[]).await.expect(0);
    assert_eq!(
        ids(&out),
        Vec::<String>::new(),
        "the release environment is on page 3: {}",
        out.stdout
    );
    let pages = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/repos/o/r/environments")
        .count();
    assert_eq!(pages, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn snapshot_round_trip_and_fix_plan() {
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    s.repo_secrets = json!({"total_count": 1, "secrets": [{"name": "MINISIGN_SECRET_KEY", "created_at": "x", "updated_at": "x"}]});
    s.environments["environments"][0]["can_admins_bypass"] = json!(true);
    mount(&server, &s).await;
    let snap = tempfile::tempdir().unwrap();
    let uri = server.uri();
    let root = workflows("clean-release");
    let dir = snap.path().to_path_buf();
    let saved = tokio::task::spawn_blocking(move || {
        run(warden(&root)
            .env("GH_TOKEN", "t")
            .args([
                "audit",
                "snapshot",
                "--repo",
                REPO,
                "--api-url",
                &uri,
                "--out",
            ])
            .arg(&dir))
    })
    .await
    .unwrap()
    .expect(0);
    assert!(
        saved.stdout.contains("saved 9 responses for o/r"),
        "{}",
        saved.stdout
    );
    assert!(snap.path().join("repos/o/r/rulesets/7.json").is_file());
    assert!(snap.path().join("repos/o/r/environments.json").is_file());
    // Offline from the snapshot, no server, no token: the same findings.
    drop(server);
    let out = run(warden(&workflows("clean-release"))
        .args(["audit", "--repo", REPO, "--format", "json", "--snapshot"])
        .arg(snap.path()))
    .expect(1);
    assert_eq!(
        ids(&out),
        [
            "environment-admin-bypass",
            "secret-repo-level",
            "secret-shadowed"
        ],
        "{}",
        out.stdout
    );
    let plan = run(warden(&workflows("clean-release"))
        .args(["audit", "--repo", REPO, "--fix-plan", "--snapshot"])
        .arg(snap.path()))
    .expect(1);
    assert!(
        plan.stdout
            .contains("gh api --method PUT repos/o/r/environments/release --input - <<'JSON'"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("\"can_admins_bypass\": false"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("gh secret delete MINISIGN_SECRET_KEY --repo o/r"),
        "{}",
        plan.stdout
    );
    // A route absent from the snapshot is unverifiable, not a pass.
    std::fs::remove_file(snap.path().join("repos/o/r/actions/secrets.json")).unwrap();
    let out = run(warden(&workflows("clean-release"))
        .args(["audit", "--repo", REPO, "--format", "json", "--snapshot"])
        .arg(snap.path()))
    .expect(1);
    assert!(out.stdout.contains("not in the snapshot"), "{}", out.stdout);
}

/// Without a token, `warden audit` is the offline audit and says so (no request, no finding);
/// `--repo` asks for the settings, which cannot be read without one: exit 2, not a finding.
#[test]
fn without_a_token_the_audit_is_offline_unless_settings_are_asked_for() {
    let plain = || {
        let mut cmd = warden(&workflows("clean-release"));
        cmd.env_remove("GITHUB_REPOSITORY")
            // Nothing listens here: a request would fail the run.
            .env("GITHUB_API_URL", "http://127.0.0.1:9");
        cmd
    };
    let out = run(plain().arg("audit")).expect(0);
    assert_eq!(
        out.stdout,
        "audited: workflows from the checkout (.); settings not audited: no GH_TOKEN or GITHUB_TOKEN (set one to audit them through the API)\nread 1 workflow file, 2 jobs; 1 signing job: release.yml `sign` (MINISIGN_SECRET_KEY)\n0 findings: 0 high, 0 medium, 0 low, 0 info (--fail-on medium: ok)\n"
    );
    assert_eq!(out.stderr, "");
    let asked = run(plain().args(["audit", "--repo", REPO])).expect(2);
    assert_eq!(
        asked.all(),
        "warden: --repo o/r: a repository's settings (and, without its checkout, its workflows) are read through the API, with a token: set GH_TOKEN (or GITHUB_TOKEN), or drop --repo to audit the checkout's workflows alone\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_sends_the_ruleset_and_environment_changes_and_keeps_reviewers() {
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    s.rulesets = json!([]);
    s.environments["environments"][0]["protection_rules"][0]["prevent_self_review"] = json!(false);
    s.environments["environments"][0]["protection_rules"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": 3, "type": "wait_timer", "wait_timer": 15}));
    let env = s.environments["environments"][0].clone();
    Mock::given(method("GET"))
        .and(path("/repos/o/r/environments/release"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&env))
        .mount(&server)
        .await;
    for (m, p) in [
        ("POST", "/repos/o/r/rulesets"),
        ("PUT", "/repos/o/r/environments/release"),
        (
            "POST",
            "/repos/o/r/environments/release/deployment-branch-policies",
        ),
    ] {
        Mock::given(method(m))
            .and(path(p))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({})))
            .mount(&server)
            .await;
    }
    mount(&server, &s).await;
    // Without --yes and without a terminal: refused, nothing written.
    let out = audit(&server, "clean-release", &["--apply"])
        .await
        .expect(2);
    assert!(
        out.stderr.contains("--apply needs a confirmation"),
        "{}",
        out.stderr
    );
    assert!(server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .all(|r| r.method.as_str() == "GET"));
    let out = audit(&server, "clean-release", &["--apply", "--yes"])
        .await
        .expect(1);
    assert_eq!(
        ids(&out),
        ["environment-self-review", "no-tag-ruleset"],
        "stdout stays valid JSON: {}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("applied  POST repos/o/r/rulesets (201)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("applied  PUT repos/o/r/environments/release (201)"),
        "{}",
        out.stderr
    );
    let writes: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() != "GET")
        .collect();
    let body = |m: &str, p: &str| -> Value {
        let r = writes
            .iter()
            .find(|r| r.method.as_str() == m && r.url.path() == p)
            .unwrap_or_else(|| panic!("no {m} {p}"));
        serde_json::from_slice(&r.body).unwrap()
    };
    let ruleset = body("POST", "/repos/o/r/rulesets");
    assert_eq!(ruleset["target"], "tag");
    assert_eq!(ruleset["enforcement"], "active");
    assert_eq!(
        ruleset["conditions"]["ref_name"]["include"],
        json!(["refs/tags/v*"])
    );
    assert_eq!(
        ruleset["bypass_actors"],
        json!([{"actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"}])
    );
    let environment = body("PUT", "/repos/o/r/environments/release");
    assert_eq!(environment["prevent_self_review"], true);
    assert_eq!(environment["can_admins_bypass"], false);
    assert_eq!(
        environment["reviewers"],
        json!([{"type": "Team", "id": 9}]),
        "existing reviewers kept"
    );
    assert_eq!(environment["wait_timer"], 15, "existing wait timer kept");
    assert_eq!(
        body(
            "POST",
            "/repos/o/r/environments/release/deployment-branch-policies"
        ),
        json!({"name": "v*", "type": "tag"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn check_runs_the_settings_audit_when_a_token_is_present() {
    let server = github_with_repository("o/r").await;
    mount(&server, &protected()).await;
    let uri = server.uri();
    let check = move |uri: String| {
        tokio::task::spawn_blocking(move || {
            run(warden(&workflows("clean-release"))
                .env("GH_TOKEN", "t")
                .env("GITHUB_REPOSITORY", REPO)
                .env("GITHUB_API_URL", uri)
                .arg("check"))
        })
    };
    let out = check(uri.clone()).await.unwrap();
    assert!(out.stdout.contains("ok    settings     o/r: tag ruleset, signing environments and secrets: no finding at medium or above"), "{}", out.stdout);
    let server2 = github_with_repository("o/r").await;
    let mut s = protected();
    s.rulesets = json!([]);
    mount(&server2, &s).await;
    let out = check(server2.uri()).await.unwrap();
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("FAIL  settings     GET /repos/o/r/rulesets: no-tag-ruleset"),
        "{}",
        out.stdout
    );
    // Without a token the offline check does not touch the network and has no settings line.
    let out = run(warden(&workflows("clean-release")).arg("check"));
    assert!(!out.stdout.contains("settings"), "{}", out.stdout);
}

/// A refused token (401) is not a finding about the repository: the audit stops at once with
/// one line naming the variable and what to do, exit 2, and sends nothing more with it.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_token_stops_the_audit_with_one_line() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "message": "Bad credentials",
            "documentation_url": "https://docs.github.com/rest",
            "status": "401"
        })))
        .mount(&server)
        .await;
    let out = audit(&server, "clean-release", &[]).await.expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "warden: GitHub refused the token in GH_TOKEN (401 Bad credentials): it is expired, revoked or mistyped; make a new one (`gh auth token`, or a fine-grained token under Settings → Developer settings) and set GH_TOKEN to it\n"
    );
    let first = server.received_requests().await.unwrap();
    // The repository is asked for first; nothing after the refusal.
    assert_eq!(first.len(), 1, "{} requests", first.len());
}

fn epoch_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A primary rate limit spent until an hour from now is not a finding either: the audit stops
/// at once (no six-minute silence) with one line saying when it resets, exit 2.
#[tokio::test(flavor = "multi_thread")]
async fn a_spent_rate_limit_stops_the_audit_and_says_when_it_resets() {
    let server = MockServer::start().await;
    let reset = epoch_now() + 3600;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-limit", "5000")
                .insert_header("x-ratelimit-reset", reset.to_string().as_str())
                .set_body_json(json!({"message": "API rate limit exceeded for user ID 1."})),
        )
        .mount(&server)
        .await;
    let start = std::time::Instant::now();
    let out = audit(&server, "clean-release", &[]).await.expect(2);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out.stdout, "");
    let at = String::from_utf8(
        std::process::Command::new("date")
            .args(["-u", "-d", &format!("@{reset}"), "+%Y-%m-%d %H:%M:%S UTC"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    // The route is whichever read of the first wave answered first.
    let route = out
        .stderr
        .split("(GET /")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_default()
        .to_string();
    assert_eq!(route, "repos/o/r", "{}", out.stderr);
    assert_eq!(
        out.stderr,
        format!("warden: GitHub's rate limit for this token is spent (GET /{route}); it resets at {}, in 60 min: longer than warden waits (60 s, WARDEN_RATE_LIMIT_WAIT): run again after the reset, or with a token that has requests left (`gh api rate_limit` shows them)\n", at.trim())
    );
    let sent = server.received_requests().await.unwrap();
    assert_eq!(sent.len(), 1, "{} requests", sent.len());
}

/// A limit that resets within the wait is waited out, with a countdown on stderr, and the audit
/// then goes on as if nothing happened.
#[tokio::test(flavor = "multi_thread")]
async fn a_rate_limit_that_resets_soon_is_waited_out_with_a_countdown() {
    let server = github_with_repository("o/r").await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/rulesets"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", (epoch_now() + 1).to_string().as_str())
                .set_body_json(json!({"message": "API rate limit exceeded"})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount(&server, &protected()).await;
    let out = audit(&server, "clean-release", &[]).await.expect(0);
    assert_eq!(ids(&out), Vec::<String>::new(), "{}", out.stdout);
    let waits: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(waits.len(), 1, "{}", out.stderr);
    // The reset is a second away when the answer comes (0 s when the second has just turned).
    let (head, tail) = waits[0].split_once(" UTC, in ").unwrap();
    assert!(
        head.starts_with("warden: GitHub's rate limit for this token is spent (GET /repos/o/r/rulesets); it resets at "),
        "{}",
        out.stderr
    );
    assert!(
        [
            "1 s: waiting for it: 2 s left",
            "0 s: waiting for it: 1 s left"
        ]
        .contains(&tail),
        "{}",
        out.stderr
    );
    // A bound of 0 never waits: the same answer stops the audit.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/rulesets"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "5")
                .set_body_json(json!({"message": "secondary rate limit"})),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    let (uri, case) = (server.uri(), "clean-release".to_string());
    let out = tokio::task::spawn_blocking(move || {
        run(audit_cmd(&uri, &case, "json", &[]).env("WARDEN_RATE_LIMIT_WAIT", "0"))
    })
    .await
    .unwrap()
    .expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, "warden: GitHub's secondary rate limit asks warden to wait 5 s (GET /repos/o/r/rulesets): longer than warden waits (0 s, WARDEN_RATE_LIMIT_WAIT): run again later, with fewer requests at once (`--jobs`)\n");
    let (uri, case) = (server.uri(), "clean-release".to_string());
    let out = tokio::task::spawn_blocking(move || {
        run(audit_cmd(&uri, &case, "json", &[]).env("WARDEN_RATE_LIMIT_WAIT", "soon"))
    })
    .await
    .unwrap()
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: WARDEN_RATE_LIMIT_WAIT=\"soon\": not a whole number of seconds\n"
    );
}

/// An API that cannot be reached is said so once, naming the URL and where it came from.
#[test]
fn an_unreachable_api_names_the_url_and_its_flag() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let mut cmd = audit_cmd(&url, "clean-release", "json", &[]);
    let out = run(&mut cmd).expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr.replace(&url, "[URL]"),
        "warden: cannot connect to the GitHub API at [URL] (from --api-url): Connection refused (os error 111); check the URL and the network\n"
    );
    let mut cmd = warden(&workflows("clean-release"));
    cmd.env("GH_TOKEN", "t").env("GITHUB_API_URL", &url).args([
        "audit",
        "--repo",
        REPO,
        "--releases",
        "0",
    ]);
    let out = run(&mut cmd).expect(2);
    assert!(
        out.stderr.starts_with(&format!(
            "warden: cannot connect to the GitHub API at {url} (from GITHUB_API_URL): "
        )),
        "{}",
        out.stderr
    );
}

/// `--fix --apply`: the workflow is fixed in the checkout, then the settings of the fixed files
/// are audited and the plan sent: the environment the fix names is created with the release tags
/// as its deployment policy.
#[tokio::test(flavor = "multi_thread")]
async fn fix_then_apply_creates_the_environment_the_fix_names() {
    let server = github_with_repository("o/r").await;
    let mut s = protected();
    s.environments = json!({"total_count": 0, "environments": []});
    mount(&server, &s).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/environments/release"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
        .mount(&server)
        .await;
    for (m, p) in [
        ("PUT", "/repos/o/r/environments/release"),
        (
            "POST",
            "/repos/o/r/environments/release/deployment-branch-policies",
        ),
    ] {
        Mock::given(method(m))
            .and(path(p))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({})))
            .mount(&server)
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fix-corpus/mixed-minisign");
    copy_dir(&case, dir.path());
    let (uri, root) = (server.uri(), dir.path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        run(warden(&root)
            .env("GH_TOKEN", "ghp_test_token_value")
            .args([
                "audit",
                "--repo",
                REPO,
                "--api-url",
                &uri,
                "--releases",
                "0",
            ])
            .args(["--format", "json", "--fix", "--apply", "--yes"])
            .args(["--fix-mode", "whole-job"]))
    })
    .await
    .unwrap();
    let fixed = std::fs::read_to_string(dir.path().join(".github/workflows/build.yml")).unwrap();
    assert!(fixed.contains("    environment: release\n"), "{fixed}");
    assert!(
        !out.stderr
            .starts_with("diff --git a/.github/workflows/build.yml"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("fixed .github/workflows/build.yml:\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("applied  PUT repos/o/r/environments/release (201)"),
        "{}",
        out.stderr
    );
    let writes: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() != "GET")
        .collect();
    let policy = writes
        .iter()
        .find(|r| r.url.path() == "/repos/o/r/environments/release/deployment-branch-policies")
        .expect("a tag policy was sent");
    let body: Value = serde_json::from_slice(&policy.body).unwrap();
    assert_eq!(body, json!({"name": "v*", "type": "tag"}));
    assert!(!out.all().contains("ghp_test_token_value"));
}
