//! `signing-job-without-attestation`: a release job signs, and has GitHub attest nothing.

use yamlpath::route;

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::{step_text, JobView};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-without-attestation",
    severity: Severity::Info,
    description: "A release job signs with the key but has GitHub attest nothing of what it builds",
    explanation: "a job that holds the key and runs on a tag push has no `actions/attest-build-provenance` (or `actions/attest`) step: GitHub's build provenance of what it signs would name this run, a second witness a stolen key cannot make (`verify --release` checks it)",
});

/// The actions that make GitHub's build provenance.
const ATTEST_ACTIONS: [&str; 2] = ["actions/attest-build-provenance@", "actions/attest@"];

/// The check (the job hook).
pub(crate) fn check(v: &JobView, cx: &JobContext) -> Vec<Finding> {
    // GitHub's alone: Gitea and Forgejo have neither (docs/audit.md).
    if v.on_forge() {
        return Vec::new();
    }
    if !v.holds_key() || !cx.tag_trigger {
        return Vec::new();
    }
    let attests = v.steps().iter().any(|s| {
        step_text(s, "uses").is_some_and(|u| ATTEST_ACTIONS.iter().any(|a| u.starts_with(a)))
    });
    if attests {
        return Vec::new();
    }
    vec![v.finding(
        RULE,
        v.src.key(&route!("jobs", v.id)),
        format!(
            "job `{}` holds {} on a tag push and has GitHub attest nothing: its build provenance of what the job signs would name this run, a witness a stolen key cannot forge",
            v.id,
            v.key_list()
        ),
        "Add two lines to the job's `permissions:` (`id-token: write`, `attestations: write`) and a step after the build: `- uses: actions/attest-build-provenance@<full commit SHA>` with `subject-path: <the files it signs>`.",
    )]
}
