//! Shared test helpers: a `warden` command with a clean environment, key generation, and the
//! `minisign` CLI (required under CI=true).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn warden_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_warden"))
}

/// `warden` with no GitHub or signing variables from the developer's shell.
pub fn warden(dir: &Path) -> Command {
    let mut cmd = Command::new(warden_bin());
    cmd.current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("GITHUB_")
            || k.starts_with("GH_")
            || k.starts_with("MINISIGN")
            || k == "SOURCE_DATE_EPOCH"
            || k == "NO_COLOR"
        {
            cmd.env_remove(k);
        }
    }
    cmd.env("RUST_BACKTRACE", "1");
    cmd
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(cmd: &mut Command) -> Run {
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
    pub fn expect(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// An unencrypted key pair made by `warden keygen` in `dir`: returns (public, secret) paths.
pub fn keypair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
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
pub fn encrypted_keypair(dir: &Path, name: &str, password: &str) -> (PathBuf, PathBuf) {
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
pub fn minisign() -> Option<PathBuf> {
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
pub fn verify_signed_checksums(dir: &Path, release: &str, contents: &[u8]) -> Run {
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

pub fn write(path: &Path, bytes: &[u8]) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, bytes).unwrap();
}

/// Files in `dir` whose names start with warden's temp prefix.
pub fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".warden-"))
        .collect()
}
