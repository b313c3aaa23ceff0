//! A local GitHub that plays an organisation whose repositories are folders on disk: each
//! repository's files (served through the git trees and blobs endpoints with real blob ids), its
//! secrets and environments, and its releases (assets served as bytes), plus organisation
//! secrets with their visibility. Every request is logged, for request counts per repository.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

/// A release's assets: name, bytes.
pub(crate) type Assets = Vec<(String, Vec<u8>)>;

/// One repository of the organisation.
#[derive(Clone, Debug, Default)]
pub(crate) struct FakeRepo {
    pub name: String,
    /// Repository-relative path → bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    pub secrets: Vec<String>,
    /// Environment → its secrets.
    pub environments: Vec<(String, Vec<String>)>,
    /// Newest first: tag → assets (name, bytes).
    pub releases: Vec<(String, Assets)>,
}

impl FakeRepo {
    /// A repository whose files are those under `dir`.
    pub(crate) fn from_dir(name: &str, dir: &Path) -> FakeRepo {
        let mut files = BTreeMap::new();
        if dir.exists() {
            for e in walkdir::WalkDir::new(dir)
                .into_iter()
                .filter_map(|e| e.ok())
            {
                if e.file_type().is_file() {
                    let rel = e
                        .path()
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    files.insert(rel, std::fs::read(e.path()).unwrap());
                }
            }
        }
        FakeRepo {
            name: name.to_string(),
            files,
            ..FakeRepo::default()
        }
    }

    /// A release whose assets are the files of `dist`.
    pub(crate) fn with_release(mut self, tag: &str, dist: &Path) -> FakeRepo {
        self.releases.push((
            tag.to_string(),
            crate::common::release_server::release_files(dist),
        ));
        self
    }
}

/// An organisation secret: its name, visibility and (when `selected`) the repositories.
#[derive(Clone, Debug)]
pub(crate) struct OrgSecret {
    pub name: String,
    pub visibility: String,
    pub selected: Vec<String>,
}

pub(crate) struct FolderOrg {
    pub org: String,
    pub repos: Vec<FakeRepo>,
    pub org_secrets: Vec<OrgSecret>,
    /// Every request's path (without the query).
    pub log: Arc<Mutex<Vec<String>>>,
    /// After this many answers, the token's limit is spent for an hour (shared, so a test can
    /// lift it between runs by setting it to `usize::MAX`).
    pub spent_after: Arc<std::sync::atomic::AtomicUsize>,
}

fn git_id(content: &[u8]) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", content.len()).as_bytes());
    h.update(content);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A tree's id here: a hash of the repository and the folder (not git's: no cache reads it).
fn tree_id(repo: &str, dir: &str) -> String {
    use sha1::Digest as _;
    let h = sha1::Sha1::digest(format!("tree {repo}/{dir}").as_bytes());
    h.iter().map(|b| format!("{b:02x}")).collect()
}

impl FolderOrg {
    fn repo(&self, name: &str) -> Option<(usize, &FakeRepo)> {
        self.repos.iter().enumerate().find(|(_, r)| r.name == name)
    }

