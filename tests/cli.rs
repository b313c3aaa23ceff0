//! Shell completions, the man page, and the top-level help.

mod common;

use std::path::Path;

use common::*;

fn here() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn bash_completion_is_valid_bash_and_knows_the_subcommands() {
    let out = run(warden(here()).args(["completions", "bash"])).expect(0);
    for sub in [
        "keygen",
        "sign",
        "verify",
        "check",
        "known-issues",
        "hive",
        "audit",
        "completions",
        "man",
    ] {
        assert!(out.stdout.contains(sub), "{sub}");
    }
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("warden.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    for shell in ["zsh", "fish", "powershell"] {
        let out = run(warden(here()).args(["completions", shell])).expect(0);
        assert!(out.stdout.contains("warden"), "{shell}");
    }
    run(warden(here()).args(["completions", "tcsh"])).expect(2);
}

#[test]
fn man_page_is_roff_with_every_subcommand() {
    let out = run(warden(here()).arg("man")).expect(0);
    assert!(
        out.stdout.contains(".TH warden 1"),
        "{}",
        &out.stdout[..200.min(out.stdout.len())]
    );
    for sub in [
        "keygen",
        "sign",
        "verify",
        "audit",
        "known\\-issues",
        "hive",
    ] {
        assert!(out.stdout.contains(sub), "{sub}");
    }
}

#[test]
fn help_documents_exit_codes_and_every_command_has_an_example() {
    let out = run(warden(here()).arg("--help")).expect(0);
    assert!(
        out.stdout.contains("Exit status:") && out.stdout.contains("2  bad input"),
        "{}",
        out.stdout
    );
    for cmd in [
        vec!["keygen"],
        vec!["sign"],
        vec!["verify"],
        vec!["check"],
        vec!["audit"],
        vec!["audit", "snapshot"],
        vec!["known-issues", "lint"],
        vec!["known-issues", "render"],
        vec!["known-issues", "exclusions"],
        vec!["known-issues", "summary"],
        vec!["hive", "check"],
        vec!["completions"],
        vec!["man"],
    ] {
        let mut args = cmd.clone();
        args.push("--help");
        let out = run(warden(here()).args(&args)).expect(0);
        assert!(
            out.stdout.contains("Example"),
            "`warden {}` has no example:\n{}",
            cmd.join(" "),
            out.stdout
        );
    }
}
