//! Issue 48: GitHub's release attestation and build provenance as witnesses beside the
//! minisign signature. Real public bundles (`tests/fixtures/attestations/`) verify offline under
//! the GitHub root warden embeds, and each way one is wrong fails with its own message; on a
//! local server standing for GitHub, releases whose three witnesses agree verify and each single
//! disagreement fails naming both sides, with bundles minted offline under a test root
//! (`common::sigstore`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::provenance::{release, serve, verify, Records, COMMIT};
use crate::common::sigstore::{provenance_statement, release_statement, Identity, TestPki};
use crate::common::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/attestations")
        .join(name)
}

/// The commit of release v6 of bdehamer/delme, which `github_release_bundle.json` attests.
const DELME_COMMIT: &str = "c5e17a62e06a1d201570249c61fae531e9244e1b";

/// Release v6 of bdehamer/delme as its maintainer would sign it with warden: `rel/artifact.zip`
/// (the bytes GitHub attests, or `bytes`) and its signed SHA256SUMS.
fn delme(t: &Path, bytes: &[u8]) {
    demo_keys(t);
    write(&t.join("rel/artifact.zip"), bytes);
    run(warden(t).env("SOURCE_DATE_EPOCH", "1748635000").args([
        "sign",
        "rel",
        "--secret-key",
        "secret/demo.key",
        "--tag",
        "v6",
        "--repo",
        "bdehamer/delme",
        "--commit",
        DELME_COMMIT,
    ]))
    .expect(0);
}

fn verify_offline(t: &Path, bundle: &Path, extra: &[&str]) -> Run {
    run(warden(t)
        .args(["verify", "rel", "--attestations"])
        .arg(bundle)
        .args(extra))
}

const DELME_OK: &str = "OK    rel/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v6\nOK    rel/artifact.zip  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v6\n";

#[test]
fn github_s_real_release_attestation_verifies_offline_and_agrees() {
    let t = tempfile::tempdir().unwrap();
    delme(
        t.path(),
        &std::fs::read(fixture("github_release_artifact.zip")).unwrap(),
    );
    let out = verify_offline(t.path(), &fixture("github_release_bundle.json"), &[]).expect(0);
    assert_eq!(
        out.stdout,
        format!("{DELME_OK}OK    release attestation  GitHub's release signer: release v6 of bdehamer/delme at commit {DELME_COMMIT}, 1 asset (signed 2025-05-30T20:13:39Z)\n3 verified, 0 failed, 0 errors\n")
    );
    assert_eq!(
        out.stderr,
        "warden: note: SHA256SUMS is not in GitHub's release attestation\nwarden: note: from GitHub's attestations: no build provenance for artifact.zip\nwarden: note: the witnesses agree: the minisign signature, GitHub's release attestation\n"
    );
    // The verdict's JSON names the witnesses and what each says.
    let json = verify_offline(
        t.path(),
        &fixture("github_release_bundle.json"),
        &["--format", "json"],
    )
    .expect(0);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        report["witnesses"],
        json!([
            {"witness": "minisign", "status": "ok", "signer": "key 8F457D1A3C3B50B5",
             "repo": "bdehamer/delme", "tag": "v6", "commit": DELME_COMMIT},
            {"witness": "release-attestation", "status": "ok",
             "signer": "https://dotcom.releases.github.com", "root": "GitHub's trusted root",
             "signed_at": "2025-05-30T20:13:39Z",
             "repo": "bdehamer/delme", "tag": "v6", "commit": DELME_COMMIT}
        ])
    );
    // What keys/policy.toml requires and is not there fails.
    write(
        &t.path().join("keys/policy.toml"),
        b"require_attestation = \"both\"\n",
    );
    let out = verify_offline(t.path(), &fixture("github_release_bundle.json"), &[]).expect(1);
    assert_eq!(
        out.stdout,
        format!("{DELME_OK}OK    release attestation  GitHub's release signer: release v6 of bdehamer/delme at commit {DELME_COMMIT}, 1 asset (signed 2025-05-30T20:13:39Z)\nFAIL  build provenance  none for artifact.zip; keys/policy.toml requires it (require_attestation = \"both\") (`gh attestation download` saves them; pass them with --attestations FILE)\n3 verified, 1 failed, 0 errors\n")
    );
    std::fs::remove_file(t.path().join("keys/policy.toml")).unwrap();
    // Held against what the caller expects: another tag fails on both witnesses.
    let out = verify_offline(
        t.path(),
        &fixture("github_release_bundle.json"),
        &["--expect-tag", "v7"],
    )
    .expect(1);
    assert_eq!(
        out.stdout,
        "FAIL  rel/SHA256SUMS  signed for tag v6, expected v7\nFAIL  rel/artifact.zip  signed for tag v6, expected v7\nFAIL  release attestation  GitHub attests tag v6; --expect-tag is v7\n0 verified, 3 failed, 0 errors\n"
    );
}

