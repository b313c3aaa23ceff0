//! An organisation through the API: its repositories, and, for each, the files the workflow audit
//! reads (`.github/`, and `keys/` with its policy and statements, of the default branch) fetched
//! through the git trees and blobs endpoints, without a clone.
//!
//! Paths, sizes and kinds come from the repository, so from anyone who can push to it: only
//! regular files (no links, no submodules) at plain relative paths are written, each at most
//! 1 MiB, at most 500 of them and 32 MiB in all.

use crate::error::Reason;
use crate::minisign::keys::is_public_key_file;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::api::{base64_content, ApiSource, Fetched, Shape};
use super::routes;

/// A repository of the organisation, as the listing describes it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub(crate) struct OrgRepository {
    /// `OWNER/NAME`.
    pub(crate) full_name: String,
    #[serde(default)]
    pub(crate) archived: bool,
    #[serde(default)]
    pub(crate) fork: bool,
    /// `public`, `private` or `internal` (older answers only say `private`).
    #[serde(default)]
    pub(crate) visibility: Option<String>,
    #[serde(default)]
    pub(crate) private: bool,
}

impl OrgRepository {
    /// Whether a `private` organisation secret reaches it (private and internal repositories).
    fn private_or_internal(&self) -> bool {
        self.private || matches!(self.visibility.as_deref(), Some("private" | "internal"))
    }
}

/// Each organisation secret's visibility and the repositories of the listing that can read it.
pub(crate) type SecretReaders = std::collections::BTreeMap<String, (String, Vec<String>)>;

/// The organisation's secrets, read once: for each repository, the answer its own
/// `actions/organization-secrets` route would give, by visibility (`all`; `private` for private and
/// internal repositories; `selected` by each secret's repository list); and who reads each.
pub(crate) async fn org_secrets_by_repository<S: ApiSource>(
    api: &S,
    org: &str,
    repos: &[OrgRepository],
) -> Option<(std::collections::HashMap<String, Value>, SecretReaders)> {
    let list = match api
        .get(&routes::org_actions_secrets(org), Shape::Items("secrets"))
        .await
    {
        Fetched::Ok(v) => v,
        // No organisation permission: each repository is asked instead.
        Fetched::Failed { .. } => return None,
    };
    let secrets = list["secrets"].as_array()?.clone();
    let mut selected: std::collections::HashMap<String, Vec<String>> = Default::default();
    for s in &secrets {
        if s["visibility"] == "selected" {
            let name = s["name"].as_str()?;
            let route = routes::org_secret_repositories(org, name);
            let Fetched::Ok(v) = api.get(&route, Shape::Items("repositories")).await else {
                return None;
            };
            let names = v["repositories"]
                .as_array()?
                .iter()
                .filter_map(|r| r["full_name"].as_str().map(str::to_string))
                .collect();
            selected.insert(name.to_string(), names);
        }
    }
    let mut out = std::collections::HashMap::new();
    let mut readers = SecretReaders::new();
    for s in &secrets {
        if let Some(name) = s["name"].as_str() {
            let visibility = s["visibility"].as_str().unwrap_or("?").to_string();
            readers.insert(name.to_ascii_uppercase(), (visibility, Vec::new()));
        }
    }
    for repo in repos {
        let visible: Vec<Value> = secrets
            .iter()
            .filter(|s| match s["visibility"].as_str() {
                Some("all") => true,
                Some("private") => repo.private_or_internal(),
                Some("selected") => s["name"]
                    .as_str()
                    .and_then(|n| selected.get(n))
                    .is_some_and(|r| r.contains(&repo.full_name)),
                _ => true,
            })
            .cloned()
            .collect();
        for s in &visible {
            let name = s["name"].as_str().unwrap_or_default().to_ascii_uppercase();
            if let Some((_, r)) = readers.get_mut(&name) {
                if !repo.archived {
                    r.push(repo.full_name.clone());
                }
            }
        }
        out.insert(
            routes::org_secrets(&repo.full_name),
            serde_json::json!({"total_count": visible.len(), "secrets": visible}),
        );
    }
    Some((out, readers))
}

