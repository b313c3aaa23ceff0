//! `warden audit --org` against a local server playing an organisation of 200 repositories
//! (`common/org_server.rs`): listing with pagination and a secondary limit, archived and forks
//! left out, a forbidden repository listed as unreadable, a 500 retried, the per-repository
//! request budget, and a cached second run that GitHub would answer with 304s only.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::org_server::*;
use crate::common::*;
use serde_json::Value;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

/// A local organisation of `repos` repositories, shaped by `shape`; its server and request log.
fn serve(
    rt: &tokio::runtime::Runtime,
    repos: usize,
    shape: impl FnOnce(OrgServer) -> OrgServer,
) -> (MockServer, Arc<Mutex<Vec<Logged>>>) {
    let server = rt.block_on(MockServer::start());
    let org = shape(OrgServer::new(repos, &server.uri(), Duration::ZERO));
    let log = org.log.clone();
    rt.block_on(Mock::given(method("GET")).respond_with(org).mount(&server));
    (server, log)
}

/// Every GraphQL request body a server received.
type Queries = Arc<Mutex<Vec<Value>>>;

/// The same organisation, its server answering GraphQL as well (mounted for every method).
fn serve_with_graphql(
    rt: &tokio::runtime::Runtime,
    repos: usize,
) -> (MockServer, Arc<Mutex<Vec<Logged>>>, Queries) {
    let server = rt.block_on(MockServer::start());
    let org = OrgServer::new(repos, &server.uri(), Duration::ZERO);
    let (log, queries) = (org.log.clone(), org.queries.clone());
    rt.block_on(
        Mock::given(wiremock::matchers::any())
            .respond_with(org)
            .mount(&server),
    );
    (server, log, queries)
}

fn org_audit(dir: &Path, uri: &str, extra: &[&str]) -> Run {
    let releases = if extra.contains(&"--releases") {
        &[][..]
    } else {
        &["--releases", "0"][..]
    };
    let mut cmd = warden(dir);
    cmd.env("GH_TOKEN", "ghs_test")
        .args(["audit", "--org", ORG, "--api-url", uri])
        .args(releases)
        .args(extra);
    run(&mut cmd)
}

