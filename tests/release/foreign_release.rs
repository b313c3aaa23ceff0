//! Issue 47: another project's published release through `verify --release`: its layout found
//! from the asset list, the small signed files read and judged before anything larger than 1 MiB
//! is downloaded (nothing large when the list's signature fails), the assets the layout does not
//! cover said in one line, and a previous release's signed files served under a new tag refused.
//! Signatures are made with the `minisign` crate (an implementation warden does not share).

use std::collections::BTreeMap;

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::release_server::{Blob, CountingStorage};
use crate::common::*;

const C1: &str = "1111111111111111111111111111111111111111";
const C2: &str = "2222222222222222222222222222222222222222";

/// A key pair of the minisign crate, its public half written to `dir/k.pub`.
fn keys(dir: &std::path::Path) -> minisign::SecretKey {
    let pair = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    write(
        &dir.join("k.pub"),
        pair.pk.to_box().unwrap().to_string().as_bytes(),
    );
    pair.sk
}

/// `data` signed (prehashed) by `sk` with the trusted comment `comment`.
fn sign(sk: &minisign::SecretKey, data: &[u8], comment: &str) -> Vec<u8> {
    minisign::sign(None, sk, data, Some(comment), None)
        .unwrap()
        .to_string()
        .into_bytes()
}

/// Release `tag` of o/r at `commit` on a local API whose assets (name, size) are served by
/// `storage` under `/blob/<id>`.
async fn api(assets: &[(String, u64)], (tag, commit): (&str, &str), storage: &str) -> MockServer {
    let api = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/repos/o/r/releases/tags/{tag}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"id": 7, "tag_name": tag, "draft": false, "prerelease": false, "immutable": true}),
        ))
        .mount(&api)
        .await;
    let list: Vec<_> = assets
        .iter()
        .enumerate()
        .map(|(i, (name, size))| json!({"id": 100 + i, "name": name, "size": size}))
        .collect();
    Mock::given(method("GET"))
        .and(path("/repos/o/r/releases/7/assets"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list))
        .mount(&api)
        .await;
    for i in 0..assets.len() {
        let id = 100 + i;
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/releases/assets/{id}")))
            .respond_with(
                ResponseTemplate::new(302)
                    .insert_header("location", format!("{storage}/blob/{id}")),
            )
            .mount(&api)
            .await;
    }
    Mock::given(method("GET"))
        .and(path(format!("/repos/o/r/commits/{tag}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"sha": commit})))
        .mount(&api)
        .await;
    api
}

/// `warden verify --release TAG --repo o/r -p k.pub` in `dir` against `api`.
async fn verify_release(dir: &std::path::Path, api: &MockServer, tag: &str, extra: &[&str]) -> Run {
    let (dir, uri, tag) = (dir.to_path_buf(), api.uri(), tag.to_string());
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        run(warden(&dir)
            .env("GH_TOKEN", "ghp_test")
            .args(["verify", "--release", &tag, "--repo", "o/r", "-p", "k.pub"])
            .args(["--api-url", &uri])
            .args(&extra))
    })
    .await
    .unwrap()
}

/// A goreleaser-style release of eight 256 MiB binaries, `checksums.txt` signed by `signer`
/// ("app v1.0.0"), and an unsigned `README.md`; the storage that serves it.
fn big_release(signer: &minisign::SecretKey) -> (Vec<(String, u64)>, CountingStorage) {
    use sha2::Digest as _;
    let block: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let size = 256u64 << 20;
    let mut hasher = sha2::Sha256::new();
    for _ in 0..256 {
        hasher.update(&block);
    }
    let hex = format!("{:x}", hasher.finalize());
    let names: Vec<String> = (0..8).map(|i| format!("app-{i}.bin")).collect();
    let list: String = names.iter().map(|n| format!("{hex}  {n}\n")).collect();
    let sig = sign(signer, list.as_bytes(), "app v1.0.0");
    let mut assets = vec![
        ("checksums.txt".to_string(), list.len() as u64),
        ("checksums.txt.minisig".to_string(), sig.len() as u64),
        ("README.md".to_string(), 6),
    ];
    let mut blobs = BTreeMap::new();
    blobs.insert("/blob/100".to_string(), Blob::Bytes(list.into_bytes()));
    blobs.insert("/blob/101".to_string(), Blob::Bytes(sig));
    blobs.insert("/blob/102".to_string(), Blob::Bytes(b"readme".to_vec()));
    for (i, n) in names.iter().enumerate() {
        assets.push((n.clone(), size));
        blobs.insert(
            format!("/blob/{}", 103 + i),
            Blob::Repeated {
                block: block.clone(),
                size,
            },
        );
    }
    (assets, CountingStorage::start(blobs))
}