/// A source that answers some routes from what was read once for the organisation.
pub(crate) struct OrgOverlay<'a, S> {
    pub(crate) inner: &'a S,
    pub(crate) answers: std::collections::HashMap<String, Value>,
    /// The server's answer to legacy tag protection when it has none (410 Gone on github.com):
    /// every repository's would be the same.
    pub(crate) legacy_gone: Option<Fetched>,
}

/// The answer to `repo`'s legacy tag protection, when it says the server has none (410).
pub(crate) async fn legacy_tag_protection_gone<S: ApiSource>(
    api: &S,
    repo: &str,
) -> Option<Fetched> {
    match api
        .get(&routes::legacy_tag_protection(repo), Shape::Array)
        .await
    {
        gone @ Fetched::Failed { status: 410, .. } => Some(gone),
        _ => None,
    }
}

impl<S: ApiSource> ApiSource for OrgOverlay<'_, S> {
    async fn get(&self, route: &str, shape: Shape) -> Fetched {
        if let Some(v) = self.answers.get(route) {
            return Fetched::Ok(v.clone());
        }
        if let Some(gone) = &self.legacy_gone {
            if route.ends_with("/tags/protection") {
                return gone.clone();
            }
        }
        self.inner.get(route, shape).await
    }

    async fn graphql(&self, query: &str, variables: &Value) -> Fetched {
        self.inner.graphql(query, variables).await
    }

    async fn get_bytes(&self, route: &str, cap: u64) -> Fetched {
        self.inner.get_bytes(route, cap).await
    }

    async fn get_sha256(&self, route: &str) -> Fetched {
        self.inner.get_sha256(route).await
    }

    async fn get_external(&self, url: &str, cap: u64) -> Fetched {
        self.inner.get_external(url, cap).await
    }
}

const MAX_FILES: usize = 500;
const TOTAL_CAP: u64 = 32 << 20;

/// Why a read failed, for a person (`ApiError`'s one wording).
pub(crate) fn failed_read(route: &str, fetched: Fetched) -> String {
    super::api::ApiError::from_fetched(route, fetched).to_string()
}

async fn get<S: ApiSource>(api: &S, route: &str, shape: Shape) -> Result<Value, Reason> {
    match api.get(route, shape).await {
        Fetched::Ok(v) => Ok(v),
        other => Err(failed_read(route, other).into()),
    }
}

/// Every repository of `org` (all pages).
pub(crate) async fn list_repositories<S: ApiSource>(
    api: &S,
    org: &str,
) -> Result<Vec<OrgRepository>, Reason> {
    let route = routes::org_repositories(org);
    let list = get(api, &route, Shape::Array).await?;
    serde_json::from_value(list)
        .map_err(|e| format!("GET /{}: {e}", routes::path_of(&route)).into())
}

