//! What a step needs from the job it runs in, read from the workflow text: the commands it runs,
//! the files it reads and writes (relative to the workspace), the variables and step outputs it
//! reads. A split moves a step only when each of these is found in the new job; what cannot be
//! read here (a build tool that reads the checkout by convention, a repository script, an action
//! whose needs are not known) is an error that keeps the step, and so the job, whole.

use std::collections::BTreeSet;

use regex::Regex;
use yaml_serde::Value;

use super::shell;
use super::steps::all_strings;

/// A path a step reads: a file or glob, or a folder.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PathRef {
    pub(crate) path: String,
    pub(crate) folder: bool,
}

/// What one step needs and leaves.
#[derive(Debug, Default)]
pub(crate) struct Needs {
    /// Commands it runs (as written: a name, or an absolute path).
    pub(crate) commands: Vec<String>,
    /// Words its install commands name (`apt-get install X`, `pip install X`).
    pub(crate) installs: Vec<String>,
    pub(crate) reads: Vec<PathRef>,
    /// Paths it writes: relative to the workspace, or absolute.
    pub(crate) writes: Vec<String>,
    /// Variables it reads (`${{ env.X }}`, `$X`).
    pub(crate) env: BTreeSet<String>,
    /// `steps.<id>` it reads.
    pub(crate) steps: BTreeSet<String>,
    /// Reads (`false`) and writes (`true`) in the order the step makes them.
    pub(crate) order: Vec<(bool, PathRef)>,
    /// An action that runs tools the job's setup steps installed.
    pub(crate) set_up_tools: bool,
}

impl Needs {
    fn read(&mut self, r: PathRef) {
        self.order.push((false, r.clone()));
        self.reads.push(r);
    }

    fn write(&mut self, path: String) {
        self.order.push((
            true,
            PathRef {
                path: path.clone(),
                folder: false,
            },
        ));
        self.writes.push(path);
    }
}

/// Build tools and interpreters: they read the checkout by convention (a Makefile, a Gradle
/// signing config, `electron-builder`'s `CSC_LINK`), so what they read cannot be named.
const BUILDS: &[&str] = &[
    "make",
    "gmake",
    "cmake",
    "ninja",
    "gradle",
    "gradlew",
    "mvn",
    "mvnw",
    "ant",
    "xcodebuild",
    "xcrun",
    "electron-builder",
    "electron-forge",
    "tauri",
    "cargo",
    "cross",
    "go",
    "goreleaser",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "bun",
    "deno",
    "fastlane",
    "bundle",
    "rake",
    "dotnet",
    "msbuild",
    "flutter",
    "swift",
    "python",
    "python3",
    "node",
    "ruby",
    "perl",
    "bash",
    "sh",
    "zsh",
    "pwsh",
    "source",
    ".",
    "eval",
    "nix",
    "docker",
    "podman",
    "just",
    "task",
];

/// Installers: their words are packages, not files.
const INSTALLERS: &[&str] = &[
    "apt-get",
    "apt",
    "dpkg",
    "brew",
    "pip",
    "pip3",
    "pipx",
    "sdkmanager",
    "rustup",
    "choco",
    "snap",
    "gem",
];

/// Commands whose words are never files read.
const NO_FILES: &[&str] = &[
    "echo", "printf", "ls", "set", "export", "unset", "true", "false", "test", "[", "[[", "sleep",
    "date", "exit", "return", "shift", "trap", "wait", "umask", "which", "type", "whoami", "id",
    "uname", "env", "git",
];

