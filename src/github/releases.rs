//! Published releases: the one model of a GitHub release and every read about one, through
//! [`ApiSource`] (so `audit snapshot` / `verify --record` record them and `--snapshot` replays
//! them). `warden verify --release` takes a release by tag, every asset (paginated), the commit
//! the tag names (peeled) and downloads the assets concurrently, streamed to disk (memory flat in
//! asset size); the audit's release check takes the latest releases and two small assets.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use futures::stream::{self, StreamExt};
use serde_json::Value;

use super::api::{ApiError, ApiSource, Fetched, Shape};
use super::routes;
use super::session::Session;
use super::snapshot::{Recorder, SnapshotSource};
use crate::error::{Error, Result};
use crate::release::hash::{Digests, StreamHasher};

/// Downloads at once: enough to hide a round trip per asset, few enough for a storage host.
const CONCURRENT_DOWNLOADS: usize = 4;

/// The slowest download warden waits for, in bytes a second (2 Mbit/s): below it, a body that
/// trickles would hold a release workflow for hours.
pub const MIN_DOWNLOAD_RATE: u64 = 256 << 10;

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
    /// Its upload, for provenance (`None` when the API left out who or when).
    pub fn upload(&self) -> Option<crate::release::provenance::UploadRecord> {
        Some(crate::release::provenance::UploadRecord {
            name: self.name.clone(),
            uploader: self.uploader.clone()?,
            created_at: self.created_at?,
            updated_at: self.updated_at.or(self.created_at)?,
        })
    }
}