const SMALL: [&str; 3] = ["/blob/100", "/blob/101", "/blob/102"];

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_release_s_signed_list_is_judged_before_anything_large_is_downloaded() {
    let t = tempfile::tempdir().unwrap();
    let sk = keys(t.path());
    let (assets, storage) = big_release(&sk);
    let api = api(&assets, ("v1.0.0", C1), &storage.uri).await;
    let out = verify_release(t.path(), &api, "v1.0.0", &[])
        .await
        .expect(0);
    let id = out.stdout.split("key ").nth(1).unwrap()[..16].to_string();
    let apps: String = (0..8)
        .map(|i| format!("OK    app-{i}.bin  sha256\n"))
        .collect();
    assert_eq!(
        out.stdout,
        format!("OK    checksums.txt  key {id} (k.pub)  tag v1.0.0\n{apps}9 verified, 0 failed, 0 errors\n")
    );
    assert_eq!(
        out.stderr,
        format!("warden: note: release v1.0.0 of o/r: 11 assets, tag at commit {C1}\nwarden: note: GitHub says the release is immutable (its tag and assets cannot change)\nwarden: note: not signed (not in checksums.txt, no signature of their own): README.md\nwarden: note: from GitHub's attestations: no release attestation, though GitHub says the release is immutable; no build provenance for README.md, app-0.bin, app-1.bin and 6 more\n")
    );
    // The list and its signature came first; what was served before the first large asset is
    // under 1 MiB.
    let asked = storage.asked.lock().unwrap().clone();
    let first_large = asked
        .iter()
        .position(|p| !SMALL.contains(&p.as_str()))
        .unwrap();
    assert!(
        asked[..2].iter().all(|p| SMALL[..2].contains(&p.as_str())),
        "{asked:?}"
    );
    let served = storage.served.lock().unwrap().clone();
    let before: u64 = served
        .iter()
        .filter(|(p, _)| asked[..first_large].contains(p))
        .map(|(_, n)| n)
        .sum();
    assert!(
        before < 1 << 20,
        "{before} bytes before the first large asset"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_list_whose_signature_fails_downloads_nothing_large() {
    let t = tempfile::tempdir().unwrap();
    let _trusted = keys(t.path());
    let thief = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let (assets, storage) = big_release(&thief.sk);
    let api = api(&assets, ("v1.0.0", C1), &storage.uri).await;
    let out = verify_release(t.path(), &api, "v1.0.0", &[])
        .await
        .expect(1);
    let id_of = |text: &str| {
        release_warden::minisign::PublicKey::parse(text)
            .unwrap()
            .key_id
            .to_string()
    };
    let trusted = id_of(&std::fs::read_to_string(t.path().join("k.pub")).unwrap());
    let stolen = id_of(&thief.pk.to_box().unwrap().to_string());
    let why = format!("signed by key {stolen}, which is not trusted (trusted: {trusted})");
    let apps: String = (0..8)
        .map(|i| {
            format!("FAIL  app-{i}.bin  not downloaded: checksums.txt does not verify ({why})\n")
        })
        .collect();
    assert_eq!(
        out.stdout,
        format!("FAIL  checksums.txt  {why}\n{apps}FAIL  README.md  a file, not listed in checksums.txt: unverified content in the release (pass --allow-unlisted to accept it)\n0 verified, 10 failed, 0 errors\n")
    );
    let served = storage.served.lock().unwrap().clone();
    let total: u64 = served.iter().map(|(_, n)| n).sum();
    assert!(total < 1 << 20, "{total} bytes served: {served:?}");
    assert!(
        served.iter().all(|(p, _)| SMALL.contains(&p.as_str())),
        "{served:?}"
    );
}

/// The zkEVM guest programs of the previous release (their ELF and its signature, "<file>
/// ethrex v1.0.0 <commit>") served as the assets of v2.0.0: the release's tag and commit are held
/// against what the comment binds.
#[tokio::test(flavor = "multi_thread")]
async fn a_previous_release_s_signed_elf_under_a_new_tag_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let sk = keys(t.path());
    let elf = b"\x7fELF guest program".to_vec();
    let sig = sign(&sk, &elf, &format!("guest.elf ethrex v1.0.0 {C1}"));
    let mut blobs = BTreeMap::new();
    blobs.insert("/blob/100".to_string(), Blob::Bytes(elf.clone()));
    blobs.insert("/blob/101".to_string(), Blob::Bytes(sig.clone()));
    let storage = CountingStorage::start(blobs);
    let assets = [
        ("guest.elf".to_string(), elf.len() as u64),
        ("guest.elf.minisig".to_string(), sig.len() as u64),
    ];
    let api_v1 = api(&assets, ("v1.0.0", C1), &storage.uri).await;
    let out = verify_release(t.path(), &api_v1, "v1.0.0", &[])
        .await
        .expect(0);
    let id = out.stdout.split("key ").nth(1).unwrap()[..16].to_string();
    assert_eq!(
        out.stdout,
        format!("OK    guest.elf  key {id} (k.pub)  tag v1.0.0  file guest.elf  commit {C1}\n1 verified, 0 failed, 0 errors\n")
    );
    let api_v2 = api(&assets, ("v2.0.0", C2), &storage.uri).await;
    let out = verify_release(t.path(), &api_v2, "v2.0.0", &[])
        .await
        .expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  guest.elf  signed for tag v1.0.0, expected v2.0.0\n0 verified, 1 failed, 0 errors\n"
    );
}