/// A copy of `bundle` whose statement was changed by `edit` after it was signed (what a
/// tampering mirror serves).
fn tampered(bundle: &Path, edit: impl Fn(&mut Value)) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let text = std::fs::read_to_string(bundle).unwrap();
    let mut v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|_| serde_json::from_str(text.lines().next().unwrap()).unwrap());
    let payload = v["dsseEnvelope"]["payload"].as_str().unwrap();
    let mut statement: Value = serde_json::from_slice(&b64.decode(payload).unwrap()).unwrap();
    edit(&mut statement);
    v["dsseEnvelope"]["payload"] = b64.encode(statement.to_string()).into();
    v.to_string()
}

#[test]
fn each_way_a_real_attestation_is_wrong_fails_with_its_own_message() {
    let t = tempfile::tempdir().unwrap();
    let zip = std::fs::read(fixture("github_release_artifact.zip")).unwrap();
    delme(t.path(), &zip);
    let bundle = fixture("github_release_bundle.json");
    let origin = bundle.display().to_string();
    let fail = |extra: &[&str], bundle: &Path| {
        let out = verify_offline(t.path(), bundle, extra).expect(1);
        out.stdout
    };
    // A tampered tag: the statement no longer matches its signature.
    let tag = t.path().join("tag.sigstore.json");
    write(
        &tag,
        tampered(&bundle, |s| s["predicate"]["tag"] = "v7".into()).as_bytes(),
    );
    assert_eq!(
        fail(&[], &tag),
        format!("{DELME_OK}FAIL  release attestation  its signature does not verify: the statement was changed after it was signed ({})\n2 verified, 1 failed, 0 errors\n", tag.display())
    );
    // A certificate that is not GitHub's release signer: build provenance's, presented as a
    // release attestation.
    let wrong = t.path().join("identity.sigstore.json");
    let provenance = fixture("github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl");
    write(
        &wrong,
        tampered(&provenance, |s| {
            s["predicateType"] = "https://in-toto.io/attestation/release/v0.1".into()
        })
        .as_bytes(),
    );
    assert_eq!(
        fail(&[], &wrong),
        format!("{DELME_OK}FAIL  release attestation  not signed by GitHub's release signer (https://dotcom.releases.github.com): its certificate is for https://github.com/actions/attest-demo/.github/workflows/build-python.yml@refs/heads/main ({})\n2 verified, 1 failed, 0 errors\n", wrong.display())
    );
    // The public-good root in place of GitHub's: it vouches for no GitHub timestamp.
    let public_good = fixture("public_good_trusted_root.json");
    assert_eq!(
        fail(&["--trusted-root", public_good.to_str().unwrap()], &bundle),
        format!("{DELME_OK}FAIL  release attestation  its signing time is not vouched for by the trusted root {}: invalid RFC 3161 timestamp: TSA timestamp verification failed: no timestamp authorities configured in trusted root ({origin})\n2 verified, 1 failed, 0 errors\n", public_good.display())
    );
    // GitHub's root, every authority expired before the bundle was signed.
    let mut root: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("trusted_root_github.json")).unwrap(),
    )
    .unwrap();
    for list in ["certificateAuthorities", "timestampAuthorities"] {
        for a in root[list].as_array_mut().unwrap() {
            a["validFor"] = json!({"start": "2020-01-01T00:00:00Z", "end": "2021-01-01T00:00:00Z"});
        }
    }
    let expired = t.path().join("expired-root.json");
    write(&expired, root.to_string().as_bytes());
    assert_eq!(
        fail(&["--trusted-root", expired.to_str().unwrap()], &bundle),
        format!("{DELME_OK}FAIL  release attestation  its signing time is not vouched for by the trusted root {}: RFC 3161 timestamp 2025-05-30T20:13:39Z is outside the validity period of the authority that signed it ({origin})\n2 verified, 1 failed, 0 errors\n", expired.display())
    );
    // Another asset under the attested name: replaced.
    let t2 = tempfile::tempdir().unwrap();
    delme(
        t2.path(),
        &std::fs::read(fixture("github_release_artifact_invalid.zip")).unwrap(),
    );
    let out = verify_offline(t2.path(), &bundle, &[]).expect(1);
    assert_eq!(
        out.stdout,
        "OK    rel/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v6\nFAIL  rel/artifact.zip  replaced: GitHub's release attestation lists artifact.zip as sha256:e15b593c6ab8d7725a3cc82226ef816cac6bf9c70eed383bd459295cc65f5ec3, the file is sha256:384c5099764143ba93df749445eaa76933c320f34a1099a5ea533859905039a1\nOK    release attestation  GitHub's release signer: release v6 of bdehamer/delme at commit c5e17a62e06a1d201570249c61fae531e9244e1b, 1 asset (signed 2025-05-30T20:13:39Z)\n2 verified, 1 failed, 0 errors\n"
    );
    // A malformed bundle, and a file that is not one: the one fails, the other is bad input.
    let broken = fixture("github_provenance_demo-0.0.12-py3-none-any-bundle-missing-cert.jsonl");
    let out = verify_offline(t.path(), &broken, &[]).expect(1);
    assert!(
        out.stdout
            .contains("FAIL  attestation  not a Sigstore bundle: "),
        "{}",
        out.stdout
    );
    write(&t.path().join("notes.txt"), b"not a bundle\n");
    let out = verify_offline(t.path(), &t.path().join("notes.txt"), &[]).expect(2);
    assert_eq!(
        out.stderr,
        format!(
            "warden: --attestations {}:1: not JSON (expected ident at line 1 column 2)\n",
            t.path().join("notes.txt").display()
        )
    );
}

