//! Shell completions, the man page, and the top-level help.

use std::path::Path;

use crate::common::*;

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

#[test]
fn quiet_prints_nothing_on_success_and_everything_on_failure() {
    let out = run(warden(here()).args(["-q", "check"])).expect(0);
    assert_eq!(out.stdout, "");
    let t = tempfile::tempdir().unwrap();
    let (pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("d/a"), b"a");
    run(warden(t.path())
        .args(["sign", "d", "--quiet", "--secret-key"])
        .arg(&sk))
    .expect(0);
    let out = run(warden(t.path())
        .args(["verify", "d", "-q", "--public-key"])
        .arg(&pk))
    .expect(0);
    assert_eq!(out.stdout, "");
    std::fs::write(t.path().join("d/a"), b"b").unwrap();
    let out = run(warden(t.path())
        .args(["verify", "d", "-q", "--public-key"])
        .arg(&pk))
    .expect(1);
    assert!(out.stdout.contains("FAIL  d/a"), "{}", out.stdout);
}

#[test]
fn step_summary_on_every_command_that_reports() {
    let t = tempfile::tempdir().unwrap();
    let step = t.path().join("step.md");
    let (pk, sk) = keypair(t.path(), "k");
    write(&t.path().join("d/a"), b"a");
    run(warden(t.path())
        .args(["sign", "d", "--secret-key"])
        .arg(&sk))
    .expect(0);
    let with_summary =
        |dir: &Path, args: &[&str]| run(warden(dir).env("GITHUB_STEP_SUMMARY", &step).args(args));
    with_summary(
        t.path(),
        &[
            "verify",
            "d",
            "--step-summary",
            "--public-key",
            pk.to_str().unwrap(),
        ],
    )
    .expect(0);
    with_summary(here(), &["check", "--step-summary"]).expect(0);
    with_summary(here(), &["audit", "--offline", "--step-summary"]).expect(0);
    let hive = here().join("tests/fixtures/hive");
    with_summary(
        &hive,
        &[
            "hive",
            "check",
            "withdrawals-pass",
            "--registry",
            "registry-erigon",
            "--step-summary",
        ],
    )
    .expect(0);
    let md = std::fs::read_to_string(&step).unwrap();
    for heading in [
        "### warden verify: verified",
        "### warden check: ok",
        "### warden audit: ok",
        "### Hive results: ok",
    ] {
        assert!(md.contains(heading), "{heading} missing from:\n{md}");
    }
    assert!(md.contains("| ok | `d/a` |"), "{md}");
    let out = run(warden(here()).args(["check", "--step-summary"])).expect(2);
    assert!(
        out.stderr.contains("GITHUB_STEP_SUMMARY is not set"),
        "{}",
        out.stderr
    );
}
