//! Issue 51: the transparency log's workflow snippets, run as written under a simulated
//! GitHub-hosted runner. Each job gets a fresh workspace and home (no git identity: `git commit`
//! fails as it does on a hosted runner, whose git has no user configured), the `GITHUB_*`
//! variables, and `run:` steps executed by `bash -e` with `${{ … }}` substituted; the actions the
//! snippets use are emulated (`actions/checkout` fetches from a local bare remote, and a checkout
//! with `persist-credentials: false` cannot push; `actions/cache` restores by key and prefix and
//! saves only when the job passes; artifacts are kept between jobs of a run). `cargo install`
//! and `cargo build` put the warden under test where they would; `gh` sets environment secrets and
//! creates releases locally. A step or action the harness does not know fails the test: the
//! snippets cannot drift into what it does not check.
//!
//! The scenario: a maintainer sets the log up (docs' console block), a tag runs the release
//! workflow (sign, log, publish), the monitor runs twice on schedule (its state kept in the
//! cache), a thief with both keys signs on a laptop and pushes the log, and the third monitor run
//! flags the entry (exit 1) and keeps flagging it. Run for docs/transparency-log.md's snippets
//! and for this repository's own `release.yml` and `log-monitor.yml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_serde::Value;

use super::provenance::{good_records, serve};
use crate::common::*;

const REPO: &str = "o/r";
const TAG: &str = "v1.2.3";
/// 2025-11-30T00:00:00Z, inside the release run the server records.
const SIGNED_AT: &str = "1764460800";

/// The emulated parts of GitHub: the repository's remote, artifacts, caches, secrets by
/// environment, releases.
struct Hosted {
    root: PathBuf,
    remote: PathBuf,
    shims: PathBuf,
    caches: Vec<(String, PathBuf)>,
    api: String,
}

/// A run of one workflow: its event and artifacts.
struct RunCtx {
    run_id: u64,
    event: &'static str,
    ref_name: String,
    sha: String,
    workflow: String,
    artifacts: PathBuf,
}

