//! docs/release.md's "The key leaked" runbook, every line of it, run in one scenario: a checkout
//! with a remote, a published release signed by the leaked key on a local GitHub, encrypted keys
//! (passwords from the variables the runbook names), and a `gh` that acts on that release (it
//! refuses to replace an asset without `--clobber`, as gh does). The only change to a line: the
//! leaked key's id. The release is refused once the revocation is pushed, and verifies again once
//! the runbook has re-signed, co-signed and re-uploaded it.

use std::path::Path;
use std::process::Command;

use wiremock::MockServer;

use crate::common::release_server::{serve_release, serve_revocations};
use crate::common::*;

const SLUG: &str = "owner/name";
const TAG: &str = "v1.2.3";
/// Who commits, in the scenario's git.
const GIT_ENV: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "maintainer"),
    ("GIT_AUTHOR_EMAIL", "maintainer@example.org"),
    ("GIT_COMMITTER_NAME", "maintainer"),
    ("GIT_COMMITTER_EMAIL", "maintainer@example.org"),
];
const PASSWORDS: [(&str, &str); 3] = [
    ("OLD_PASSWORD", "leaked key's password"),
    ("NEW_PASSWORD", "new key's password"),
    ("MAINTAINER_PASSWORD", "maintainer's password"),
];