/// The wheel GitHub's real provenance attests, signed in "its" run (or another).
fn provenance_release(t: &Path, run_id: &str) {
    demo_keys(t);
    std::fs::create_dir_all(t.join("rel")).unwrap();
    std::fs::copy(
        fixture("github_provenance_demo-0.0.12-py3-none-any.whl"),
        t.join("rel/github_provenance_demo-0.0.12-py3-none-any.whl"),
    )
    .unwrap();
    run(warden(t)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_RUN_ID", run_id)
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env(
            "GITHUB_WORKFLOW_REF",
            "actions/attest-demo/.github/workflows/build-python.yml@refs/heads/main",
        )
        .env("SOURCE_DATE_EPOCH", "1713807300")
        .args(["sign", "rel", "--secret-key", "secret/demo.key"])
        .args(["--tag", "v0.0.12", "--repo", "actions/attest-demo"])
        .args(["--commit", "a6c23b9806c593664f68637c8f9d45dfcf98b2db"]))
    .expect(0);
}

#[test]
fn github_s_real_build_provenance_names_the_run_the_signature_binds() {
    let bundle = fixture("github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl");
    let t = tempfile::tempdir().unwrap();
    provenance_release(t.path(), "8788389601");
    let out = verify_offline(t.path(), &bundle, &[]).expect(0);
    assert_eq!(
        out.stdout.lines().nth(2).unwrap(),
        "OK    build provenance of github_provenance_demo-0.0.12-py3-none-any.whl  run 8788389601 (attempt 1) of .github/workflows/build-python.yml in actions/attest-demo at commit a6c23b9806c593664f68637c8f9d45dfcf98b2db; no environment"
    );
    // Signed in another run than the one GitHub certified: both named.
    let t = tempfile::tempdir().unwrap();
    provenance_release(t.path(), "42");
    let out = verify_offline(t.path(), &bundle, &[]).expect(1);
    assert_eq!(
        out.stdout.lines().nth(2).unwrap(),
        "FAIL  build provenance of github_provenance_demo-0.0.12-py3-none-any.whl  built by run 8788389601 (attempt 1); the minisign signature binds run 42 (attempt 1)"
    );
    // Public-good provenance (a reusable workflow of another repository signed it for
    // malancas/attest-demo) verifies under the embedded public-good root, and names the caller.
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    std::fs::create_dir_all(t.path().join("rel")).unwrap();
    std::fs::copy(
        fixture("reusable-workflow-artifact"),
        t.path().join("rel/demo.whl"),
    )
    .unwrap();
    run(warden(t.path()).args(["sign", "rel", "--secret-key", "secret/demo.key"])).expect(0);
    let out = verify_offline(
        t.path(),
        &fixture("reusable-workflow-attestation.sigstore.json"),
        &[],
    )
    .expect(0);
    assert_eq!(
        out.stdout.lines().nth(2).unwrap(),
        "OK    build provenance of demo.whl  run 9228858953 (attempt 1) of .github/workflows/shared.yml in malancas/attest-demo at commit 95baf27389e83e6a5c48f42e190d48d7abcea19e; no environment"
    );
}

