//! A published release of any repository on a local GitHub: the release, its assets (the API
//! redirects each to a storage host that answers without the token), the tag's commit, and the
//! repository's `keys/revoked/` through the contents API.

use std::path::Path;

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The files of `dist` (name, bytes), sorted: the assets to serve.
pub(crate) fn release_files(dist: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dist)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Release `tag` of `slug`, its assets the files of `dist`, the tag at `commit`. Not immutable:
/// its assets can be replaced (an immutable release's cannot).
pub(crate) async fn serve_release(
    api: &MockServer,
    storage: &MockServer,
    (slug, tag, commit): (&str, &str, &str),
    dist: &Path,
) {
    let assets = release_files(dist);
    Mock::given(method("GET"))
        .and(path(format!("/repos/{slug}/releases/tags/{tag}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"id": 7, "tag_name": tag, "draft": false, "prerelease": false, "immutable": false}),
        ))
        .mount(api)
        .await;
    let list: Vec<_> = assets
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| json!({"id": 100 + i, "name": name, "size": bytes.len()}))
        .collect();
    Mock::given(method("GET"))
        .and(path(format!("/repos/{slug}/releases/7/assets")))
        .respond_with(ResponseTemplate::new(200).set_body_json(list))
        .mount(api)
        .await;
    for (i, (_, bytes)) in assets.iter().enumerate() {
        let id = 100 + i;
        Mock::given(method("GET"))
            .and(path(format!("/repos/{slug}/releases/assets/{id}")))
            .respond_with(
                ResponseTemplate::new(302)
                    .insert_header("location", format!("{}/blob/{id}", storage.uri())),
            )
            .mount(api)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/blob/{id}")))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes.clone()))
            .mount(storage)
            .await;
    }
    Mock::given(method("GET"))
        .and(path(format!("/repos/{slug}/commits/{tag}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"sha": commit})))
        .mount(api)
        .await;
}

/// The statements of `revoked` (a `keys/revoked/` folder) as the contents API gives `slug`'s
/// `keys/revoked/`; a 404 (no such folder) when `revoked` does not exist.
pub(crate) async fn serve_revocations(api: &MockServer, slug: &str, revoked: &Path) {
    let Ok(entries) = std::fs::read_dir(revoked) else {
        return;
    };
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut listing = Vec::new();
    for file in files {
        use base64::Engine as _;
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let content =
            base64::engine::general_purpose::STANDARD.encode(std::fs::read(&file).unwrap());
        Mock::given(method("GET"))
            .and(path(format!("/repos/{slug}/contents/keys/revoked/{name}")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"encoding": "base64", "content": content})),
            )
            .mount(api)
            .await;
        listing.push(json!({"name": name, "type": "file"}));
    }
    Mock::given(method("GET"))
        .and(path(format!("/repos/{slug}/contents/keys/revoked")))
        .respond_with(ResponseTemplate::new(200).set_body_json(listing))
        .mount(api)
        .await;
}

/// A storage host that streams each blob (`/blob/<id>`) and records, in order, the path of every
/// request and the bytes it sent: large blobs are made as they are sent (a block repeated), so a
/// release of gigabytes costs no memory.
pub(crate) struct CountingStorage {
    pub(crate) uri: String,
    /// (path, bytes sent), in the order answered.
    pub(crate) served: std::sync::Arc<std::sync::Mutex<Vec<(String, u64)>>>,
    /// The paths asked for, in the order the requests came.
    pub(crate) asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// What a blob of the counting storage is: bytes kept, or `block` repeated to `size` bytes.
#[derive(Clone)]
pub(crate) enum Blob {
    Bytes(Vec<u8>),
    Repeated { block: Vec<u8>, size: u64 },
}

impl CountingStorage {
    pub(crate) fn start(blobs: std::collections::BTreeMap<String, Blob>) -> CountingStorage {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        let served = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (log, asked_log) = (served.clone(), asked.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let blobs = blobs.clone();
                let (log, asked_log) = (log.clone(), asked_log.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap_or(0);
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                    let path = path.split('?').next().unwrap_or("").to_string();
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                            break;
                        }
                    }
                    asked_log.lock().unwrap().push(path.clone());
                    let Some(blob) = blobs.get(&path) else {
                        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                        return;
                    };
                    let size = match blob {
                        Blob::Bytes(b) => b.len() as u64,
                        Blob::Repeated { size, .. } => *size,
                    };
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n");
                    if stream.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                    let mut sent = 0u64;
                    match blob {
                        Blob::Bytes(b) => {
                            if stream.write_all(b).is_ok() {
                                sent = b.len() as u64;
                            }
                        }
                        Blob::Repeated { block, size } => {
                            while sent < *size {
                                let n = (*size - sent).min(block.len() as u64) as usize;
                                if stream.write_all(&block[..n]).is_err() {
                                    break;
                                }
                                sent += n as u64;
                            }
                        }
                    }
                    log.lock().unwrap().push((path, sent));
                });
            }
        });
        CountingStorage { uri, served, asked }
    }
}