#[test]
fn org_audit_reads_every_repository_once_and_a_cached_run_costs_only_304s() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, log) = serve(&rt, 200, |o| o);
    let shared = log.clone();
    let t = tempfile::tempdir().unwrap();

    let started = std::time::Instant::now();
    let first = org_audit(
        t.path(),
        &server.uri(),
        &["--cache", "cache", "--format", "json"],
    )
    .expect(1);
    eprintln!("first run: {:?}", started.elapsed());
    let doc: Value = serde_json::from_str(&first.stdout).unwrap();
    let repos = doc["repositories"].as_array().unwrap();
    // 200 listed; 40 archived and 40 forks left out; repo-006 forbidden.
    assert_eq!(doc["excluded"], 80);
    assert_eq!(repos.len(), 119);
    assert_eq!(doc["unreadable"][0]["repository"], "acme/repo-006");
    assert_eq!(
        doc["unreadable"][0]["reason"],
        "GET /repos/acme/repo-006/git/trees/HEAD answered 403: Resource not accessible by integration"
    );
    assert_eq!(doc["unreadable"].as_array().unwrap().len(), 1);
    // The repository whose first read failed with a 500 was retried and audited.
    let by_name = |n: &str| repos.iter().find(|r| r["repository"] == n).unwrap();
    let flaky = by_name("acme/repo-011");
    assert!(!flaky["findings"].as_array().unwrap().is_empty());
    // An exposed repository: its key outside an environment, stored as a repository secret.
    let ids = |r: &Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        ids(by_name("acme/repo-001")).contains(&"signing-secret-outside-environment".to_string())
    );
    // A protected one passes; a repository without workflows has nothing to sign with.
    assert_eq!(
        by_name("acme/repo-000")["failed"],
        false,
        "{}",
        by_name("acme/repo-000")
    );
    // (the tag ruleset is still judged against the default release tags, as for one repository)
    assert_eq!(ids(by_name("acme/repo-002")), ["no-tag-ruleset"]);
    // At most 20 requests per repository on the first run (listing included).
    let sent = doc["requests"]["sent"].as_u64().unwrap();
    assert!(sent <= 20 * 120, "{sent} requests for 120 repositories");
    let first_log = log.lock().unwrap().len();
    // The server serves no GraphQL here: its refusal (unlogged) is asked once per batch in
    // flight, then REST reads everything.
    let graphql = doc["requests"]["graphql"].as_u64().unwrap();
    assert!((1..=2).contains(&graphql), "{}", doc["requests"]);
    assert_eq!(first_log as u64 + graphql, sent);

    // The second run, with the cache: GitHub answers nothing but 304 (free) or the errors it
    // answered before; git objects are not asked for again.
    let second = org_audit(
        t.path(),
        &server.uri(),
        &["--cache", "cache", "--format", "json"],
    )
    .expect(1);
    let doc2: Value = serde_json::from_str(&second.stdout).unwrap();
    assert_eq!(doc2["repositories"], doc["repositories"]);
    let log = log.lock().unwrap();
    let again = &log[first_log..];
    let ok: Vec<&Logged> = again.iter().filter(|l| l.status == 200).collect();
    assert!(
        ok.is_empty(),
        "answered 200 on the cached run: {:?}",
        &ok[..ok.len().min(5)]
    );
    assert!(again
        .iter()
        .all(|l| l.status != 200 && (l.conditional || l.status >= 400)));
    // The .github tree and the workflow blob of the 79 repositories that have them.
    assert_eq!(
        doc2["requests"]["from_cache"],
        2 * 79,
        "{}",
        doc2["requests"]
    );
    assert!(!again.iter().any(|l| l.path.contains("/git/blobs/")));
    // Organisation secrets were read once, not per repository.
    assert!(!log
        .iter()
        .any(|l| l.path.contains("/actions/organization-secrets")));
    let second_log = log.len();
    drop(log);

    // Someone who can write the cache (a CI cache a pull request restores) makes repo-001's
    // workflow harmless there: the cached blob no longer hashes to its id, so it is asked for
    // again and the audit reads the real workflow.
    let mut tampered = 0;
    for entry in std::fs::read_dir(t.path().join("cache")).unwrap() {
        let file = entry.unwrap().path();
        let mut cached: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let route = cached["route"].as_str().unwrap_or_default().to_string();
        if route.starts_with("repos/acme/repo-001/git/blobs/") {
            use base64::Engine as _;
            let harmless = "on: push\njobs: {}\n";
            let mut body: Value = serde_json::from_str(cached["body"].as_str().unwrap()).unwrap();
            body["content"] = base64::engine::general_purpose::STANDARD
                .encode(harmless)
                .into();
            cached["body"] = body.to_string().into();
            std::fs::write(&file, cached.to_string()).unwrap();
            tampered += 1;
        }
    }
    assert_eq!(tampered, 1);
    let third = org_audit(
        t.path(),
        &server.uri(),
        &["--cache", "cache", "--format", "json"],
    )
    .expect(1);
    let doc3: Value = serde_json::from_str(&third.stdout).unwrap();
    assert_eq!(doc3["repositories"], doc["repositories"]);
    let log = shared.lock().unwrap();
    let asked: Vec<&str> = log[second_log..]
        .iter()
        .filter(|l| l.path.contains("/git/blobs/"))
        .map(|l| l.path.as_str())
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("/repos/acme/repo-001/git/blobs/"),
        "{asked:?}"
    );
}

