//! Issue 39: `warden audit --org ORG --inventory` against a local organisation of twelve
//! repositories (`common/folder_org.rs`) with seven keys: one committed in four repositories and
//! under a second id in a fifth, stored as an organisation secret seven can read; one in an
//! environment secret; one only in release signatures; a revoked one a workflow still names; one
//! expiring; two committed and unused; one named by a workflow outside keys/. The JSON equals the
//! checked-in expectation, each finding
//! appears once with its repositories, and the inventory adds at most three requests per
//! repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

use crate::common::folder_org::{FakeRepo, FolderOrg, OrgSecret};
use crate::common::*;

/// 2099-01-01: a SOURCE_DATE_EPOCH the inventory ignores (validity is judged by the clock).
const NOW: &str = "4070908800";
const SIGNED_AT: &str = "1780000000";

/// The keys, by name: (seed, id).
const KEYS: [(&str, &[u8; 32], &str); 9] = [
    (
        "shared",
        b"inventory test key: shared......",
        "1111111111111111",
    ),
    (
        "shared-2",
        b"inventory test key: shared......",
        "1A1A1A1A1A1A1A1A",
    ),
    (
        "env",
        b"inventory test key: environment.",
        "2222222222222222",
    ),
    (
        "stranger",
        b"inventory test key: stranger....",
        "3333333333333333",
    ),
    (
        "revoked",
        b"inventory test key: revoked.....",
        "4444444444444444",
    ),
    (
        "new",
        b"inventory test key: new.........",
        "5555555555555555",
    ),
    (
        "expiring",
        b"inventory test key: expiring....",
        "6666666666666666",
    ),
    (
        "spare",
        b"inventory test key: spare.......",
        "7777777777777777",
    ),
    (
        "spare-2",
        b"inventory test key: spare two...",
        "8888888888888888",
    ),
];

fn workflow(secret: &str, environment: Option<&str>, extra: &str) -> String {
    let env = environment.map_or(String::new(), |e| format!("    environment: {e}\n"));
    format!(
        "name: release\non:\n  push:\n    tags: [\"v*\"]\npermissions: {{}}\njobs:\n  sign:\n    runs-on: ubuntu-latest\n{env}    permissions:\n      contents: read\n    steps:\n      - run: warden sign dist/ --secret-key-env KEY{extra}\n        env:\n          KEY: ${{{{ secrets.{secret} }}}}\n"
    )
}

struct Org {
    dir: tempfile::TempDir,
    secrets: PathBuf,
}

impl Org {
    fn key(&self, name: &str) -> (PathBuf, PathBuf) {
        (
            self.secrets.join(format!("{name}.pub")),
            self.secrets.join(format!("{name}.key")),
        )
    }

    fn repo(&self, name: &str) -> PathBuf {
        self.dir.path().join("repos").join(name)
    }

    fn put_key(&self, repo: &str, key: &str, path: &str) {
        self.put_key_file(repo, &self.key(key).0, path);
    }

    fn put_key_file(&self, repo: &str, public: &Path, path: &str) {
        let dest = self.repo(repo).join(path);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(public, dest).unwrap();
    }

    /// A key made to carry the id of the organisation's shared key (1111111111111111: an id is
    /// a label in the key file), committed in tools-f as keys/forged.pub; its .pub file.
    fn forge_shared_id(&self, repos: &mut [FakeRepo]) -> PathBuf {
        let forged = self.dir.path().join("forged");
        seeded_keypair(
            &forged.join("f.pub"),
            &forged.join("f.key"),
            b"inventory test key: forged id...",
            "1111111111111111",
        );
        self.put_key_file("tools-f", &forged.join("f.pub"), "keys/forged.pub");
        let at = repos.iter().position(|r| r.name == "tools-f").unwrap();
        repos[at] = FakeRepo::from_dir("tools-f", &self.repo("tools-f"));
        forged.join("f.pub")
    }

    fn put(&self, repo: &str, path: &str, text: &str) {
        write(&self.repo(repo).join(path), text.as_bytes());
    }

