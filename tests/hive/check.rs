//! `warden hive check` on real hive result files (see tests/fixtures/hive/PROVENANCE.md) and on
//! variations that produce every outcome class. The output is the contract: each test holds the
//! whole transcript (command, stdout, stderr, exit status) as a snapshot.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hive")
}

/// The transcript of `warden hive check DIR --registry REGISTRY EXTRA…` run in the fixtures
/// folder; `scratch` (a temporary registry, say) is written `[DIR]`.
fn hive(dir: &str, registry: &Path, extra: &[&str], scratch: &Path) -> String {
    transcript(
        warden(&fixtures())
            .args(["hive", "check", dir, "--registry"])
            .arg(registry)
            .args(extra),
        scratch,
    )
}

/// A scratch copy of a registry folder to modify.
fn registry_copy(name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for e in fs::read_dir(fixtures().join(name)).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), t.path().join(e.file_name())).unwrap();
    }
    t
}

const ENTRY: &str = "title = \"t\"\nwhy = \"w\"\nremoval = \"r\"\n";

/// Every excused failure is named with the entry that excuses it; exit 0.
#[test]
fn real_berachain_run_is_fully_explained_by_its_registry() {
    let none = Path::new("/nonexistent");
    insta::assert_snapshot!(hive(
        "berachain-rpc",
        &fixtures().join("registry-polard"),
        &[],
        none
    ));
}

/// A failure no entry lists is `new`, shown with the first lines of its text.
#[test]
fn unlisted_failure_is_new_with_its_text() {
    let reg = registry_copy("registry-polard");
    fs::remove_file(reg.path().join("get-proof.toml")).unwrap();
    insta::assert_snapshot!(hive("berachain-rpc", reg.path(), &[], reg.path()));
}

#[test]
fn listed_test_that_passes_is_an_unexpected_pass_naming_the_file() {
    let reg = registry_copy("registry-polard");
    fs::write(reg.path().join("eth-call.toml"), format!("{ENTRY}\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_call/call-simple-contract\"\n")).unwrap();
    insta::assert_snapshot!(hive("berachain-rpc", reg.path(), &[], reg.path()));
}

#[test]
fn failure_with_another_signature_is_a_wrong_failure() {
    let reg = registry_copy("registry-polard");
    let p = reg.path().join("get-proof.toml");
    fs::write(
        &p,
        fs::read_to_string(&p)
            .unwrap()
            .replace("\"method\":\"eth_getProof\"", "proof of exclusion"),
    )
    .unwrap();
    insta::assert_snapshot!(hive("berachain-rpc", reg.path(), &[], reg.path()));
}

/// A listed test absent from the run is MISSING (exit 1, or reported only with
/// `--allow-missing`); so is a test of `--expected-tests` that did not run.
#[test]
fn listed_test_absent_from_the_run_is_missing_unless_allowed() {
    let reg = registry_copy("registry-polard");
    fs::write(
        reg.path().join("renamed.toml"),
        format!("{ENTRY}\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_getLogs/no-topics\"\n"),
    )
    .unwrap();
    let mut out = hive("berachain-rpc", reg.path(), &[], reg.path());
    out += &hive(
        "berachain-rpc",
        reg.path(),
        &["--allow-missing"],
        reg.path(),
    );
    let list = reg.path().join("expected.txt");
    fs::write(&list, "# name\teth_call/call-simple-contract\neth_call/call-simple-contract\neth_getLogs/no-topics\neth_blobBaseFee/get-current\n").unwrap();
    out += &hive(
        "berachain-rpc",
        &fixtures().join("registry-polard"),
        &["--expected-tests", list.to_str().unwrap()],
        reg.path(),
    );
    insta::assert_snapshot!(out);
}

/// A client that never launched: INFRA and an empty run, and no MISSING news about its tests.
/// A results folder with no suite file is an empty run too.
#[test]
fn failed_client_launch_is_infra_and_an_empty_run() {
    let empty = tempfile::tempdir().unwrap();
    let mut out = hive(
        "berachain-launch-failed",
        &fixtures().join("registry-polard"),
        &[],
        empty.path(),
    );
    fs::write(empty.path().join("hive.json"), "{}").unwrap();
    out += &transcript(
        warden(empty.path())
            .args(["hive", "check", ".", "--registry"])
            .arg(fixtures().join("registry-polard")),
        empty.path(),
    );
    insta::assert_snapshot!(out);
}