#[test]
fn org_audit_text_table_filters_and_baseline() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, _, _) = serve_with_graphql(&rt, 12);
    let t = tempfile::tempdir().unwrap();
    let out = org_audit(t.path(), &server.uri(), &["--match", "repo-00*"]).expect(1);
    insta::assert_snapshot!(out.stdout);
    // The report as a baseline: nothing new, and exit 1 only for what was not audited.
    let base = org_audit(
        t.path(),
        &server.uri(),
        &["--match", "repo-00*", "--format", "json"],
    )
    .expect(1);
    write(&t.path().join("base.json"), base.stdout.as_bytes());
    let out = org_audit(
        t.path(),
        &server.uri(),
        &["--match", "repo-00[0-5]", "--baseline", "base.json"],
    )
    .expect(0);
    assert!(out.stdout.ends_with(": ok\n"), "{}", out.stdout);
    // The whole set again: repo-006 answers 403 as it did in the baseline, so it is listed as
    // such and is not new (the run passes).
    let out = org_audit(
        t.path(),
        &server.uri(),
        &["--match", "repo-00*", "--baseline", "base.json"],
    )
    .expect(0);
    let unreadable: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("UNREADABLE"))
        .collect();
    assert_eq!(
        unreadable,
        ["UNREADABLE acme/repo-006 (as in the baseline): GET /repos/acme/repo-006/git/trees/HEAD answered 403: Resource not accessible by integration"]
    );
    // A repository that becomes unreadable (the baseline read it) is new.
    let mut doc: Value = serde_json::from_str(&base.stdout).unwrap();
    doc["unreadable"] = serde_json::json!([]);
    write(&t.path().join("base2.json"), doc.to_string().as_bytes());
    org_audit(
        t.path(),
        &server.uri(),
        &["--match", "repo-00*", "--baseline", "base2.json"],
    )
    .expect(1);
    // --repos-from narrows to the named ones; --include-archived and --include-forks widen.
    write(
        &t.path().join("repos.txt"),
        b"# the two we care about\nrepo-000\nacme/repo-001\n",
    );
    let out = org_audit(
        t.path(),
        &server.uri(),
        &["--repos-from", "repos.txt", "--format", "json"],
    )
    .expect(1);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["repositories"].as_array().unwrap().len(), 2);
    let out = org_audit(
        t.path(),
        &server.uri(),
        &["--include-archived", "--include-forks", "--format", "json"],
    )
    .expect(1);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["excluded"], 0);
    // SARIF: one run per repository audited, each with its own category, valid 2.1.0.
    let out = org_audit(t.path(), &server.uri(), &["--format", "sarif"]).expect(1);
    let sarif: Value = serde_json::from_str(&out.stdout).unwrap();
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&sarif)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let ids: Vec<&str> = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["automationDetails"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 7);
    assert!(ids.contains(&"warden-audit/acme/repo-001/"), "{ids:?}");
    // Markdown: the table, every name a code span.
    let out = org_audit(t.path(), &server.uri(), &["--format", "markdown"]).expect(1);
    assert!(
        out.stdout.contains("| `acme/repo-001` | 3 | 0 | 0 | 1 |"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "| `acme/repo-006` | not audited: GET /repos/acme/repo-006/git/trees/HEAD answered 403: Resource not accessible by integration | | | |"
        ),
        "{}",
        out.stdout
    );
    // Without a token, --org is a usage error.
    let mut cmd = warden(t.path());
    cmd.env_remove("GH_TOKEN").env_remove("GITHUB_TOKEN").args([
        "audit",
        "--org",
        ORG,
        "--api-url",
        &server.uri(),
    ]);
    run(&mut cmd).expect(2);
}

/// A snapshot of the organisation replays offline to the same report; a rate limit about to run
/// out stops new repositories, names them and fails.
#[test]
fn org_snapshot_replays_and_the_rate_limit_stops_cleanly() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, _) = serve(&rt, 12, |o| o);
    let t = tempfile::tempdir().unwrap();
    let live = org_audit(t.path(), &server.uri(), &["--format", "json"]).expect(1);
    let mut cmd = warden(t.path());
    cmd.env("GH_TOKEN", "ghs_test").args([
        "audit",
        "snapshot",
        "--org",
        ORG,
        "--api-url",
        &server.uri(),
        "--releases",
        "0",
        "--out",
        "snap",
    ]);
    let saved = run(&mut cmd).expect(0);
    assert!(saved.stdout.starts_with("saved "), "{}", saved.stdout);
    let mut cmd = warden(t.path());
    cmd.env_remove("GH_TOKEN").env_remove("GITHUB_TOKEN").args([
        "audit",
        "--org",
        ORG,
        "--snapshot",
        "snap",
        "--releases",
        "0",
        "--format",
        "json",
    ]);
    let replayed = run(&mut cmd).expect(1);
    let doc = |s: &str| serde_json::from_str::<Value>(s).unwrap();
    assert_eq!(
        doc(&replayed.stdout)["repositories"],
        doc(&live.stdout)["repositories"]
    );
    assert_eq!(
        doc(&replayed.stdout)["unreadable"],
        doc(&live.stdout)["unreadable"]
    );

    // A token that cannot read the organisation's secrets: each repository is asked instead.
    let (server, log) = serve(&rt, 12, |o| o.without_org_secrets());
    let out = org_audit(t.path(), &server.uri(), &["--format", "json"]).expect(1);
    assert_eq!(
        doc(&out.stdout)["repositories"].as_array().unwrap().len(),
        7
    );
    let asked = log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.path.contains("/actions/organization-secrets"))
        .count();
    assert_eq!(asked, 7);

    let (server, _) = serve(&rt, 12, |o| o.with_remaining(130));
    // Incomplete for want of quota: a usage problem (exit 2), with the partial report printed.
    let out = org_audit(
        t.path(),
        &server.uri(),
        &["--jobs", "1", "--format", "json"],
    )
    .expect(2);
    let doc = doc(&out.stdout);
    let not_started = doc["not_started"].as_array().unwrap();
    assert!(!not_started.is_empty(), "{doc}");
    assert!(
        not_started[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("the rate limit would run out ("),
        "{doc}"
    );
    let done = doc["repositories"].as_array().unwrap().len();
    assert!(done > 0);
    assert!(
        out.stderr.contains(
            "after the reset, run the same command with --resume warden-audit-acme.resume.json"
        ),
        "{}",
        out.stderr
    );
    // After the reset: --resume keeps what was audited and audits only the rest.
    let (server, log) = serve(&rt, 12, |o| o);
    let out = org_audit(
        t.path(),
        &server.uri(),
        &[
            "--resume",
            "warden-audit-acme.resume.json",
            "--format",
            "json",
        ],
    )
    .expect(1);
    let resumed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(resumed["not_started"], serde_json::json!([]));
    assert_eq!(
        resumed["repositories"].as_array().unwrap().len()
            + resumed["unreadable"].as_array().unwrap().len(),
        8,
        "12 repositories, 4 archived or forks: {resumed}"
    );
    let first_done = doc["repositories"][0]["repository"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        !log.lock()
            .unwrap()
            .iter()
            .any(|l| l.path.contains(&format!("{first_done}/"))),
        "{first_done} was audited again"
    );
}