    /// A release of `repo` signed by `key`: its folder.
    fn release(&self, repo: &str, tag: &str, key: &str) -> PathBuf {
        let dist = self.dir.path().join("dist").join(repo).join(tag);
        write(&dist.join("app"), format!("{repo} {tag}").as_bytes());
        run(warden(self.dir.path())
            .env("SOURCE_DATE_EPOCH", SIGNED_AT)
            .args(["sign"])
            .arg(&dist)
            .args([
                "--tag",
                tag,
                "--repo",
                &format!("acme/{repo}"),
                "--secret-key",
            ])
            .arg(self.key(key).1))
        .expect(0);
        dist
    }
}

/// The organisation on disk, and its server's repositories.
fn organisation() -> (Org, Vec<FakeRepo>, Vec<OrgSecret>) {
    let dir = tempfile::tempdir().unwrap();
    let secrets = dir.path().join("secrets");
    for (name, seed, id) in KEYS {
        seeded_keypair(
            &secrets.join(format!("{name}.pub")),
            &secrets.join(format!("{name}.key")),
            seed,
            id,
        );
    }
    let o = Org { dir, secrets };
    for repo in ["app-a", "app-b", "app-c", "app-d"] {
        o.put_key(repo, "shared", "keys/release.pub");
        // app-d's workflow names a copy of the key outside keys/: the inventory fetches it.
        let named = if repo == "app-d" {
            o.put_key(repo, "shared", "scripts/release.pub");
            " --public-key scripts/release.pub"
        } else {
            ""
        };
        o.put(
            repo,
            ".github/workflows/release.yml",
            &workflow("RELEASE_SIGNING_KEY", None, named),
        );
    }
    o.put_key("tools-e", "shared-2", "keys/release.pub");
    o.put("tools-f", "README.md", "tools\n");
    o.put_key("docs-g", "spare", "keys/spare.pub");
    o.put_key("svc-h", "env", "keys/minisign.pub");
    o.put(
        "svc-h",
        ".github/workflows/release.yml",
        &workflow("MINISIGN_SECRET_KEY", Some("release"), ""),
    );
    o.put("cli-i", "README.md", "signed on a laptop\n");
    o.put_key("lib-j", "revoked", "keys/old.pub");
    o.put_key("lib-j", "new", "keys/new.pub");
    run(warden(&o.repo("lib-j"))
        .env("SOURCE_DATE_EPOCH", SIGNED_AT)
        .args([
            "keys",
            "revoke",
            "4444444444444444",
            "--reason",
            "leaked in a log",
            "--secret-key",
        ])
        .arg(o.key("revoked").1))
    .expect(0);
    o.put(
        "lib-j",
        ".github/workflows/release.yml",
        &workflow("OLD_SIGNING_KEY", None, " --public-key keys/old.pub"),
    );
    o.put_key("lib-k", "expiring", "keys/release.pub");
    o.put(
        "lib-k",
        "keys/policy.toml",
        "[keys.6666666666666666]\nvalid_until = 2099-01-20\n",
    );
    o.put(
        "lib-k",
        ".github/workflows/release.yml",
        &workflow("LIB_SIGNING_KEY", Some("release"), ""),
    );
    o.put("web-l", "README.md", "a website\n");

    let mut repos = Vec::new();
    for name in [
        "app-a", "app-b", "app-c", "app-d", "tools-e", "tools-f", "docs-g", "svc-h", "cli-i",
        "lib-j", "lib-k", "web-l",
    ] {
        let mut r = FakeRepo::from_dir(name, &o.repo(name));
        match name {
            "app-a" | "app-b" => r = r.with_release("v1.0.0", &o.release(name, "v1.0.0", "shared")),
            "svc-h" => {
                r = r.with_release("v2.0.0", &o.release(name, "v2.0.0", "env"));
                r.environments = vec![("release".into(), vec!["MINISIGN_SECRET_KEY".into()])];
            }
            "cli-i" => {
                r = r
                    .with_release("v0.2.0", &o.release(name, "v0.2.0", "stranger"))
                    .with_release("v0.1.0", &o.release(name, "v0.1.0", "stranger"));
            }
            "lib-j" => r.secrets = vec!["OLD_SIGNING_KEY".into()],
            "lib-k" => r.environments = vec![("release".into(), vec!["LIB_SIGNING_KEY".into()])],
            _ => {}
        }
        repos.push(r);
    }
    let org_secrets = vec![
        OrgSecret {
            name: "RELEASE_SIGNING_KEY".into(),
            visibility: "selected".into(),
            selected: [
                "app-a", "app-b", "app-c", "app-d", "tools-e", "tools-f", "docs-g",
            ]
            .map(String::from)
            .to_vec(),
        },
        OrgSecret {
            name: "NPM_TOKEN".into(),
            visibility: "all".into(),
            selected: Vec::new(),
        },
    ];
    (o, repos, org_secrets)
}

