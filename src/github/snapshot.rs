//! Snapshots: every response the settings audit reads, saved as files named after the API path,
//! so an audit can be re-run offline, attached to an issue, or produced with `gh api` by hand.
//!
//! Layout: `DIR/<path>.json` holds the response body of `GET /<path>` (query string dropped; lists
//! hold all pages merged), e.g. `DIR/repos/o/r/rulesets.json`, `DIR/repos/o/r/rulesets/42.json`,
//! `DIR/repos/o/r/environments.json`. A failed read is saved as `DIR/<path>.error.json`:
//! `{"status": 403, "message": "...", "permission": "administration=read"}`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::api::{ApiSource, Fetched, Shape, RECORDED_ASSET_CAP};
use super::routes;
use crate::error::{Error, Reason, Result};
use crate::files::{atomic, guarded};

/// One recorded API response: a page of an organisation's repositories is well under 1 MiB.
const SNAPSHOT_FILE_CAP: u64 = 64 << 20;

/// The file of a route (query dropped, `..` refused).
pub(crate) fn file_for(dir: &Path, route: &str) -> PathBuf {
    let path = routes::path_of(route).trim_matches('/');
    let safe: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .collect();
    dir.join(format!("{}.json", safe.join("/")))
}

fn error_file(file: &Path) -> PathBuf {
    file.with_extension("error.json")
}

/// How a snapshot answers what it does not hold (an older warden did not ask it).
pub(crate) const NOT_RECORDED: &str = "not in the snapshot";

#[derive(Debug)]
pub(crate) struct SnapshotSource {
    pub(crate) dir: PathBuf,
}

impl ApiSource for SnapshotSource {
    async fn get(&self, route: &str, _shape: Shape) -> Fetched {
        let file = file_for(&self.dir, route);
        // A snapshot may come from someone else (attached to an issue): no link out of the
        // folder, no FIFO.
        let read = |p: &Path| {
            guarded::read_text_inside(&self.dir, p, SNAPSHOT_FILE_CAP)
                .ok()
                .map(|t| serde_json::from_str::<Value>(&t))
        };
        match read(&file) {
            Some(Ok(v)) => Fetched::Ok(v),
            Some(Err(e)) => Fetched::Failed {
                status: 0,
                message: format!("{}: malformed JSON: {e}", file.display()),
                permission: None,
            },
            None => match read(&error_file(&file)) {
                Some(Ok(v)) => Fetched::Failed {
                    status: v.get("status").and_then(Value::as_u64).unwrap_or(0) as u16,
                    message: v
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("read failed when the snapshot was taken")
                        .to_string(),
                    permission: v
                        .get("permission")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                },
                _ => Fetched::Failed {
                    status: 0,
                    message: format!("{NOT_RECORDED} ({} is missing)", file.display()),
                    permission: None,
                },
            },
        }
    }
}

/// Wraps a source and records every answer for [`save`].
pub(crate) struct Recorder<'a, S> {
    pub(crate) inner: &'a S,
    pub(crate) seen: std::sync::Mutex<Vec<(String, Fetched)>>,
}

impl<'a, S: ApiSource> Recorder<'a, S> {
    pub(crate) fn new(inner: &'a S) -> Self {
        Recorder {
            inner,
            seen: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Writes every recorded answer under `dir` (atomically, file by file).
    pub(crate) fn save(&self, dir: &Path) -> Result<usize> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        for (route, fetched) in seen.iter() {
            let file = file_for(dir, route);
            let (target, body) = match fetched {
                Fetched::Ok(v) => (file, v.clone()),
                Fetched::Failed {
                    status,
                    message,
                    permission,
                } => (
                    error_file(&file),
                    json!({"status": status, "message": message, "permission": permission}),
                ),
            };
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(|e| Error::io("creating", parent, e))?;
            }
            let text = serde_json::to_string_pretty(&body).unwrap_or_default() + "\n";
            atomic::write_atomic(&target, text.as_bytes(), 0o644, true)?;
        }
        Ok(seen.len())
    }
}