/// A limit spent mid-run (another job used the token) stops the organisation audit with exit 2,
/// after saving what was audited; `--resume` then audits only the rest.
#[test]
fn a_limit_spent_mid_run_saves_the_state_and_stops() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, _) = serve(&rt, 12, |o| o.spent_after(25));
    let t = tempfile::tempdir().unwrap();
    let out = org_audit(
        t.path(),
        &server.uri(),
        &["--jobs", "1", "--format", "json"],
    )
    .expect(2);
    assert_eq!(out.stdout, "");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].starts_with("warden: GitHub's rate limit for this token is spent (GET /repos/acme/")
            && lines[0].ends_with(", in 60 min: longer than warden waits (60 s, WARDEN_RATE_LIMIT_WAIT): run again after the reset, or with a token that has requests left (`gh api rate_limit` shows them)"),
        "{}",
        out.stderr
    );
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("warden-audit-acme.resume.json")).unwrap(),
    )
    .unwrap();
    let audited = saved["repositories"].as_array().unwrap().len()
        + saved["unreadable"].as_array().unwrap().len();
    let not_started = saved["not_started"].as_array().unwrap().len();
    assert!(audited > 0 && not_started > 0, "{saved}");
    assert_eq!(audited + not_started, 8, "{saved}");
    assert_eq!(
        lines[1],
        format!("stopped before {not_started} repositories; the {audited} audited are saved: run the same command with --resume warden-audit-acme.resume.json")
    );
    // No repository cut short by the limit is reported as if it were about the repository.
    assert!(
        !saved.to_string().contains("rate limit exceeded"),
        "{saved}"
    );

    // Two repositories were created since (one archived): the new one is audited too.
    let (server, _) = serve(&rt, 14, |o| o);
    let out = org_audit(
        t.path(),
        &server.uri(),
        &[
            "--resume",
            "warden-audit-acme.resume.json",
            "--format",
            "json",
        ],
    )
    .expect(1);
    let resumed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(resumed["not_started"], serde_json::json!([]));
    let mut names: Vec<&str> = resumed["repositories"]
        .as_array()
        .unwrap()
        .iter()
        .chain(resumed["unreadable"].as_array().unwrap())
        .map(|r| r["repository"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "acme/repo-000",
            "acme/repo-001",
            "acme/repo-002",
            "acme/repo-005",
            "acme/repo-006",
            "acme/repo-007",
            "acme/repo-010",
            "acme/repo-011",
            "acme/repo-012"
        ]
    );
    assert_eq!(resumed["excluded"], 5);
}

