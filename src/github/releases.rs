//! Published releases: the one model of a GitHub release and every read about one, through
//! [`ApiSource`] (so `audit snapshot` / `verify --record` record them and `--snapshot` replays
//! them). `warden verify --release` takes a release by tag, every asset (paginated), the commit
//! the tag names (peeled) and downloads the assets concurrently, streamed to disk (memory flat in
//! asset size); the audit's release check takes the latest releases and two small assets.

use crate::minisign::keys::is_public_key_file;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use futures::stream::{self, StreamExt};
use serde_json::Value;

use super::api::{ApiError, ApiSource, Fetched, Shape};
use super::routes;
use super::session::Session;
use crate::error::{Error, Result};
use crate::github::records::{AssetDigests, AssetRecord};
use crate::minisign::hash::{Digests, StreamHasher};

/// Downloads at once: enough to hide a round trip per asset, few enough for a storage host.
const CONCURRENT_DOWNLOADS: usize = 4;

/// The slowest download warden waits for, in bytes a second (2 Mbit/s): below it, a body that
/// trickles would hold a release workflow for hours.
pub(crate) const MIN_DOWNLOAD_RATE: u64 = 256 << 10;

/// How long the download of an asset listed at `size` bytes may take, all told: a minute to
/// start, and its size at [`MIN_DOWNLOAD_RATE`]. (A stalled connection already fails sooner, on
/// the read timeout.)
pub fn download_deadline(size: u64) -> std::time::Duration {
    std::time::Duration::from_secs(60 + size / MIN_DOWNLOAD_RATE)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asset {
    pub id: u64,
    pub name: String,
    pub size: u64,
    /// The SHA-256 GitHub computed at upload (`digest: "sha256:…"`, lowercase hex), when the
    /// API gives one.
    pub digest: Option<String>,
    /// Who uploaded it (`uploader.login`), and when it was created and last changed.
    pub uploader: Option<String>,
    pub created_at: Option<u64>,
    pub updated_at: Option<u64>,
}

impl Asset {
    /// What the verdict takes of it: its name, GitHub's digest, its upload.
    pub(crate) fn record(&self) -> AssetRecord {
        AssetRecord {
            name: self.name.clone(),
            digest: self.digest.as_deref().and_then(crate::util::from_hex::<32>),
            upload: self.upload(),
        }
    }

    /// Its upload, for provenance (`None` when the API left out who or when).
    pub(crate) fn upload(&self) -> Option<crate::github::records::UploadRecord> {
        Some(crate::github::records::UploadRecord {
            name: self.name.clone(),
            uploader: self.uploader.clone()?,
            created_at: self.created_at?,
            updated_at: self.updated_at.or(self.created_at)?,
        })
    }
}

/// What the API says about a release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Release {
    pub(crate) id: u64,
    pub(crate) tag: String,
    pub(crate) draft: bool,
    pub(crate) prerelease: bool,
    /// `None` when the API does not say (older GHES).
    pub(crate) immutable: Option<bool>,
    pub(crate) assets: Vec<Asset>,
}

impl Release {
    /// A release object of the API; assets without an id or a name are left out.
    fn from_json(v: &Value) -> Release {
        Release {
            id: v["id"].as_u64().unwrap_or(0),
            tag: v["tag_name"].as_str().unwrap_or_default().to_string(),
            draft: v["draft"].as_bool().unwrap_or(false),
            prerelease: v["prerelease"].as_bool().unwrap_or(false),
            immutable: v["immutable"].as_bool(),
            assets: v["assets"]
                .as_array()
                .map(|list| list.iter().filter_map(asset_from_json).collect())
                .unwrap_or_default(),
        }
    }
}

fn asset_from_json(a: &Value) -> Option<Asset> {
    let digest = a["digest"]
        .as_str()
        .and_then(|d| d.strip_prefix("sha256:"))
        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_ascii_lowercase);
    let time = |k: &str| a[k].as_str().and_then(crate::util::parse_utc);
    Some(Asset {
        id: a["id"].as_u64()?,
        name: a["name"].as_str()?.to_string(),
        size: a["size"].as_u64().unwrap_or(0),
        digest,
        uploader: a["uploader"]["login"].as_str().map(str::to_string),
        created_at: time("created_at"),
        updated_at: time("updated_at"),
    })
}

/// The latest `count` releases of `repo` (with the assets the list carries).
pub(crate) async fn latest<S: ApiSource>(
    source: &S,
    repo: &str,
    count: usize,
) -> std::result::Result<Vec<Release>, ApiError> {
    let route = routes::releases(repo, count);
    match source.get(&route, Shape::Object).await {
        Fetched::Ok(Value::Array(list)) => {
            Ok(list.iter().take(count).map(Release::from_json).collect())
        }
        Fetched::Ok(_) => Ok(Vec::new()),
        failed => Err(ApiError::from_fetched(&route, failed)),
    }
}

