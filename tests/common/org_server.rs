//! A local GitHub that plays an organisation of many repositories (synthetic), for
//! `warden audit --org`: paginated listing, git trees and blobs, the settings reads, rate-limit
//! headers, one secondary-limit `retry-after`, ETags answered with 304, a repository whose reads
//! are forbidden and one that fails once with a 500; and GraphQL (`POST /graphql`) for the
//! queries warden sends, when it is mounted for POST too. Every request is logged with its answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

pub(crate) const ORG: &str = "acme";

/// What a repository is like, by its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Signing job in a reviewed `release` environment, tag ruleset, key in the environment.
    Protected,
    /// Signing job without an environment, key stored as a repository secret.
    Exposed,
    /// No `.github` at all.
    Bare,
    Archived,
    Fork,
}

pub(crate) fn shape(i: usize) -> Shape {
    match i % 5 {
        0 => Shape::Protected,
        1 => Shape::Exposed,
        2 => Shape::Bare,
        3 => Shape::Archived,
        _ => Shape::Fork,
    }
}

pub(crate) fn name(i: usize) -> String {
    format!("repo-{i:03}")
}

/// The repository whose reads are forbidden, and the one whose first tree read fails.
pub(crate) const FORBIDDEN: usize = 6;
pub(crate) const FLAKY: usize = 11;
/// The protected repository an organisation signing secret is (wrongly) visible to.
pub(crate) const SELECTED: usize = 5;

const PROTECTED_WORKFLOW: &str = r#"name: release
on:
  push:
    tags: ["v*"]
permissions: {}
jobs:
  sign:
    runs-on: ubuntu-latest
    environment: release
    permissions:
      contents: read
    steps:
      - run: echo "$KEY" | warden sign dist/ --secret-key-stdin
        env:
          KEY: ${{ secrets.MINISIGN_SECRET_KEY }}
"#;

fn workflow(shape: Shape) -> String {
    match shape {
        Shape::Exposed => PROTECTED_WORKFLOW.replace("    environment: release\n", ""),
        _ => PROTECTED_WORKFLOW.to_string(),
    }
}

/// A git object id, as git computes it (`git hash-object`): warden checks cached objects by it.
fn git_id(kind: &str, content: &[u8]) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(format!("{kind} {}\0", content.len()).as_bytes());
    h.update(content);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The id of a tree of `(mode, name, id)` entries, given in git's order.
fn tree_id(entries: &[(&str, &str, &str)]) -> String {
    let mut content = Vec::new();
    for (mode, name, id) in entries {
        content.extend_from_slice(format!("{mode} {name}\0").as_bytes());
        for i in 0..20 {
            content.push(u8::from_str_radix(&id[2 * i..2 * i + 2], 16).unwrap());
        }
    }
    git_id("tree", &content)
}

fn sha(text: &str) -> String {
    use std::fmt::Write as _;
    let mut h = 0xcbf29ce484222325u64;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    let mut s = String::new();
    for i in 0..5u64 {
        let _ = write!(s, "{:08x}", (h.rotate_left(i as u32 * 13) as u32));
    }
    s
}

#[derive(Clone, Debug)]
pub(crate) struct Logged {
    pub path: String,
    pub status: u16,
    pub conditional: bool,
}

pub(crate) struct OrgServer {
    pub repos: usize,
    pub log: Arc<Mutex<Vec<Logged>>>,
    remaining: AtomicI64,
    flaky_failed: AtomicBool,
    secondary_sent: AtomicBool,
    /// The token may not read the organisation's secrets (403): each repository is asked.
    org_secrets_forbidden: bool,
    base: String,
    delay: Duration,
    /// After this many answers, the token's limit is spent for an hour (another job used it).
    spent_after: Option<i64>,
    served: AtomicI64,
    /// This repository's workflow is listed at 2 MiB, over what warden fetches.
    oversized: Option<usize>,
    /// Every GraphQL request body received.
    pub queries: Arc<Mutex<Vec<Value>>>,
}

