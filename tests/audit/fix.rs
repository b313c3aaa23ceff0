//! `warden audit --fix`: on every case of the labelled corpus (workflows modelled on public
//! release workflows), the workflow corpus and `tests/fixtures/fix-corpus`, the fix (the
//! default remedy, and `--fix-mode split`) is snapshotted as its `--dry-run` diff, then applied
//! and checked: nothing lost (every step of a fixed job in one of the two jobs, in order, the
//! signing job's copies of setup steps aside; triggers, `env:`, `defaults:` and the other jobs
//! unchanged), the re-audit has no `signing-secret-outside-environment` but for the
//! jobs it says it left, a second `--fix` changes nothing, and actionlint finds no problem the
//! original did not have.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml_serde::Value;

use crate::common::*;

/// The steps warden writes for the handover (not the original job's).
fn is_handover(step: &Value) -> bool {
    let name = step.get("name").and_then(Value::as_str).unwrap_or_default();
    ["Hand the files to", "Take the files of"]
        .iter()
        .any(|p| name.starts_with(p))
}

fn steps_of(job: &Value) -> Vec<Value> {
    job.get("steps")
        .and_then(Value::as_sequence)
        .map(|s| s.iter().filter(|s| !is_handover(s)).cloned().collect())
        .unwrap_or_default()
}

/// What the fix lost or changed beyond what it should, for one file.
fn lost(before: &str, after: &str) -> Vec<String> {
    let b: Value = yaml_serde::from_str(before).unwrap();
    let a: Value = match yaml_serde::from_str(after) {
        Ok(a) => a,
        Err(e) => return vec![format!("the result does not parse: {e}")],
    };
    let mut problems = Vec::new();
    for key in [
        "on",
        "env",
        "defaults",
        "permissions",
        "name",
        "concurrency",
    ] {
        if b.get(key) != a.get(key) {
            problems.push(format!("`{key}:` changed"));
        }
    }
    let (Some(Value::Mapping(bj)), Some(Value::Mapping(aj))) = (b.get("jobs"), a.get("jobs"))
    else {
        return vec!["no jobs".into()];
    };
    let mut signing_jobs = Vec::new();
    for (id, job) in bj {
        let id = id.as_str().unwrap();
        let Some(now) = aj.get(id) else {
            problems.push(format!("job `{id}` is gone"));
            continue;
        };
        if now == job {
            continue;
        }
        // A job that needs a fixed one may also need its signing job now: nothing else.
        if let (Some(mut was), Some(mut is)) =
            (job.as_mapping().cloned(), now.as_mapping().cloned())
        {
            let (old, new) = (was.remove("needs"), is.remove("needs"));
            if was == is {
                let names = |v: Option<Value>| -> Vec<String> {
                    match v {
                        Some(Value::String(s)) => vec![s],
                        Some(Value::Sequence(s)) => s
                            .iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect(),
                        _ => Vec::new(),
                    }
                };
                let (old, new) = (names(old), names(new));
                let added: Vec<&String> = new.iter().filter(|n| !old.contains(n)).collect();
                if !old.iter().all(|n| new.contains(n))
                    || added.iter().any(|n| !n.ends_with("-sign"))
                {
                    problems.push(format!("job `{id}`: `needs:` changed beyond a signing job"));
                }
                continue;
            }
        }
        let sign_id = format!("{id}-sign");
        let kept = steps_of(now);
        // Steps the signing job runs again (setup, values) stay in the build too.
        let moved: Vec<Value> = aj
            .get(sign_id.as_str())
            .map(steps_of)
            .unwrap_or_default()
            .into_iter()
            .filter(|s| !kept.contains(s))
            .collect();
        let original = steps_of(job);
        // Every original step in exactly one of the two jobs, each job's in the original order.
        let mut k = kept.iter().peekable();
        let mut m = moved.iter().peekable();
        for step in &original {
            if k.peek() == Some(&step) {
                k.next();
            } else if m.peek() == Some(&step) {
                m.next();
            } else {
                problems.push(format!(
                    "job `{id}`: a step is lost or out of order: {step:?}"
                ));
                break;
            }
        }
        if k.next().is_some() || m.next().is_some() {
            problems.push(format!("job `{id}`: steps that were not in the original"));
        }
        if let Some(sign) = aj.get(sign_id.as_str()) {
            signing_jobs.push(sign_id.clone());
            let needs = sign
                .get("needs")
                .and_then(Value::as_sequence)
                .cloned()
                .unwrap_or_default();
            if !needs.iter().any(|n| n.as_str() == Some(id)) {
                problems.push(format!("`{sign_id}` does not need `{id}`"));
            }
            if sign.get("environment").and_then(Value::as_str) != Some("release")
                || sign.get("if").is_none()
            {
                problems.push(format!("`{sign_id}` has no environment or no `if:`"));
            }
        } else if now.get("environment").is_none() {
            problems.push(format!(
                "job `{id}` changed with neither an environment nor a split"
            ));
        }
    }
    for id in aj.keys().filter_map(Value::as_str) {
        if bj.get(id).is_none() && !signing_jobs.iter().any(|s| s == id) {
            problems.push(format!("a new job `{id}` that is no signing job"));
        }
    }
    problems
}