/// What the API says about a release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub id: u64,
    pub tag: String,
    pub draft: bool,
    pub prerelease: bool,
    /// `None` when the API does not say (older GHES).
    pub immutable: Option<bool>,
    pub assets: Vec<Asset>,
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

    /// The asset named `name`.
    pub fn asset(&self, name: &str) -> Option<&Asset> {
        self.assets.iter().find(|a| a.name == name)
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
pub async fn latest<S: ApiSource>(
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
        Fetched::Ok(v) => Ok(v["sha"].as_str().unwrap_or_default().to_string()),
        failed => Err(ApiError::from_fetched(&route, failed)),
    }
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

/// An asset's SHA-256 (lowercase hex), streamed.
pub(crate) async fn asset_sha256<S: ApiSource>(
    source: &S,
    repo: &str,
    asset: &Asset,
) -> std::result::Result<String, String> {
    let route = routes::release_asset(repo, asset.id);
    match source.get_sha256(&route).await {
        Fetched::Ok(v) => Ok(v["sha256"].as_str().unwrap_or("?").to_string()),
        failed => Err(ApiError::from_fetched(&route, failed).to_string()),
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
pub(crate) async fn by_tag<S: ApiSource>(
    source: &S,
    repo: &str,
    tag: &str,
) -> Result<(Release, String)> {
    let what = format!("release {tag} of {repo}");
    let route = routes::release_by_tag(repo, tag);
    let body = match source.get(&route, Shape::Object).await {
        Fetched::Ok(v) => v,
        f => return Err(failed(&what, &route, f)),
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
        Fetched::Ok(v) => v["sha"].as_str().unwrap_or_default().to_string(),
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
/// hashing of concurrent downloads spreads over the cores.
pub async fn download<S: ApiSource>(
    source: &S,
    repo: &str,
    assets: &[Asset],
    dir: &Path,
) -> Result<Vec<(PathBuf, Digests)>> {
    download_counted(source, repo, assets, dir, (download_deadline, None)).await
}

/// [`download`], each asset within `deadline(listed size)`.
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
async fn download_counted<S: ApiSource>(
    source: &S,
    repo: &str,
    assets: &[Asset],
    dir: &Path,
    (deadline, progress): (
        fn(u64) -> std::time::Duration,
        Option<&crate::release::hash::Progress>,
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
                ))
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
                (Err(e), _) => return Err(failed(e)),
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
pub fn repo_revocations(session: &Session, repo: &str, dir: &Path) -> Result<usize> {
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
        let target = dir.join(crate::release::revocation::REVOKED_DIR);
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
pub fn repo_policy(session: &Session, repo: &str, dir: &Path) -> Result<bool> {
    let written = session.block_on(async {
        let name = crate::release::policy::POLICY_FILE;
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
            let wanted = name.ends_with(".pub") || name == crate::release::policy::POLICY_FILE;
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
        if !names.iter().any(|n| n.ends_with(".pub")) {
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

/// A release as `verify --release` takes it: what the API says, the commit its tag names, and
/// the files downloaded with their digests.
#[derive(Debug)]
pub struct Downloaded {
    pub release: Release,
    pub commit: String,
    pub files: Vec<(PathBuf, Digests)>,
    /// Assets GitHub's digest shows were replaced: it disagrees with the signed list (then the
    /// asset is not downloaded) or with the bytes that came. (file in the folder, why)
    pub replaced: Vec<(PathBuf, String)>,
    /// The pipeline provenance of the list's first signature; `None` when it binds no run.
    pub provenance: Option<Provenance>,
}

/// The run a release's signature names, and everything GitHub's records say against it.
#[derive(Clone, Debug)]
pub struct Provenance {
    pub binding: crate::release::provenance::RunBinding,
    /// Empty when the run checks out.
    pub problems: Vec<String>,
}

/// What `fetch` checks besides downloading: the checksum list's name and what the keys
/// folder's policy asks of the run that signed.
pub struct ReleaseChecks<'a> {
    pub checksums_name: &'a str,
    pub run_policy: &'a crate::release::provenance::RunPolicy,
    /// Judges the checksum list and its signatures once they are in the folder: `Err(why)`
    /// stops before any other asset is downloaded.
    pub list_verifies: &'a dyn Fn(&Path) -> std::result::Result<(), String>,
    /// Bytes downloaded so far, for a progress bar, and the total to download (set once the
    /// release is read: the listed sizes of the assets chosen).
    pub progress: Option<&'a crate::release::hash::Progress>,
    pub total: Option<&'a crate::release::hash::Progress>,
}

/// The release, and those of its assets that `wanted` names, downloaded into `dir` (with the
/// digests of each file, computed as it arrived), the commit the tag names, and what GitHub's
/// digests and run records say (`checks`).
pub fn fetch(
    from: &ReleaseSource<'_>,
    repo: &str,
    tag: &str,
    dir: &Path,
    (wanted, checks): (&dyn Fn(&str) -> bool, &ReleaseChecks<'_>),
) -> Result<Downloaded> {
    match from {
        ReleaseSource::Live(session) => {
            let fetched =
                session.block_on(fetch_from(session.api(), repo, tag, dir, (wanted, checks)));
            session.check_api()?;
            fetched
        }
        ReleaseSource::Snapshot(snapshot) => {
            let source = SnapshotSource {
                dir: snapshot.clone(),
            };
            // The snapshot answers at once; downloads still hand their bytes to a writer task.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .map_err(|e| Error::Usage(format!("starting the async runtime: {e}")))?;
            runtime.block_on(fetch_from(&source, repo, tag, dir, (wanted, checks)))
        }
        ReleaseSource::Record(session, out) => {
            let recorder = Recorder::new(session.api());
            let fetched = session.block_on(fetch_from(&recorder, repo, tag, dir, (wanted, checks)));
            session.check_api()?;
            recorder.save(out)?;
            fetched
        }
    }
}

/// The signed list and its signatures come first (small); GitHub's digests are compared with
/// the list before anything else is downloaded, so a replaced asset costs no download.
async fn fetch_from<S: ApiSource>(
    source: &S,
    repo: &str,
    tag: &str,
    dir: &Path,
    (wanted, checks): (&dyn Fn(&str) -> bool, &ReleaseChecks<'_>),
) -> Result<Downloaded> {
    let (release, commit) = by_tag(source, repo, tag).await?;
    let sums = checks.checksums_name;
    let signed_file = |n: &str| crate::release::verify::is_signed_list_file(n, sums);
    let (small, rest): (Vec<Asset>, Vec<Asset>) = release
        .assets
        .iter()
        .filter(|a| wanted(&a.name))
        .cloned()
        .partition(|a| signed_file(&a.name));
    if let Some(total) = checks.total {
        let bytes: u64 = small.iter().chain(&rest).map(|a| a.size).sum();
        total.store(bytes, std::sync::atomic::Ordering::Relaxed);
    }
    let mut files = download_counted(
        source,
        repo,
        &small,
        dir,
        (download_deadline, checks.progress),
    )
    .await?;
    // A list whose signature fails decides the release: nothing large is downloaded for it.
    if let Err(why) = (checks.list_verifies)(dir) {
        let replaced = rest
            .iter()
            .map(|a| {
                let reason = format!("not downloaded: {sums} does not verify ({why})");
                (dir.join(&a.name), reason)
            })
            .collect();
        return Ok(Downloaded {
            release,
            commit,
            files,
            replaced,
            provenance: None,
        });
    }
    let listed = listed_digests(&dir.join(sums));
    let mut replaced: Vec<(PathBuf, String)> = Vec::new();
    for a in &release.assets {
        let (Some(digest), Some(expected)) = (&a.digest, listed.get(&a.name)) else {
            continue;
        };
        if digest != expected {
            replaced.push((
                dir.join(&a.name),
                format!("GitHub's digest of the asset is sha256:{digest}, the signed {sums} lists {expected}: replaced after signing (not downloaded)"),
            ));
        }
    }
    let rest: Vec<Asset> = rest
        .into_iter()
        .filter(|a| !replaced.iter().any(|(p, _)| *p == dir.join(&a.name)))
        .collect();
    files.extend(
        download_counted(
            source,
            repo,
            &rest,
            dir,
            (download_deadline, checks.progress),
        )
        .await?,
    );
    for (path, digests) in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let got = crate::util::to_hex(&digests.sha256);
        if let Some(d) = release.asset(name).and_then(|a| a.digest.as_ref()) {
            if *d != got {
                replaced.push((
                    path.clone(),
                    format!("the bytes downloaded have SHA-256 {got}, GitHub's digest at upload is sha256:{d}"),
                ));
            }
        }
    }
    let provenance = provenance(source, repo, (&release, &commit), dir, checks).await?;
    Ok(Downloaded {
        release,
        commit,
        files,
        replaced,
        provenance,
    })
}

/// The digests `list` (a downloaded, not yet verified checksum list) gives each name; empty when
/// it cannot be read. Verification checks the list's signature afterwards: a forged list fails
/// there whatever it says here.
fn listed_digests(list: &Path) -> std::collections::BTreeMap<String, String> {
    let Ok(Some(bytes)) = crate::files::guarded::open_regular(list)
        .and_then(|f| crate::files::guarded::read_at_most(f, 256 << 20))
    else {
        return Default::default();
    };
    let Ok(parsed) = std::str::from_utf8(&bytes)
        .map_err(|_| ())
        .and_then(|t| crate::release::checksums::ChecksumFile::parse(t).map_err(|_| ()))
    else {
        return Default::default();
    };
    parsed
        .entries()
        .map(|(n, d)| (n.to_string(), crate::util::to_hex(d)))
        .collect()
}

/// The provenance of the list's first signature (downloaded into `dir`): the run it names,
/// judged against GitHub's records of it and of the release's uploads.
async fn provenance<S: ApiSource>(
    source: &S,
    repo: &str,
    (release, commit): (&Release, &str),
    dir: &Path,
    checks: &ReleaseChecks<'_>,
) -> Result<Option<Provenance>> {
    use crate::release::provenance::{judge_run, judge_uploads, Signed};
    let sig_path = dir.join(format!("{}.minisig", checks.checksums_name));
    let Ok(text) = crate::files::guarded::read_text_inside(dir, &sig_path, 64 << 10) else {
        return Ok(None);
    };
    let Ok(sig) = crate::release::signature::SignatureFile::parse(&text) else {
        return Ok(None);
    };
    let comment = &sig.trusted_comment;
    let Ok(Some(binding)) = comment.run() else {
        return Ok(None);
    };
    let environment = binding
        .environment
        .as_deref()
        .or(checks.run_policy.environment.as_deref());
    let evidence = super::runs::evidence(source, repo, &binding, environment)
        .await
        .map_err(|e| {
            Error::Api(format!(
                "the run the signature of {} names: {e}",
                release.tag
            ))
        })?;
    let signed_commit = comment.value("commit").ok().flatten().or(Some(commit));
    let signed = Signed {
        binding: &binding,
        timestamp: comment
            .value("timestamp")
            .ok()
            .flatten()
            .and_then(|t| t.parse().ok()),
        commit: signed_commit,
        repo,
        tag: &release.tag,
    };
    let mut problems = judge_run(&signed, &evidence, checks.run_policy);
    if let Some(run) = &evidence.run {
        let mut uploads = Vec::new();
        for a in &release.assets {
            match a.upload() {
                Some(u) => uploads.push(u),
                None => problems.push(format!(
                    "the API does not say who uploaded {} or when",
                    crate::markup::text_value(&a.name)
                )),
            }
        }
        problems.extend(judge_uploads(run, &uploads));
    }
    Ok(Some(Provenance { binding, problems }))
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