/// How one job ended, and everything its steps printed.
struct JobOutcome {
    passed: bool,
    log: String,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let target = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else if !rel.starts_with(".git") {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl Hosted {
    fn new(root: &Path, api: &str) -> Hosted {
        let remote = root.join("remote.git");
        std::fs::create_dir_all(&remote).unwrap();
        git(&remote, &["init", "-q", "--bare", "-b", "main"]);
        let shims = root.join("shims");
        std::fs::create_dir_all(&shims).unwrap();
        let write_shim = |name: &str, body: &str| {
            let path = shims.join(name);
            std::fs::write(
                &path,
                format!("#!/usr/bin/env bash\nset -euo pipefail\n{body}"),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        // cargo: installing or building warden gives the binary under test, where it would be.
        write_shim(
            "cargo",
            r#"case "$*" in
  "install --locked --git https://github.com/release-warden/release-warden --tag "*" release-warden")
    mkdir -p "$HOME/.cargo/bin" && cp "$HOSTED_WARDEN" "$HOME/.cargo/bin/warden" ;;
  "build --release --locked")
    mkdir -p target/release && cp "$HOSTED_WARDEN" target/release/warden ;;
  *) echo "cargo $*: not emulated" >&2; exit 1 ;;
esac
"#,
        );
        // gh: environment secrets and releases, kept under the harness's folder.
        write_shim(
            "gh",
            r#"if [ "$1 $2" = "secret set" ] && [ "$4" = "--env" ]; then
  mkdir -p "$HOSTED_ROOT/secrets/$5" && cat > "$HOSTED_ROOT/secrets/$5/$3"
elif [ "$1 $2" = "release create" ]; then
  tag=$3; shift 3
  files=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --repo|--title) shift 2 ;;
      --verify-tag) shift ;;
      *) files+=("$1"); shift ;;
    esac
  done
  mkdir -p "$HOSTED_ROOT/releases/$tag" && cp "${files[@]}" "$HOSTED_ROOT/releases/$tag/"
else
  echo "gh $*: not emulated" >&2; exit 1
fi
"#,
        );
        Hosted {
            root: root.to_path_buf(),
            remote,
            shims,
            caches: Vec::new(),
            api: api.to_string(),
        }
    }

    /// The secrets a job in `environment` reads: the repository's, then its environment's.
    fn secrets(&self, environment: Option<&str>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for scope in ["repository"]
            .into_iter()
            .chain(environment)
            .map(|e| self.root.join("secrets").join(e))
        {
            for entry in std::fs::read_dir(&scope).into_iter().flatten().flatten() {
                out.insert(
                    entry.file_name().to_string_lossy().into_owned(),
                    std::fs::read_to_string(entry.path()).unwrap(),
                );
            }
        }
        out
    }

    fn set_secret(&self, scope: &str, name: &str, value: &str) {
        let dir = self.root.join("secrets").join(scope);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), value).unwrap();
    }

    /// A maintainer's machine: a clone of the remote, with a git identity of its own, running
    /// the lines of a console block (`$ …`) from it. Returns the clone.
    fn laptop(&self, name: &str, console: &str) -> PathBuf {
        let home = self.root.join(format!("{name}-home"));
        let clone = home.join("repo");
        std::fs::create_dir_all(&home).unwrap();
        git(
            &home,
            &["clone", "-q", self.remote.to_str().unwrap(), "repo"],
        );
        // The maintainer's own git identity, as on any developer's machine.
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = A Maintainer\n\temail = maintainer@example.org\n",
        )
        .unwrap();
        // The maintainer installed warden (`cargo install`).
        std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
        std::fs::copy(warden_bin(), home.join(".cargo/bin/warden")).unwrap();
        for line in console.lines().filter_map(|l| l.strip_prefix("$ ")) {
            let out = Command::new("bash")
                .args(["-e", "-c", line])
                .current_dir(&clone)
                .env_clear()
                .env("HOME", &home)
                .env("PATH", self.path(&home))
                .env("HOSTED_ROOT", &self.root)
                .env("HOSTED_WARDEN", warden_bin())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{line}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        clone
    }

    fn path(&self, home: &Path) -> String {
        format!(
            "{}:{}/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
            self.shims.display(),
            home.display()
        )
    }

    /// Runs `job` of the workflow `wf` in a fresh workspace for `run`.
    fn run_job(&mut self, wf: &Value, job: &str, run: &RunCtx) -> JobOutcome {
        let spec = &wf["jobs"][job];
        assert!(!spec.is_null(), "no job {job}");
        let work = self.root.join(format!("run-{}-{job}", run.run_id));
        let (workspace, home, temp) = (work.join("ws"), work.join("home"), work.join("tmp"));
        for d in [&workspace, &home, &temp] {
            std::fs::create_dir_all(d).unwrap();
        }
        let environment = spec["environment"].as_str().map(str::to_string);
        let secrets = self.secrets(environment.as_deref());
        let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut job_env: BTreeMap<String, String> = BTreeMap::new();
        let mut log = String::new();
        let mut saves: Vec<(String, PathBuf)> = Vec::new();
        let subst = |s: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>| -> String {
            let re = regex::Regex::new(r"\$\{\{\s*(.*?)\s*\}\}").unwrap();
            re.replace_all(s, |c: &regex::Captures| {
                let e = &c[1];
                if let Some(name) = e.strip_prefix("secrets.") {
                    return secrets.get(name).cloned().unwrap_or_default();
                }
                if let Some(rest) = e.strip_prefix("steps.") {
                    let (id, key) = rest.split_once(".outputs.").expect("steps.ID.outputs.KEY");
                    return outputs
                        .get(id)
                        .and_then(|o| o.get(key))
                        .cloned()
                        .unwrap_or_default();
                }
                match e {
                    "github.ref_name" => run.ref_name.clone(),
                    "github.sha" => run.sha.clone(),
                    "github.repository" => REPO.to_string(),
                    "github.token" => "ghs_runner_token".to_string(),
                    "github.run_id" => run.run_id.to_string(),
                    other => panic!("the harness does not emulate `${{{{ {other} }}}}`"),
                }
            })
            .into_owned()
        };
        let env_of = |v: &Value, outputs: &BTreeMap<String, BTreeMap<String, String>>| {
            let mut out = BTreeMap::new();
            if let Value::Mapping(m) = &v["env"] {
                for (k, v) in m {
                    out.insert(text(k).unwrap(), subst(&text(v).unwrap(), outputs));
                }
            }
            out
        };
        let base_env = env_of(spec, &outputs);
        let steps = spec["steps"].as_sequence().cloned().unwrap_or_default();
        let mut passed = true;
        for (i, step) in steps.iter().enumerate() {
            if let Some(raw) = step["if"].as_str() {
                let (lhs, rhs) = raw.split_once("==").expect("an `if:` of the form A == 'v'");
                let lhs = subst(&format!("${{{{ {} }}}}", lhs.trim()), &outputs);
                if lhs != rhs.trim().trim_matches('\'') {
                    continue;
                }
            }
            let with = |k: &str| step["with"][k].as_str().map(|v| subst(v, &outputs));
            if let Some(uses) = step["uses"].as_str() {
                let action = uses.split('@').next().unwrap();
                match action {
                    "actions/checkout" => {
                        let dir = workspace.join(with("path").unwrap_or_else(|| ".".into()));
                        std::fs::create_dir_all(&dir).unwrap();
                        let reference = with("ref").unwrap_or_else(|| run.ref_name.clone());
                        git(&dir, &["init", "-q"]);
                        git(
                            &dir,
                            &["fetch", "-q", self.remote.to_str().unwrap(), &reference],
                        );
                        git(&dir, &["checkout", "-q", "FETCH_HEAD"]);
                        // Without persisted credentials, `origin` cannot be pushed to.
                        let origin = match step["with"]["persist-credentials"].as_bool() {
                            Some(false) => "/nonexistent/no-credentials.git".to_string(),
                            _ => self.remote.display().to_string(),
                        };
                        git(&dir, &["remote", "add", "origin", &origin]);
                        log += &format!("checkout {reference} into {}\n", dir.display());
                    }
                    "actions/cache" => {
                        let path = workspace.join(with("path").unwrap());
                        let key = with("key").unwrap();
                        let prefixes: Vec<String> = with("restore-keys")
                            .unwrap_or_default()
                            .lines()
                            .map(str::to_string)
                            .collect();
                        let hit =
                            self.caches.iter().rev().find(|(k, _)| {
                                *k == key || prefixes.iter().any(|p| k.starts_with(p))
                            });
                        if let Some((k, dir)) = hit {
                            copy_tree(dir, &path);
                            log += &format!("cache restored from {k}\n");
                        }
                        saves.push((key, path));
                    }
                    "actions/upload-artifact" => {
                        let from = workspace.join(with("path").unwrap());
                        copy_tree(&from, &run.artifacts.join(with("name").unwrap()));
                    }
                    "actions/download-artifact" => {
                        let to = workspace.join(with("path").unwrap());
                        let names: Vec<PathBuf> = match (with("name"), with("pattern")) {
                            (Some(name), _) => vec![run.artifacts.join(name)],
                            (None, Some(pattern)) => {
                                let glob = globset::Glob::new(&pattern).unwrap().compile_matcher();
                                std::fs::read_dir(&run.artifacts)
                                    .unwrap()
                                    .flatten()
                                    .filter(|e| glob.is_match(e.file_name()))
                                    .map(|e| e.path())
                                    .collect()
                            }
                            (None, None) => panic!("download-artifact without a name"),
                        };
                        assert!(names.iter().all(|n| n.exists()), "no artifact {names:?}");
                        for n in names {
                            copy_tree(&n, &to);
                        }
                    }
                    "actions/attest-build-provenance" => {}
                    other => panic!("the harness does not emulate {other}"),
                }
                continue;
            }
            let script = subst(step["run"].as_str().expect("a run: step"), &outputs);
            let output_file = temp.join(format!("output-{i}"));
            let env_file = temp.join(format!("env-{i}"));
            std::fs::write(&output_file, "").unwrap();
            std::fs::write(&env_file, "").unwrap();
            let mut env: BTreeMap<String, String> = BTreeMap::new();
            env.insert("HOME".into(), home.display().to_string());
            env.insert("PATH".into(), self.path(&home));
            env.insert("CI".into(), "true".into());
            env.insert("GITHUB_ACTIONS".into(), "true".into());
            env.insert("GITHUB_WORKSPACE".into(), workspace.display().to_string());
            env.insert("GITHUB_REPOSITORY".into(), REPO.into());
            env.insert("GITHUB_REF_NAME".into(), run.ref_name.clone());
            env.insert("GITHUB_SHA".into(), run.sha.clone());
            env.insert("GITHUB_EVENT_NAME".into(), run.event.into());
            env.insert("GITHUB_RUN_ID".into(), run.run_id.to_string());
            env.insert("GITHUB_RUN_ATTEMPT".into(), "1".into());
            env.insert("GITHUB_WORKFLOW_REF".into(), run.workflow.clone());
            env.insert("GITHUB_API_URL".into(), self.api.clone());
            env.insert("GITHUB_OUTPUT".into(), output_file.display().to_string());
            env.insert("GITHUB_ENV".into(), env_file.display().to_string());
            env.insert("RUNNER_TEMP".into(), temp.display().to_string());
            // Only for the shims (cargo, gh), never read by a snippet.
            env.insert("HOSTED_WARDEN".into(), warden_bin().display().to_string());
            env.insert("HOSTED_ROOT".into(), self.root.display().to_string());
            // The runner's clock is the test's: the release run's signature falls inside the
            // run GitHub records.
            env.insert("SOURCE_DATE_EPOCH".into(), SIGNED_AT.into());
            env.extend(base_env.clone());
            env.extend(job_env.clone());
            env.extend(env_of(step, &outputs));
            let dir = match step["working-directory"].as_str() {
                Some(d) => workspace.join(d),
                None => workspace.clone(),
            };
            let out = Command::new("bash")
                .args([
                    "--noprofile",
                    "--norc",
                    "-e",
                    "-o",
                    "pipefail",
                    "-c",
                    &script,
                ])
                .current_dir(&dir)
                .env_clear()
                .envs(&env)
                // A hosted runner's git has no identity: commits need one given.
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "user.useConfigOnly")
                .env("GIT_CONFIG_VALUE_0", "true")
                .output()
                .unwrap();
            log += &String::from_utf8_lossy(&out.stdout);
            log += &String::from_utf8_lossy(&out.stderr);
            if let Some(id) = step["id"].as_str() {
                let o = outputs.entry(id.to_string()).or_default();
                for line in std::fs::read_to_string(&output_file).unwrap().lines() {
                    if let Some((k, v)) = line.split_once('=') {
                        o.insert(k.to_string(), v.to_string());
                    }
                }
            }
            for line in std::fs::read_to_string(&env_file).unwrap().lines() {
                if let Some((k, v)) = line.split_once('=') {
                    job_env.insert(k.to_string(), v.to_string());
                }
            }
            if !out.status.success() {
                passed = false;
                break;
            }
        }
        // actions/cache saves in its post step, only when the job passed, and never over a key.
        if passed {
            for (key, path) in saves {
                if path.exists() && !self.caches.iter().any(|(k, _)| *k == key) {
                    let dir = self.root.join("caches").join(&key);
                    copy_tree(&path, &dir);
                    self.caches.push((key, dir));
                }
            }
        }
        JobOutcome { passed, log }
    }
}