impl<S: ApiSource> ApiSource for Recorder<'_, S> {
    async fn get(&self, route: &str, shape: Shape) -> Fetched {
        let answer = self.inner.get(route, shape).await;
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((route.to_string(), answer.clone()));
        answer
    }

    async fn get_sha256(&self, route: &str) -> Fetched {
        let answer = self.inner.get_sha256(route).await;
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((route.to_string(), answer.clone()));
        answer
    }

    async fn get_bytes(&self, route: &str, cap: u64) -> Fetched {
        let answer = self.inner.get_bytes(route, cap).await;
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((route.to_string(), answer.clone()));
        answer
    }

    async fn get_external(&self, url: &str, cap: u64) -> Fetched {
        let answer = self.inner.get_external(url, cap).await;
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((super::routes::external(url), answer.clone()));
        answer
    }

    /// Streams the asset through to `out` and keeps a copy to record, up to
    /// [`RECORDED_ASSET_CAP`]: a larger asset stops the recording with an error that says so
    /// (a snapshot holds each answer as one JSON file).
    async fn download(
        &self,
        route: &str,
        out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    ) -> Result<u64, Reason> {
        use base64::Engine as _;
        let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(8);
        let inner = async move { self.inner.download(route, &tx).await };
        let tee = async {
            let mut kept = Vec::new();
            while let Some(chunk) = rx.recv().await {
                if (kept.len() + chunk.len()) as u64 > RECORDED_ASSET_CAP {
                    return Err(Reason::from(format!(
                        "GET /{route}: larger than {} MiB, the most --record keeps of an asset (record the small ones with --only)",
                        RECORDED_ASSET_CAP >> 20
                    )));
                }
                kept.extend_from_slice(&chunk);
                out.send(chunk)
                    .await
                    .map_err(|_| "the writer stopped".to_string())?;
            }
            Ok(kept)
        };
        let (sent, kept) = futures::join!(inner, tee);
        let kept = kept?;
        let sent = sent?;
        let answer = Fetched::Ok(json!({
            "base64": base64::engine::general_purpose::STANDARD.encode(&kept)
        }));
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((route.to_string(), answer));
        Ok(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An API whose every asset is `size` bytes, sent in 1 MiB chunks.
    struct Assets {
        size: usize,
    }

    impl ApiSource for Assets {
        async fn get(&self, _route: &str, _shape: Shape) -> Fetched {
            Fetched::Failed {
                status: 404,
                message: "Not Found".into(),
                permission: None,
            }
        }

        async fn download(
            &self,
            _route: &str,
            out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
        ) -> std::result::Result<u64, Reason> {
            let mut left = self.size;
            while left > 0 {
                let n = left.min(1 << 20);
                out.send(bytes::Bytes::from(vec![7u8; n]))
                    .await
                    .map_err(|_| "the writer stopped".to_string())?;
                left -= n;
            }
            Ok(self.size as u64)
        }
    }

    /// Records a download of `size` bytes: how many reached the reader, what the download
    /// returned, and how many answers were recorded.
    fn record(size: usize) -> (usize, std::result::Result<u64, Reason>, usize) {
        let api = Assets { size };
        let recorder = Recorder::new(&api);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (received, result) = runtime.block_on(async {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(8);
            let reader = async move {
                let mut n = 0;
                while let Some(chunk) = rx.recv().await {
                    n += chunk.len();
                }
                n
            };
            let recorder = &recorder;
            let download = async move {
                let route = "repos/o/r/releases/assets/1";
                recorder.download(route, &tx).await
            };
            futures::join!(reader, download)
        });
        let recorded = recorder.seen.lock().unwrap().len();
        (received, result, recorded)
    }

    #[test]
    fn a_recorded_download_is_streamed_and_kept_up_to_the_cap() {
        let (received, result, recorded) = record(3 << 20);
        assert_eq!((received, result, recorded), (3 << 20, Ok(3 << 20), 1));
        let (_, result, recorded) = record((RECORDED_ASSET_CAP as usize) + 1);
        assert_eq!(
            result,
            Err("GET /repos/o/r/releases/assets/1: larger than 40 MiB, the most --record keeps of an asset (record the small ones with --only)".into())
        );
        assert_eq!(recorded, 0, "a partial asset is not recorded");
    }

    #[test]
    fn routes_map_to_files_without_escaping_the_folder() {
        let d = Path::new("/snap");
        assert_eq!(
            file_for(d, "repos/o/r/rulesets?targets=tag"),
            PathBuf::from("/snap/repos/o/r/rulesets.json")
        );
        assert_eq!(
            file_for(d, "/repos/o/r/../../etc/passwd"),
            PathBuf::from("/snap/repos/o/r/etc/passwd.json")
        );
        assert_eq!(
            file_for(d, "repos/o/r/environments/rel%2Fprod"),
            PathBuf::from("/snap/repos/o/r/environments/rel%2Fprod.json")
        );
    }
}