/// The commit the tag `tag` of `repo` names now (peeled through annotated tags).
pub(crate) async fn tag_commit<S: ApiSource>(
    source: &S,
    repo: &str,
    tag: &str,
) -> std::result::Result<String, ApiError> {
    let route = routes::commit_of(repo, tag);
    match source.get(&route, Shape::Object).await {
        Fetched::Ok(v) => commit_sha(&route, &v),
        failed => Err(ApiError::from_fetched(&route, failed)),
    }
}

/// The `sha` of a commit answer: 40 hex digits, or the answer is not one (a missing, `null`,
/// empty or short `sha` would let a binding match anything it begins with).
fn commit_sha(route: &str, v: &Value) -> std::result::Result<String, ApiError> {
    match v["sha"].as_str() {
        Some(sha) if crate::trust::binding::is_full_commit(sha) => Ok(sha.to_ascii_lowercase()),
        _ => Err(ApiError {
            route: route.to_string(),
            status: 0,
            permission: None,
            message: "the answer has no commit SHA (40 hex digits)".into(),
        }),
    }
}

/// The route of a release asset (what `asset_bytes` reads).
pub(crate) fn asset_route(repo: &str, id: u64) -> String {
    routes::release_asset(repo, id)
}

/// A small asset's bytes (at most `cap`).
pub(crate) async fn asset_bytes<S: ApiSource>(
    source: &S,
    repo: &str,
    asset: &Asset,
    cap: u64,
) -> std::result::Result<Vec<u8>, ApiError> {
    let route = routes::release_asset(repo, asset.id);
    match source.get_bytes(&route, cap).await {
        Fetched::Ok(v) => base64::engine::general_purpose::STANDARD
            .decode(v["base64"].as_str().unwrap_or_default())
            .map_err(|_| ApiError {
                route: route.clone(),
                status: 0,
                permission: None,
                message: "not base64".into(),
            }),
        failed => Err(ApiError::from_fetched(&route, failed)),
    }
}

/// What an asset's bytes are, streamed (never kept): both digests, or its SHA-256 alone from a
/// snapshot recorded by an older warden.
pub(crate) async fn asset_digests<S: ApiSource>(
    source: &S,
    repo: &str,
    asset: &Asset,
) -> std::result::Result<AssetDigests, ApiError> {
    let route = routes::release_asset(repo, asset.id);
    let v = match source.get_sha256(&route).await {
        Fetched::Ok(v) => v,
        failed => return Err(ApiError::from_fetched(&route, failed)),
    };
    let sha256 = v["sha256"].as_str().and_then(crate::util::from_hex::<32>);
    let blake2b = v["blake2b512"]
        .as_str()
        .and_then(crate::util::from_hex::<64>);
    match (sha256, blake2b, v["size"].as_u64()) {
        (Some(sha256), Some(blake2b512), Some(size)) => Ok(AssetDigests::Read(Digests {
            sha256,
            blake2b512,
            size,
            sha512: None,
        })),
        (Some(sha256), _, _) => Ok(AssetDigests::Sha256Only(sha256)),
        _ => Err(ApiError {
            route: route.clone(),
            status: 0,
            permission: None,
            message: "not the digests of an asset".into(),
        }),
    }
}