/// The blocks of `doc` marked `<!-- hosted-runner: NAME -->`, by name.
fn marked_blocks(doc: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .strip_prefix("<!-- hosted-runner: ")
            .and_then(|l| l.strip_suffix(" -->"))
        else {
            continue;
        };
        // Other tests' markers may stand between the name and the block.
        let fence = lines.by_ref().find(|l| !l.starts_with("<!-- ")).unwrap();
        assert!(fence.starts_with("```"), "{name}: a fenced block follows");
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        out.insert(name.to_string(), body.join("\n") + "\n");
    }
    out
}

/// What a scenario runs: the setup console block, the two workflows, and the release workflow's
/// jobs in order with the artifacts the build would have uploaded.
struct Scenario {
    setup: String,
    release: String,
    monitor: String,
    jobs: &'static [&'static str],
    /// (artifact, file name, whether it is the warden binary itself)
    built: Vec<(&'static str, String, bool)>,
}

fn parse(text: &str) -> Value {
    yaml_serde::from_str(text).unwrap()
}

async fn the_scenario(s: Scenario) -> Vec<String> {
    let t = tempfile::tempdir().unwrap();
    // GitHub's API answers once the release exists (below).
    let mut hosted = Hosted::new(t.path(), "http://127.0.0.1:9");
    // The repository: its release key, the two workflows.
    let seed = t.path().join("seed");
    demo_keypair(
        &seed.join("keys/minisign.pub"),
        &t.path().join("secret/demo.key"),
    );
    write(
        &seed.join(".github/workflows/release.yml"),
        s.release.as_bytes(),
    );
    write(
        &seed.join(".github/workflows/log-monitor.yml"),
        s.monitor.as_bytes(),
    );
    git(&seed, &["init", "-q", "-b", "main"]);
    git(&seed, &["config", "user.name", "A Maintainer"]);
    git(&seed, &["config", "user.email", "maintainer@example.org"]);
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-qm", "the project"]);
    git(
        &seed,
        &["push", "-q", hosted.remote.to_str().unwrap(), "main"],
    );
    let secret = std::fs::read_to_string(t.path().join("secret/demo.key")).unwrap();
    hosted.set_secret("release", "MINISIGN_SECRET_KEY", &secret);
    hosted.set_secret("release", "MINISIGN_PASSWORD", "");
    // The maintainer sets the log up, as the docs say, and tags a release.
    let laptop = hosted.laptop("maintainer", &s.setup);
    git(&laptop, &["tag", TAG]);
    git(&laptop, &["push", "-q", "origin", TAG]);
    let sha = git(&laptop, &["rev-parse", "HEAD"]);
    let mut said = Vec::new();
    let release = parse(&s.release);
    let run = RunCtx {
        run_id: 555,
        event: "push",
        ref_name: TAG.into(),
        sha: sha.clone(),
        workflow: format!("{REPO}/.github/workflows/release.yml@refs/tags/{TAG}"),
        artifacts: t.path().join("artifacts-555"),
    };
    for (artifact, name, binary) in &s.built {
        let path = run.artifacts.join(artifact).join(name);
        match binary {
            true => {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::copy(warden_bin(), &path).unwrap();
            }
            false => write(&path, format!("{name} built from {sha}\n").as_bytes()),
        }
    }
    for job in s.jobs {
        let out = tokio::task::block_in_place(|| hosted.run_job(&release, job, &run));
        assert!(out.passed, "release job {job} failed:\n{}", out.log);
    }
    // The published release carries the log's proof, and verifies with --require-log.
    let published = t.path().join("releases").join(TAG);
    assert!(published.join("SHA256SUMS.log-proof").exists());
    run_ok(
        warden(t.path())
            .arg("verify")
            .arg(&published)
            .args(["--require-log", "--log-vkey"])
            .arg(laptop.join("keys/log.vkey"))
            .arg("--public-key")
            .arg(laptop.join("keys/minisign.pub"))
            .args(["--expect-tag", TAG]),
    );
    // GitHub's records of that run and release, for the monitor.
    let mut records = good_records(&published);
    records.set_commit(&sha);
    let (server, _storage) = serve(&records).await;
    hosted.api = server.uri();
    // The log branch holds the release: entry 0, bound to run 555.
    let monitor = parse(&s.monitor);
    let mut monitor_run = |hosted: &mut Hosted, id: u64| {
        let run = RunCtx {
            run_id: id,
            event: "schedule",
            ref_name: "main".into(),
            sha: sha.clone(),
            workflow: format!("{REPO}/.github/workflows/log-monitor.yml@refs/heads/main"),
            artifacts: t.path().join(format!("artifacts-{id}")),
        };
        let out = tokio::task::block_in_place(|| hosted.run_job(&monitor, "monitor", &run));
        let lines: Vec<String> = out
            .log
            .lines()
            .filter(|l| l.starts_with("OK ") || l.starts_with("FLAGGED") || l.starts_with("log "))
            .map(|l| l.replace(&sha, "SHA"))
            .collect();
        said.push(format!(
            "monitor run {id}: {}",
            if out.passed { "passed" } else { "FAILED" }
        ));
        said.extend(lines);
    };
    let hosted_ref = &mut hosted;
    monitor_run(hosted_ref, 1001);
    monitor_run(hosted_ref, 1002);
    // A thief with both keys signs on a laptop and pushes the log.
    let thief = hosted_ref.laptop("thief", "");
    git(&thief, &["fetch", "-q", "origin", "transparency-log"]);
    git(&thief, &["worktree", "add", "-q", "../log", "FETCH_HEAD"]);
    write(&thief.join("laptop/app"), b"a backdoored app");
    let home = thief.parent().unwrap();
    std::fs::copy(
        t.path().join("maintainer-home/.warden/log.key"),
        home.join("log.key"),
    )
    .unwrap();
    run_ok(
        warden(&thief)
            .env("SOURCE_DATE_EPOCH", SIGNED_AT)
            .args(["sign", "laptop", "--secret-key"])
            .arg(t.path().join("secret/demo.key"))
            .args([
                "--public-key",
                "keys/minisign.pub",
                "--tag",
                TAG,
                "--repo",
                REPO,
                "--commit",
                &sha,
            ])
            .args(["--log", "../log", "--log-key"])
            .arg(home.join("log.key")),
    );
    let log_dir = home.join("log");
    git(&log_dir, &["add", "-A"]);
    git(
        &log_dir,
        &[
            "-c",
            "user.name=Thief",
            "-c",
            "user.email=t@example.org",
            "commit",
            "-qm",
            "log",
        ],
    );
    git(
        &log_dir,
        &[
            "push",
            "-q",
            hosted_ref.remote.to_str().unwrap(),
            "HEAD:transparency-log",
        ],
    );
    monitor_run(hosted_ref, 1003);
    monitor_run(hosted_ref, 1004);
    said
}