    fn answer(&self, path: &str) -> (u16, Value) {
        let not_found = (404, json!({"message": "Not Found"}));
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let org = self.org.as_str();
        match parts.as_slice() {
            ["orgs", o, "repos"] if *o == org => {
                let list: Vec<Value> = self
                    .repos
                    .iter()
                    .map(|r| json!({"full_name": format!("{org}/{}", r.name), "name": r.name, "archived": false, "fork": false, "private": false, "visibility": "public", "default_branch": "main"}))
                    .collect();
                return (200, Value::Array(list));
            }
            ["orgs", o, "actions", "secrets"] if *o == org => {
                let list: Vec<Value> = self
                    .org_secrets
                    .iter()
                    .map(|s| json!({"name": s.name, "visibility": s.visibility, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}))
                    .collect();
                return (200, json!({"total_count": list.len(), "secrets": list}));
            }
            ["orgs", o, "actions", "secrets", name, "repositories"] if *o == org => {
                let Some(s) = self.org_secrets.iter().find(|s| s.name == *name) else {
                    return not_found;
                };
                let list: Vec<Value> = s
                    .selected
                    .iter()
                    .map(|r| json!({"full_name": format!("{org}/{r}")}))
                    .collect();
                return (
                    200,
                    json!({"total_count": list.len(), "repositories": list}),
                );
            }
            _ => {}
        }
        let ["repos", o, name, rest @ ..] = parts.as_slice() else {
            return not_found;
        };
        let Some((index, repo)) = self.repo(name).filter(|_| *o == org) else {
            return not_found;
        };
        let full = format!("{org}/{name}");
        let env = |e: &str| {
            json!({"id": 1, "name": e, "can_admins_bypass": false,
                   "protection_rules": [{"id": 2, "type": "required_reviewers", "prevent_self_review": true, "reviewers": [{"type": "Team", "reviewer": {"id": 9}}]}],
                   "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}})
        };
        let names = |list: &[String]| {
            let items: Vec<Value> = list
                .iter()
                .map(|n| json!({"name": n, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}))
                .collect();
            json!({"total_count": items.len(), "secrets": items})
        };
        match rest {
            [] => (
                200,
                json!({"full_name": full, "default_branch": "main", "archived": false}),
            ),
            ["git", "trees", "HEAD"] => {
                let mut entries = BTreeMap::new();
                for (path, bytes) in &repo.files {
                    match path.split_once('/') {
                        Some((dir, _)) => {
                            entries.insert(dir.to_string(), json!({"path": dir, "type": "tree", "mode": "040000", "sha": tree_id(name, dir)}));
                        }
                        None => {
                            entries.insert(path.clone(), json!({"path": path, "type": "blob", "mode": "100644", "sha": git_id(bytes), "size": bytes.len()}));
                        }
                    }
                }
                let tree: Vec<Value> = entries.into_values().collect();
                (
                    200,
                    json!({"sha": tree_id(name, ""), "tree": tree, "truncated": false}),
                )
            }
            ["git", "trees", sha] => {
                let dirs: Vec<String> = repo
                    .files
                    .keys()
                    .filter_map(|p| p.split_once('/').map(|(d, _)| d.to_string()))
                    .collect();
                let Some(dir) = dirs.into_iter().find(|d| tree_id(name, d) == *sha) else {
                    return not_found;
                };
                let tree: Vec<Value> = repo
                    .files
                    .iter()
                    .filter_map(|(p, b)| {
                        let rel = p.strip_prefix(&format!("{dir}/"))?;
                        Some(json!({"path": rel, "type": "blob", "mode": "100644", "sha": git_id(b), "size": b.len()}))
                    })
                    .collect();
                (200, json!({"sha": sha, "tree": tree, "truncated": false}))
            }
            ["git", "blobs", sha] => match repo.files.values().find(|b| git_id(b) == *sha) {
                Some(b) => (
                    200,
                    json!({"sha": sha, "encoding": "base64", "size": b.len(),
                           "content": base64::engine::general_purpose::STANDARD.encode(b)}),
                ),
                None => not_found,
            },
            ["contents", path @ ..] => match repo.files.get(&path.join("/")) {
                Some(b) => (
                    200,
                    json!({"type": "file", "encoding": "base64",
                           "content": base64::engine::general_purpose::STANDARD.encode(b)}),
                ),
                None => not_found,
            },
            ["rulesets"] => (200, json!([])),
            ["environments"] => {
                let list: Vec<Value> = repo.environments.iter().map(|(e, _)| env(e)).collect();
                (
                    200,
                    json!({"total_count": list.len(), "environments": list}),
                )
            }
            ["environments", e] => match repo.environments.iter().find(|(n, _)| n == e) {
                Some((n, _)) => (200, env(n)),
                None => not_found,
            },
            ["environments", _, "deployment-branch-policies"] => (
                200,
                json!({"total_count": 1, "branch_policies": [{"id": 1, "name": "v*", "type": "tag"}]}),
            ),
            ["environments", e, "secrets"] => {
                match repo.environments.iter().find(|(n, _)| n == e) {
                    Some((_, s)) => (200, names(s)),
                    None => not_found,
                }
            }
            ["actions", "secrets"] => (200, names(&repo.secrets)),
            ["actions", "organization-secrets"] => {
                (500, json!({"message": "read once for the organisation"}))
            }
            ["releases"] => {
                let list: Vec<Value> = repo
                    .releases
                    .iter()
                    .enumerate()
                    .map(|(ri, (tag, assets))| {
                        let assets: Vec<Value> = assets
                            .iter()
                            .enumerate()
                            .map(|(ai, (n, b))| json!({"id": asset_id(index, ri, ai), "name": n, "size": b.len(), "uploader": {"login": "github-actions[bot]"}}))
                            .collect();
                        json!({"id": 1000 * index + ri, "tag_name": tag, "draft": false, "prerelease": false, "immutable": true, "assets": assets})
                    })
                    .collect();
                (200, Value::Array(list))
            }
            ["commits", _] => (200, json!({"sha": "a".repeat(40)})),
            _ => not_found,
        }
    }

    /// The bytes of asset `id` of `repo`, if it has it.
    fn asset(&self, name: &str, id: &str) -> Option<Vec<u8>> {
        let (index, repo) = self.repo(name)?;
        let id: usize = id.parse().ok()?;
        for (ri, (_, assets)) in repo.releases.iter().enumerate() {
            for (ai, (_, bytes)) in assets.iter().enumerate() {
                if asset_id(index, ri, ai) == id {
                    return Some(bytes.clone());
                }
            }
        }
        None
    }
}

fn asset_id(repo: usize, release: usize, asset: usize) -> usize {
    100_000 * (repo + 1) + 100 * release + asset
}

impl Respond for FolderOrg {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let path = req.url.path().to_string();
        let served = {
            let mut log = self.log.lock().unwrap();
            log.push(path.clone());
            log.len()
        };
        if served > self.spent_after.load(std::sync::atomic::Ordering::SeqCst) {
            return ResponseTemplate::new(403)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", "4102444800")
                .set_body_json(json!({"message": "API rate limit exceeded"}));
        }
        let limits = |t: ResponseTemplate| {
            t.insert_header("x-ratelimit-limit", "5000")
                .insert_header("x-ratelimit-remaining", "4000")
                .insert_header("x-ratelimit-reset", "4102444800")
        };
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if let ["repos", _, name, "releases", "assets", id] = parts.as_slice() {
            return match self.asset(name, id) {
                Some(b) => limits(
                    ResponseTemplate::new(200)
                        .insert_header("content-type", "application/octet-stream")
                        .set_body_bytes(b),
                ),
                None => limits(
                    ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
                ),
            };
        }
        let (status, body) = self.answer(&path);
        limits(
            ResponseTemplate::new(status)
                .insert_header("content-type", "application/json")
                .set_body_string(body.to_string()),
        )
    }
}