/// An entry of a git tree, as the trees endpoint gives it (a path from the tree asked for).
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct TreeEntry {
    pub(crate) path: String,
    #[serde(rename = "type")]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) mode: String,
    pub(crate) sha: String,
    #[serde(default)]
    pub(crate) size: u64,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct Tree {
    #[serde(default)]
    pub(crate) tree: Vec<TreeEntry>,
    #[serde(default)]
    pub(crate) truncated: bool,
}

async fn tree<S: ApiSource>(
    api: &S,
    repo: &str,
    sha: &str,
    recursive: bool,
) -> Result<Tree, Reason> {
    let route = routes::git_tree(repo, sha, recursive);
    let v = get(api, &route, Shape::Object).await?;
    let tree: Tree =
        serde_json::from_value(v).map_err(|e| format!("GET /{}: {e}", routes::path_of(&route)))?;
    if tree.truncated {
        return Err(format!(
            "GET /{}: the tree is too large for one answer",
            routes::path_of(&route)
        )
        .into());
    }
    Ok(tree)
}

/// Whether the workflow audit reads the file at `path` (relative to the repository root).
fn wanted(path: &str) -> bool {
    let workflow = path
        .strip_prefix(".github/workflows/")
        .is_some_and(|f| !f.contains('/') && (f.ends_with(".yml") || f.ends_with(".yaml")));
    workflow
        || path.starts_with(".github/actions/")
        || path == ".github/warden.toml"
        || path.strip_prefix("keys/").is_some_and(keys_folder_file)
}

/// Whether a path below `keys/` is what the keys folder holds for trust: the public keys, the
/// policy, and the revocation and rotation statements with their signatures (what `keys list`
/// and the single-repository audit read of a checkout).
fn keys_folder_file(rel: &str) -> bool {
    // `<X>.toml`, its signature `<X>.toml.minisig` and co-signatures `<X>.toml.<KEYID>.minisig`.
    let statement = |name: &str| {
        !name.contains('/')
            && (name.ends_with(".toml") || (name.ends_with(".minisig") && name.contains(".toml.")))
    };
    match rel.split_once('/') {
        None => is_public_key_file(rel) || rel == crate::trust::policy::POLICY_FILE,
        Some(("revoked" | "rotations", name)) => statement(name),
        Some(_) => false,
    }
}

/// Public key files (`.pub`) the workflows under `dest` name by a path outside what the audit
/// fetched (`scripts/minisign.pub`), fetched into `dest` through the contents API: at most
/// `most` of them, each at most 64 KiB. Returns the paths written and the requests made.
pub(crate) async fn fetch_named_keys<S: ApiSource>(
    api: &S,
    repo: &str,
    dest: &Path,
    most: u64,
) -> (Vec<String>, u64) {
    static PUB: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = PUB.get_or_init(|| {
        regex::Regex::new(r"[A-Za-z0-9_][A-Za-z0-9_./-]*\.pub\b").expect("a valid regex")
    });
    let mut named = std::collections::BTreeSet::new();
    let workflows = dest.join(".github/workflows");
    for entry in std::fs::read_dir(&workflows)
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(text) = crate::files::guarded::read_text_inside(dest, &entry.path(), FILE_CAP)
        else {
            continue;
        };
        for m in re.find_iter(&text) {
            let path = m.as_str().trim_start_matches("./").to_string();
            if crate::files::paths::is_repo_relative(&path)
                && !path.contains("..")
                && !dest.join(&path).exists()
            {
                named.insert(path);
            }
        }
    }
    let (mut written, mut sent) = (Vec::new(), 0);
    for path in named {
        if sent >= most {
            break;
        }
        sent += 1;
        let route = routes::contents(repo, &path);
        let Fetched::Ok(v) = api.get(&route, Shape::Object).await else {
            continue;
        };
        let Some(bytes) = base64_content(&v).filter(|b| b.len() <= 64 * 1024) else {
            continue;
        };
        let target = dest.join(&path);
        let made = target
            .parent()
            .is_some_and(|p| std::fs::create_dir_all(p).is_ok());
        if made && std::fs::write(&target, bytes).is_ok() {
            written.push(path);
        }
    }
    (written, sent)
}

/// The files of a repository fetched for the audit.
#[derive(Debug, Default)]
pub(crate) struct AuditFiles {
    pub(crate) written: usize,
    /// Of those, public keys outside `keys/` (read for the key inventory only).
    pub(crate) key_files: u64,
    /// Files over the size cap, not fetched: the audit reports each, never drops it.
    pub(crate) oversized: Vec<(String, u64)>,
    /// Public keys outside `keys/` beyond the request budget: named, not fetched.
    pub(crate) keys_not_fetched: Vec<String>,
}

/// The most bytes of one file fetched for the audit (a workflow or a local action's).
pub(crate) const FILE_CAP: u64 = 1 << 20;