/// Commands on GitHub's hosted Ubuntu image (besides the installers and `NO_FILES`).
const ON_THE_RUNNER: &[&str] = &[
    "cat",
    "head",
    "tail",
    "cp",
    "mv",
    "rm",
    "mkdir",
    "rmdir",
    "touch",
    "ln",
    "chmod",
    "find",
    "xargs",
    "grep",
    "egrep",
    "fgrep",
    "sed",
    "awk",
    "cut",
    "tr",
    "sort",
    "uniq",
    "wc",
    "tee",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "md5sum",
    "shasum",
    "base64",
    "xxd",
    "od",
    "tar",
    "gzip",
    "gunzip",
    "zip",
    "unzip",
    "xz",
    "zstd",
    "bzip2",
    "curl",
    "wget",
    "jq",
    "gh",
    "gpg",
    "openssl",
    "ssh-keygen",
    "cc",
    "gcc",
    "file",
    "stat",
    "du",
    "diff",
    "cmp",
    "install",
    "rsync",
    "sudo",
    "tr",
    "seq",
    "nproc",
    "cd",
];

/// Commands whose first word that is not an option is a program or pattern, not a file.
const PATTERN_FIRST: &[&str] = &["sed", "awk", "grep", "egrep", "fgrep", "jq"];

/// Actions whose needs are known: their inputs that name files read (`,`- or line-separated),
/// those that name a folder they read and write into, and whether they run tools the job set up
/// (the Android signers run the SDK's build-tools).
const ACTIONS: &[(&str, &[&str], &[&str], bool)] = &[
    ("softprops/action-gh-release", &["files"], &[], false),
    ("actions/create-release", &[], &[], false),
    ("actions/upload-release-asset", &["asset_path"], &[], false),
    ("ncipollo/release-action", &["artifacts"], &[], false),
    ("svenstaro/upload-release-action", &["file"], &[], false),
    ("actions/upload-artifact", &["path"], &[], false),
    (
        "actions/attest-build-provenance",
        &["subject-path"],
        &[],
        false,
    ),
    ("actions/attest", &["subject-path"], &[], false),
    (
        "r0adkll/sign-android-release",
        &[],
        &["releaseDirectory"],
        true,
    ),
    ("ilharp/sign-android-release", &[], &["releaseDir"], true),
];

/// Whether `cmd` is a command the runner has or the step itself can run.
pub(crate) fn on_the_runner(cmd: &str) -> bool {
    ON_THE_RUNNER.contains(&cmd) || INSTALLERS.contains(&cmd) || NO_FILES.contains(&cmd)
}

/// The action a `uses:` names, without its ref.
pub(crate) fn action_name(uses: &str) -> &str {
    uses.split('@').next().unwrap_or(uses)
}

/// What `step` needs, its relative paths placed in `workdir`; an error says why it cannot be
/// known.
pub(crate) fn of_step(step: &Value, workdir: &str) -> Result<Needs, String> {
    let mut needs = Needs {
        env: env_reads(step),
        steps: step_reads(step),
        ..Needs::default()
    };
    if let Some(uses) = step.get("uses").and_then(Value::as_str) {
        let name = action_name(uses);
        let Some((_, files, folders, tools)) = ACTIONS.iter().find(|(a, ..)| *a == name) else {
            return Err(format!(
                "it runs `{name}`, an action whose needs warden does not know (the tools and files it takes from the job)"
            ));
        };
        needs.set_up_tools = *tools;
        let with = step.get("with");
        for input in *files {
            for p in input_paths(with, input) {
                needs.read(PathRef {
                    path: shell::join(workdir, &p),
                    folder: false,
                });
            }
        }
        for input in *folders {
            for p in input_paths(with, input) {
                let path = shell::join(workdir, &p);
                needs.read(PathRef {
                    path: path.clone(),
                    folder: true,
                });
                needs.write(path);
            }
        }
        return Ok(needs);
    }
    let Some(script) = step.get("run").and_then(Value::as_str) else {
        return Err("neither `run:` nor `uses:`".into());
    };
    if let Some(sh) = step.get("shell").and_then(Value::as_str) {
        if !matches!(sh.split_whitespace().next(), Some("bash" | "sh")) {
            return Err(format!("it runs in `shell: {sh}`"));
        }
    }
    let dir = step
        .get("working-directory")
        .and_then(Value::as_str)
        .map(|d| shell::join(workdir, d))
        .unwrap_or_else(|| workdir.to_string());
    if dir.contains('$') || dir.split('/').any(|p| p == "..") {
        return Err(format!(
            "its working directory `{dir}` is not a folder of the workspace warden can name"
        ));
    }
    let read = shell::read(script);
    if let Some(why) = read.unclear {
        return Err(format!("its script cannot be followed: {why}"));
    }
    for (cwd, cmd) in read.commands {
        let cwd = shell::join(&dir, &cwd);
        command(&mut needs, &cwd, cmd)?;
    }
    Ok(needs)
}