/// `--attestations` reads no network: with every way out pointing at a server that is gone,
/// the release still verifies.
#[tokio::test(flavor = "multi_thread")]
async fn attestations_given_as_files_open_no_socket() {
    let t = tempfile::tempdir().unwrap();
    delme(
        t.path(),
        &std::fs::read(fixture("github_release_artifact.zip")).unwrap(),
    );
    let gone = MockServer::start().await;
    let uri = gone.uri();
    drop(gone);
    let dir = t.path().to_path_buf();
    let bundle = fixture("github_release_bundle.json");
    let out = tokio::task::spawn_blocking(move || {
        run(warden(&dir)
            .env("GITHUB_API_URL", &uri)
            .env("HTTPS_PROXY", &uri)
            .env("HTTP_PROXY", &uri)
            .env("ALL_PROXY", &uri)
            .args(["verify", "rel", "--attestations"])
            .arg(&bundle))
    })
    .await
    .unwrap()
    .expect(0);
    assert!(
        out.stdout.contains("OK    release attestation  "),
        "{}",
        out.stdout
    );
}

/// The embedded GitHub root is the one GitHub publishes (the fixture, byte for byte).
#[test]
fn the_embedded_github_root_is_github_s() {
    let fixture_root: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("trusted_root_github.json")).unwrap(),
    )
    .unwrap();
    let embedded: Value =
        serde_json::from_str(sigstore_trust_root::SIGSTORE_GITHUB_TRUSTED_ROOT).unwrap();
    assert_eq!(embedded, fixture_root);
}

// ---------------------------------------------------------------------------------------------
// A published release on a local GitHub, with minted bundles.

/// What GitHub attests of the release `records` serves: a release attestation (tag, commit,
/// every asset) and provenance of `app` by run 555 attempt 1 in environment `release`, each
/// changed by the test.
struct Attested {
    release: Value,
    release_by: Identity,
    provenance_of: Identity,
}

fn attested(records: &Records) -> Attested {
    let assets: Vec<(&str, &[u8])> = records
        .files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    Attested {
        release: release_statement(("o/r", "v1.2.3", COMMIT), &assets),
        release_by: Identity::release_signer(),
        provenance_of: Identity::run(
            "o/r",
            (".github/workflows/release.yml", "refs/tags/v1.2.3", COMMIT),
            (555, 1),
            Some("release"),
        ),
    }
}

fn app(records: &Records) -> (&str, &[u8]) {
    let (n, b) = records.files.iter().find(|(n, _)| n == "app").unwrap();
    (n.as_str(), b.as_slice())
}