/// Fetches the files of `repo`'s default branch that the workflow audit reads into `dest`
/// (with `public_keys: Some(n)`, also up to `n` `.pub` files of `.github/` and of the root, for
/// the key inventory: `.github/minisign.pub` first, the rest named, not fetched). An empty
/// repository has none.
pub(crate) async fn fetch_audit_files<S: ApiSource>(
    api: &S,
    repo: &str,
    dest: &Path,
    key_budget: Option<u64>,
) -> Result<AuditFiles, Reason> {
    let Some(root) = root_tree(api, repo).await? else {
        return Ok(AuditFiles::default());
    };
    let mut below = Vec::new();
    for dir in followed_dirs(&root) {
        below.push((dir.path.clone(), tree(api, repo, &dir.sha, true).await?));
    }
    let (files, keys_not_fetched) = select_files(root, below, key_budget)?;
    let reads = files.iter().map(|e| async move {
        if e.size > FILE_CAP {
            return Ok::<_, Reason>(Err((e.path.clone(), e.size)));
        }
        let route = routes::git_blob(repo, &e.sha);
        let blob = get(api, &route, Shape::Object).await?;
        let bytes = base64_content(&blob)
            .ok_or_else(|| format!("GET /{}: content is not base64", routes::path_of(&route)))?;
        if bytes.len() as u64 > FILE_CAP {
            return Ok(Err((e.path.clone(), bytes.len() as u64)));
        }
        Ok(Ok((e.path.as_str(), bytes)))
    });
    let mut files = AuditFiles {
        keys_not_fetched,
        ..AuditFiles::default()
    };
    for read in futures::future::join_all(reads).await {
        let (path, bytes) = match read? {
            Ok(file) => file,
            Err(oversized) => {
                files.oversized.push(oversized);
                continue;
            }
        };
        let target = dest.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&target, bytes).map_err(|e| format!("{}: {e}", target.display()))?;
        files.written += 1;
        if is_public_key_file(path) && !path.starts_with("keys/") {
            files.key_files += 1;
        }
    }
    files.oversized.sort();
    Ok(files)
}

/// The folders of the root whose whole trees the audit reads: `.github` and `keys` (the keys
/// folder's statements live in `revoked/` and `rotations/`).
pub(crate) fn followed_dirs(root: &Tree) -> impl Iterator<Item = &TreeEntry> {
    root.tree
        .iter()
        .filter(|e| e.kind == "tree" && matches!(e.path.as_str(), ".github" | "keys"))
}

/// Of the root tree and the followed folders' whole trees (`(folder, tree)`), the files the audit
/// fetches (paths from the root), and the public keys left out by the budget: every path checked
/// and the caps on count and size kept before anything is fetched.
pub(crate) fn select_files(
    root: Tree,
    below: Vec<(String, Tree)>,
    key_budget: Option<u64>,
) -> Result<(Vec<TreeEntry>, Vec<String>), Reason> {
    let public_keys = key_budget.is_some();
    let mut files: Vec<TreeEntry> = Vec::new();
    for (dir, tree) in below {
        for mut e in tree.tree {
            e.path = format!("{dir}/{}", e.path);
            files.push(e);
        }
    }
    if public_keys {
        files.extend(
            root.tree
                .into_iter()
                .filter(|e| is_public_key_file(&e.path)),
        );
    }
    let key_file = |p: &str| public_keys && p.starts_with(".github/") && is_public_key_file(p);
    // Regular files only (100644, 100755): no links (120000), no submodules.
    files.retain(|e| {
        e.kind == "blob"
            && (e.mode == "100644" || e.mode == "100755")
            && (wanted(&e.path) || key_file(&e.path) || (public_keys && !e.path.contains('/')))
    });
    let keys_not_fetched = key_budget.map_or_else(Vec::new, |b| keep_key_files(&mut files, b));
    if files.len() > MAX_FILES {
        return Err(format!(
            "{} files under .github/ and keys/: more than {MAX_FILES}, not fetched",
            files.len()
        )
        .into());
    }
    let total: u64 = files.iter().map(|e| e.size).sum();
    if total > TOTAL_CAP {
        return Err(format!(
            "{total} bytes under .github/ and keys/: more than {} MiB, not fetched",
            TOTAL_CAP >> 20
        )
        .into());
    }
    // Every path is checked before anything is fetched or written.
    if let Some(e) = files.iter().find(|e| {
        !crate::files::paths::is_repo_relative(&e.path) || e.path.chars().any(char::is_control)
    }) {
        return Err(format!("{:?}: not a plain path inside the repository", e.path).into());
    }
    Ok((files, keys_not_fetched))
}

/// The root tree of `repo`'s default branch; `None` for an empty repository (409).
async fn root_tree<S: ApiSource>(api: &S, repo: &str) -> Result<Option<Tree>, Reason> {
    let route = routes::git_tree(repo, "HEAD", false);
    match api.get(&route, Shape::Object).await {
        Fetched::Ok(v) => serde_json::from_value::<Tree>(v)
            .map(Some)
            .map_err(|e| format!("GET /{}: {e}", routes::path_of(&route)).into()),
        // 409: "Git Repository is empty".
        Fetched::Failed { status: 409, .. } => Ok(None),
        other => Err(failed_read(&route, other).into()),
    }
}