/// `--only NAME`: the list, its signature and that one file are all that is downloaded.
#[tokio::test(flavor = "multi_thread")]
async fn only_one_file_of_a_foreign_release_is_downloaded() {
    let t = tempfile::tempdir().unwrap();
    let sk = keys(t.path());
    let (assets, storage) = big_release(&sk);
    let api = api(&assets, ("v1.0.0", C1), &storage.uri).await;
    let out = verify_release(t.path(), &api, "v1.0.0", &["--only", "app-3.bin"])
        .await
        .expect(0);
    let id = out.stdout.split("key ").nth(1).unwrap()[..16].to_string();
    let skipped: String = [0, 1, 2, 4, 5, 6, 7]
        .iter()
        .map(|i| format!("SKIP  app-{i}.bin  not selected by --only\n"))
        .collect();
    assert_eq!(
        out.stdout,
        format!("OK    checksums.txt  key {id} (k.pub)  tag v1.0.0\nOK    app-3.bin  sha256\n{skipped}2 verified, 0 failed, 0 errors, 7 skipped\n")
    );
    let mut asked = storage.asked.lock().unwrap().clone();
    asked.sort();
    assert_eq!(asked, ["/blob/100", "/blob/101", "/blob/106"]);
}

/// A signed one-entry checksum beside each asset (`<asset>.sha256` and its `.minisig`, the
/// layout of a release whose maintainer signs checksums, not archives): the checksums and their
/// signatures are read and judged first, then the assets against them.
#[tokio::test(flavor = "multi_thread")]
async fn per_file_signed_checksums_of_a_published_release() {
    use sha2::Digest as _;
    let t = tempfile::tempdir().unwrap();
    let sk = keys(t.path());
    let mut assets = Vec::new();
    let mut blobs = BTreeMap::new();
    for (i, name) in ["clat-linux.tar.gz", "clat-macos.tar.gz"]
        .iter()
        .enumerate()
    {
        let bytes = format!("the archive {name}").into_bytes();
        let sums = format!("{:x}  {name}\n", sha2::Sha256::digest(&bytes));
        let sig = sign(
            &sk,
            sums.as_bytes(),
            "CLAT v1.0.0 release checksum manifests",
        );
        for (j, (n, b)) in [
            (name.to_string(), bytes),
            (format!("{name}.sha256"), sums.into_bytes()),
            (format!("{name}.sha256.minisig"), sig),
        ]
        .into_iter()
        .enumerate()
        {
            assets.push((n, b.len() as u64));
            blobs.insert(format!("/blob/{}", 100 + 3 * i + j), Blob::Bytes(b));
        }
    }
    let storage = CountingStorage::start(blobs);
    let api_v1 = api(&assets, ("v1.0.0", C1), &storage.uri).await;
    let out = verify_release(t.path(), &api_v1, "v1.0.0", &[])
        .await
        .expect(0);
    let id = out.stdout.split("key ").nth(1).unwrap()[..16].to_string();
    assert_eq!(
        out.stdout,
        format!("OK    clat-linux.tar.gz.sha256  key {id} (k.pub)  tag v1.0.0\nOK    clat-macos.tar.gz.sha256  key {id} (k.pub)  tag v1.0.0\nOK    clat-linux.tar.gz  sha256\nOK    clat-macos.tar.gz  sha256\n4 verified, 0 failed, 0 errors\n")
    );
    // The checksums and their signatures were read before either archive.
    let asked = storage.asked.lock().unwrap().clone();
    let first_archive = asked
        .iter()
        .position(|p| p == "/blob/100" || p == "/blob/103")
        .unwrap();
    assert_eq!(first_archive, 4, "{asked:?}");
    // Under the next tag, the same assets are refused, and no archive is downloaded.
    storage.asked.lock().unwrap().clear();
    let api_v2 = api(&assets, ("v2.0.0", C2), &storage.uri).await;
    let out = verify_release(t.path(), &api_v2, "v2.0.0", &[])
        .await
        .expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  clat-linux.tar.gz.sha256  signed for tag v1.0.0, expected v2.0.0\nFAIL  clat-macos.tar.gz.sha256  signed for tag v1.0.0, expected v2.0.0\nFAIL  clat-linux.tar.gz  not verified: clat-linux.tar.gz.sha256 did not verify, and there is no clat-linux.tar.gz.minisig\nFAIL  clat-macos.tar.gz  not verified: clat-macos.tar.gz.sha256 did not verify, and there is no clat-macos.tar.gz.minisig\n0 verified, 4 failed, 0 errors\n"
    );
    let asked = storage.asked.lock().unwrap().clone();
    assert!(
        !asked.iter().any(|p| p == "/blob/100" || p == "/blob/103"),
        "{asked:?}"
    );
}