type Limit = Arc<std::sync::atomic::AtomicUsize>;

fn serve(
    rt: &tokio::runtime::Runtime,
    repos: Vec<FakeRepo>,
    org_secrets: Vec<OrgSecret>,
) -> (MockServer, Arc<Mutex<Vec<String>>>, Limit) {
    let server = rt.block_on(MockServer::start());
    let org = FolderOrg {
        org: "acme".into(),
        repos,
        org_secrets,
        log: Arc::new(Mutex::new(Vec::new())),
        spent_after: Arc::new(usize::MAX.into()),
    };
    let (log, limit) = (org.log.clone(), org.spent_after.clone());
    rt.block_on(Mock::given(method("GET")).respond_with(org).mount(&server));
    (server, log, limit)
}

fn audit(dir: &Path, uri: &str, args: &[&str]) -> Run {
    run(warden(dir)
        .env("GH_TOKEN", "ghs_test")
        .env("SOURCE_DATE_EPOCH", NOW)
        .args(["audit", "--org", "acme", "--api-url", uri, "--jobs", "4"])
        .args(args))
}

/// Requests per repository in the log from `from` on.
fn per_repo(log: &[String]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for p in log {
        if let Some(rest) = p.strip_prefix("/repos/acme/") {
            let name = rest.split('/').next().unwrap().to_string();
            *counts.entry(name).or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn the_inventory_of_an_organisation_is_its_keys_by_their_bytes() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (o, repos, org_secrets) = organisation();
    let (server, log, _) = serve(&rt, repos, org_secrets);
    let work = tempfile::tempdir().unwrap();

    // The audit alone, then with the inventory: what the inventory adds to each repository.
    audit(
        work.path(),
        &server.uri(),
        &["--releases", "5", "--format", "json"],
    );
    let plain = per_repo(&log.lock().unwrap());
    log.lock().unwrap().clear();
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let with = per_repo(&log.lock().unwrap());
    for (repo, n) in &with {
        let before = plain.get(repo).copied().unwrap_or(0);
        assert!(
            *n <= before + 3,
            "{repo}: {n} requests with the inventory, {before} without"
        );
    }

    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    // Each finding once, with its repositories.
    let mut seen = std::collections::BTreeSet::new();
    for f in doc["findings"].as_array().unwrap() {
        let key = (f["id"].to_string(), f["location"].to_string());
        assert!(seen.insert(key), "twice: {f}");
    }
    let _ = &o;
    insta::assert_snapshot!(serde_json::to_string_pretty(&doc).unwrap());

    // The same inventory for a person, and for an issue or a wiki page.
    let text = audit(work.path(), &server.uri(), &["--inventory"]);
    assert_eq!(text.code, 1);
    insta::assert_snapshot!("text", text.stdout);
    let markdown = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "markdown"],
    );
    insta::assert_snapshot!("markdown", markdown.stdout);

    // Against the saved JSON as a baseline, nothing is new.
    std::fs::write(work.path().join("inventory.json"), &out.stdout).unwrap();
    let again = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--baseline", "inventory.json"],
    );
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);

    // Recorded, the inventory replays offline to the same JSON; the docs' example replays the
    // checked-in recording (`UPDATE_INVENTORY_SNAPSHOT=1` writes it anew).
    let recorded = work.path().join("recorded");
    let saved = run(warden(work.path())
        .env("GH_TOKEN", "ghs_test")
        .args([
            "audit",
            "snapshot",
            "--org",
            "acme",
            "--inventory",
            "--api-url",
        ])
        .arg(server.uri())
        .arg("--out")
        .arg(&recorded));
    assert_eq!(saved.code, 0, "{}", saved.stderr);
    let replay = |dir: &Path| {
        run(warden(work.path())
            .env("SOURCE_DATE_EPOCH", NOW)
            .args([
                "audit",
                "--org",
                "acme",
                "--inventory",
                "--format",
                "json",
                "--snapshot",
            ])
            .arg(dir))
    };
    assert_eq!(replay(&recorded).stdout, out.stdout);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/inventory-snapshot");
    if std::env::var_os("UPDATE_INVENTORY_SNAPSHOT").is_some() {
        let provenance = std::fs::read(fixture.join("PROVENANCE.md")).unwrap();
        let _ = std::fs::remove_dir_all(&fixture);
        copy_dir(&recorded, &fixture);
        std::fs::write(fixture.join("PROVENANCE.md"), provenance).unwrap();
    }
    assert_eq!(
        replay(&fixture).stdout,
        out.stdout,
        "tests/fixtures/inventory-snapshot is stale: UPDATE_INVENTORY_SNAPSHOT=1 writes it anew"
    );
}

