//! `warden audit` offline: the workflow corpus in tests/fixtures/workflows, every output format.

use std::path::{Path, PathBuf};

use crate::common::*;

fn corpus(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/workflows")
        .join(case)
}

fn audit(case: &str, extra: &[&str]) -> Run {
    run(warden(&corpus(case))
        .args(["audit", "--offline"])
        .args(extra))
}

/// (id, "path:line:col") of every finding, from the JSON output.
fn findings(case: &str) -> Vec<(String, String)> {
    let out = audit(case, &["--format", "json", "--fail-on", "high"]);
    let doc: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let l = &f["location"];
            (
                f["id"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}:{}",
                    l["path"].as_str().unwrap(),
                    l["line"],
                    l["column"]
                ),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn ethrex_shaped_release_workflow() {
    assert_eq!(
        findings("ethrex-release"),
        pairs(&[
            (
                "signing-secret-outside-environment",
                ".github/workflows/tag_release.yaml:21:3"
            ),
            // One finding for the job's two unpinned actions (lines 29 and 36), at the first.
            (
                "signing-job-unpinned-action",
                ".github/workflows/tag_release.yaml:29:9"
            ),
            (
                "signing-job-write-permissions",
                ".github/workflows/tag_release.yaml:9:1"
            ),
            (
                "signing-job-without-attestation",
                ".github/workflows/tag_release.yaml:21:3"
            ),
            (
                "tag-gate-is-not-a-boundary",
                ".github/workflows/tag_release.yaml:23:5"
            ),
        ])
    );
    let out = audit("ethrex-release", &[]).expect(1);
    assert!(
        out.stdout.contains(
            "MINISIGN_SECRET_KEY (flows into `minisign -S` in ./.github/actions/sign-stateless at line 30)"
        ),
        "follows the composite action and its script: {}",
        out.stdout
    );
    assert!(
        out.stdout.contains("write access to packages, actions"),
        "{}",
        out.stdout
    );
    // Info and medium do not fail with --fail-on high... but the high finding does.
    audit("ethrex-release", &["--fail-on", "high"]).expect(1);
}

#[test]
fn one_finding_per_case_and_clean_counterparts() {
    assert_eq!(
        findings("dangerous-trigger"),
        pairs(&[(
            "signing-secret-dangerous-trigger",
            ".github/workflows/sign-pr.yml:2:1"
        )])
    );
    assert_eq!(
        findings("secrets-inherit"),
        pairs(&[
            (
                "signing-secret-outside-environment",
                ".github/workflows/publish.yml:11:3"
            ),
            (
                "signing-secrets-inherit",
                ".github/workflows/release.yml:6:3"
            ),
            (
                "signing-job-without-attestation",
                ".github/workflows/publish.yml:11:3"
            )
        ])
    );
    assert!(
        findings("secrets-inherit-protected").is_empty(),
        "`secrets: inherit` into a callee whose signing job has an environment"
    );
    assert_eq!(
        findings("write-all"),
        pairs(&[
            (
                "signing-job-write-permissions",
                ".github/workflows/release.yml:11:5"
            ),
            (
                "signing-job-without-attestation",
                ".github/workflows/release.yml:6:3"
            )
        ])
    );
    assert_eq!(
        findings("unparseable"),
        pairs(&[("workflow-unparseable", ".github/workflows/broken.yml:3:5")])
    );
    assert!(findings("clean-release").is_empty());
    assert!(
        findings("comment-only").is_empty(),
        "a secret named in a comment is not a use"
    );
    audit("clean-release", &[]).expect(0);
    // --fail-on: a medium finding passes with --fail-on high.
    audit("write-all", &["--fail-on", "high"]).expect(0);
    audit("write-all", &[]).expect(1);
}

#[test]
fn only_secret_replaces_and_secret_adds() {
    let out = audit(
        "write-all",
        &["--only-secret", "OTHER_KEY", "--format", "json"],
    )
    .expect(0);
    assert!(out.stdout.contains("\"findings\": []"), "{}", out.stdout);
    audit("write-all", &["--secret", "OTHER_KEY"]).expect(1);
    // The same from .github/warden.toml.
    let t = tempfile::tempdir().unwrap();
    copy_dir(&corpus("write-all"), t.path());
    std::fs::write(
        t.path().join(".github/warden.toml"),
        "only_secrets = [\"OTHER_KEY\"]\n",
    )
    .unwrap();
    run(warden(t.path()).args(["audit", "--offline"])).expect(0);
}

#[test]
fn derived_release_tag_patterns() {
    let doc: serde_json::Value =
        serde_json::from_str(&audit("ethrex-release", &["--format", "json"]).stdout).unwrap();
    assert_eq!(doc["release_tag_patterns"], serde_json::json!(["v*.*.*-*"]));
    let doc: serde_json::Value = serde_json::from_str(
        &audit(
            "dangerous-trigger",
            &["--format", "json", "--release-tag-pattern", "rel-*"],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(doc["release_tag_patterns"], serde_json::json!(["rel-*"]));
}

#[test]
fn output_format_snapshots() {
    for (format, name) in [
        ("text", "audit_ethrex_text"),
        ("json", "audit_ethrex_json"),
        ("markdown", "audit_ethrex_markdown"),
        ("sarif", "audit_ethrex_sarif"),
    ] {
        let out = audit("ethrex-release", &["--format", format]).expect(1);
        insta::assert_snapshot!(name, out.stdout);
    }
}

#[test]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let validator = sarif_validator();
    for case in ["ethrex-release", "clean-release", "unparseable"] {
        let out = audit(case, &["--format", "sarif"]);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{case}: {errors:?}");
        assert_eq!(doc["version"], "2.1.0");
    }
    // A document missing a required property is rejected: the validator is not vacuous.
    assert!(!validator.is_valid(&serde_json::json!({"version": "2.1.0"})));
}

#[test]
fn color_only_on_a_terminal_and_annotations_under_github_actions() {
    let out = audit("write-all", &[]).expect(1);
    assert!(
        !out.stdout.contains('\u{1b}'),
        "no colour when stdout is not a terminal"
    );
    let out = run(warden(&corpus("write-all"))
        .env("GITHUB_ACTIONS", "true")
        .args(["audit", "--offline"]))
    .expect(1);
    assert!(out.stdout.contains("::warning file=.github/workflows/release.yml,line=11,col=5,title=signing-job-write-permissions::"), "{}", out.stdout);
}

#[test]
fn this_repositorys_workflows_parse_and_pass_its_own_audit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join(".github/workflows");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        yaml_serde::from_str::<github_actions_models::workflow::Workflow>(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        names.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    names.sort();
    assert_eq!(
        names,
        [
            "ci.yml",
            "known-issues.yml",
            "log-monitor.yml",
            "release.yml"
        ]
    );
    let out = run(warden(root).args(["audit", "--offline", "--format", "json"])).expect(0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["findings"], serde_json::json!([]), "{}", out.stdout);
    assert_eq!(doc["release_tag_patterns"], serde_json::json!(["v*"]));
}

/// Workflows come from pull requests: a committed link out of the repository is not read (its
/// text could reach a PR annotation), and a FIFO does not block the audit. (`timeout` turns a
/// regression into exit 124 instead of a hung test.)
#[test]
#[cfg(unix)]
fn a_linked_or_fifo_workflow_is_unreadable_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let workflows = repo.join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    std::fs::write(t.path().join("secret.txt"), "name: [runner secret").unwrap();
    std::os::unix::fs::symlink(t.path().join("secret.txt"), workflows.join("link.yml")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(workflows.join("pipe.yml"))
        .status()
        .unwrap();
    assert!(made.success());
    let out = run(std::process::Command::new("timeout")
        .arg("20")
        .arg(warden_bin())
        .args(["audit", "--offline"])
        .current_dir(&repo));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("workflow-unparseable  .github/workflows/link.yml:1:1")
            && out
                .stdout
                .contains("cannot read: resolves outside the repository"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("workflow-unparseable  .github/workflows/pipe.yml:1:1")
            && out.stdout.contains("cannot read: not a regular file"),
        "{}",
        out.stdout
    );
    assert!(!out.all().contains("runner secret"));
}

/// The release tags are the positive `tags:` patterns (a `!` pattern only narrows them); with
/// `tags-ignore:` every other tag runs the workflow, so any tag is a release tag.
#[test]
fn release_tag_patterns_come_from_the_signing_workflow_trigger() {
    let clean =
        std::fs::read_to_string(corpus("clean-release").join(".github/workflows/release.yml"))
            .unwrap();
    for (trigger, expected) in [
        (r#"tags: ["v*", "!v*-rc*"]"#, vec!["v*"]),
        (
            r#"tags: ["v[0-9]+.[0-9]+.[0-9]+"]"#,
            vec!["v[0-9]+.[0-9]+.[0-9]+"],
        ),
        (r#"tags-ignore: ["nightly-*"]"#, vec!["**"]),
    ] {
        let t = tempfile::tempdir().unwrap();
        write(
            &t.path().join(".github/workflows/release.yml"),
            clean.replace(r#"tags: ["v*"]"#, trigger).as_bytes(),
        );
        let out = run(warden(t.path()).args(["audit", "--offline", "--format", "json"]));
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(
            doc["release_tag_patterns"],
            serde_json::json!(expected),
            "{trigger}"
        );
    }
}

/// `.github/warden.toml`: a suppression with a reason hides a finding from the exit code but not
/// from JSON or SARIF; an expired or unmatched one is a finding; extra names and actions count.
#[test]
fn suppressions_and_extra_names_from_the_config_file() {
    let t = tempfile::tempdir().unwrap();
    let wf = t.path().join(".github/workflows");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(
        wf.join("release.yml"),
        "on:\n  push:\n    tags: ['v*']\npermissions:\n  contents: read\njobs:\n  sign:\n    runs-on: ubuntu-latest\n    environment: release\n    steps:\n      - uses: softprops/action-gh-release@v2\n      - uses: my-org/sign@v1\n        with:\n          key: ${{ secrets.ORG_KEY }}\n  other:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo \"$K\" > k\n        env:\n          K: ${{ secrets.HOUSE_KEY }}\n",
    )
    .unwrap();
    std::fs::write(
        t.path().join(".github/warden.toml"),
        "secrets = [\"HOUSE_KEY\"]\n\n[[action]]\nuses = \"my-org/sign\"\ninputs = [\"key\"]\n\n[[ignore]]\nrule = \"signing-job-unpinned-action\"\npath = \".github/workflows/release.yml\"\njob = \"sign\"\nreason = \"our own actions; tags are protected\"\n\n[[ignore]]\nrule = \"signing-job-cache-restore\"\npath = \".github/workflows/release.yml\"\nreason = \"nothing to match\"\n\n[[ignore]]\nrule = \"signing-secret-outside-environment\"\npath = \".github/workflows/release.yml\"\njob = \"other\"\nreason = \"temporary\"\nuntil = 2020-01-01\n",
    )
    .unwrap();
    let out = run(warden(t.path()).args(["audit", "--offline"])).expect(1);
    insta::assert_snapshot!(out.stdout, @r"
    HIGH   signing-secret-outside-environment  .github/workflows/release.yml:15:3 (job other)
           job `other` holds HOUSE_KEY (named as a key (--secret or .github/warden.toml), line 18) and has no `environment:`: any run of this job can read the key
           fix: Add `environment: release` to job `other`, store HOUSE_KEY only in that environment (not as a repository secret), and require reviewers on it.
    MEDIUM suppression-expired  .github/warden.toml:18:1
           the suppression of signing-secret-outside-environment in .github/workflows/release.yml expired on 2020-01-01: its finding counts again
           fix: Fix the finding, or review the reason and move `until`.
    LOW    suppression-unmatched  .github/warden.toml:13:1
           the suppression of signing-job-cache-restore in .github/workflows/release.yml matches no finding
           fix: Remove the suppression: what it excused is gone (or the rule, path or job is misspelt).
    INFO   signing-job-without-attestation  .github/workflows/release.yml:7:3 (job sign)
           job `sign` holds ORG_KEY on a tag push and has GitHub attest nothing: its build provenance of what the job signs would name this run, a witness a stolen key cannot forge
           fix: Add two lines to the job's `permissions:` (`id-token: write`, `attestations: write`) and a step after the build: `- uses: actions/attest-build-provenance@<full commit SHA>` with `subject-path: <the files it signs>`.
    INFO   signing-job-without-attestation  .github/workflows/release.yml:15:3 (job other)
           job `other` holds HOUSE_KEY on a tag push and has GitHub attest nothing: its build provenance of what the job signs would name this run, a witness a stolen key cannot forge
           fix: Add two lines to the job's `permissions:` (`id-token: write`, `attestations: write`) and a step after the build: `- uses: actions/attest-build-provenance@<full commit SHA>` with `subject-path: <the files it signs>`.
    audited: workflows from the checkout (.); settings not audited (--offline)
    read 1 workflow file, 2 jobs; 2 signing jobs: release.yml `sign` (ORG_KEY); release.yml `other` (HOUSE_KEY)
    5 findings: 1 high, 1 medium, 1 low, 2 info, 1 suppressed by .github/warden.toml (--fail-on medium: FAILED)
    ");
    let doc: serde_json::Value = serde_json::from_str(
        &run(warden(t.path()).args(["audit", "--offline", "--format", "json"])).stdout,
    )
    .unwrap();
    let suppressed: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.get("suppressed").is_some())
        .map(|f| f["suppressed"]["reason"].as_str().unwrap())
        .collect();
    // The job's two unpinned actions are one finding; SARIF keeps a result for each.
    assert_eq!(suppressed, ["our own actions; tags are protected"]);
    let sarif = run(warden(t.path()).args(["audit", "--offline", "--format", "sarif"])).stdout;
    assert_eq!(sarif.matches("\"justification\"").count(), 2, "{sarif}");
    // A malformed file is bad input, with its line.
    std::fs::write(
        t.path().join(".github/warden.toml"),
        "[[ignore]]\nrule = \"no-such-rule\"\npath = \"x\"\nreason = \"r\"\n",
    )
    .unwrap();
    let out = run(warden(t.path()).args(["audit", "--offline"])).expect(2);
    assert!(
        out.stderr
            .contains("warden: .github/warden.toml: line 1: ignore: unknown rule \"no-such-rule\""),
        "{}",
        out.stderr
    );
}

/// An audit that saw nothing is not a pass: a root that does not exist is bad input, and a
/// repository without workflows says so.
#[test]
fn a_missing_root_is_bad_input_and_no_workflows_is_said() {
    let t = tempfile::tempdir().unwrap();
    let out =
        run(warden(t.path()).args(["audit", "--offline", "--root", "does/not/exist"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: does/not/exist: no such directory (pass the repository with --root)\n"
    );
    // No workflow file: a wrong --root audits nothing, so it is a usage error...
    let out = run(warden(t.path()).args(["audit", "--offline"])).expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "warden: no workflow file in ./.github/workflows: nothing to audit (is --root the repository? --allow-empty audits the settings alone)\n"
    );
    // ...unless it is meant.
    let out = run(warden(t.path()).args(["audit", "--offline", "--allow-empty"])).expect(0);
    assert_eq!(
        out.stdout,
        "no workflow files in .github/workflows/: no signing job to audit\naudited: workflows from the checkout (.); settings not audited (--offline)\n0 findings: 0 high, 0 medium, 0 low, 0 info (--fail-on medium: ok)\n"
    );
    // Workflows without a signing job: said plainly.
    write(
        &t.path().join(".github/workflows/ci.yml"),
        b"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n        env:\n          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n",
    );
    let out = run(warden(t.path()).args(["audit", "--offline"])).expect(0);
    assert_eq!(
        out.stdout,
        "audited: workflows from the checkout (.); settings not audited (--offline)\nread 1 workflow file, 1 job; no job holds a signing key\n0 findings: 0 high, 0 medium, 0 low, 0 info (--fail-on medium: ok)\n"
    );
}

/// A workflow whose aliases expand to millions of nodes (a 70 KB one took 1 GiB) is refused as
/// unparseable before it is built, and the rest of the repository is still audited.
#[test]
fn an_alias_bomb_is_unparseable_not_expanded() {
    let t = tempfile::tempdir().unwrap();
    let workflows = t.path().join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    let scalars = vec!["\"echo x\""; 4000].join(", ");
    let uses = vec!["*s"; 500].join(", ");
    std::fs::write(
        workflows.join("bomb.yml"),
        format!("on: push\nx-steps: &s [{scalars}]\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: [{{run: echo}}]\n    env: {{ALL: [{uses}]}}\n"),
    )
    .unwrap();
    let out = run(std::process::Command::new("timeout")
        .arg("20")
        .arg(warden_bin())
        .args(["audit", "--offline"])
        .current_dir(t.path()));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "HIGH   workflow-unparseable  .github/workflows/bomb.yml:1:1\n       this workflow could not be parsed, so it was not audited: more than 200000 YAML nodes once its aliases are expanded: not audited\n       fix: Fix the YAML (GitHub would reject it too) and run the audit again.\naudited: workflows from the checkout (.); settings not audited (--offline)\nread 1 workflow file, 0 jobs; no job holds a signing key\n1 finding: 1 high, 0 medium, 0 low, 0 info (--fail-on medium: FAILED)\n"
    );
}

/// A valid workflow the locator behind line numbers cannot read (a multi-line quoted `if:` that
/// closes `}}"` at the key's indentation) is still audited: positions fall back to the job's
/// line. A long script with colour codes (`\033[1;36m`, unbalanced brackets in strings) is not
/// "nested too deep".
#[test]
fn a_workflow_the_locator_cannot_read_is_still_audited() {
    let t = tempfile::tempdir().unwrap();
    let colours = "          printf '\\033[1;36m%s\\033[0m\\n' step\n".repeat(80);
    write(
        &t.path().join(".github/workflows/release.yml"),
        format!(
            "on:\n  push:\n    tags: ['v*']\npermissions:\n  contents: read\njobs:\n  sign:\n    runs-on: ubuntu-latest\n    if: \"${{{{ github.event_name == 'push' &&\n      startsWith(github.ref, 'refs/tags/v')\n    }}}}\"\n    steps:\n      - run: |\n{colours}          minisign -S -s key -m dist/app\n        env:\n          MINISIGN_SECRET_KEY: ${{{{ secrets.MINISIGN_SECRET_KEY }}}}\n"
        )
        .as_bytes(),
    );
    let out = run(warden(t.path()).args(["audit", "--offline", "--format", "json"])).expect(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let found: Vec<(&str, u64)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap(),
                f["location"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("signing-secret-outside-environment", 7),
            ("signing-job-without-attestation", 7),
            ("tag-gate-is-not-a-boundary", 7)
        ]
    );
}

/// Issue 50: a job whose `if:` is always false (`false`, `${{ false && … }}`) never runs: it is
/// not audited, and the coverage line names it.
#[test]
fn jobs_that_never_run_are_not_audited_and_are_named() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/workflows/never-runs");
    let out = run(warden(&case).args(["audit", "--offline", "--root", "."])).expect(0);
    assert_eq!(
        out.stdout,
        "INFO   signing-job-without-attestation  .github/workflows/release.yml:23:3 (job publish)\n       job `publish` holds MINISIGN_SECRET_KEY on a tag push and has GitHub attest nothing: its build provenance of what the job signs would name this run, a witness a stolen key cannot forge\n       fix: Add two lines to the job's `permissions:` (`id-token: write`, `attestations: write`) and a step after the build: `- uses: actions/attest-build-provenance@<full commit SHA>` with `subject-path: <the files it signs>`.\naudited: workflows from the checkout (.); settings not audited (--offline)\nread 1 workflow file, 1 job; 1 signing job: release.yml `publish` (MINISIGN_SECRET_KEY); not audited, as their `if:` is always false: .github/workflows/release.yml `old-sign`, .github/workflows/release.yml `sign`\n1 finding: 0 high, 0 medium, 0 low, 1 info (--fail-on medium: ok)\n"
    );
}

/// Issue 50: an environment chosen by a `type: environment` dispatch input is one of the
/// repository's environments: `unverifiable` at medium, naming the input (not high).
#[test]
fn an_environment_chosen_by_a_dispatch_input_is_named_at_medium() {
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/workflows/environment-input");
    let out = run(warden(&case).args(["audit", "--offline", "--root", "."])).expect(1);
    assert_eq!(
        out.stdout,
        "MEDIUM unverifiable  .github/workflows/deploy.yml:11:3 (job sign)\n       job `sign` holds MINISIGN_SECRET_KEY (flows into `minisign -S` at line 17) and runs in the environment the `type: environment` input `target` of `workflow_dispatch` names (`${{ inputs.target }}`): one of the repository's environments, chosen by whoever dispatches, so which protection applies cannot be checked offline\n       fix: Name the environment literally (`environment: release`) in the job that holds MINISIGN_SECRET_KEY, or give every environment of the repository required reviewers.\naudited: workflows from the checkout (.); settings not audited (--offline)\nread 1 workflow file, 1 job; 1 signing job: deploy.yml `sign` (MINISIGN_SECRET_KEY)\n1 finding: 0 high, 1 medium, 0 low, 0 info (--fail-on medium: FAILED)\n"
    );
}

/// Issue 50: what GitHub runs, warden reads: `workflow_dispatch: inputs:` with no value is no
/// parse error, and the job is audited.
#[test]
fn an_empty_dispatch_inputs_key_is_read_as_github_reads_it() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/workflows/empty-dispatch-inputs");
    let out = run(warden(&case).args(["audit", "--offline", "--root", "."])).expect(1);
    assert!(
        !out.stdout.contains("workflow-unparseable"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("read 1 workflow file, 1 job; 1 signing job: r.yml `sign` (MINISIGN_SECRET_KEY)\n3 findings: 1 high, 1 medium, 0 low, 1 info (--fail-on medium: FAILED)\n"),
        "{}",
        out.stdout
    );
}

/// Issue 50: workflows in `.gitea/workflows` and `.forgejo/workflows` are audited with the same
/// rules, but for GitHub's alone (environments with reviewers, token `permissions:`,
/// attestations): an `environment:` there protects nothing, and the finding says so.
#[test]
fn gitea_and_forgejo_workflows_are_audited_for_what_those_forges_enforce() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/workflows/gitea-release");
    let out = run(warden(&case).args(["audit", "--offline", "--root", "."])).expect(1);
    assert_eq!(out.stdout, "HIGH   signing-secret-outside-environment  .forgejo/workflows/sign.yml:6:3 (job sign)\n       job `sign` holds MINISIGN_SECRET_KEY (flows into `minisign -S` at line 10) in a Gitea/Forgejo workflow, where `environment: release` protects nothing (no required reviewers, no deployment policy): any run of this job can read the key\n       fix: Sign where a reviewer or a protected runner stands between a run and MINISIGN_SECRET_KEY: a GitHub workflow behind an environment, or a runner that only release tags reach.\nHIGH   signing-secret-outside-environment  .gitea/workflows/release.yml:13:3 (job linux)\n       job `linux` holds LINUX_SIGNING_KEY (a signing key's name, line 18) and has no `environment:`: any run of this job can read the key (a Gitea/Forgejo workflow: an environment there would not protect it either)\n       fix: Sign where a reviewer or a protected runner stands between a run and LINUX_SIGNING_KEY: a GitHub workflow behind an environment, or a runner that only release tags reach.\nLOW    signing-job-unpinned-action  .gitea/workflows/release.yml:17:9 (job linux)\n       job `linux` holds LINUX_SIGNING_KEY and runs `actions/checkout@v4` by the mutable ref `v4`: whoever can move that ref runs code with the key\n       fix: Pin each action to a full commit SHA (`uses: owner/repo@<40-hex sha> # v1.2.3`), or move it to a job without the key.\naudited: workflows from the checkout (.); settings not audited (--offline)\nread 2 workflow files, 2 jobs; 2 signing jobs: .gitea/workflows/release.yml `linux` (LINUX_SIGNING_KEY); .forgejo/workflows/sign.yml `sign` (MINISIGN_SECRET_KEY)\n3 findings: 2 high, 0 medium, 1 low, 0 info (--fail-on medium: FAILED)\n");
}
