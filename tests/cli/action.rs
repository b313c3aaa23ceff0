//! The GitHub Action (`action.yml`) as GitHub reads it: a strict YAML parse into the metadata of
//! a composite action, and its steps run from the parsed file (their `env` and `run`, with the
//! inputs substituted as GitHub does), never from the file's text. Every YAML file the
//! repository ships parses too.

use std::path::{Path, PathBuf};
use std::process::Command;

use github_actions_models::action::{Action, Runs, StepBody};
use github_actions_models::common::expr::LoE;

use crate::common::*;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Action {
    let text = std::fs::read_to_string(repo_root().join("action.yml")).unwrap();
    yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("action.yml: {e}"))
}

#[test]
fn the_action_is_a_composite_action_by_its_metadata_schema() {
    let a = action();
    assert!(a.name.as_deref().is_some_and(|n| !n.is_empty()));
    assert!(a.description.as_deref().is_some_and(|d| !d.is_empty()));
    for (name, input) in &a.inputs {
        assert!(
            input.description.as_deref().is_some_and(|d| !d.is_empty()),
            "input {name} has no description"
        );
    }
    let Runs::Composite(c) = a.runs else {
        panic!("action.yml: not a composite action")
    };
    assert_eq!(c.using, "composite");
    for step in &c.steps {
        let StepBody::Run { shell, .. } = &step.body else {
            panic!("step {:?}: not a run step", step.name)
        };
        assert!(
            matches!(shell, LoE::Literal(s) if s == "bash"),
            "step {:?}: shell",
            step.name
        );
    }
}

/// The step named `name` of the parsed Action, run as GitHub runs it: its `env` with `${{ … }}`
/// replaced by `values`, then its `run` under bash, with warden replaced by a program that
/// prints each argument it gets.
fn run_step(name: &str, values: &[(&str, &str)], dir: &Path) -> Run {
    let Runs::Composite(c) = action().runs else {
        unreachable!()
    };
    let step = c
        .steps
        .iter()
        .find(|s| s.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no step {name}"));
    let StepBody::Run { run: script, .. } = &step.body else {
        unreachable!()
    };
    let LoE::Literal(env) = &step.env else {
        panic!("step {name}: env is an expression")
    };
    let printer = dir.join("print-args");
    std::fs::write(
        &printer,
        "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &printer,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GITHUB_ACTION_PATH", repo_root())
        .env("WARDEN_BIN", &printer);
    for (k, v) in env {
        let mut value = v.to_string();
        for (expr, with) in values {
            value = value.replace(&format!("${{{{ {expr} }}}}"), with);
        }
        assert!(!value.contains("${{"), "{k}: {value} left unsubstituted");
        cmd.env(k, value);
    }
    run(&mut cmd)
}

#[test]
fn the_actions_own_inputs_reach_warden_as_one_word() {
    let t = tempfile::tempdir().unwrap();
    let verify = |tag: &str| {
        run_step(
            "Verify the release",
            &[("inputs.verify-release", tag), ("github.repository", "o/r")],
            t.path(),
        )
    };
    let out = verify("v2.0.0").expect(0);
    assert_eq!(
        out.stdout,
        "[verify]\n[--release]\n[v2.0.0]\n[--repo]\n[o/r]\n"
    );
    // A valid git tag that argument splitting once turned into `v2.0.0`.
    for hostile in ["v2.0.0''", "v2.0.0\"\"", "v1 --repo evil/r", "v1\\x"] {
        let out = verify(hostile).expect(2);
        assert_eq!(out.stdout, "", "{hostile}");
        assert_eq!(
            out.stderr,
            "run-warden: verify-release: give a release tag, one word without quotes, backslashes or spaces\n",
            "{hostile}"
        );
    }
    let out = run_step(
        "Audit, as SARIF",
        &[("inputs.audit-sarif", "reports/warden audit.sarif")],
        t.path(),
    )
    .expect(0);
    assert_eq!(
        out.stdout,
        "[audit]\n[--format]\n[sarif]\n[--output]\n[reports/warden audit.sarif]\n"
    );
    let out = run_step(
        "Run warden",
        &[("inputs.args", "keys revoke ABC --reason \"key leaked\"")],
        t.path(),
    )
    .expect(0);
    assert_eq!(
        out.stdout,
        "[keys]\n[revoke]\n[ABC]\n[--reason]\n[key leaked]\n"
    );
}

/// The ```yaml blocks of a markdown file, with the line each starts on.
fn yaml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if line.trim() == "```yaml" || line.trim() == "```yml" => {
                current = Some((i + 2, String::new()))
            }
            Some(_) if line.trim() == "```" => out.extend(current.take()),
            Some((_, block)) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

#[test]
fn every_yaml_file_the_repository_ships_parses() {
    let root = repo_root();
    let mut checked = Vec::new();
    let mut files = vec![root.join("action.yml")];
    for dir in [".github/workflows", ".github"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yml" || x == "yaml") {
                files.push(p);
            }
        }
    }
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if let Err(e) = yaml_serde::from_str::<yaml_serde::Value>(&text) {
            panic!("{}: {e}", f.display());
        }
        checked.push(f.display().to_string());
    }
    let docs = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"));
    for md in std::iter::once(root.join("README.md")).chain(docs) {
        let text = std::fs::read_to_string(&md).unwrap();
        for (line, block) in yaml_blocks(&text) {
            if let Err(e) = yaml_serde::from_str::<yaml_serde::Value>(&block) {
                panic!("{} line {line}: {e}", md.display());
            }
            checked.push(format!("{}:{line}", md.display()));
        }
    }
    assert!(checked.len() >= 5, "{checked:?}");
    // The reader is strict: the Action as it was (a plain scalar holding `if: always()`) fails.
    let broken = "inputs:\n  audit-sarif:\n    description: upload with `if: always()`.\n";
    assert!(yaml_serde::from_str::<yaml_serde::Value>(broken).is_err());
}

/// One CI: the GitHub workflow tests the project with `.ci/run` (which installs the tools the
/// tests require under `CI=true`), not with steps of its own that can drift from it.
#[test]
fn the_github_workflow_runs_ci_run() {
    use github_actions_models::workflow::job::Step;
    use github_actions_models::workflow::{Job, Workflow};
    let path = repo_root().join(".github/workflows/ci.yml");
    let wf: Workflow = yaml_serde::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut runs = Vec::new();
    for job in wf.jobs.values() {
        let Job::NormalJob(job) = job else { continue };
        for step in &job.steps {
            if let Step::Run(step) = step {
                runs.push(step.run.trim().to_string());
            }
        }
    }
    assert_eq!(
        runs,
        [".ci/run", "cargo run --release --locked -- check"],
        "{}",
        path.display()
    );
    let script = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    for tool in ["minisign", "chromium"] {
        assert!(
            script.contains(&format!("apt-get install -y -qq {tool}")),
            "{tool}"
        );
    }
}
