//! A published release, for `warden verify --release TAG --repo OWNER/NAME`: the release by tag,
//! every asset (paginated), the commit the tag names (peeled), and the assets downloaded
//! concurrently into a folder, streamed to disk (memory flat in asset size).

use std::path::{Path, PathBuf};

use futures::stream::{self, StreamExt};
use serde_json::Value;

use super::api::{ApiSource, Fetched, LiveApi, Shape};
use super::routes;
use super::session::Session;
use crate::error::{Error, Result};
use crate::release::hash::{Digests, StreamHasher};

/// Downloads at once: enough to hide a round trip per asset, few enough for a storage host.
const CONCURRENT_DOWNLOADS: usize = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asset {
    pub id: u64,
    pub name: String,
    pub size: u64,
}

/// What the API says about a release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub tag: String,
    pub draft: bool,
    pub prerelease: bool,
    /// `None` when the API does not say (older GHES).
    pub immutable: Option<bool>,
    pub assets: Vec<Asset>,
    /// The commit the tag names now, peeled through annotated tags.
    pub commit: String,
}

fn failed(what: &str, f: Fetched) -> Error {
    match f {
        Fetched::Failed {
            status: 404,
            message,
            ..
        } => Error::Usage(format!("{what}: not found (404: {message})")),
        Fetched::Failed {
            status,
            message,
            permission,
        } => Error::Api(format!(
            "{what}: {status} {message}{}",
            permission.map_or(String::new(), |p| format!(" (needs {p})"))
        )),
        Fetched::Ok(_) => Error::Api(format!("{what}: unexpected answer")),
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

/// The release `tag` of `repo`, its assets and its commit.
pub async fn release(api: &LiveApi, repo: &str, tag: &str) -> Result<Release> {
    let what = format!("release {tag} of {repo}");
    let body = match api
        .get(&routes::release_by_tag(repo, tag), Shape::Object)
        .await
    {
        Fetched::Ok(v) => v,
        f => return Err(failed(&what, f)),
    };
    let id = body["id"]
        .as_u64()
        .ok_or_else(|| Error::Api(format!("{what}: no release id in the answer")))?;
    let list = match api
        .get(&routes::release_assets(repo, id), Shape::Array)
        .await
    {
        Fetched::Ok(Value::Array(a)) => a,
        Fetched::Ok(_) => return Err(Error::Api(format!("{what}: assets are not a list"))),
        f => return Err(failed(&format!("the assets of {what}"), f)),
    };
    let mut assets = Vec::new();
    for a in &list {
        let (Some(id), Some(name)) = (a["id"].as_u64(), a["name"].as_str()) else {
            return Err(Error::Api(format!("{what}: an asset without id or name")));
        };
        if !plain_name(name) {
            return Err(Error::Refused(format!(
                "{what}: the asset name {name:?} is not a plain file name: refusing to download it"
            )));
        }
        assets.push(Asset {
            id,
            name: name.to_string(),
            size: a["size"].as_u64().unwrap_or(0),
        });
    }
    let commit = match api.get(&routes::commit_of(repo, tag), Shape::Object).await {
        Fetched::Ok(v) => v["sha"].as_str().unwrap_or_default().to_string(),
        f => return Err(failed(&format!("the commit of tag {tag}"), f)),
    };
    Ok(Release {
        tag: tag.to_string(),
        draft: body["draft"].as_bool().unwrap_or(false),
        prerelease: body["prerelease"].as_bool().unwrap_or(false),
        immutable: body["immutable"].as_bool(),
        assets,
        commit,
    })
}

/// Downloads `assets` of `repo` into `dir`, each through a temp file renamed into place, and
/// returns each file's digests. The bytes are hashed (SHA-256 and the BLAKE2b prehash) and
/// written on a thread per download as they arrive, so verification reads nothing again and the
/// hashing of concurrent downloads spreads over the cores.
pub async fn download(
    api: &LiveApi,
    repo: &str,
    assets: &[Asset],
    dir: &Path,
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
            let writer = std::thread::spawn(move || -> std::io::Result<Digests> {
                use std::io::Write as _;
                let mut hasher = StreamHasher::default();
                let mut out = std::io::BufWriter::with_capacity(256 << 10, file);
                while let Some(chunk) = rx.blocking_recv() {
                    hasher.update(&chunk);
                    out.write_all(&chunk)?;
                }
                out.flush()?;
                Ok(hasher.finish())
            });
            let fetched = api
                .download(&routes::release_asset(repo, asset.id), &tx)
                .await;
            drop(tx);
            let written = writer
                .join()
                .map_err(|_| Error::Api(format!("writing {}: the writer failed", asset.name)))?
                .map_err(|e| Error::io("writing", &target, e));
            fetched.map_err(|e| Error::Api(format!("downloading {}: {e}", asset.name)))?;
            let digests = written?;
            temp.persist(&target)
                .map_err(|e| Error::io("writing", &target, e.error))?;
            Ok((target, digests))
        })
        .buffer_unordered(CONCURRENT_DOWNLOADS)
        .collect()
        .await;
    results.into_iter().collect()
}

/// The repository's own public keys (`keys/*.pub` of its default branch), written into `dir`.
/// Returns their names. This trusts the repository itself: it still catches a tampered mirror or
/// asset, not a compromised repository.
pub fn repo_keys(session: &Session, repo: &str, dir: &Path) -> Result<Vec<String>> {
    session.block_on(async {
        let api = session.api();
        let what = format!("the keys/ folder of {repo}");
        let list = match api.get(&routes::contents(repo, "keys"), Shape::Array).await {
            Fetched::Ok(Value::Array(a)) => a,
            Fetched::Ok(_) => return Err(Error::Api(format!("{what}: not a folder"))),
            f => return Err(failed(&what, f)),
        };
        let mut names = Vec::new();
        for entry in &list {
            let Some(name) = entry["name"].as_str() else {
                continue;
            };
            if entry["type"].as_str() != Some("file")
                || !name.ends_with(".pub")
                || !plain_name(name)
            {
                continue;
            }
            let file = match api
                .get(
                    &routes::contents(repo, &format!("keys/{name}")),
                    Shape::Object,
                )
                .await
            {
                Fetched::Ok(v) => v,
                f => return Err(failed(&format!("keys/{name} of {repo}"), f)),
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
        if names.is_empty() {
            return Err(Error::Usage(format!("{what}: no *.pub file")));
        }
        Ok(names)
    })
}

/// The release, and those of its assets that `wanted` names, downloaded into `dir` (with the
/// digests of each file, computed as it arrived).
pub fn fetch(
    session: &Session,
    repo: &str,
    tag: &str,
    dir: &Path,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<(Release, Vec<(PathBuf, Digests)>)> {
    session.block_on(async {
        let release = release(session.api(), repo, tag).await?;
        let chosen: Vec<Asset> = release
            .assets
            .iter()
            .filter(|a| wanted(&a.name))
            .cloned()
            .collect();
        let digests = download(session.api(), repo, &chosen, dir).await?;
        Ok((release, digests))
    })
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