/// Whether the organisation owning `repo` enforces immutable releases for it (`all`, or
/// `selected` with this repository). A user account, or a policy that cannot be read, does not.
pub(crate) async fn org_enforces_immutable<S: ApiSource>(source: &S, repo: &str) -> bool {
    let org = owner(repo);
    let policy = match source
        .get(&routes::org_immutable_releases(org), Shape::Object)
        .await
    {
        Fetched::Ok(v) => v["enforced_repositories"]
            .as_str()
            .unwrap_or("none")
            .to_string(),
        Fetched::Failed { .. } => return false,
    };
    match policy.as_str() {
        "all" => true,
        "selected" => matches!(
            source
                .get(&routes::org_immutable_releases_repositories(org), Shape::Items("repositories"))
                .await,
            Fetched::Ok(v) if v["repositories"].as_array().is_some_and(|list| list
                .iter()
                .any(|r| r["full_name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(repo))))
        ),
        _ => false,
    }
}

/// Where the organisation's immutable-releases policy is read (a finding's location).
pub(crate) fn org_immutable_route(repo: &str) -> String {
    routes::org_immutable_releases(owner(repo))
}

/// Where a release is read (a finding's location).
pub(crate) fn release_route(repo: &str, tag: &str) -> String {
    routes::release_by_tag(repo, tag)
}

/// Where the latest releases are read (a finding's location).
pub(crate) fn releases_route(repo: &str, count: usize) -> String {
    routes::releases(repo, count)
}

fn owner(repo: &str) -> &str {
    repo.split('/').next().unwrap_or(repo)
}

/// The error of a read `verify --release` needs: a 404 is the user's (no such release, tag or
/// folder), anything else the API's.
fn failed(what: &str, route: &str, f: Fetched) -> Error {
    let e = ApiError::from_fetched(route, f);
    if e.status == 404 {
        Error::Usage(format!("{what}: not found ({e})"))
    } else {
        Error::Api(format!("{what}: {e}"))
    }
}

/// An asset name as a file name in the download folder: one plain component. The API (or a
/// server playing it) controls names; `../x` or `a/b` would write outside the folder.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control)
}

/// The release `tag` of `repo` with every asset (paginated), and the commit its tag names.
/// The release of `tag`, or `None` when GitHub has none (a 404 for the release itself).
pub(crate) async fn by_tag_if_any<S: ApiSource>(
    source: &S,
    repo: &str,
    tag: &str,
) -> Result<Option<(Release, String)>> {
    let route = routes::release_by_tag(repo, tag);
    match source.get(&route, Shape::Object).await {
        Fetched::Failed {
            status: 404,
            message,
            ..
        } if !message.starts_with(super::api::WEB_PAGE) => Ok(None),
        _ => by_tag(source, repo, tag).await.map(Some),
    }
}

pub(crate) async fn by_tag<S: ApiSource>(
    source: &S,
    repo: &str,
    tag: &str,
) -> Result<(Release, String)> {
    let what = format!("release {tag} of {repo}");
    let route = routes::release_by_tag(repo, tag);
    let body = match source.get(&route, Shape::Object).await {
        Fetched::Ok(v) => v,
        f => {
            let github_404 = matches!(&f, Fetched::Failed { status: 404, message, .. }
                if !message.starts_with(super::api::WEB_PAGE));
            let e = failed(&what, &route, f);
            // A release that is not found may be a repository that is not: say which.
            if github_404
                && super::repository::read_repository(source, repo)
                    .await
                    .is_err_and(|r| r.status == 404)
            {
                return Err(Error::Usage(format!(
                    "no repository {repo}, or the token cannot see it: check the name (from --repo), or the token's repository access"
                )));
            }
            return Err(e);
        }
    };
    let id = body["id"]
        .as_u64()
        .ok_or_else(|| Error::Api(format!("{what}: no release id in the answer")))?;
    let route = routes::release_assets(repo, id);
    let list = match source.get(&route, Shape::Array).await {
        Fetched::Ok(Value::Array(a)) => a,
        Fetched::Ok(_) => return Err(Error::Api(format!("{what}: assets are not a list"))),
        f => return Err(failed(&format!("the assets of {what}"), &route, f)),
    };
    let mut assets = Vec::new();
    for a in &list {
        let Some(asset) = asset_from_json(a) else {
            return Err(Error::Api(format!("{what}: an asset without id or name")));
        };
        if !plain_name(&asset.name) {
            return Err(Error::Refused(format!(
                "{what}: the asset name {:?} is not a plain file name: refusing to download it",
                asset.name
            )));
        }
        assets.push(asset);
    }
    let route = routes::commit_of(repo, tag);
    let commit = match source.get(&route, Shape::Object).await {
        Fetched::Ok(v) => commit_sha(&route, &v)
            .map_err(|e| Error::Api(format!("the commit of tag {tag}: {e}")))?,
        f => return Err(failed(&format!("the commit of tag {tag}"), &route, f)),
    };
    let mut release = Release::from_json(&body);
    release.tag = tag.to_string();
    release.assets = assets;
    Ok((release, commit))
}

/// Downloads `assets` of `repo` into `dir`, each through a temp file renamed into place, and
/// returns each file's digests. The bytes are hashed (SHA-256 and the BLAKE2b prehash) and
/// written on a thread per download as they arrive, so verification reads nothing again and the
/// hashing of concurrent downloads spreads over the cores. Each asset must arrive within
/// `deadline(listed size)`.
pub async fn download_within<S: ApiSource>(
    source: &S,
    repo: &str,
    assets: &[Asset],
    dir: &Path,
    deadline: fn(u64) -> std::time::Duration,
) -> Result<Vec<(PathBuf, Digests)>> {
    download_counted(source, repo, assets, dir, (deadline, None)).await
}

/// [`download_within`], adding the bytes as they arrive to `progress` (a progress bar).
pub(crate) async fn download_counted<S: ApiSource>(
    source: &S,
    repo: &str,
    assets: &[Asset],
    dir: &Path,
    (deadline, progress): (
        fn(u64) -> std::time::Duration,
        Option<&crate::minisign::hash::Progress>,
    ),
) -> Result<Vec<(PathBuf, Digests)>> {
    let results: Vec<Result<(PathBuf, Digests)>> = stream::iter(assets)
        .map(|asset| async move {
            let target: PathBuf = dir.join(&asset.name);
            let temp = tempfile::Builder::new()
                .prefix(crate::files::atomic::TEMP_PREFIX)
                .suffix(".tmp")
                .tempfile_in(dir)
                .map_err(|e| Error::io("creating a temp file in", dir, e))?;
            let file = temp
                .as_file()
                .try_clone()
                .map_err(|e| Error::io("writing", &target, e))?;
            let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(8);
            let listed = asset.size;
            let counter = progress.cloned();
            let writer = std::thread::spawn(move || -> std::io::Result<(Digests, u64)> {
                use std::io::Write as _;
                let mut hasher = StreamHasher::default();
                let mut out = std::io::BufWriter::with_capacity(256 << 10, file);
                let mut written = 0u64;
                while let Some(chunk) = rx.blocking_recv() {
                    written += chunk.len() as u64;
                    // An asset is its listed size: a longer body stops here, before it fills
                    // the disk.
                    if written > listed {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!("more bytes than its listed size ({listed})"),
                        ));
                    }
                    hasher.update(&chunk);
                    out.write_all(&chunk)?;
                    if let Some(c) = &counter {
                        c.fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                out.flush()?;
                Ok((hasher.finish(), written))
            });
            let limit = deadline(listed);
            let fetched = tokio::time::timeout(
                limit,
                source.download(&routes::release_asset(repo, asset.id), &tx),
            )
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "not complete after {} s, the most warden waits for {listed} bytes (at least {} KiB/s)",
                    limit.as_secs(),
                    MIN_DOWNLOAD_RATE >> 10
                )
                .into())
            });
            drop(tx);
            let written = writer
                .join()
                .map_err(|_| Error::Api(format!("writing {}: the writer failed", asset.name)))?;
            let failed = |why: String| Error::Api(format!("downloading {}: {why}", asset.name));
            let (digests, size) = match (fetched, written) {
                (_, Err(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                    return Err(failed(e.to_string()))
                }
                (Err(e), _) => return Err(failed(e.into())),
                (Ok(_), Err(e)) => return Err(Error::io("writing", &target, e)),
                (Ok(_), Ok(done)) => done,
            };
            if size != listed {
                return Err(failed(format!(
                    "{size} bytes, fewer than its listed size ({listed})"
                )));
            }
            temp.persist(&target)
                .map_err(|e| Error::io("writing", &target, e.error))?;
            Ok((target, digests))
        })
        .buffer_unordered(CONCURRENT_DOWNLOADS)
        .collect()
        .await;
    results.into_iter().collect()
}