#[test]
fn an_inventory_cut_short_by_the_rate_limit_resumes_with_the_key_facts_it_had() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (_o, repos, org_secrets) = organisation();
    let (server, log, limit) = serve(&rt, repos, org_secrets);
    let work = tempfile::tempdir().unwrap();
    let whole = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    let sent = log.lock().unwrap().len();
    log.lock().unwrap().clear();
    // The limit runs out half way: the run stops (exit 2) and saves what it read.
    limit.store(sent / 2, std::sync::atomic::Ordering::SeqCst);
    let cut = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    assert_eq!(cut.code, 2, "{}", cut.stderr);
    let saved = work.path().join("warden-audit-acme.resume.json");
    assert!(
        cut.stderr
            .contains("--resume warden-audit-acme.resume.json"),
        "{}",
        cut.stderr
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let kept = doc["key_facts"].as_array().map_or(0, Vec::len);
    assert!(
        kept > 0 && kept < 12,
        "{kept} repositories' key facts saved"
    );
    // After the reset: the rest are audited, and the inventory is the whole one.
    limit.store(usize::MAX, std::sync::atomic::Ordering::SeqCst);
    log.lock().unwrap().clear();
    let resumed = audit(
        work.path(),
        &server.uri(),
        &[
            "--inventory",
            "--format",
            "json",
            "--resume",
            "warden-audit-acme.resume.json",
        ],
    );
    assert_eq!(resumed.stdout, whole.stdout, "{}", resumed.stderr);
}

/// Issue 50: a thief's key that signed a release cannot be laundered by committing its `.pub`
/// in another repository of the organisation (at its root or under `.github/`): a release
/// signature counts as verified only under a key the releasing repository commits, or one the
/// organisation's `.github` repository lists in its `keys/`. Two keys under one id are a
/// finding.
#[test]
fn a_key_committed_elsewhere_never_verifies_another_repository_s_release() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (o, mut repos, org_secrets) = organisation();
    // The thief commits the stranger key where the inventory reads keys: web-l's root and
    // `.github/`.
    o.put_key("web-l", "stranger", "stranger.pub");
    o.put_key("web-l", "stranger", ".github/stranger.pub");
    let at = repos.iter().position(|r| r.name == "web-l").unwrap();
    repos[at] = FakeRepo::from_dir("web-l", &o.repo("web-l"));
    let (server, _, _) = serve(&rt, repos.clone(), org_secrets.clone());
    let work = tempfile::tempdir().unwrap();
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let cli_i: Vec<&Value> = doc["keys"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["last_releases"].as_array().unwrap())
        .filter(|r| r["repository"] == "acme/cli-i")
        .collect();
    assert_eq!(cli_i.len(), 1, "{cli_i:?}");
    assert_eq!(cli_i[0]["verified"], false, "{cli_i:?}");
    let not_committed: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "key-not-committed")
        .collect();
    assert_eq!(not_committed.len(), 1, "{not_committed:?}");

    // A key made to carry the id of the organisation's shared key (ids are labels in the key
    // file), committed in another repository: one finding, naming both keys by their bytes.
    o.forge_shared_id(&mut repos);
    // The organisation's own list (`acme/.github`, `keys/`) is trusted by each repository.
    o.put_key(".github", "stranger", "keys/stranger.pub");
    repos.push(FakeRepo::from_dir(".github", &o.repo(".github")));
    let (server, _, _) = serve(&rt, repos, org_secrets);
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let collisions: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "key-id-collision")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(collisions.len(), 1, "{collisions:?}");
    assert!(
        collisions[0]
            .starts_with("key id 1111111111111111 is carried by 2 different keys: sha256:")
            && collisions[0].contains("acme/tools-f/keys/forged.pub")
            && collisions[0].contains("acme/app-a/keys/release.pub"),
        "{}",
        collisions[0]
    );
    let verified = doc["keys"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["last_releases"].as_array().unwrap())
        .any(|r| r["repository"] == "acme/cli-i" && r["verified"] == true);
    assert!(verified, "{}", out.stdout);
}