fn run_ok(cmd: &mut Command) {
    let out = run(cmd);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// What every scenario must print: the release run's entry, passed twice; then the laptop's,
/// flagged on every run after it.
fn expected() -> Vec<String> {
    [
        "monitor run 1001: passed",
        "OK       entry 0  key 8F457D1A3C3B50B5  tag v1.2.3  run 555 (attempt 1) of .github/workflows/release.yml in environment release",
        "log log: entries 0 to 1 read, 1 of o/r (0 of other repositories), 0 flagged",
        "monitor run 1002: passed",
        "log log: entries 1 to 1 read, 0 of o/r (0 of other repositories), 0 flagged",
        "monitor run 1003: FAILED",
        "FLAGGED  entry 1  key 8F457D1A3C3B50B5  tag v1.2.3: its trusted comment binds no workflow run: signed outside a release run (a laptop, or a stolen key)",
        "log log: entries 1 to 2 read, 1 of o/r (0 of other repositories), 1 flagged",
        "monitor run 1004: FAILED",
        "FLAGGED  entry 1  key 8F457D1A3C3B50B5  tag v1.2.3: its trusted comment binds no workflow run: signed outside a release run (a laptop, or a stolen key)",
        "log log: entries 1 to 2 read, 1 of o/r (0 of other repositories), 1 flagged",
    ]
    .map(str::to_string)
    .to_vec()
}

fn repo_file(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_docs_log_snippets_run_on_a_hosted_runner_and_the_monitor_flags_a_laptop_entry() {
    let blocks = marked_blocks(&repo_file("docs/transparency-log.md"));
    let said = the_scenario(Scenario {
        setup: blocks["laptop"].clone(),
        release: blocks[".github/workflows/release.yml"].clone(),
        monitor: blocks[".github/workflows/log-monitor.yml"].clone(),
        jobs: &["sign", "log", "publish"],
        built: vec![("dist", "app".into(), false)],
    })
    .await;
    assert_eq!(said, expected());
}

#[tokio::test(flavor = "multi_thread")]
async fn this_repository_s_release_and_monitor_workflows_log_and_monitor_for_real() {
    let blocks = marked_blocks(&repo_file("docs/transparency-log.md"));
    let said = the_scenario(Scenario {
        setup: blocks["laptop"].clone(),
        release: repo_file(".github/workflows/release.yml"),
        monitor: repo_file(".github/workflows/log-monitor.yml"),
        jobs: &["sign", "log", "publish"],
        built: vec![(
            "dist-linux-x86_64",
            format!("warden-{TAG}-linux-x86_64"),
            true,
        )],
    })
    .await;
    assert_eq!(said, expected());
}

/// The harness is a hosted runner where it matters: a commit without an identity fails, and a
/// checkout without persisted credentials cannot push (README's snippet before issue 51 did
/// both).
#[tokio::test(flavor = "multi_thread")]
async fn a_hosted_runner_has_no_git_identity_and_no_credentials_unless_persisted() {
    let t = tempfile::tempdir().unwrap();
    let mut hosted = Hosted::new(t.path(), "http://127.0.0.1:9");
    let seed = t.path().join("seed");
    write(&seed.join("README"), b"x");
    git(&seed, &["init", "-q", "-b", "main"]);
    git(
        &seed,
        &[
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@b",
            "commit",
            "-qm",
            "x",
            "--allow-empty",
        ],
    );
    git(
        &seed,
        &["push", "-q", hosted.remote.to_str().unwrap(), "main"],
    );
    let wf = parse(
        r#"
jobs:
  commit:
    steps:
      - uses: actions/checkout@v4
      - run: git commit --allow-empty -qm "no identity"
  push:
    steps:
      - uses: actions/checkout@v4
        with: { persist-credentials: false }
      - run: git -c user.name=bot -c user.email=bot@example.org commit --allow-empty -qm x && git push -q origin HEAD:main
"#,
    );
    let run = RunCtx {
        run_id: 1,
        event: "push",
        ref_name: "main".into(),
        sha: String::new(),
        workflow: String::new(),
        artifacts: t.path().join("artifacts"),
    };
    let commit = hosted.run_job(&wf, "commit", &run);
    assert!(!commit.passed);
    assert!(
        commit.log.contains("Author identity unknown"),
        "{}",
        commit.log
    );
    let push = hosted.run_job(&wf, "push", &run);
    assert!(!push.passed);
    assert!(push.log.contains("no-credentials"), "{}", push.log);
}

/// This repository's workflows, and every whole workflow the documentation shows, as actionlint
/// (an outside judge that knows today's hosted runners) sees them: no runner label GitHub has
/// retired (`macos-13`), no action on a runtime the runners no longer run (node20), no other
/// problem. An action pinned by commit is linted as its version's major tag.
#[test]
fn this_repository_s_workflows_and_documented_ones_lint_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let t = tempfile::tempdir().unwrap();
    for doc in [
        "README.md",
        "docs/release.md",
        "docs/transparency-log.md",
        "docs/registry-and-hive.md",
        "docs/audit.md",
    ] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for (i, block) in text.split("```yaml\n").skip(1).enumerate() {
            let yaml = block.split("\n```").next().unwrap();
            // A whole workflow, not a fragment of one.
            if yaml.lines().any(|l| l.starts_with("jobs:"))
                && yaml.lines().any(|l| l.starts_with("on:"))
            {
                let file = t.path().join(format!("{}-{i}.yml", doc.replace('/', "-")));
                write(&file, yaml.as_bytes());
                files.push(file);
            }
        }
    }
    assert!(files.len() >= 6, "{files:?}");
    if let Some(problems) = actionlint(&files) {
        let found: Vec<String> = problems
            .into_iter()
            .flat_map(|(f, p)| p.into_iter().map(move |p| format!("{}: {p}", f.display())))
            .collect();
        assert_eq!(found, Vec::<String>::new());
    }
}