/// A `gh` for the scenario: `secret set` stores the secret in `$SECRETS/NAME`; `release
/// download` copies `$PUBLISHED`; `release upload` copies into it, refusing an existing name
/// without `--clobber`.
const GH: &str = r#"#!/bin/bash
set -euo pipefail
case "$1 $2" in
"secret set")
  name=$3; shift 3; body=
  while [ $# -gt 0 ]; do case "$1" in --env) shift 2;; --body) body=$2; shift 2;; *) echo "gh: unknown $1" >&2; exit 1;; esac; done
  if [ -n "$body" ]; then printf '%s' "$body" > "$SECRETS/$name"; else cat > "$SECRETS/$name"; fi ;;
"release download")
  shift 3; dir=.
  while [ $# -gt 0 ]; do case "$1" in --dir) dir=$2; shift 2;; --repo) shift 2;; *) echo "gh: unknown $1" >&2; exit 1;; esac; done
  mkdir -p "$dir"; cp "$PUBLISHED"/* "$dir"/ ;;
"release upload")
  shift 3; clobber=; files=()
  while [ $# -gt 0 ]; do case "$1" in --clobber) clobber=1; shift;; --repo) shift 2;; -*) echo "gh: unknown $1" >&2; exit 1;; *) files+=("$1"); shift;; esac; done
  for f in "${files[@]}"; do
    n=$(basename "$f")
    if [ -e "$PUBLISHED/$n" ] && [ -z "$clobber" ]; then echo "asset under the same name already exists: [$n]" >&2; exit 1; fi
    cp "$f" "$PUBLISHED/$n"
  done ;;
*) echo "gh: unknown command $*" >&2; exit 1 ;;
esac
"#;

/// The runbook's command lines.
fn runbook() -> Vec<String> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/release.md"))
            .unwrap();
    let section = doc
        .split("### The key leaked: what to do\n")
        .nth(1)
        .unwrap();
    let block = section.split("```console\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    block
        .lines()
        .map(|l| {
            l.strip_prefix("$ ")
                .expect("a runbook line is a command")
                .to_string()
        })
        .collect()
}

/// Every `command` quoted in `text` is a runbook line (the leaked key's id `leaked`), or the
/// start of one.
fn same_commands(text: &str, what: &str, leaked: &str) {
    let lines: Vec<String> = runbook()
        .iter()
        .map(|l| l.replace("8F457D1A3C3B50B5", leaked))
        .collect();
    let quoted: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
    assert!(!quoted.is_empty(), "{what}: {text}");
    for command in quoted {
        assert!(
            lines.iter().any(|l| l.starts_with(command)),
            "{what}: `{command}` is not a runbook line"
        );
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .envs(GIT_ENV)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The checkout (`work`, with `remote.git` as origin) at tag v1.2.3, its keys the leaked key
/// (`keys/minisign.pub`) and a maintainer's; the release signed by the leaked key in `published`.
fn scenario(t: &Path) -> (String, String) {
    let work = t.join("work");
    std::fs::create_dir_all(t.join("home/.minisign")).unwrap();
    std::fs::create_dir_all(t.join("secrets")).unwrap();
    git(t, &["init", "-q", "--bare", "remote.git"]);
    git(t, &["init", "-q", "-b", "main", "work"]);
    git(&work, &["remote", "add", "origin", "../remote.git"]);
    let (leaked_pub, leaked_key) = encrypted_keypair(t, "leaked", PASSWORDS[0].1);
    let (maint_pub, maint_key) = encrypted_keypair(t, "maintainer", PASSWORDS[2].1);
    std::fs::create_dir_all(work.join("keys")).unwrap();
    std::fs::copy(&leaked_pub, work.join("keys/minisign.pub")).unwrap();
    std::fs::copy(&maint_pub, work.join("keys/maintainer.pub")).unwrap();
    std::fs::copy(&leaked_key, work.join("leaked.key")).unwrap();
    std::fs::copy(&maint_key, t.join("home/.minisign/maintainer.key")).unwrap();
    write(&work.join(".gitignore"), b"leaked.key\nv1.2.3/\n");
    // This repository's own release workflow: it signs with the key keys/minisign.pub names.
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/release.yml");
    write(
        &work.join(".github/workflows/release.yml"),
        &std::fs::read(ours).unwrap(),
    );
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "v1.2.3"]);
    git(&work, &["tag", TAG]);
    git(&work, &["push", "-q", "-u", "origin", "main", TAG]);
    let commit = git(&work, &["rev-parse", "HEAD"]).trim().to_string();
    for name in ["app-linux-x86_64", "app-macos-aarch64"] {
        write(&t.join(format!("published/{name}")), name.as_bytes());
    }
    run(warden(t)
        .env("PW", PASSWORDS[0].1)
        .args([
            "sign",
            "published",
            "--secret-key",
            "leaked.key",
            "--password-env",
            "PW",
        ])
        .args(["--tag", TAG, "--commit", &commit, "--repo", SLUG]))
    .expect(0);
    let id = |p: &Path| {
        let text = std::fs::read_to_string(p).unwrap();
        text.split_whitespace().nth(5).unwrap().to_string()
    };
    (commit, format!("{}\n{}", id(&leaked_pub), id(&maint_pub)))
}

/// The local GitHub as it is now: the release in `published`, and `keys/revoked/` of what was
/// pushed to `remote.git`.
async fn serve(api: &MockServer, storage: &MockServer, t: &Path, commit: &str) {
    api.reset().await;
    storage.reset().await;
    serve_release(api, storage, (SLUG, TAG, commit), &t.join("published")).await;
    let pushed = t.join("pushed");
    let _ = std::fs::remove_dir_all(&pushed);
    git(t, &["clone", "-q", "remote.git", "pushed"]);
    serve_revocations(api, SLUG, &pushed.join("keys/revoked")).await;
}

/// `line` run by bash in the checkout, with the scenario's home, passwords, `gh` and warden.
async fn shell(t: &Path, api: &MockServer, line: &str) -> Run {
    let (t, uri, line) = (t.to_path_buf(), api.uri(), line.to_string());
    tokio::task::spawn_blocking(move || {
        let bin = warden_bin();
        let path = format!(
            "{}:{}:{}",
            t.join("bin").display(),
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap()
        );
        let mut cmd = Command::new("bash");
        without_developer_env(&mut cmd);
        cmd.current_dir(t.join("work"))
            .args(["-c", &line])
            .env("HOME", t.join("home"))
            .env("PATH", path)
            .env("GITHUB_API_URL", uri)
            .env("SECRETS", t.join("secrets"))
            .env("PUBLISHED", t.join("published"))
            .env("SOURCE_DATE_EPOCH", "1764644410")
            .envs(PASSWORDS)
            .envs(GIT_ENV);
        run(&mut cmd)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_leak_runbook_runs_line_by_line() {
    let t = tempfile::tempdir().unwrap();
    let t = t.path();
    write(&t.join("bin/gh"), GH.as_bytes());
    let mut perms = std::fs::metadata(t.join("bin/gh")).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(t.join("bin/gh"), perms).unwrap();
    let (commit, ids) = scenario(t);
    let (leaked, maintainer) = ids.split_once('\n').unwrap();
    let (api, storage) = (MockServer::start().await, MockServer::start().await);
    let verify = format!("warden verify --release {TAG} --repo {SLUG}");
    serve(&api, &storage, t, &commit).await;
    // Before: the thief's key makes the release verify.
    shell(t, &api, &verify).await.expect(0);

    let mut transcript = String::new();
    for line in runbook() {
        let line = line.replace("8F457D1A3C3B50B5", leaked);
        serve(&api, &storage, t, &commit).await;
        let out = shell(t, &api, &line).await;
        transcript.push_str(&format!(
            "$ {line}\n{}{}--- exit {}\n",
            out.stdout, out.stderr, out.code
        ));
        assert_eq!(out.code, 0, "{line}\n{}{}", out.stdout, out.stderr);
        if line.starts_with("warden keys revoke") {
            // The audit's fix for a workflow that still names the revoked key: the runbook's
            // commands (each a runbook line, or its start).
            let audit = shell(t, &api, "warden audit --format json").await.expect(1);
            let json: serde_json::Value = serde_json::from_str(&audit.stdout).unwrap();
            let fix = json["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["id"] == "release-signed-by-revoked-key")
                .unwrap_or_else(|| panic!("{}", audit.stdout))["remediation"]
                .as_str()
                .unwrap()
                .to_string();
            same_commands(&fix, "the audit's fix", leaked);
        }
        if line.starts_with("warden keygen") {
            // keygen's hints, the home folder written `~`.
            let home = t.join("home").display().to_string();
            let hints: String = out
                .stdout
                .lines()
                .filter_map(|l| l.strip_prefix("  "))
                .map(|l| format!("`{}`", l.replace(&home, "~")))
                .collect();
            same_commands(&hints, "keygen's hints", leaked);
        }
        if line.starts_with("git add keys") {
            // Once the revocation is pushed, the release the thief can sign is refused.
            serve(&api, &storage, t, &commit).await;
            shell(t, &api, &verify).await.expect(1);
        }
    }
    // The environment holds the new key and its password, as the signing job reads them.
    let new_key = std::fs::read(t.join("home/.minisign/release-2.key")).unwrap();
    assert_eq!(
        std::fs::read(t.join("secrets/MINISIGN_SECRET_KEY")).unwrap(),
        new_key
    );
    assert_eq!(
        std::fs::read_to_string(t.join("secrets/MINISIGN_PASSWORD")).unwrap(),
        PASSWORDS[1].1
    );
    let new_id = {
        let text = std::fs::read_to_string(t.join("work/keys/minisign.pub")).unwrap();
        text.split_whitespace().nth(5).unwrap().to_string()
    };
    let hex = regex::Regex::new(r"\b[0-9a-f]{7,40}\b").unwrap();
    let shown = hex
        .replace_all(&transcript, "[HEX]")
        .replace(&t.display().to_string(), "[T]")
        .replace(leaked, "[LEAKED]")
        .replace(maintainer, "[MAINTAINER]")
        .replace(&new_id, "[NEW]");
    insta::assert_snapshot!(shown);
}