/// Issue 50: the request budget holds whatever a repository contains: of the public keys
/// outside `keys/`, at most 3 are read (`.github/minisign.pub` first), the rest named.
#[test]
fn public_keys_over_the_budget_are_named_not_fetched() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (o, mut repos, org_secrets) = organisation();
    for i in 0..5 {
        o.put_key("web-l", "spare", &format!(".github/keys/k{i}.pub"));
    }
    o.put_key("web-l", "spare", ".github/minisign.pub");
    let at = repos.iter().position(|r| r.name == "web-l").unwrap();
    repos[at] = FakeRepo::from_dir("web-l", &o.repo("web-l"));
    let (server, log, _) = serve(&rt, repos, org_secrets);
    let work = tempfile::tempdir().unwrap();
    audit(work.path(), &server.uri(), &["--format", "json"]);
    let plain = per_repo(&log.lock().unwrap())["web-l"];
    log.lock().unwrap().clear();
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    let with = per_repo(&log.lock().unwrap())["web-l"];
    assert!(
        with <= plain + 3,
        "{with} requests with the inventory, {plain} without"
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        doc["keys_not_fetched"],
        serde_json::json!([
            "acme/web-l .github/keys/k2.pub",
            "acme/web-l .github/keys/k3.pub",
            "acme/web-l .github/keys/k4.pub"
        ])
    );
    let text = audit(work.path(), &server.uri(), &["--inventory"]);
    assert!(
        text.stdout.contains("\npublic keys not read (over the budget of 3 requests per repository; commit them in keys/ to have them read):\n  acme/web-l .github/keys/k2.pub\n  acme/web-l .github/keys/k3.pub\n  acme/web-l .github/keys/k4.pub\n"),
        "{}",
        text.stdout
    );
}

/// Issue 50: the layout of a repository that commits its key as `.github/minisign.pub` and has
/// no `keys/`: one key entry, with its last release verified.
#[test]
fn a_key_committed_as_github_minisign_pub_is_one_entry_with_its_release() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (o, mut repos, org_secrets) = organisation();
    o.put_key("web-l", "spare-2", ".github/minisign.pub");
    let at = repos.iter().position(|r| r.name == "web-l").unwrap();
    repos[at] = FakeRepo::from_dir("web-l", &o.repo("web-l"))
        .with_release("v3.0.0", &o.release("web-l", "v3.0.0", "spare-2"));
    let (server, _, _) = serve(&rt, repos, org_secrets);
    let work = tempfile::tempdir().unwrap();
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let entries: Vec<&Value> = doc["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| {
            k["last_releases"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["repository"] == "acme/web-l")
                || k["committed"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["repository"] == "acme/web-l")
        })
        .collect();
    assert_eq!(entries.len(), 1, "{entries:#?}");
    assert_eq!(
        entries[0]["last_releases"],
        serde_json::json!([{"repository": "acme/web-l", "tag": "v3.0.0", "verified": true}]),
        "{:#?}",
        entries[0]
    );
}