/// Serves GitHub's attestations of every asset of `records` on `api` (each digest answered with
/// the bundles whose statement lists it), the provenance through a snappy-compressed
/// `bundle_url` on `storage` when `by_url`.
async fn serve_attestations(
    (api, storage): (&MockServer, &MockServer),
    records: &Records,
    bundles: &[String],
    by_url: bool,
) {
    use sha2::Digest as _;
    for (i, b) in bundles.iter().enumerate() {
        let compressed = snap::raw::Encoder::new()
            .compress_vec(b.as_bytes())
            .unwrap();
        Mock::given(method("GET"))
            .and(path(format!("/bundles/{i}.json.sn")))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(compressed))
            .mount(storage)
            .await;
    }
    for (_, bytes) in &records.files {
        let hex = format!("{:x}", sha2::Sha256::digest(bytes));
        let items: Vec<Value> = bundles
            .iter()
            .enumerate()
            .filter(|(_, b)| statement_lists(b, &hex))
            .map(|(i, b)| match by_url {
                true => json!({"bundle": null, "bundle_url": format!("{}/bundles/{i}.json.sn?sig=x", storage.uri())}),
                false => json!({"bundle": serde_json::from_str::<Value>(b).unwrap()}),
            })
            .collect();
        let answer = match items.is_empty() {
            true => ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
            false => ResponseTemplate::new(200).set_body_json(json!({"attestations": items})),
        };
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/attestations/sha256:{hex}")))
            .respond_with(answer)
            .mount(api)
            .await;
    }
}

/// Whether the statement of the bundle `json` lists the digest `hex`.
fn statement_lists(json: &str, hex: &str) -> bool {
    use base64::Engine as _;
    let v: Value = serde_json::from_str(json).unwrap();
    let payload = base64::engine::general_purpose::STANDARD
        .decode(v["dsseEnvelope"]["payload"].as_str().unwrap())
        .unwrap();
    let s: Value = serde_json::from_slice(&payload).unwrap();
    s["subject"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["digest"]["sha256"] == hex)
}

/// Release v1.2.3 of o/r signed in its pipeline, GitHub's attestations of it (`change` alters
/// what they say), and `verify --release` against them under the test root.
async fn verify_attested(change: impl Fn(&Records, &mut Attested), by_url: bool) -> (Run, Run) {
    let t = tempfile::tempdir().unwrap();
    let records = release(t.path());
    let mut a = attested(&records);
    change(&records, &mut a);
    let pki = TestPki::new();
    write(
        &t.path().join("root.json"),
        pki.trusted_root(("2020-01-01T00:00:00Z", None)).as_bytes(),
    );
    let bundles = [
        pki.mint(&a.release, &a.release_by),
        pki.mint(&provenance_statement(&[app(&records)]), &a.provenance_of),
    ];
    let (api, storage) = serve(&records).await;
    serve_attestations((&api, &storage), &records, &bundles, by_url).await;
    let root = ["--trusted-root", "root.json"];
    let text = verify(t.path(), &api, &[&["--out", "got"], &root[..]].concat()).await;
    let json = verify(
        t.path(),
        &api,
        &[&["--out", "got2", "--format", "json"], &root[..]].concat(),
    )
    .await;
    (text, json)
}

const MINISIGN_OK: &str = "OK    got/SHA256SUMS  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  run 555\nOK    got/app  key 8F457D1A3C3B50B5 (keys/demo.pub)  tag v1.2.3  run 555\nOK    got/SHA256SUMS.minisig (run 555 (attempt 1) of .github/workflows/release.yml in environment release)  the run and the uploads match GitHub's records\n";