/// One simple command's needs.
fn command(needs: &mut Needs, cwd: &str, cmd: shell::Command) -> Result<(), String> {
    let mut words = cmd.words;
    // Wrappers: the command is what they run.
    while matches!(
        words.first().map(String::as_str),
        Some("sudo" | "time" | "nohup" | "exec" | "command")
    ) {
        words.remove(0);
        while words.first().is_some_and(|w| w.starts_with('-')) {
            words.remove(0);
        }
    }
    let Some(first) = words.first().cloned() else {
        return Ok(());
    };
    let base = first.rsplit('/').next().unwrap_or(&first).to_string();
    let place = |p: &str| -> String {
        if p.starts_with('/') || p.starts_with('~') {
            p.to_string()
        } else {
            shell::join(cwd, p)
        }
    };
    if first.contains('/') && !first.starts_with('/') && !first.starts_with('$') {
        return Err(format!(
            "it runs `{first}`, a file of the repository: what that reads cannot be named"
        ));
    }
    if BUILDS.contains(&base.as_str()) {
        return Err(format!(
            "it runs `{base}`, which builds or runs code of the checkout: what it reads (and whether it signs) cannot be named"
        ));
    }
    if first.contains('$') && !first.starts_with("${") {
        return Err(format!("it runs `{first}`, a command named by a variable"));
    }
    // `${ANDROID_SDK_ROOT}/…/sdkmanager`: a tool of the runner's SDK.
    needs.commands.push(if first.starts_with('$') {
        base.clone()
    } else {
        first.clone()
    });
    let args: Vec<String> = words[1..].to_vec();
    for out in &cmd.redirect_out {
        if !out.starts_with('$') && !out.starts_with("/dev/") && !out.starts_with('&') {
            needs.write(place(out));
        }
    }
    for input in &cmd.redirect_in {
        read_path(needs, &place(input), input)?;
    }
    if INSTALLERS.contains(&base.as_str()) {
        needs
            .installs
            .extend(args.iter().filter(|a| !a.starts_with('-')).cloned());
        return Ok(());
    }
    if base == "git" {
        if args.first().map(String::as_str) == Some("clone") {
            if let Some(target) = clone_target(&args[1..]) {
                needs.write(place(&target));
            }
        }
        return Ok(());
    }
    if NO_FILES.contains(&base.as_str()) {
        return Ok(());
    }
    arguments(needs, &base, &args, &place)
}