/// `valid_until` is judged by the clock: SOURCE_DATE_EPOCH (2099 here, as a reproducible build
/// could set any date) changes nothing. A key ten days from its date is due (medium); a key
/// past it is expired (high).
#[test]
fn validity_is_judged_by_the_clock_not_source_date_epoch() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (o, mut repos, org_secrets) = organisation();
    let day = |offset: i64| {
        let secs = release_warden::util::unix_now() as i64 + offset * 86_400;
        release_warden::util::rfc3339(secs as u64)[..10].to_string()
    };
    let (due, expired) = (day(10), day(-1));
    o.put(
        "lib-k",
        "keys/policy.toml",
        &format!("[keys.6666666666666666]\nvalid_until = {due}\n"),
    );
    o.put_key("web-l", "spare-2", "keys/release.pub");
    o.put(
        "web-l",
        "keys/policy.toml",
        &format!("[keys.8888888888888888]\nvalid_until = {expired}\n"),
    );
    for name in ["lib-k", "web-l"] {
        let at = repos.iter().position(|r| r.name == name).unwrap();
        let old = std::mem::replace(&mut repos[at], FakeRepo::from_dir(name, &o.repo(name)));
        repos[at].environments = old.environments;
        repos[at].secrets = old.secrets;
        repos[at].releases = old.releases;
    }
    let (server, _, _) = serve(&rt, repos, org_secrets);
    let work = tempfile::tempdir().unwrap();
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let expiring: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "key-expiring")
        .map(|f| {
            format!(
                "{} {}",
                f["severity"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        expiring,
        [
            format!("high key 8888888888888888 is past its valid_until ({expired}) in acme/web-l: its signatures no longer count"),
            format!("medium key 6666666666666666 expires on {due} (within 30 days) in acme/lib-k"),
        ],
        "{}",
        out.stdout
    );
}

/// A suppression names a key by its bytes (`key:sha256:…`, the inventory's `fingerprint`): a
/// `key:ID` suppression never hides a key known by its bytes, so one suppression cannot hide two
/// keys that share an id; unmatched, it says what to write instead.
#[test]
fn a_suppression_names_a_key_by_its_fingerprint_never_by_its_id() {
    use base64::Engine as _;
    use sha2::Digest as _;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (o, mut repos, org_secrets) = organisation();
    // A second key carrying the id of the organisation's shared key, committed unused.
    let forged = o.forge_shared_id(&mut repos);
    let (server, _, _) = serve(&rt, repos, org_secrets);
    // The fingerprint, computed here from the .pub file: SHA-256 of the 32 Ed25519 bytes.
    let text = std::fs::read_to_string(&forged).unwrap();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(text.lines().nth(1).unwrap().trim())
        .unwrap();
    let fp: String = sha2::Sha256::digest(&raw[10..42])
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let fp = format!("sha256:{fp}");

    let work = tempfile::tempdir().unwrap();
    let config = |path: &str| {
        write(
            &work.path().join(".github/warden.toml"),
            format!("[[ignore]]\nrule = \"key-unused\"\npath = \"{path}\"\nreason = \"a spare\"\n")
                .as_bytes(),
        )
    };
    let findings = |doc: &Value, rule: &str| -> Vec<String> {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == rule)
            .map(|f| {
                format!(
                    "{} {}{} | {}",
                    f["location"]["key"].as_str().unwrap_or("-"),
                    f["location"]["fingerprint"].as_str().unwrap_or("-"),
                    if f["suppressed"].is_object() {
                        " (suppressed)"
                    } else {
                        ""
                    },
                    f["remediation"].as_str().unwrap()
                )
            })
            .collect()
    };

    config("key:1111111111111111");
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let entry = doc["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["committed"][0]["path"] == "keys/forged.pub")
        .unwrap();
    assert_eq!(entry["fingerprint"], fp.as_str());
    let unused = "If the key is no longer used, revoke it (`warden keys revoke`) or remove it from keys/; if it is a spare, say so in keys/policy.toml (`role`) and suppress this finding.";
    assert_eq!(
        findings(&doc, "key-unused")
            .into_iter()
            .filter(|f| f.starts_with("1111111111111111"))
            .collect::<Vec<_>>(),
        [format!("1111111111111111 {fp} | {unused}")]
    );
    assert_eq!(
        findings(&doc, "suppression-unmatched"),
        [format!(
            "- - | A key is named by its bytes, not its id (an id can be copied): write `path = \"key:{fp}\"`."
        )]
    );

    config(&format!("key:{fp}"));
    let out = audit(
        work.path(),
        &server.uri(),
        &["--inventory", "--format", "json"],
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        findings(&doc, "key-unused")
            .into_iter()
            .filter(|f| f.starts_with("1111111111111111"))
            .collect::<Vec<_>>(),
        [format!("1111111111111111 {fp} (suppressed) | {unused}")]
    );
    assert_eq!(
        findings(&doc, "suppression-unmatched"),
        Vec::<String>::new()
    );
}
