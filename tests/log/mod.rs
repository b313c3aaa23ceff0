//! Issue 38: the transparency log of release signatures — `log init`, `sign --log`,
//! `log append`, `verify --require-log`, witnesses, `log verify`, hostile logs, and the Go
//! originals of signed notes and tile proofs checking what warden writes.

mod bad_input;
mod go_interop;
mod hardening;
mod release_log;
mod served;
mod witness;
mod witness_protocol;

use std::path::{Path, PathBuf};

use release_warden::minisign::PublicKey;

use crate::common::*;

pub(crate) const ORIGIN: &str = "example.org/releases-log";

/// A repository with one release key in `keys/`, a log in `log/`, and the secret halves (the
/// release key and the log key) in a folder of their own.
pub(crate) struct LogRepo {
    pub(crate) repo: tempfile::TempDir,
    pub(crate) secrets: tempfile::TempDir,
    pub(crate) key_id: String,
    pub(crate) secret_key: PathBuf,
    pub(crate) vkey: String,
}

impl LogRepo {
    pub(crate) fn new() -> LogRepo {
        let repo = tempfile::tempdir().unwrap();
        let secrets = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("keys")).unwrap();
        let (pk, sk) = keypair(secrets.path(), "release");
        std::fs::copy(&pk, repo.path().join("keys/release.pub")).unwrap();
        let key_id = PublicKey::from_file(&pk).unwrap().key_id.to_string();
        let out = run(warden(repo.path())
            .args([
                "log",
                "init",
                "log",
                "--origin",
                ORIGIN,
                "--format",
                "json",
                "--log-key",
            ])
            .arg(secrets.path().join("log.key")))
        .expect(0);
        let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let vkey = json["vkey"].as_str().unwrap().to_string();
        LogRepo {
            repo,
            secrets,
            key_id,
            secret_key: sk,
            vkey,
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        self.repo.path()
    }

    pub(crate) fn log_key(&self) -> PathBuf {
        self.secrets.path().join("log.key")
    }

    /// `dist-<tag>/` with one artifact, signed for `tag` (and logged unless `log` is false).
    pub(crate) fn release(&self, tag: &str, log: bool) -> Run {
        let dist = format!("dist-{tag}");
        write(
            &self.dir().join(&dist).join("app"),
            format!("app {tag}").as_bytes(),
        );
        let mut cmd = warden(self.dir());
        cmd.env("SOURCE_DATE_EPOCH", "1780000000")
            .args(["sign", &dist, "--tag", tag, "--secret-key"])
            .arg(&self.secret_key);
        if log {
            cmd.args(["--log", "log", "--log-key"]).arg(self.log_key());
        }
        run(&mut cmd)
    }

    /// `warden verify DIST --require-log --log-vkey VKEY` with `extra` flags.
    pub(crate) fn verify(&self, dist: &str, extra: &[&str]) -> Run {
        run(warden(self.dir())
            .args(["verify", dist, "--require-log", "--log-vkey", &self.vkey])
            .args(extra))
    }

    /// Every file below the log folder with its bytes, to show nothing was written.
    pub(crate) fn log_files(&self) -> Vec<(String, Vec<u8>)> {
        let root = self.dir().join("log");
        let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(&root).unwrap().display().to_string();
                (rel, std::fs::read(e.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    }
}
