//! `warden audit --fix` judged by what a maintainer would merge, not by warden's own re-audit:
//! `tests/fixtures/fix-corpus-2`, 25 release workflows modelled on public repositories, each job
//! labelled before `--fix` ran with the remedy a maintainer would accept and with what each of
//! its steps uses of earlier ones (tools, files, variables) — the model of the job, from the
//! workflow text, kept in the labels, not in the code under test.
//!
//! - By default, a job that runs on no pull request gets the whole-job patch (`environment:` and
//!   nothing else), one that also runs on pull requests a plan; with `--fix-mode split`, only
//!   the jobs labelled `split` are split, the rest are never split.
//! - A split breaks no trigger: every step that moved finds in the new job each step it used
//!   (run again there, moved with it, or its files handed over by download), every step that
//!   reads a key moved, the moved steps ran only on tags before (so the other runs make what
//!   they made), and the job's `permissions`, `concurrency`, `continue-on-error`,
//!   `timeout-minutes`, `defaults` and `env` are the new job's too.
//! - Every patch passes actionlint 1.17 with no problem its original did not have, and
//!   `--format patch` is taken by `git apply`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use yaml_serde::Value;

use crate::common::*;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fix-corpus-2")
}

#[derive(Debug, serde::Deserialize)]
struct Labels {
    job: Vec<LabelledJob>,
}

#[derive(Debug, serde::Deserialize)]
struct LabelledJob {
    workflow: String,
    job: String,
    triggers: Vec<String>,
    remedy: String,
    step: Vec<LabelledStep>,
}

#[derive(Debug, serde::Deserialize)]
struct LabelledStep {
    name: String,
    uses_tools_from: Vec<String>,
    reads_files_from: Vec<String>,
    reads_env_from: Vec<String>,
    reads_secrets: Vec<String>,
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("labels.toml").is_file())
        .collect();
    out.sort();
    out
}

fn labels(case: &Path) -> Labels {
    toml::from_str(&std::fs::read_to_string(case.join("labels.toml")).unwrap()).unwrap()
}