/// The arguments of a command: what it writes (`-o`, the last of `mv`/`cp`, `mkdir`'s) and the
/// paths it reads.
fn arguments(
    needs: &mut Needs,
    base: &str,
    args: &[String],
    place: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    let mut plain = Vec::new();
    let mut i = 0;
    let mut pattern_skipped = !PATTERN_FIRST.contains(&base);
    while i < args.len() {
        let a = &args[i];
        if matches!(a.as_str(), "-o" | "--output" | "-x" | "-f" | "--out" | "-C")
            && i + 1 < args.len()
        {
            let value = &args[i + 1];
            match (a.as_str(), base) {
                ("-C", _) => return Err(format!("`{base} -C`: a folder warden does not follow")),
                ("-f", "tar") if !args.iter().any(|x| x.starts_with('-') && x.contains('c')) => {
                    read_path(needs, &place(value), value)?
                }
                ("-f", "tar") | ("-o" | "--output" | "-x" | "--out", _) => {
                    needs.write(place(value))
                }
                _ => read_path(needs, &place(value), value)?,
            }
            i += 2;
            continue;
        }
        if let Some(v) = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("-o="))
        {
            needs.write(place(v));
        } else if a == "-e" && !pattern_skipped {
            pattern_skipped = true;
            i += 1;
        } else if !a.starts_with('-') {
            if !pattern_skipped {
                pattern_skipped = true;
            } else {
                plain.push(a.clone());
            }
        }
        i += 1;
    }
    let last_writes = matches!(base, "mv" | "cp" | "ln" | "install" | "rsync");
    let all_write = matches!(base, "mkdir" | "touch" | "rm" | "rmdir");
    let first_writes = matches!(base, "zip");
    for (n, a) in plain.iter().enumerate() {
        let writes = all_write || (last_writes && n + 1 == plain.len()) || (first_writes && n == 0);
        if writes {
            needs.write(place(a));
        } else if looks_like_path(a) {
            read_path(needs, &place(a), a)?;
        }
    }
    Ok(())
}

/// The folder `git clone [options] URL [DIR]` makes.
fn clone_target(args: &[String]) -> Option<String> {
    // `--depth 1`: the value is not the URL.
    let plain: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') && a.parse::<u64>().is_err())
        .collect();
    let target = match plain.as_slice() {
        [url] => url
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".git")
            .to_string(),
        [_, dir, ..] => dir.to_string(),
        [] => return None,
    };
    (!target.is_empty()).then_some(target)
}

/// Records a read of `path` (as placed; `written` as the script wrote it).
fn read_path(needs: &mut Needs, path: &str, written: &str) -> Result<(), String> {
    if path.contains("$SUBST") || (path.contains('$') && !path.contains("${{")) {
        return Err(format!("it reads `{written}`, a path warden cannot name"));
    }
    needs.read(PathRef {
        path: path.to_string(),
        folder: false,
    });
    Ok(())
}

/// Whether a word is a path rather than a value: it has a folder, a glob or an extension.
fn looks_like_path(word: &str) -> bool {
    if word.contains("://") || word.starts_with('@') || word.contains('=') {
        return false;
    }
    if word.contains('/') || word.contains('*') || word.contains('?') {
        return true;
    }
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=8).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && !ext.chars().all(|c| c.is_ascii_digit())
    })
}