#[tokio::test(flavor = "multi_thread")]
async fn three_witnesses_that_agree_verify() {
    for by_url in [false, true] {
        let (text, json) = verify_attested(|_, _| {}, by_url).await;
        let text = text.expect(0);
        assert_eq!(
            text.stdout,
            format!("{MINISIGN_OK}OK    release attestation  GitHub's release signer: release v1.2.3 of o/r at commit {COMMIT}, 4 assets (signed 2025-06-01T12:00:00Z)\nOK    build provenance of app  run 555 (attempt 1) of .github/workflows/release.yml in o/r at commit {COMMIT}; environment release\n5 verified, 0 failed, 0 errors\n")
        );
        assert!(
            text.stderr.contains("warden: note: the witnesses agree: the minisign signature, GitHub's release attestation, GitHub's build provenance\n"),
            "{}",
            text.stderr
        );
        let report: Value = serde_json::from_str(&json.expect(0).stdout).unwrap();
        let kinds: Vec<&str> = report["witnesses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["witness"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["minisign", "release-attestation", "provenance"]);
        assert_eq!(
            report["witnesses"][2],
            json!({"witness": "provenance", "status": "ok",
                   "signer": "https://github.com/o/r/.github/workflows/release.yml@refs/tags/v1.2.3",
                   "root": "the trusted root root.json", "signed_at": "2025-06-01T12:00:00Z",
                   "repo": "o/r", "commit": COMMIT, "ref": "refs/tags/v1.2.3",
                   "workflow": "o/r/.github/workflows/release.yml@refs/tags/v1.2.3",
                   "run_id": 555, "attempt": 1, "environment": "release", "files": ["app"]})
        );
    }
}

/// The line of the attestation that disagrees, for each single disagreement.
#[tokio::test(flavor = "multi_thread")]
async fn each_single_disagreement_fails_naming_both_sides() {
    const C2: &str = "2222222222222222222222222222222222222222";
    type Change = Box<dyn Fn(&Records, &mut Attested)>;
    let cases: Vec<(&str, Change, &str)> = vec![
        (
            "another run",
            Box::new(|_, a| {
                a.provenance_of = Identity::run(
                    "o/r",
                    (".github/workflows/release.yml", "refs/tags/v1.2.3", COMMIT),
                    (556, 1),
                    Some("release"),
                )
            }),
            "FAIL  build provenance of app  built by run 556 (attempt 1); the minisign signature binds run 555 (attempt 1)",
        ),
        (
            "another commit",
            Box::new(|_, a| {
                a.provenance_of = Identity::run(
                    "o/r",
                    (".github/workflows/release.yml", "refs/tags/v1.2.3", C2),
                    (555, 1),
                    Some("release"),
                )
            }),
            "FAIL  build provenance of app  built from commit 2222222222222222222222222222222222222222; the tag is at 3470838ef50e566f292860fb1d8aee4937d11849",
        ),
        (
            "another tag",
            Box::new(|r, a| {
                let assets: Vec<(&str, &[u8])> =
                    r.files.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
                a.release = release_statement(("o/r", "v1.2.2", COMMIT), &assets);
            }),
            "FAIL  release attestation  GitHub attests tag v1.2.2; the release is v1.2.3",
        ),
        (
            "an asset the release attestation does not list",
            Box::new(|r, a| {
                let assets: Vec<(&str, &[u8])> = r
                    .files
                    .iter()
                    .filter(|(n, _)| n != "app")
                    .map(|(n, b)| (n.as_str(), b.as_slice()))
                    .collect();
                a.release = release_statement(("o/r", "v1.2.3", COMMIT), &assets);
            }),
            "FAIL  got/app  not in GitHub's release attestation: app (sha256:",
        ),
        (
            "provenance from another repository's workflow",
            Box::new(|_, a| {
                a.provenance_of = Identity::run(
                    "evil/fork",
                    (".github/workflows/release.yml", "refs/tags/v1.2.3", COMMIT),
                    (555, 1),
                    Some("release"),
                )
            }),
            "FAIL  build provenance of app  built by a workflow of evil/fork; the release is of o/r; built by workflow evil/fork/.github/workflows/release.yml@refs/tags/v1.2.3; the minisign signature binds o/r/.github/workflows/release.yml@refs/tags/v1.2.3",
        ),
        (
            "a release attestation signed by a workflow, not GitHub's release signer",
            Box::new(|_, a| {
                a.release_by = Identity::run(
                    "o/r",
                    (".github/workflows/release.yml", "refs/tags/v1.2.3", COMMIT),
                    (555, 1),
                    None,
                )
            }),
            "FAIL  release attestation  not signed by GitHub's release signer (https://dotcom.releases.github.com): its certificate is for https://github.com/o/r/.github/workflows/release.yml@refs/tags/v1.2.3",
        ),
    ];
    for (what, change, line) in cases {
        let (text, _) = verify_attested(change, false).await;
        eprintln!("case: {what}");
        let out = text.expect(1);
        assert!(
            out.stdout.lines().any(|l| l.starts_with(line)),
            "{what}: {}",
            out.stdout
        );
    }
}
