//! A log served as static files over HTTPS (`--log URL`): each file one GET, capped in size and
//! time, without redirects (a static host that moves the log is named, not followed) and without
//! any credential. What is read is authenticated afterwards like a folder's files: by the
//! checkpoint's signatures and the tree's hashes.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;

use crate::error::Error;
use crate::log::tiles::Store;

/// How long one file may take, all told.
const DEADLINE: Duration = Duration::from_secs(30);

pub(crate) struct HttpStore {
    base: String,
    runtime: tokio::runtime::Runtime,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
}

impl HttpStore {
    /// The log at `url` (`https://…`, or `http://` for a local mirror); `flag` names where it
    /// came from in errors.
    pub(crate) fn new(url: &str, flag: &str) -> Result<Self, Error> {
        let parsed: http::Uri = url
            .parse()
            .map_err(|_| Error::Usage(format!("{flag} {url}: not a URL")))?;
        if !matches!(parsed.scheme_str(), Some("https" | "http")) || parsed.host().is_none() {
            return Err(Error::Usage(format!(
                "{flag} {url}: an https:// URL or a folder"
            )));
        }
        if parsed.query().is_some() || url.contains('#') {
            return Err(Error::Usage(format!(
                "{flag} {url}: the log's URL prefix, without a query"
            )));
        }
        let (runtime, client) = https_client(&format!("{flag} {url}"))?;
        Ok(HttpStore {
            base: url.trim_end_matches('/').to_string(),
            runtime,
            client,
        })
    }

    async fn get(&self, url: &str, cap: u64) -> Result<Option<Vec<u8>>, String> {
        let uri: http::Uri = url.parse().map_err(|_| "not a URL".to_string())?;
        let resp = self.client.get(uri).await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        if status == 404 {
            return Ok(None);
        }
        if resp.status().is_redirection() {
            return Err(format!("HTTP {status}: a redirect (the log's files are read where the URL says, never elsewhere)"));
        }
        if !(200..300).contains(&status) {
            return Err(format!("HTTP {status}"));
        }
        let body = Limited::new(resp.into_body(), cap as usize)
            .collect()
            .await
            .map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    format!("larger than {} KiB", cap / 1024)
                } else {
                    e.to_string()
                }
            })?;
        Ok(Some(body.to_bytes().to_vec()))
    }
}

/// A runtime of its own and a client for it: HTTPS with the system's roots (plain HTTP for a
/// local server), no credential, bodies of type `B`; `what` names its user in errors.
pub(crate) fn https_client<B>(
    what: &str,
) -> Result<
    (
        tokio::runtime::Runtime,
        Client<hyper_rustls::HttpsConnector<HttpConnector>, B>,
    ),
    Error,
>
where
    B: hyper::body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("starting the async runtime: {e}")))?;
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .map_err(|e| Error::Usage(format!("{what}: no TLS roots: {e}")))?
        .https_or_http()
        .enable_http1()
        .build();
    Ok((runtime, Client::builder(TokioExecutor::new()).build(https)))
}

impl Store for HttpStore {
    fn read(&self, path: &str, cap: u64) -> Result<Option<Vec<u8>>, Error> {
        let url = self.name(path);
        // The store's one runtime. A caller inside another runtime (the log monitor, which
        // reads GitHub's records as it goes) has the read made on a thread of its own: runtimes
        // do not nest.
        let read = || {
            self.runtime.block_on(async {
                tokio::time::timeout(DEADLINE, self.get(&url, cap))
                    .await
                    .unwrap_or_else(|_| Err(format!("no answer within {} s", DEADLINE.as_secs())))
            })
        };
        let got = if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(read)
                    .join()
                    .unwrap_or_else(|_| Err("the download failed".to_string()))
            })
        } else {
            read()
        };
        got.map_err(|why| Error::Api(format!("reading {url}: {why}")))
    }
    fn name(&self, path: &str) -> String {
        format!("{}/{path}", self.base)
    }
}

/// The log a flag names: a URL, or a folder.
pub(crate) fn open(location: &str, flag: &str) -> Result<Box<dyn Store>, Error> {
    if location.starts_with("https://") || location.starts_with("http://") {
        Ok(Box::new(HttpStore::new(location, flag)?))
    } else {
        Ok(Box::new(crate::log::tiles::DirStore {
            root: location.into(),
        }))
    }
}