/// The paths an input names (one per line or comma), empty when the input is absent.
fn input_paths(with: Option<&Value>, input: &str) -> Vec<String> {
    let Some(v) = with.and_then(|w| w.get(input)) else {
        return Vec::new();
    };
    all_strings(v)
        .iter()
        .flat_map(|s| {
            s.split(['\n', ','])
                .map(|p| p.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|p| !p.is_empty() && !p.starts_with('#'))
        .collect()
}

/// Variables a step reads: `env.X` in expressions, `$X` / `${X}` in its script.
fn env_reads(step: &Value) -> BTreeSet<String> {
    static EXPR: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    static SHELL: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let expr = EXPR.get_or_init(|| Regex::new(r"\benv\.([A-Za-z_][A-Za-z0-9_]*)").expect("regex"));
    let shell = SHELL.get_or_init(|| Regex::new(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)").expect("regex"));
    let mut out = BTreeSet::new();
    for s in all_strings(step) {
        out.extend(expr.captures_iter(&s).map(|c| c[1].to_string()));
    }
    if let Some(run) = step.get("run").and_then(Value::as_str) {
        out.extend(shell.captures_iter(run).map(|c| c[1].to_string()));
    }
    out
}

/// `steps.<id>` a step reads.
fn step_reads(step: &Value) -> BTreeSet<String> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"\bsteps\.([A-Za-z_][A-Za-z0-9_-]*)").expect("regex"));
    all_strings(step)
        .iter()
        .flat_map(|s| {
            re.captures_iter(s)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A step that sets up tools and reads nothing of the checkout: `actions/setup-*`, a
/// toolchain action, or a script of installers only. A split runs it again in the new job.
pub(crate) fn sets_up_tools(step: &Value) -> bool {
    if let Some(uses) = step.get("uses").and_then(Value::as_str) {
        let name = action_name(uses);
        let short = name.rsplit('/').next().unwrap_or(name);
        return short.starts_with("setup-")
            || short.ends_with("-toolchain")
            || short == "toolchain";
    }
    let Some(script) = step.get("run").and_then(Value::as_str) else {
        return false;
    };
    let read = shell::read(script);
    read.unclear.is_none()
        && !read.commands.is_empty()
        && read.commands.iter().all(|(_, c)| {
            let mut words = c
                .words
                .iter()
                .map(String::as_str)
                .skip_while(|w| *w == "sudo");
            words.next().is_some_and(|w| {
                let base = w.rsplit('/').next().unwrap_or(w);
                INSTALLERS.contains(&base) || base == "echo"
            })
        })
}

/// The tool a setup action is named for (`actions/setup-java`: `java`).
pub(crate) fn tool_of(step: &Value) -> Option<String> {
    let name = action_name(step.get("uses")?.as_str()?);
    let short = name.rsplit('/').next().unwrap_or(name);
    Some(
        short
            .trim_start_matches("setup-")
            .trim_end_matches("-toolchain")
            .to_string(),
    )
}

/// Inputs of a setup step that read the checkout (a version file, a cache keyed on lock
/// files): run again without the checkout, it would fail or differ.
pub(crate) fn setup_reads_checkout(step: &Value) -> Option<String> {
    let with = step.get("with")?.as_mapping()?;
    with.keys()
        .filter_map(Value::as_str)
        .find(|k| k.ends_with("-file") || k.starts_with("cache"))
        .map(str::to_string)
}

/// A step that only computes values from the run's context (`echo "V=${GITHUB_REF#…}" >>
/// "$GITHUB_ENV"`): it can run again in the new job.
pub(crate) fn only_computes(step: &Value) -> bool {
    if step.get("uses").is_some() {
        return false;
    }
    let Ok(needs) = of_step(step, "") else {
        return false;
    };
    needs.reads.is_empty()
        && needs.steps.is_empty()
        && needs
            .commands
            .iter()
            .all(|c| matches!(c.as_str(), "echo" | "printf" | "set" | "export" | "true"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(yaml: &str) -> Value {
        yaml_serde::from_str(yaml).unwrap()
    }

    #[test]
    fn a_self_contained_signing_script_is_read_whole() {
        let s = step(
            "run: |\n  sudo apt-get -y install libsodium-dev\n  git clone --depth 1 https://github.com/jedisct1/minisign.git\n  cd minisign/src\n  cc -O2 -o /tmp/bin/minisign *.c -lsodium\n  cd -\n  cd dist\n  echo | /tmp/bin/minisign -s /tmp/k -Sm *.tar.gz *.zip\n",
        );
        let n = of_step(&s, "").unwrap();
        assert_eq!(
            n.commands,
            ["apt-get", "git", "cc", "echo", "/tmp/bin/minisign"]
        );
        assert_eq!(n.installs, ["install", "libsodium-dev"]);
        assert_eq!(n.writes, ["minisign", "/tmp/bin/minisign"]);
        let reads: Vec<&str> = n.reads.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            reads,
            ["minisign/src/*.c", "/tmp/k", "dist/*.tar.gz", "dist/*.zip"]
        );
    }

    #[test]
    fn builds_and_repository_scripts_cannot_be_named() {
        for run in [
            "make sign",
            "./gradlew assembleRelease",
            ".ci/package.sh",
            "bash x.sh",
            "cat $FILE/x.txt",
        ] {
            let s = step(&format!("run: {run}\n"));
            assert!(of_step(&s, "").is_err(), "{run}");
        }
        let unknown = step("uses: someone/sign@v1\n");
        assert!(of_step(&unknown, "").unwrap_err().contains("someone/sign"));
    }
}