impl OrgServer {
    pub(crate) fn new(repos: usize, base: &str, delay: Duration) -> Self {
        OrgServer {
            repos,
            log: Arc::new(Mutex::new(Vec::new())),
            remaining: AtomicI64::new(100_000),
            flaky_failed: AtomicBool::new(false),
            secondary_sent: AtomicBool::new(false),
            org_secrets_forbidden: false,
            base: base.to_string(),
            delay,
            spent_after: None,
            served: AtomicI64::new(0),
            oversized: None,
            queries: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// A token without the organisation's secrets permission.
    pub(crate) fn without_org_secrets(mut self) -> Self {
        self.org_secrets_forbidden = true;
        self
    }

    /// Repository `i`'s workflow listed at 2 MiB.
    pub(crate) fn with_oversized_workflow(mut self, i: usize) -> Self {
        self.oversized = Some(i);
        self
    }

    /// A limit spent, until an hour from now, after `n` answers.
    pub(crate) fn spent_after(mut self, n: i64) -> Self {
        self.spent_after = Some(n);
        self
    }

    /// A rate limit with only `n` requests left.
    pub(crate) fn with_remaining(self, n: i64) -> Self {
        self.remaining.store(n, std::sync::atomic::Ordering::SeqCst);
        self
    }

    fn listing(&self, page: usize) -> Value {
        let start = (page - 1) * 100;
        let items: Vec<Value> = (start..self.repos.min(start + 100))
            .map(|i| {
                json!({"full_name": format!("{ORG}/{}", name(i)), "name": name(i),
                       "archived": shape(i) == Shape::Archived, "fork": shape(i) == Shape::Fork,
                       "default_branch": "main"})
            })
            .collect();
        Value::Array(items)
    }

    /// The answer to GET `path` (with its query), as status and body.
    fn answer(&self, path: &str, query: &HashMap<String, String>) -> (u16, Value) {
        let not_found = (404, json!({"message": "Not Found"}));
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if parts.len() == 3 && parts[0] == "orgs" && parts[1] == ORG && parts[2] == "repos" {
            let page = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
            return (200, self.listing(page));
        }
        // Organisation secrets: one visible to all, one to a selected repository.
        match parts.as_slice() {
            ["orgs", ORG, "actions", ..] if self.org_secrets_forbidden => {
                return (
                    403,
                    json!({"message": "Resource not accessible by integration"}),
                )
            }
            ["orgs", ORG, "actions", "secrets"] => {
                return (
                    200,
                    json!({"total_count": 2, "secrets": [
                        {"name": "NPM_TOKEN", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z", "visibility": "all"},
                        {"name": "RELEASE_SIGNING_KEY", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z", "visibility": "selected"}
                    ]}),
                )
            }
            ["orgs", ORG, "actions", "secrets", "RELEASE_SIGNING_KEY", "repositories"] => {
                return (
                    200,
                    json!({"total_count": 1, "repositories": [
                        {"full_name": format!("{ORG}/{}", name(SELECTED))}
                    ]}),
                )
            }
            _ => {}
        }
        if parts.len() < 3 || parts[0] != "repos" || parts[1] != ORG {
            return not_found;
        }
        let Some(i) = parts[2]
            .strip_prefix("repo-")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            return not_found;
        };
        let repo = format!("{ORG}/{}", parts[2]);
        let shape = shape(i);
        if i == FORBIDDEN {
            return (
                403,
                json!({"message": "Resource not accessible by integration"}),
            );
        }
        // Real git ids for what warden may answer from its cache: the blob and `.github`.
        let (wf, blob, wf_tree, gh_tree, link) = self.objects(i);
        match &parts[3..] {
            [] => (
                200,
                json!({"full_name": repo, "default_branch": "main", "archived": shape == Shape::Archived}),
            ),
            ["git", "trees", "HEAD"] => {
                if i == FLAKY
                    && !self
                        .flaky_failed
                        .swap(true, std::sync::atomic::Ordering::SeqCst)
                {
                    return (500, json!({"message": "Server Error"}));
                }
                let tree = if shape == Shape::Bare {
                    vec![
                        json!({"path": "README.md", "type": "blob", "mode": "100644", "sha": sha("readme"), "size": 10}),
                    ]
                } else {
                    vec![
                        json!({"path": ".github", "type": "tree", "mode": "040000", "sha": gh_tree}),
                    ]
                };
                (
                    200,
                    json!({"sha": sha(&repo), "tree": tree, "truncated": false}),
                )
            }
            ["git", "trees", t] if *t == gh_tree => (
                200,
                json!({"sha": gh_tree, "truncated": false, "tree": [
                    {"path": "workflows", "type": "tree", "mode": "040000", "sha": wf_tree},
                    {"path": "workflows/link.yml", "type": "blob", "mode": "120000", "sha": link, "size": 12},
                    {"path": "workflows/release.yml", "type": "blob", "mode": "100644", "sha": blob,
                     "size": if self.oversized == Some(i) { 2 << 20 } else { wf.len() }}
                ]}),
            ),
            ["git", "blobs", b] if *b == blob => (
                200,
                json!({"sha": blob, "encoding": "base64", "size": wf.len(),
                       "content": base64::engine::general_purpose::STANDARD.encode(&wf)}),
            ),
            ["rulesets"] => match shape {
                Shape::Protected => (
                    200,
                    json!([{"id": 7, "name": "release tags", "target": "tag", "source_type": "Repository", "source": repo, "enforcement": "active"}]),
                ),
                _ => (200, json!([])),
            },
            ["rulesets", "7"] => (
                200,
                json!({
                    "id": 7, "name": "release tags", "target": "tag", "source_type": "Repository", "source": repo, "enforcement": "active",
                    "bypass_actors": [],
                    "conditions": {"ref_name": {"include": ["refs/tags/v*"], "exclude": []}},
                    "rules": [{"type": "creation"}, {"type": "update"}, {"type": "deletion"}, {"type": "non_fast_forward"}]
                }),
            ),
            ["environments"] => match shape {
                Shape::Protected => (
                    200,
                    json!({"total_count": 1, "environments": [{
                        "id": 1, "name": "release", "can_admins_bypass": false,
                        "protection_rules": [{"id": 2, "type": "required_reviewers", "prevent_self_review": true, "reviewers": [{"type": "Team", "reviewer": {"id": 9, "slug": "release-managers"}}]}],
                        "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
                    }]}),
                ),
                _ => (200, json!({"total_count": 0, "environments": []})),
            },
            ["environments", "release"] => (
                200,
                json!({
                    "id": 1, "name": "release", "can_admins_bypass": false,
                    "protection_rules": [{"id": 2, "type": "required_reviewers", "prevent_self_review": true, "reviewers": [{"type": "Team", "reviewer": {"id": 9, "slug": "release-managers"}}]}],
                    "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
                }),
            ),
            ["environments", "release", "deployment-branch-policies"] => (
                200,
                json!({"total_count": 1, "branch_policies": [{"id": 1, "name": "v*", "type": "tag"}]}),
            ),
            ["environments", "release", "secrets"] => (
                200,
                json!({"total_count": 1, "secrets": [{"name": "MINISIGN_SECRET_KEY", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}]}),
            ),
            ["actions", "secrets"] => match shape {
                Shape::Exposed => (
                    200,
                    json!({"total_count": 1, "secrets": [{"name": "MINISIGN_SECRET_KEY", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}]}),
                ),
                _ => (200, json!({"total_count": 0, "secrets": []})),
            },
            // Read once at the organisation instead, unless the token may not.
            ["actions", "organization-secrets"] if self.org_secrets_forbidden => {
                (200, json!({"total_count": 0, "secrets": []}))
            }
            ["actions", "organization-secrets"] => (500, json!({"message": "not expected"})),
            ["releases"] => (200, json!([])),
            // Legacy tag protection is gone from github.com.
            ["tags", "protection"] => (
                410,
                json!({"message": "Gone", "documentation_url": "https://docs.github.com/rest/repos/tags"}),
            ),
            _ => not_found,
        }
    }
}

/// A tree entry as GraphQL lists it (`mode` as a number).
fn gql_entry(name: &str, kind: &str, mode: u32, oid: &str, size: usize) -> Value {
    json!({"name": name, "type": kind, "mode": mode, "oid": oid, "size": size})
}

impl OrgServer {
    /// The repository's git objects: workflow text, its blob id, the workflows tree and
    /// `.github` tree ids, and the symlink's id.
    fn objects(&self, i: usize) -> (String, String, String, String, String) {
        let wf = workflow(shape(i));
        let blob = git_id("blob", wf.as_bytes());
        let link = sha("link");
        let wf_tree = tree_id(&[
            ("120000", "link.yml", &link),
            ("100644", "release.yml", &blob),
        ]);
        let gh_tree = tree_id(&[("40000", "workflows", &wf_tree)]);
        (wf, blob, wf_tree, gh_tree, link)
    }

    /// The answer to a GraphQL query (`POST /graphql`) of the two kinds warden sends: a batch of
    /// repositories (`$o<i>`/`$n<i>`: their trees, tag rulesets and release count) and blob
    /// texts by id (`$b<i>_<k>`). Aliases `r<i>` and `f<k>` as warden names them; a repository
    /// the token may not read is null with a FORBIDDEN error on its path, as GitHub answers.
    pub(crate) fn graphql(&self, body: &Value) -> Value {
        let query = body["query"].as_str().unwrap_or_default();
        let vars = body["variables"].as_object().cloned().unwrap_or_default();
        let mut data = serde_json::Map::new();
        let mut errors = Vec::new();
        for (var, owner) in &vars {
            let Some(idx) = var.strip_prefix('o') else {
                continue;
            };
            let alias = format!("r{idx}");
            let name = vars
                .get(&format!("n{idx}"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let i = name
                .strip_prefix("repo-")
                .and_then(|n| n.parse::<usize>().ok());
            let Some(i) = i.filter(|_| owner == ORG && i.is_some_and(|i| i < self.repos)) else {
                data.insert(alias.clone(), Value::Null);
                errors.push(json!({"type": "NOT_FOUND", "path": [alias], "message": "Could not resolve to a Repository."}));
                continue;
            };
            if i == FORBIDDEN {
                data.insert(alias.clone(), Value::Null);
                errors.push(json!({"type": "FORBIDDEN", "path": [alias], "message": "Resource not accessible by integration"}));
                continue;
            }
            let (wf, blob, wf_tree, gh_tree, link) = self.objects(i);
            let repo = format!("{ORG}/{name}");
            if query.starts_with("query Texts") {
                let mut objects = serde_json::Map::new();
                let prefix = format!("b{idx}_");
                for (v, oid) in &vars {
                    let Some(k) = v.strip_prefix(&prefix) else {
                        continue;
                    };
                    let answer = if oid == &json!(blob) {
                        json!({"oid": blob, "byteSize": wf.len(), "isTruncated": false, "text": wf})
                    } else {
                        Value::Null
                    };
                    objects.insert(format!("f{k}"), answer);
                }
                data.insert(alias, Value::Object(objects));
                continue;
            }
            let shape = shape(i);
            let size = if self.oversized == Some(i) {
                2 << 20
            } else {
                wf.len()
            };
            let (root, github) = if shape == Shape::Bare {
                (
                    json!({"entries": [gql_entry("README.md", "blob", 0o100644, &sha("readme"), 10)]}),
                    Value::Null,
                )
            } else {
                let mut workflows = json!({"entries": [
                    gql_entry("link.yml", "blob", 0o120000, &link, 12),
                    gql_entry("release.yml", "blob", 0o100644, &blob, size),
                ]});
                let mut folder = gql_entry("workflows", "tree", 0o40000, &wf_tree, 0);
                folder["object"] = workflows.take();
                (
                    json!({"entries": [gql_entry(".github", "tree", 0o40000, &gh_tree, 0)]}),
                    json!({"entries": [folder]}),
                )
            };
            let rulesets = match shape {
                Shape::Protected => json!({"totalCount": 1, "nodes": [{
                    "databaseId": 7, "name": "release tags", "target": "TAG", "enforcement": "ACTIVE",
                    "source": {"__typename": "Repository", "nameWithOwner": repo},
                    "conditions": {"refName": {"include": ["refs/tags/v*"], "exclude": []}},
                    "rules": {"totalCount": 4, "nodes": [{"type": "CREATION"}, {"type": "UPDATE"}, {"type": "DELETION"}, {"type": "NON_FAST_FORWARD"}]},
                    "bypassActors": {"totalCount": 0, "nodes": []}
                }]}),
                _ => json!({"totalCount": 0, "nodes": []}),
            };
            data.insert(
                alias,
                json!({"root": root, "github": github, "keys": null, "rulesets": rulesets,
                       "releases": {"totalCount": 0}}),
            );
        }
        let mut answer = json!({"data": data});
        if !errors.is_empty() {
            answer["errors"] = Value::Array(errors);
        }
        answer
    }
}

impl Respond for OrgServer {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        use std::sync::atomic::Ordering::SeqCst;
        let path = req.url.path().to_string();
        if req.method.as_str() == "POST" && path == "/graphql" {
            let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            self.log.lock().unwrap().push(Logged {
                path: req.url.to_string(),
                status: 200,
                conditional: false,
            });
            self.queries.lock().unwrap().push(body.clone());
            return ResponseTemplate::new(200)
                .insert_header("content-type", "application/json")
                .set_body_json(self.graphql(&body))
                .set_delay(self.delay);
        }
        let query: HashMap<String, String> = req.url.query_pairs().into_owned().collect();
        let if_none_match = req
            .headers
            .get("if-none-match")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let remaining = self.remaining.fetch_sub(1, SeqCst) - 1;
        if self
            .spent_after
            .is_some_and(|n| self.served.fetch_add(1, SeqCst) >= n)
        {
            let reset = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
                + 3600;
            return ResponseTemplate::new(403)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.to_string().as_str())
                .set_body_json(json!({"message": "API rate limit exceeded"}));
        }
        let limits = |t: ResponseTemplate| {
            t.insert_header("x-ratelimit-limit", "100000")
                .insert_header("x-ratelimit-remaining", remaining.to_string().as_str())
                .insert_header("x-ratelimit-reset", "4102444800")
                .set_delay(self.delay)
        };
        let log = |status: u16| {
            self.log.lock().unwrap().push(Logged {
                path: req.url.to_string(),
                status,
                conditional: if_none_match.is_some(),
            });
        };
        // One secondary limit, on the second page of the listing.
        if query.get("page").map(String::as_str) == Some("2")
            && !self.secondary_sent.swap(true, SeqCst)
        {
            log(403);
            return limits(
                ResponseTemplate::new(403)
                    .insert_header("retry-after", "1")
                    .set_body_json(json!({"message": "You have exceeded a secondary rate limit."})),
            );
        }
        let (status, body) = self.answer(&path, &query);
        let text = body.to_string();
        let etag = format!("W/\"{}\"", sha(&text));
        if status == 200 && if_none_match.as_deref() == Some(etag.as_str()) {
            log(304);
            return limits(ResponseTemplate::new(304).insert_header("etag", etag.as_str()));
        }
        log(status);
        let mut t = ResponseTemplate::new(status)
            .insert_header("content-type", "application/json")
            .set_body_string(text);
        if status == 200 {
            t = t.insert_header("etag", etag.as_str());
        }
        if path.ends_with("/orgs/acme/repos") || path == format!("/orgs/{ORG}/repos") {
            let page: usize = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
            if page * 100 < self.repos {
                let next = format!(
                    "<{}/orgs/{ORG}/repos?type=all&per_page=100&page={}>; rel=\"next\"",
                    self.base,
                    page + 1
                );
                t = t.insert_header("link", next.as_str());
            }
        }
        limits(t)
    }
}
