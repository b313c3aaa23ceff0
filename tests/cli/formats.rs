//! Every format a `--help` offers works: the commands and their `--format` values are read from
//! the binary itself (its command tree and clap's own list of accepted values), so a format added
//! to a command without a renderer fails here.

use std::path::{Path, PathBuf};

use crate::common::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The subcommands `warden <path> --help` lists, recursively (without `help`).
fn command_paths(path: &[String], out: &mut Vec<Vec<String>>) {
    let help = run(warden(Path::new(".")).args(path).arg("--help")).expect(0);
    let mut in_commands = false;
    for line in help.stdout.lines() {
        if line == "Commands:" {
            in_commands = true;
            continue;
        }
        if !in_commands {
            continue;
        }
        if !line.starts_with("  ") {
            break;
        }
        // A command line starts after two spaces; a wrapped description after many.
        let rest = &line[2..];
        if rest.starts_with(' ') {
            continue;
        }
        let name = rest.split_whitespace().next().unwrap().to_string();
        if name == "help" {
            continue;
        }
        let mut sub = path.to_vec();
        sub.push(name);
        out.push(sub.clone());
        command_paths(&sub, out);
    }
}

/// The values clap accepts for `--format` of `path`, from its own refusal of a value it does not
/// have; `None` when the command has no `--format`.
fn offered_formats(path: &[String]) -> Option<Vec<String>> {
    let out = run(warden(Path::new("."))
        .args(path)
        .args(["--format", "not-a-format"]));
    assert_eq!(out.code, 2, "{path:?}: {}", out.all());
    let line = out
        .stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("[possible values: "))?;
    Some(
        line.trim_end_matches(']')
            .split(", ")
            .map(str::to_string)
            .collect(),
    )
}

/// A folder with `keys/k.pub`, `secret/k.key` and `dist/app.tar.gz`.
fn release_folder(dir: &Path) {
    std::fs::create_dir_all(dir.join("keys")).unwrap();
    std::fs::create_dir_all(dir.join("secret")).unwrap();
    let (_, sk) = keypair(dir, "k");
    std::fs::rename(dir.join("k.pub"), dir.join("keys/k.pub")).unwrap();
    std::fs::rename(&sk, dir.join("secret/k.key")).unwrap();
    write(&dir.join("dist/app.tar.gz"), b"app bytes\n");
}

/// `release_folder` with a log in `log/` (key `secret/log.key`, vkey `log.vkey`) that holds the
/// signature of `dist/`.
fn log_folder(dir: &Path) {
    release_folder(dir);
    run(warden(dir).args([
        "log",
        "init",
        "log",
        "--origin",
        "example.org/log",
        "--log-key",
        "secret/log.key",
        "--vkey",
        "log.vkey",
    ]))
    .expect(0);
    run(warden(dir).args([
        "sign",
        "dist",
        "--secret-key",
        "secret/k.key",
        "--log",
        "log",
        "--log-key",
        "secret/log.key",
    ]))
    .expect(0);
}

