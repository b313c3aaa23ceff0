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