/// The workflow files of a checkout and their text.
fn workflows(root: &Path) -> BTreeMap<PathBuf, String> {
    let dir = root.join(".github/workflows");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap_or_default()))
        .collect()
}

/// `(path, job)` of every `signing-secret-outside-environment` finding of a JSON report.
fn outside(json: &str) -> Vec<(String, String)> {
    let doc: Value = yaml_serde::from_str(json).unwrap();
    let mut out: Vec<(String, String)> = doc["findings"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter(|f| f["id"].as_str() == Some("signing-secret-outside-environment"))
        .map(|f| {
            (
                f["location"]["path"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["location"]["job"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// `(path, job)` of every job `--fix` says it left ("not fixed PATH:LINE (job ID): …").
fn left(stderr: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("not fixed ")?;
            let (path, rest) = rest.split_once(':')?;
            let job = rest.split_once("(job ")?.1.split_once("):")?.0;
            Some((path.to_string(), job.to_string()))
        })
        .collect();
    out.sort();
    out
}

fn cases() -> Vec<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut cases = Vec::new();
    for corpus in ["labelled-corpus", "workflow-corpus", "fix-corpus"] {
        for e in std::fs::read_dir(fixtures.join(corpus)).unwrap() {
            let p = e.unwrap().path();
            if p.join(".github/workflows").is_dir() {
                cases.push(p);
            }
        }
    }
    cases.sort();
    cases
}

/// One case: its dry-run text (for the snapshot), and what went wrong.
fn check_case(
    case: &Path,
    name: &str,
    lint_dir: &Path,
    mode: &[&str],
) -> (String, Vec<String>, usize) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(case, dir.path());
    let root = dir.path();
    let before = workflows(root);
    let json = ["audit", "--offline", "--format", "json"];
    let dry = run(warden(root)
        .args(json)
        .args(["--fix", "--dry-run"])
        .args(mode));
    let mut problems = Vec::new();
    if !(dry.code == 0 || dry.code == 1) {
        problems.push(format!("dry run exit {}: {}", dry.code, dry.stderr));
    }
    if workflows(root) != before {
        problems.push("--dry-run changed files".into());
    }
    let fixed = run(warden(root).args(json).arg("--fix").args(mode));
    let after = workflows(root);
    let changed: Vec<PathBuf> = after
        .iter()
        .filter(|(p, t)| before.get(*p) != Some(t))
        .map(|(p, _)| p.clone())
        .collect();
    for p in &changed {
        for l in lost(&before[p], &after[p]) {
            problems.push(format!("{}: {l}", p.display()));
        }
    }
    if outside(&fixed.stdout) != left(&fixed.stderr) {
        problems.push(format!(
            "after the fix, findings {:?} but left {:?}",
            outside(&fixed.stdout),
            left(&fixed.stderr)
        ));
    }
    // Nothing left: no job that holds a key is within reach of outside code either.
    let dangerous = fixed
        .stdout
        .contains("\"signing-secret-dangerous-trigger\"");
    // A whole-job fix leaves the trigger, and says so.
    let said = dry
        .stderr
        .contains("signing-secret-dangerous-trigger stays");
    if left(&fixed.stderr).is_empty() && !changed.is_empty() && dangerous && !said {
        problems.push("after the fix, signing-secret-dangerous-trigger".into());
    }
    let again = run(warden(root).args(json).arg("--fix").args(mode));
    if workflows(root) != after || again.stderr.lines().any(|l| l.starts_with("fixed ")) {
        problems.push(format!(
            "a second --fix changed something:\n{}",
            again.stderr
        ));
    }
    // actionlint runs once, on every case's files (see the test).
    for (i, p) in changed.iter().enumerate() {
        let stem = format!("{name}-{i}");
        let old = lint_dir.join(format!("{stem}.old.yml"));
        let new = lint_dir.join(format!("{stem}.new.yml"));
        std::fs::write(&old, &before[p]).unwrap();
        std::fs::write(&new, &after[p]).unwrap();
    }
    (dry.stderr, problems, changed.len())
}

#[test]
fn fix_on_every_corpus_case_keeps_every_step_and_closes_the_finding() {
    let cases = cases();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let mut wrong = BTreeMap::new();
    let mut fixed_cases = 0;
    let lint = tempfile::tempdir().unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots/fix");
    settings.set_prepend_module_to_snapshot(false);
    for case in &cases {
        let name = format!(
            "{}__{}",
            case.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy(),
            case.file_name().unwrap().to_string_lossy()
        );
        for (suffix, mode) in [("", &[][..]), ("--split", &["--fix-mode", "split"][..])] {
            let name = format!("{name}{suffix}");
            let (dry, problems, changed) = check_case(case, &name, lint.path(), mode);
            if changed > 0 && suffix.is_empty() {
                fixed_cases += 1;
            }
            if !dry.starts_with("fix: no job holds") {
                settings.bind(|| insta::assert_snapshot!(name.clone(), dry));
            }
            if !problems.is_empty() {
                wrong.insert(name, problems);
            }
        }
    }
    // actionlint: no problem in a fixed file that its original did not have.
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
                let name = new.file_name().unwrap().to_string_lossy().to_string();
                wrong.insert(name, vec![format!("actionlint: {added:?}")]);
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(fixed_cases >= 30, "only {fixed_cases} cases fixed");
}

#[test]
fn fix_flags_are_checked_before_anything_is_read_or_written() {
    let dir = tempfile::tempdir().unwrap();
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fix-corpus/mixed-minisign");
    copy_dir(&case, dir.path());
    let before = workflows(dir.path());
    let bad = run(warden(dir.path()).args([
        "audit",
        "--offline",
        "--fix",
        "--fix-environment",
        "two words",
    ]))
    .expect(2);
    assert_eq!(bad.stdout, "");
    assert_eq!(
        bad.stderr,
        "warden: --fix-environment two words: an environment name of letters, digits, `-`, `_` and `.` (it is written into the workflows)\n"
    );
    let no_fix = run(warden(dir.path()).args(["audit", "--offline", "--dry-run"])).expect(2);
    assert!(
        no_fix
            .stderr
            .starts_with("error: the following required arguments were not provided:\n  --fix\n"),
        "{}",
        no_fix.stderr
    );
    assert_eq!(workflows(dir.path()), before);
}

#[cfg(unix)]
#[test]
fn a_workflow_that_is_a_link_is_named_and_left() {
    let dir = tempfile::tempdir().unwrap();
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fix-corpus/mixed-minisign");
    copy_dir(&case, dir.path());
    let wf = dir.path().join(".github/workflows");
    std::fs::rename(wf.join("build.yml"), dir.path().join("build.yml")).unwrap();
    std::os::unix::fs::symlink("../../build.yml", wf.join("build.yml")).unwrap();
    let out =
        run(warden(dir.path()).args(["audit", "--offline", "--fix", "--format", "json"])).expect(1);
    assert_eq!(
        out.stderr,
        "not fixed .github/workflows/build.yml:1: a symbolic link: not changed (edit the file it points to)\n"
    );
    assert!(std::fs::symlink_metadata(wf.join("build.yml"))
        .unwrap()
        .file_type()
        .is_symlink());
}