/// The revocation statements of `keys/revoked/` on `repo`'s default branch, written into
/// `dir/revoked/` (revocations only remove trust, so the newest source is the right one). None
/// when the folder does not exist; any other failed read is an error, never "no revocation".
pub(crate) fn repo_revocations(session: &Session, repo: &str, dir: &Path) -> Result<usize> {
    let written = session.block_on(async {
        let api = session.api();
        let what = format!("keys/revoked/ of {repo}");
        let route = routes::contents(repo, "keys/revoked");
        let list = match api.get(&route, Shape::Array).await {
            Fetched::Ok(Value::Array(a)) => a,
            Fetched::Ok(_) => return Err(Error::Api(format!("{what}: not a folder"))),
            Fetched::Failed { status: 404, .. } => return Ok(0),
            f => return Err(failed(&what, &route, f)),
        };
        let target = dir.join(crate::trust::revocation::REVOKED_DIR);
        std::fs::create_dir_all(&target).map_err(|e| Error::io("creating", &target, e))?;
        let mut written = 0;
        for entry in &list {
            let Some(name) = entry["name"].as_str() else {
                continue;
            };
            let wanted = name.ends_with(".toml") || name.ends_with(".toml.minisig");
            if entry["type"].as_str() != Some("file") || !wanted || !plain_name(name) {
                continue;
            }
            let route = routes::contents(repo, &format!("keys/revoked/{name}"));
            let file = match api.get(&route, Shape::Object).await {
                Fetched::Ok(v) => v,
                f => return Err(failed(&format!("keys/revoked/{name} of {repo}"), &route, f)),
            };
            let bytes = super::api::base64_content(&file).ok_or_else(|| {
                Error::Api(format!(
                    "keys/revoked/{name} of {repo}: content is not base64"
                ))
            })?;
            if bytes.len() > 16 * 1024 {
                return Err(Error::Refused(format!(
                    "keys/revoked/{name} of {repo}: larger than 16 KiB: not a revocation"
                )));
            }
            crate::files::atomic::write_atomic(&target.join(name), &bytes, 0o644, true)?;
            written += 1;
        }
        Ok(written)
    });
    session.check_api()?;
    written
}