/// Keeps at most `budget` public keys outside `keys/` in `files` (`.github/minisign.pub`
/// first, then `.github/`, then the root, by name); returns the others' paths.
fn keep_key_files(files: &mut Vec<TreeEntry>, budget: u64) -> Vec<String> {
    let outside = |e: &TreeEntry| is_public_key_file(&e.path) && !e.path.starts_with("keys/");
    let mut candidates: Vec<String> = files
        .iter()
        .filter(|e| outside(e))
        .map(|e| e.path.clone())
        .collect();
    candidates.sort_by_key(|p| {
        (
            p != ".github/minisign.pub",
            !p.starts_with(".github/"),
            p.clone(),
        )
    });
    let rest = candidates.split_off((budget as usize).min(candidates.len()));
    files.retain(|e| !outside(e) || candidates.contains(&e.path));
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers from a map of routes (everything else: 404).
    struct Fake(std::collections::HashMap<String, Value>);

    impl ApiSource for Fake {
        async fn get(&self, route: &str, _shape: Shape) -> Fetched {
            match self.0.get(route) {
                Some(v) => Fetched::Ok(v.clone()),
                None => Fetched::Failed {
                    status: 404,
                    message: "Not Found".into(),
                    permission: None,
                },
            }
        }
    }

    /// A repository whose `.github` tree names a path out of the folder: nothing is written, the
    /// repository is unreadable with the path named.
    #[test]
    fn a_tree_path_out_of_the_folder_is_refused_and_nothing_is_written() {
        let blob = serde_json::json!({"content": "bmFtZTogeAo=", "encoding": "base64"});
        let answers = [
            (
                routes::git_tree("o/r", "HEAD", false),
                serde_json::json!({"tree": [{"path": ".github", "type": "tree", "mode": "040000", "sha": "a".repeat(40)}]}),
            ),
            (
                routes::git_tree("o/r", &"a".repeat(40), true),
                serde_json::json!({"tree": [
                    {"path": "workflows/ok.yml", "type": "blob", "mode": "100644", "sha": "b".repeat(40), "size": 8},
                    {"path": "actions/../../../escape.yml", "type": "blob", "mode": "100644", "sha": "b".repeat(40), "size": 8}
                ]}),
            ),
            (routes::git_blob("o/r", &"b".repeat(40)), blob),
        ];
        let api = Fake(answers.into_iter().collect());
        let outer = tempfile::tempdir().unwrap();
        let dest = outer.path().join("checkout");
        std::fs::create_dir(&dest).unwrap();
        let err =
            futures::executor::block_on(fetch_audit_files(&api, "o/r", &dest, None)).unwrap_err();
        assert_eq!(
            err,
            "\".github/actions/../../../escape.yml\": not a plain path inside the repository"
        );
        assert!(!outer.path().join("escape.yml").exists());
        assert!(
            !dest.join(".github/workflows/ok.yml").exists(),
            "nothing written"
        );
    }

    #[test]
    fn only_what_the_workflow_audit_reads() {
        for yes in [
            ".github/workflows/release.yml",
            ".github/workflows/a.yaml",
            ".github/actions/sign/action.yml",
            ".github/actions/sign/sign.sh",
            ".github/warden.toml",
            "keys/minisign.pub",
            "keys/policy.toml",
            "keys/revoked/8F457D1A3C3B50B5.toml",
            "keys/revoked/8F457D1A3C3B50B5.toml.minisig",
            "keys/revoked/8F457D1A3C3B50B5.toml.0123456789ABCDEF.minisig",
            "keys/rotations/A-B.toml",
            "keys/rotations/A-B.toml.A.minisig",
        ] {
            assert!(wanted(yes), "{yes}");
        }
        for no in [
            ".github/workflows/sub/x.yml",
            ".github/workflows/README.md",
            ".github/CODEOWNERS",
            "keys/old/minisign.pub",
            "keys/revoked/deep/x.toml",
            "keys/revoked/notes.md",
            "keys/other.toml",
            "src/main.rs",
        ] {
            assert!(!wanted(no), "{no}");
        }
    }
}