/// A step's label name: its `name:`, else `#N` (its index in the job).
fn step_label(step: &Value, i: usize) -> String {
    step.get("name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("#{i}"), str::to_string)
}

fn steps(job: &Value) -> Vec<Value> {
    job.get("steps")
        .and_then(Value::as_sequence)
        .cloned()
        .unwrap_or_default()
}

/// What `--fix` did to a job: `whole-job`, `split`, `plan` (named and left) or `none`.
fn remedy_of(before: &Value, after: &Value, job: &str, stderr: &str, wf: &str) -> String {
    let jobs = &after["jobs"];
    if jobs.get(format!("{job}-sign").as_str()).is_some() {
        return "split".into();
    }
    let (was, is) = (&before["jobs"][job], &jobs[job]);
    if is.get("environment").is_some() && was.get("environment").is_none() {
        return "whole-job".into();
    }
    let named = stderr.lines().any(|l| {
        l.starts_with(&format!("not fixed .github/workflows/{wf}:"))
            && l.contains(&format!("(job {job}): plan: "))
    });
    if named {
        "plan".into()
    } else {
        "none".into()
    }
}

/// The whole-job patch: `environment:` added, nothing else of the job changed.
fn whole_job_problems(before: &Value, after: &Value, job: &str) -> Vec<String> {
    let mut is = after["jobs"][job].as_mapping().cloned().unwrap();
    let env = is.remove("environment");
    let mut out = Vec::new();
    if env.as_ref().and_then(Value::as_str) != Some("release") {
        out.push(format!("job `{job}`: environment is {env:?}"));
    }
    if Some(&is) != before["jobs"][job].as_mapping() {
        out.push(format!("job `{job}`: changed beyond `environment:`"));
    }
    out
}

/// The model check of a split: each moved step finds what it used.
fn split_problems(before: &Value, after: &Value, label: &LabelledJob) -> Vec<String> {
    let job = label.job.as_str();
    let sign_id = format!("{job}-sign");
    let (was, build, sign) = (
        &before["jobs"][job],
        &after["jobs"][job],
        &after["jobs"][sign_id.as_str()],
    );
    let mut out = Vec::new();
    let original = steps(was);
    let names_in = |j: &Value| -> Vec<String> {
        steps(j)
            .iter()
            .map(|s| {
                // Re-run and moved steps keep their text: find their label by value.
                original
                    .iter()
                    .position(|o| o == s)
                    .map_or_else(|| "(warden's)".to_string(), |i| step_label(s, i))
            })
            .collect()
    };
    let (in_build, in_sign) = (names_in(build), names_in(sign));
    let download = steps(sign).iter().any(|s| {
        s.get("uses")
            .and_then(Value::as_str)
            .is_some_and(|u| u.starts_with("actions/download-artifact@"))
    });
    let upload_added = steps(build).len() > in_build.iter().filter(|n| *n != "(warden's)").count();
    for (i, s) in label.step.iter().enumerate() {
        let moved = in_sign.contains(&s.name) && !in_build.contains(&s.name);
        let secrets: Vec<&String> = s
            .reads_secrets
            .iter()
            .filter(|k| *k != "GITHUB_TOKEN")
            .collect();
        if !secrets.is_empty() && !in_sign.contains(&s.name) {
            out.push(format!(
                "`{}` reads {secrets:?} and stayed in the build",
                s.name
            ));
        }
        if !moved {
            continue;
        }
        let at = in_sign.iter().position(|n| *n == s.name).unwrap();
        let before_it = &in_sign[..at];
        for dep in s.uses_tools_from.iter().chain(&s.reads_env_from) {
            if !before_it.contains(dep) {
                out.push(format!(
                    "`{}` uses `{dep}`, which the new job does not run before it",
                    s.name
                ));
            }
        }
        for dep in &s.reads_files_from {
            let handed = in_build.contains(dep) && download && upload_added;
            if !before_it.contains(dep) && !handed {
                out.push(format!(
                    "`{}` reads files of `{dep}`, which the new job neither makes nor takes",
                    s.name
                ));
            }
        }
        // It ran only on tags before: the job's other runs are unchanged.
        let cond = original[i]
            .get("if")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let other_runs = label
            .triggers
            .iter()
            .any(|t| !matches!(t.as_str(), "push:tags" | "release"));
        if other_runs && !cond.contains("refs/tags/") {
            out.push(format!(
                "`{}` moved but ran on {:?} before",
                s.name, label.triggers
            ));
        }
    }
    for key in [
        "permissions",
        "concurrency",
        "continue-on-error",
        "timeout-minutes",
        "defaults",
        "env",
        "runs-on",
    ] {
        if was.get(key) != sign.get(key) {
            out.push(format!("`{key}:` of `{job}` not kept in `{sign_id}`"));
        }
    }
    if sign.get("environment").and_then(Value::as_str) != Some("release") {
        out.push(format!("`{sign_id}` has no `environment: release`"));
    }
    out
}

/// One run of `--fix` (a mode or the default) on a copy of `case`: per job, what it got and what
/// is wrong with it; the fixed files for actionlint.
fn check(case: &Path, mode: Option<&str>, lint: &Path) -> Vec<String> {
    let name = case.file_name().unwrap().to_string_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    copy_dir(case, dir.path());
    let wf = dir.path().join(".github/workflows");
    let read = |p: &Path| -> BTreeMap<String, String> {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect()
    };
    let before = read(&wf);
    let mut cmd = warden(dir.path());
    cmd.args(["audit", "--offline", "--fix", "--format", "json"]);
    if let Some(m) = mode {
        cmd.args(["--fix-mode", m]);
    }
    let out = run(&mut cmd);
    let after = read(&wf);
    let mut problems = Vec::new();
    for label in labels(case).job {
        let (b, a): (Value, Value) = (
            yaml_serde::from_str(&before[&label.workflow]).unwrap(),
            yaml_serde::from_str(&after[&label.workflow]).unwrap(),
        );
        let got = remedy_of(&b, &a, &label.job, &out.stderr, &label.workflow);
        let pull_requests = label.triggers.iter().any(|t| t == "pull_request");
        let releases_only = label
            .triggers
            .iter()
            .all(|t| matches!(t.as_str(), "push:tags" | "release" | "workflow_dispatch"));
        let expected: &[&str] = match (mode, label.remedy.as_str()) {
            (None, "split") if pull_requests => &["plan"],
            (None, "split") => &["whole-job"],
            (None, r) => &[if r == "plan" { "plan" } else { "whole-job" }],
            (Some("split"), "split") => &["split"],
            // Never split; whole-job only where every run is a release anyway.
            (Some("split"), _) if releases_only => &["whole-job"],
            (Some("split"), _) => &["plan"],
            (Some(m), _) => &[if m == "plan" { "plan" } else { "whole-job" }],
        };
        let at = format!("{name} {} ({})", label.job, mode.unwrap_or("default"));
        if !expected.contains(&got.as_str()) {
            problems.push(format!("{at}: got {got}, expected {expected:?}"));
            continue;
        }
        let wrong = match got.as_str() {
            "whole-job" => whole_job_problems(&b, &a, &label.job),
            "split" => split_problems(&b, &a, &label),
            _ if a["jobs"][label.job.as_str()] != b["jobs"][label.job.as_str()] => {
                vec!["a plan, yet the job changed".to_string()]
            }
            _ => Vec::new(),
        };
        problems.extend(wrong.into_iter().map(|w| format!("{at}: {w}")));
    }
    for (file, text) in &after {
        if before[file] != *text {
            let stem = format!("{name}-{}-{file}", mode.unwrap_or("default"));
            std::fs::write(lint.join(format!("{stem}.old.yml")), &before[file]).unwrap();
            std::fs::write(lint.join(format!("{stem}.new.yml")), text).unwrap();
        }
    }
    problems
}

#[test]
fn fix_gives_each_labelled_job_the_remedy_a_maintainer_accepts_and_breaks_no_trigger() {
    let cases = cases();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let lint = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    let mut remedies: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for case in &cases {
        for mode in [None, Some("split"), Some("whole-job"), Some("plan")] {
            problems.extend(check(case, mode, lint.path()));
        }
        for j in labels(case).job {
            remedies.entry(j.remedy).or_default().insert(j.job);
        }
    }
    // The corpus has each remedy.
    assert_eq!(
        remedies.keys().collect::<Vec<_>>(),
        ["plan", "split", "whole-job"]
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(lint.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    if let Some(found) = actionlint(&files) {
        for new in files
            .iter()
            .filter(|f| f.to_string_lossy().ends_with(".new.yml"))
        {
            let old = PathBuf::from(new.to_string_lossy().replace(".new.yml", ".old.yml"));
            let added: Vec<&String> = found[new]
                .iter()
                .filter(|p| !found[&old].contains(p))
                .collect();
            if !added.is_empty() {
                problems.push(format!("{}: actionlint: {added:?}", new.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// `--fix --dry-run --format patch`: the patch alone on stdout, which `git apply` takes in a
/// repository of the case, file names with a space and a line break included.
#[test]
fn the_patch_format_is_what_git_apply_takes() {
    for (case, rename) in [
        ("updater-android-ci-space-name", None),
        ("mihon-sign-apk-split", Some("build\npush.yml")),
        ("dnscrypt-proxy-minisign-split", Some("rel\"eas\\es é.yml")),
    ] {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&corpus().join(case), dir.path());
        let wf = dir.path().join(".github/workflows");
        if let Some(to) = rename {
            let from = std::fs::read_dir(&wf)
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path();
            std::fs::rename(from, wf.join(to)).unwrap();
        }
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .current_dir(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-qm", "case"]);
        let mode = if case == "updater-android-ci-space-name" {
            "whole-job"
        } else {
            "split"
        };
        let out = run(warden(dir.path()).args([
            "audit",
            "--offline",
            "--fix",
            "--dry-run",
            "--format",
            "patch",
            "--fix-mode",
            mode,
        ]))
        .expect(0);
        assert!(
            out.stdout.starts_with("diff --git "),
            "{case}: {}",
            out.stdout
        );
        let outside = tempfile::tempdir().unwrap();
        let patch = outside.path().join("fix.patch");
        std::fs::write(&patch, &out.stdout).unwrap();
        git(&["apply", "--check", patch.to_str().unwrap()]);
        // What git itself would write for the same change.
        git(&["apply", patch.to_str().unwrap()]);
        let theirs = String::from_utf8(git(&["diff"])).unwrap();
        let header = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| {
                    l.starts_with("diff --git") || l.starts_with("--- ") || l.starts_with("+++ ")
                })
                .map(str::to_string)
                .collect()
        };
        assert_eq!(header(&out.stdout), header(&theirs), "{case}");
        assert!(out.stderr.contains("would fix"), "{case}: {}", out.stderr);
    }
}

/// A split keeps the job's settings the moved steps depend on: `concurrency` (which serialises
/// `sign --log`), `continue-on-error`, `permissions` (the release steps write) and
/// `timeout-minutes` are the new job's too, word for word.
#[test]
fn a_split_keeps_the_job_s_concurrency_permissions_and_continue_on_error() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&corpus().join("dnscrypt-proxy-minisign-split"), dir.path());
    let file = dir.path().join(".github/workflows/releases.yml");
    let settings = "    permissions:\n      contents: write\n    concurrency:\n      group: sign-${{ github.ref }}\n      cancel-in-progress: false\n    continue-on-error: true\n    timeout-minutes: 30\n";
    let text = std::fs::read_to_string(&file).unwrap().replacen(
        "    runs-on: ubuntu-latest\n",
        &format!("    runs-on: ubuntu-latest\n{settings}"),
        1,
    );
    std::fs::write(&file, &text).unwrap();
    run(warden(dir.path()).args(["audit", "--offline", "--fix", "--fix-mode", "split"]));
    let after: Value = yaml_serde::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let (build, sign) = (&after["jobs"]["build"], &after["jobs"]["build-sign"]);
    for key in [
        "permissions",
        "concurrency",
        "continue-on-error",
        "timeout-minutes",
    ] {
        assert!(build.get(key).is_some(), "{key} left the build");
        assert_eq!(build.get(key), sign.get(key), "{key}");
    }
    assert_eq!(sign["environment"].as_str(), Some("release"));
}

/// What warden writes into the new job from the workflow's own text reads back as it was: a
/// step condition with `: ` and ` #` in it (YAML would cut it) is quoted, and the new job's
/// `if:` is exactly the moved steps' condition.
#[test]
fn a_condition_yaml_would_misread_is_written_quoted() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&corpus().join("dnscrypt-proxy-minisign-split"), dir.path());
    let file = dir.path().join(".github/workflows/releases.yml");
    let cond = "startsWith(github.ref, 'refs/tags/') && github.event.head_commit.message != 'skip: now #1'";
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "if: startsWith(github.ref, 'refs/tags/')\n",
        &format!("if: \"{cond}\"\n"),
    );
    std::fs::write(&file, &text).unwrap();
    run(warden(dir.path()).args(["audit", "--offline", "--fix", "--fix-mode", "split"]));
    let after: Value = yaml_serde::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(after["jobs"]["build-sign"]["if"].as_str(), Some(cond));
    let upload = steps(&after["jobs"]["build"])
        .into_iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@b7c5"))
        })
        .expect("the handover");
    assert_eq!(upload["if"].as_str(), Some(cond));
}