/// The repository's `keys/policy.toml` on its default branch, written into `dir` (a policy only
/// removes trust, so the verifier applies it on top of its own). `false` when there is none; any
/// other failed read is an error, never "no policy".
pub(crate) fn repo_policy(session: &Session, repo: &str, dir: &Path) -> Result<bool> {
    let written = session.block_on(async {
        let name = crate::trust::policy::POLICY_FILE;
        let route = routes::contents(repo, &format!("keys/{name}"));
        let file = match session.api().get(&route, Shape::Object).await {
            Fetched::Ok(v) => v,
            Fetched::Failed { status: 404, .. } => return Ok(false),
            f => return Err(failed(&format!("keys/{name} of {repo}"), &route, f)),
        };
        let bytes = super::api::base64_content(&file)
            .ok_or_else(|| Error::Api(format!("keys/{name} of {repo}: content is not base64")))?;
        if bytes.len() > 64 * 1024 {
            return Err(Error::Refused(format!(
                "keys/{name} of {repo}: larger than 64 KiB: not a key policy"
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
        crate::files::atomic::write_atomic(&dir.join(name), &bytes, 0o644, true)?;
        Ok(true)
    });
    session.check_api()?;
    written
}

/// The repository's own public keys (`keys/*.pub` of its default branch), written into `dir`.
/// Returns their names. This trusts the repository itself: it still catches a tampered mirror or
/// asset, not a compromised repository.
pub fn repo_keys(session: &Session, repo: &str, dir: &Path) -> Result<Vec<String>> {
    let names = session.block_on(async {
        let api = session.api();
        let what = format!("the keys/ folder of {repo}");
        let route = routes::contents(repo, "keys");
        let list = match api.get(&route, Shape::Array).await {
            Fetched::Ok(Value::Array(a)) => a,
            Fetched::Ok(_) => return Err(Error::Api(format!("{what}: not a folder"))),
            f => return Err(failed(&what, &route, f)),
        };
        let mut names = Vec::new();
        for entry in &list {
            let Some(name) = entry["name"].as_str() else {
                continue;
            };
            // The keys and the policy (a threshold, end dates: it only removes trust).
            let wanted = is_public_key_file(name) || name == crate::trust::policy::POLICY_FILE;
            if entry["type"].as_str() != Some("file") || !wanted || !plain_name(name) {
                continue;
            }
            let route = routes::contents(repo, &format!("keys/{name}"));
            let file = match api.get(&route, Shape::Object).await {
                Fetched::Ok(v) => v,
                f => return Err(failed(&format!("keys/{name} of {repo}"), &route, f)),
            };
            let bytes = super::api::base64_content(&file).ok_or_else(|| {
                Error::Api(format!("keys/{name} of {repo}: content is not base64"))
            })?;
            if bytes.len() > 64 * 1024 {
                return Err(Error::Refused(format!(
                    "keys/{name} of {repo}: larger than 64 KiB: not a public key"
                )));
            }
            crate::files::atomic::write_atomic(&dir.join(name), &bytes, 0o644, true)?;
            names.push(name.to_string());
        }
        if !names.iter().any(|n| is_public_key_file(n)) {
            return Err(Error::Usage(format!("{what}: no *.pub file")));
        }
        Ok(names)
    });
    session.check_api()?;
    names
}

/// Where `verify --release` reads a release from: the API, a snapshot (`--snapshot DIR`), or the
/// API while recording every answer (`--record DIR`).
#[derive(Debug)]
pub enum ReleaseSource<'a> {
    Live(&'a Session),
    Snapshot(PathBuf),
    Record(&'a Session, PathBuf),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_names_are_plain_file_names() {
        for ok in ["ethrex-linux-x86_64", "SHA256SUMS", "a b.tar.gz"] {
            assert!(plain_name(ok), "{ok}");
        }
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", "a\nb"] {
            assert!(!plain_name(bad), "{bad:?}");
        }
    }
}