/// Failure text comes from `testDetailsLog` at the `summaryResult.log` offsets; signatures match
/// against it; a timeout and a shared-client lifecycle failure are infra.
#[test]
fn current_format_reads_failure_text_from_the_details_log() {
    insta::assert_snapshot!(hive(
        "current-format",
        &fixtures().join("registry-current"),
        &[],
        Path::new("/nonexistent")
    ));
}

/// The details log is named by the (untrusted) suite file and its text can reach a public PR
/// comment: a name that leaves the results directory, or a link out of it, is refused.
#[test]
fn a_details_log_outside_the_results_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let results = t.path().join("results");
    let src = fixtures().join("current-format");
    write(
        &results.join("details/1780000000-4f3a9c-1.log"),
        &fs::read(src.join("details/1780000000-4f3a9c-1.log")).unwrap(),
    );
    write(
        &t.path().join("runner-secret.txt"),
        b"AWS_SECRET=do-not-post",
    );
    let suite_name = "1780000000-0123456789abcdef0123456789abcdef.json";
    let suite = fs::read_to_string(src.join(suite_name)).unwrap();
    let registry = fixtures().join("registry-current");
    let check = |log_name: &str| {
        let text = suite.replace(
            "\"testDetailsLog\":\"details/1780000000-4f3a9c-1.log\"",
            &format!("\"testDetailsLog\":{log_name:?}"),
        );
        write(&results.join(suite_name), text.as_bytes());
        transcript(
            warden(t.path())
                .args(["hive", "check", "results", "--registry"])
                .arg(&registry),
            t.path(),
        )
    };
    let mut out = String::new();
    for name in ["../runner-secret.txt", "/etc/passwd"] {
        out += &check(name);
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            t.path().join("runner-secret.txt"),
            results.join("details/link.log"),
        )
        .unwrap();
        out += &check("details/link.log");
    }
    assert!(!out.contains("do-not-post"), "{out}");
    // The real name still works, and a log that was not downloaded is no error.
    out += &check("details/1780000000-4f3a9c-1.log");
    out += &check("details/not-downloaded.log");
    insta::assert_snapshot!(out);
}

/// hive's legacy format: inline logs (only their first lines are shown), and a producer whose
/// test names carry no client suffix.
#[test]
fn legacy_engine_withdrawals_pass_and_fail_and_a_foreign_producer() {
    let reg = fixtures().join("registry-erigon");
    let none = Path::new("/nonexistent");
    let mut out = hive("withdrawals-pass", &reg, &[], none);
    out += &hive("withdrawals-fail", &reg, &[], none);
    out += &hive("foreign-producer", &reg, &[], none);
    insta::assert_snapshot!(out);
}

/// `--client` of a client the run does not have; JSON, JUnit and markdown of the same run.
#[test]
fn client_filter_and_output_formats() {
    let reg = fixtures().join("registry-current");
    let none = Path::new("/nonexistent");
    let mut out = hive("current-format", &reg, &["--client", "reth"], none);
    for format in ["json", "junit", "markdown"] {
        out += &hive("current-format", &reg, &["--format", format], none);
    }
    insta::assert_snapshot!(out);
}

/// A truncated suite file, or one that is not an object: exit 2 with the file and the offset.
#[test]
fn malformed_suite_file_is_exit_2_with_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let good = fs::read_to_string(
        fixtures().join("current-format/1780000000-0123456789abcdef0123456789abcdef.json"),
    )
    .unwrap();
    let check = || {
        transcript(
            warden(t.path())
                .args(["hive", "check", ".", "--registry"])
                .arg(fixtures().join("registry-current")),
            t.path(),
        )
    };
    fs::write(t.path().join("1-truncated.json"), &good[..good.len() / 2]).unwrap();
    let mut out = check();
    fs::write(t.path().join("1-truncated.json"), "[1, 2]").unwrap();
    out += &check();
    insta::assert_snapshot!(out);
}

/// A suite file passed where the run's folder belongs is a usage error naming the folder.
#[test]
fn a_suite_file_instead_of_its_folder_is_exit_2_naming_the_folder() {
    let reg = fixtures().join("registry-current");
    let out = hive(
        "current-format/1780000000-0123456789abcdef0123456789abcdef.json",
        &reg,
        &[],
        Path::new("/nonexistent"),
    );
    insta::assert_snapshot!(out);
}