/// A workflow over the size cap is not fetched, and not dropped: it is `workflow-unparseable`,
/// as the offline audit reports it.
#[test]
fn an_oversized_workflow_is_a_finding_not_dropped() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, log) = serve(&rt, 12, |o| o.with_oversized_workflow(0));
    let t = tempfile::tempdir().unwrap();
    let out = org_audit(t.path(), &server.uri(), &["--format", "json"]).expect(1);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let repo = doc["repositories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["repository"] == "acme/repo-000")
        .unwrap();
    let findings: Vec<(&str, &str)> = repo["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_str().unwrap(), f["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        findings,
        [(
            "workflow-unparseable",
            "this workflow could not be parsed, so it was not audited: 2097152 bytes, more than the 1 MiB warden reads of one file: not fetched"
        )]
    );
    assert!(!log
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.path.contains("repo-000/git/blobs/")));
}

/// The files of `checkout` (its `.github/` and `keys/`), written into `snap` as the git trees and
/// blobs endpoints answer them for `repo`: the organisation audit fetches them from there.
fn tree_snapshot(checkout: &Path, snap: &Path, repo: &str) {
    use base64::Engine as _;
    use sha1::Digest as _;
    let git_id = |kind: &str, content: &[u8]| {
        let mut h = sha1::Sha1::new();
        h.update(format!("{kind} {}\0", content.len()).as_bytes());
        h.update(content);
        h.finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let put = |route: &str, body: Value| {
        write(
            &snap.join(format!("{route}.json")),
            serde_json::to_string(&body).unwrap().as_bytes(),
        )
    };
    let mut top = Vec::new();
    for dir in [".github", "keys"] {
        let mut entries = Vec::new();
        for f in walkdir_files(&checkout.join(dir)) {
            let bytes = std::fs::read(&f).unwrap();
            let sha = git_id("blob", &bytes);
            let rel = f.strip_prefix(checkout.join(dir)).unwrap();
            entries.push(serde_json::json!({
                "path": rel.to_str().unwrap(), "type": "blob", "mode": "100644",
                "sha": sha, "size": bytes.len()
            }));
            put(
                &format!("repos/{repo}/git/blobs/{sha}"),
                serde_json::json!({
                    "encoding": "base64",
                    "content": base64::engine::general_purpose::STANDARD.encode(&bytes)
                }),
            );
        }
        let id = git_id("tree", serde_json::to_string(&entries).unwrap().as_bytes());
        put(
            &format!("repos/{repo}/git/trees/{id}"),
            serde_json::json!({"sha": id, "truncated": false, "tree": entries}),
        );
        top.push(serde_json::json!({"path": dir, "type": "tree", "mode": "040000", "sha": id}));
    }
    put(
        &format!("repos/{repo}/git/trees/HEAD"),
        serde_json::json!({"sha": "head", "truncated": false, "tree": top}),
    );
}

/// Every file below `dir`, sorted.
fn walkdir_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir_files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// A repository's findings (id, severity, message), sorted: what both audits must agree on.
fn findings_of(report: &Value) -> Vec<String> {
    let mut out: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {} {}", f["id"], f["severity"], f["message"]))
        .collect();
    out.sort();
    out
}

/// Issue 34: `audit --org` reads the whole keys folder (`policy.toml`, `revoked/`,
/// `rotations/`) and says of each repository exactly what the single-repository audit says of
/// it: a release signed by a revoked key, a laptop signature under `require_run`, and one
/// signature where the threshold is two were each HIGH in one and silent in the other.
#[test]
fn an_organisation_audit_reads_the_whole_keys_folder_as_the_repository_audit_does() {
    const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";
    let t = tempfile::tempdir().unwrap();
    let snap = t.path().join("snap");
    let workflow = "name: release\non:\n  push:\n    tags: [\"v*\"]\npermissions: {}\njobs:\n  sign:\n    runs-on: ubuntu-latest\n    environment: release\n    steps:\n      - run: echo \"$KEY\" | warden sign dist/ --secret-key-stdin\n        env:\n          KEY: ${{ secrets.MINISIGN_SECRET_KEY }}\n";
    let mut listing = Vec::new();
    for name in ["revoked", "require-run", "threshold"] {
        let repo = format!("{ORG}/{name}");
        let checkout = t.path().join(name);
        write(
            &checkout.join(".github/workflows/release.yml"),
            workflow.as_bytes(),
        );
        demo_keypair(&checkout.join("keys/demo.pub"), &t.path().join("demo.key"));
        let build = t.path().join("build").join(name);
        write(&build.join("app"), b"the app");
        run(warden(t.path())
            .args(["sign", "--secret-key", "demo.key"])
            .arg(&build)
            .args(["--tag", "v1", "--repo", &repo, "--commit", COMMIT]))
        .expect(0);
        match name {
            "revoked" => {
                run(warden(&checkout)
                    .args(["keys", "revoke", DEMO_KEY_ID, "--reason", "leaked"])
                    .arg("--secret-key")
                    .arg(t.path().join("demo.key")))
                .expect(0);
            }
            "require-run" => write(&checkout.join("keys/policy.toml"), b"require_run = true\n"),
            _ => {
                let (other, _) = keypair(t.path(), "other");
                std::fs::copy(other, checkout.join("keys/other.pub")).unwrap();
                write(&checkout.join("keys/policy.toml"), b"threshold = 2\n");
            }
        }
        tree_snapshot(&checkout, &snap, &repo);
        let assets: Vec<Value> = ["app", "app.minisig", "SHA256SUMS", "SHA256SUMS.minisig"]
            .iter()
            .enumerate()
            .map(|(i, n)| serde_json::json!({"id": 100 + i, "name": n}))
            .collect();
        for (i, n) in ["app", "app.minisig", "SHA256SUMS", "SHA256SUMS.minisig"]
            .iter()
            .enumerate()
        {
            use base64::Engine as _;
            let bytes = std::fs::read(build.join(n)).unwrap();
            write(
                &snap.join(format!("repos/{repo}/releases/assets/{}.json", 100 + i)),
                serde_json::json!({"base64": base64::engine::general_purpose::STANDARD.encode(bytes)})
                    .to_string()
                    .as_bytes(),
            );
        }
        write(
            &snap.join(format!("repos/{repo}/releases.json")),
            serde_json::json!([{"id": 1, "tag_name": "v1", "immutable": true, "assets": assets}])
                .to_string()
                .as_bytes(),
        );
        write(
            &snap.join(format!("repos/{repo}/commits/v1.json")),
            serde_json::json!({"sha": COMMIT}).to_string().as_bytes(),
        );
        listing.push(serde_json::json!({"full_name": repo, "visibility": "public"}));
    }
    write(
        &snap.join(format!("orgs/{ORG}/repos.json")),
        Value::Array(listing).to_string().as_bytes(),
    );
    let org = run(warden(t.path())
        .args(["audit", "--org", ORG, "--releases", "1", "--format", "json"])
        .arg("--snapshot")
        .arg(&snap));
    let doc: Value = serde_json::from_str(&org.stdout).unwrap();
    let reports = doc["repositories"].as_array().unwrap();
    assert_eq!(reports.len(), 3, "{}", org.stdout);
    for (name, expected) in [
        ("revoked", "release-signed-by-revoked-key"),
        ("require-run", "release-signed-outside-pipeline"),
        ("threshold", "release-signature-invalid"),
    ] {
        let repo = format!("{ORG}/{name}");
        let single = run(warden(&t.path().join(name))
            .args([
                "audit",
                "--repo",
                &repo,
                "--releases",
                "1",
                "--format",
                "json",
            ])
            .arg("--snapshot")
            .arg(&snap));
        let single: Value = serde_json::from_str(&single.stdout).unwrap();
        let in_org = reports
            .iter()
            .find(|r| r["repository"] == repo.as_str())
            .unwrap();
        let (single, in_org) = (findings_of(&single), findings_of(in_org));
        assert_eq!(in_org, single, "{name}");
        assert!(
            single
                .iter()
                .any(|f| f.starts_with(&format!("\"{expected}\" \"high\""))),
            "{name}: {single:#?}"
        );
    }
}

/// `audit --repo` with no checkout reads the repository's workflows through the API, as `--org`
/// does, and says so; a repository the token cannot see is exit 2, not findings.
#[test]
fn a_repository_without_its_checkout_is_read_through_the_api() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Without the organisation's secrets, as a token for one repository would be.
    let (server, _) = serve(&rt, 2, OrgServer::without_org_secrets);
    let t = tempfile::tempdir().unwrap();
    let audit = |repo: &str| {
        let mut cmd = warden(t.path());
        cmd.env("GH_TOKEN", "ghs_test").args([
            "audit",
            "--repo",
            repo,
            "--api-url",
            &server.uri(),
            "--releases",
            "0",
        ]);
        transcript(&mut cmd, t.path()).replace(&server.uri(), "[API]")
    };
    let mut out = audit("acme/repo-001");
    out += &audit("acme/nope");
    insta::assert_snapshot!(out);
    // Nothing was written where it ran.
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

/// The report without what differs between two ways of reading the same organisation.
fn without_counts(mut doc: Value) -> Value {
    doc.as_object_mut().unwrap().remove("requests");
    doc
}

#[test]
fn graphql_reads_an_organisation_in_under_three_requests_per_repository_and_finds_the_same() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = tempfile::tempdir().unwrap();
    let (rest_server, _) = serve(&rt, 200, |o| o);
    let rest = org_audit(
        t.path(),
        &rest_server.uri(),
        &["--format", "json", "--releases", "3"],
    )
    .expect(1);
    let rest: Value = serde_json::from_str(&rest.stdout).unwrap();

    let (server, log, queries) = serve_with_graphql(&rt, 200);
    let both = org_audit(
        t.path(),
        &server.uri(),
        &["--format", "json", "--releases", "3"],
    )
    .expect(1);
    let doc: Value = serde_json::from_str(&both.stdout).unwrap();
    // The same report, finding for finding, repo-006 unreadable for the same reason (GraphQL's
    // null for it leaves it to REST, which says why).
    assert_eq!(without_counts(doc.clone()), without_counts(rest.clone()));
    let audited = doc["repositories"].as_array().unwrap().len() as u64;
    assert_eq!(audited, 119);
    let log = log.lock().unwrap();
    let sent = log.len() as u64;
    assert_eq!(doc["requests"]["sent"].as_u64(), Some(sent));
    // 6 batch queries of 20 and 6 of texts; REST for the listing, the secrets, and a protected
    // repository's environment, its secrets and deployment policies.
    assert_eq!(doc["requests"]["graphql"], 12, "{}", doc["requests"]);
    assert!(
        sent * 10 <= 3 * 10 * audited,
        "{sent} requests for {audited} repositories: more than 3 each"
    );
    let rest_sent = rest["requests"]["sent"].as_u64().unwrap();
    let mut kinds = std::collections::BTreeMap::new();
    for l in log.iter() {
        let p = l
            .path
            .split('?')
            .next()
            .unwrap()
            .replace("http://localhost", "");
        let k: Vec<&str> = p.split('/').filter(|s| !s.starts_with("repo-")).collect();
        *kinds.entry(k.join("/")).or_insert(0) += 1;
    }
    assert!(
        sent * 3 < rest_sent,
        "GraphQL {sent}, REST only {rest_sent}: {kinds:#?}"
    );
    // Nothing GraphQL gave is asked again: no trees, no blobs, no rulesets through REST but the
    // forbidden repository's first read.
    let again: Vec<&str> = log
        .iter()
        .map(|l| l.path.as_str())
        .filter(|p| p.contains("/git/") || p.contains("/rulesets"))
        .collect();
    assert_eq!(
        again,
        ["http://localhost/repos/acme/repo-006/git/trees/HEAD"]
    );
    drop(log);
    // Every query warden sent is valid against GitHub's published schema.
    let queries = queries.lock().unwrap();
    assert_eq!(queries.len(), 12);
    check_graphql_against_github_schema(t.path(), &queries);
}

/// Checks `queries` (request bodies) with graphql-core against GitHub's public GraphQL schema
/// (`@octokit/graphql-schema`), both pinned by hash and installed by `.ci/run` into
/// `tests/tools/`: every field, argument and variable type must exist as GitHub defines it.
fn check_graphql_against_github_schema(dir: &Path, queries: &[Value]) {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools");
    let schema = tools.join("github-schema.graphql");
    let lib = tools.join("python");
    if !schema.exists() || !lib.join("graphql").exists() {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "GitHub's GraphQL schema and graphql-core are required under CI=true (.ci/run installs them into tests/tools)"
        );
        eprintln!("skipping the schema check: run .ci/run once to install it");
        return;
    }
    let file = dir.join("queries.json");
    std::fs::write(&file, serde_json::to_string(queries).unwrap()).unwrap();
    let out = std::process::Command::new("python3")
        .arg(tools.join("check_graphql.py"))
        .arg(&schema)
        .arg(&file)
        .env("PYTHONPATH", &lib)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{} queries valid\n", queries.len())
    );
}