/// The command line that exercises `path` with `format`, run in `dir` (a fresh folder the setup
/// may fill). Each command with a `--format` must have one.
fn invocation(path: &[&str], format: &str, dir: &Path) -> Vec<String> {
    let f = fixtures();
    let hive = f.join("hive");
    let ethrex = f.join("ethrex");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let mut args: Vec<String> = match path {
        ["verify"] => {
            release_folder(dir);
            run(warden(dir).args(["sign", "dist", "--secret-key", "secret/k.key"])).expect(0);
            vec!["verify".into(), "dist".into()]
        }
        ["sign"] => {
            release_folder(dir);
            vec![
                "sign".into(),
                "dist".into(),
                "--secret-key".into(),
                "secret/k.key".into(),
            ]
        }
        ["audit"] => {
            copy_dir(&f.join("workflows/ethrex-release"), dir);
            vec!["audit".into(), "--offline".into()]
        }
        ["check"] => {
            copy_dir(&ethrex, dir);
            vec!["check".into()]
        }
        ["keys", "list"] => {
            release_folder(dir);
            vec!["keys".into(), "list".into()]
        }
        ["known-issues", "summary"] => {
            vec![
                "known-issues".into(),
                "summary".into(),
                "--root".into(),
                s(&ethrex),
            ]
        }
        ["known-issues", "exclusions"] => {
            let mut a: Vec<String> = [
                "known-issues",
                "exclusions",
                "--suite",
                "rpc-compat",
                "--root",
            ]
            .map(String::from)
            .into();
            a.push(s(&ethrex));
            if format == "sim-limit" {
                a.extend(["--tests-from".into(), s(&hive.join("tests-033ca6e6.tsv"))]);
            }
            a
        }
        ["known-issues", "import"] => {
            std::fs::create_dir_all(dir.join("known_issues")).unwrap();
            let list = if format == "bash" {
                write(
                    &dir.join("excluded.sh"),
                    b"EXCLUDED=(\n  \"eth_call/a\"\n)\n",
                );
                dir.join("excluded.sh")
            } else {
                f.join("reth-lists/expected_failures.yaml")
            };
            let mut a = vec![
                "known-issues".into(),
                "import".into(),
                "--client".into(),
                "reth".into(),
            ];
            if format == "bash" {
                a.extend(["--suite".into(), "rpc-compat".into()]);
            }
            a.push(s(&list));
            a
        }
        ["known-issues", "update"] => {
            copy_dir(&hive.join("registry-current"), &dir.join("known_issues"));
            vec![
                "known-issues".into(),
                "update".into(),
                "--from-results".into(),
                s(&hive.join("current-format")),
            ]
        }
        ["hive", "check"] => {
            vec![
                "hive".into(),
                "check".into(),
                s(&hive.join("current-format")),
                "--registry".into(),
                s(&hive.join("registry-current")),
            ]
        }
        ["hive", "history"] => {
            let run = s(&hive.join("current-format"));
            vec![
                "hive".into(),
                "history".into(),
                run.clone(),
                run,
                "--registry".into(),
                s(&hive.join("registry-current")),
            ]
        }
        ["hive", "diff"] => {
            let run = s(&hive.join("current-format"));
            vec!["hive".into(), "diff".into(), run.clone(), run]
        }
        ["log", "init"] => [
            "log",
            "init",
            "log",
            "--origin",
            "example.org/log",
            "--log-key",
            "log.key",
        ]
        .map(String::from)
        .into(),
        ["log", "witness-key"] => ["log", "witness-key", "w.key", "--name", "witness.example"]
            .map(String::from)
            .into(),
        ["log", "append"] => {
            log_folder(dir);
            [
                "log",
                "append",
                "log",
                "--release",
                "dist",
                "--log-key",
                "secret/log.key",
            ]
            .map(String::from)
            .into()
        }
        ["log", "verify"] => {
            log_folder(dir);
            ["log", "verify", "log", "--log-vkey", "log.vkey"]
                .map(String::from)
                .into()
        }
        ["log", "witness"] => {
            log_folder(dir);
            run(warden(dir).args([
                "log",
                "witness-key",
                "secret/w.key",
                "--name",
                "witness.example",
            ]))
            .expect(0);
            [
                "log",
                "witness",
                "log",
                "--log-vkey",
                "log.vkey",
                "--witness-key",
                "secret/w.key",
                "--state",
                "w-state",
            ]
            .map(String::from)
            .into()
        }
        ["log", "cosign"] => {
            log_folder(dir);
            let out = run(warden(dir).args([
                "log",
                "witness-key",
                "secret/w.key",
                "--name",
                "witness.example",
                "--format",
                "json",
            ]))
            .expect(0);
            let vkey: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
            // Nothing listens on port 9: the witness is down (exit 1).
            [
                "log",
                "cosign",
                "log",
                "--log-vkey",
                "log.vkey",
                "--witness",
                "http://127.0.0.1:9",
                "--witness-vkey",
                vkey["vkey"].as_str().unwrap(),
            ]
            .map(String::from)
            .into()
        }
        ["log", "monitor"] => {
            // An empty log: nothing to ask GitHub.
            run(warden(dir).args([
                "log",
                "init",
                "log",
                "--origin",
                "example.org/log",
                "--log-key",
                "log.key",
                "--vkey",
                "log.vkey",
            ]))
            .expect(0);
            [
                "log",
                "monitor",
                "log",
                "--log-vkey",
                "log.vkey",
                "--repo",
                "o/r",
                "--api-url",
                "http://127.0.0.1:9",
            ]
            .map(String::from)
            .into()
        }
        ["hive", "bisect"] => {
            // A dry run against the local Actions server (kept for the rest of the test).
            use crate::common::actions_server::{commit, serve, COMMITS, REPO, WORKFLOW};
            let server: &'static _ = Box::leak(Box::new(serve(1, false)));
            [
                "hive",
                "bisect",
                "--api-url",
                &server.uri(),
                "--repo",
                REPO,
                "--workflow",
                WORKFLOW,
                "--good",
                &commit(0),
                "--bad",
                &commit(COMMITS - 1),
                "--client",
                "ethrex",
                "--test",
                "x",
                "--dry-run",
            ]
            .map(String::from)
            .into()
        }
        other => panic!("{other:?} offers --format: give it an invocation here"),
    };
    // The patch is `--fix --dry-run`'s.
    if format == "patch" {
        args.extend(["--fix".into(), "--dry-run".into()]);
    }
    args.extend(["--format".into(), format.into()]);
    args
}

#[test]
fn every_format_a_help_offers_works() {
    let mut paths = Vec::new();
    command_paths(&[], &mut paths);
    assert!(paths.len() > 20, "{paths:?}");
    let mut tried = Vec::new();
    for path in &paths {
        let Some(formats) = offered_formats(path) else {
            continue;
        };
        for format in formats {
            let t = tempfile::tempdir().unwrap();
            let p: Vec<&str> = path.iter().map(String::as_str).collect();
            let args = invocation(&p, &format, t.path());
            let out = run(warden(t.path()).args(&args));
            assert!(
                out.code == 0 || out.code == 1,
                "warden {}: exit {}\n{}",
                args.join(" "),
                out.code,
                out.all()
            );
            assert!(
                !out.stdout.is_empty(),
                "warden {}: no output",
                args.join(" ")
            );
            match format.as_str() {
                "json" | "sarif" => {
                    serde_json::from_str::<serde_json::Value>(&out.stdout)
                        .unwrap_or_else(|e| panic!("warden {}: {e}", args.join(" ")));
                }
                "html" => assert!(out.stdout.starts_with("<!DOCTYPE html>"), "{args:?}"),
                "junit" => assert!(out.stdout.starts_with("<?xml"), "{args:?}"),
                "patch" => assert!(out.stdout.starts_with("diff --git a/"), "{args:?}"),
                _ => {}
            }
            tried.push(format!("{} {format}", p.join(" ")));
        }
    }
    // The tree was read: the commands known to have formats were among those tried.
    for expected in [
        "verify json",
        "audit sarif",
        "hive check junit",
        "hive history html",
    ] {
        assert!(tried.iter().any(|t| t == expected), "{expected}: {tried:?}");
    }
}
