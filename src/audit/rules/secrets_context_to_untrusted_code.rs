//! `secrets-context-to-untrusted-code`: every secret, handed to a job that runs a pull request's code.

use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::{step_text, JobView};
use crate::audit::workflows::triggers::risky_events;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "secrets-context-to-untrusted-code",
    severity: Severity::High,
    description: "Every secret (`toJSON(secrets)`, `secrets[...]`) reaches a job that checks out and runs a pull request's code",
    explanation: "`toJSON(secrets)` or `secrets[<expression>]` in a job that checks out a pull request's head on `pull_request_target`, `workflow_run`, `issue_comment` or `repository_dispatch`: the signing key is among the secrets, whatever it is called",
});

/// The check (the job hook): a job handed every secret, in a workflow triggered from outside,
/// that checks out the pull request's code.
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    let Some((expr, spot)) = &v.secrets.every else {
        return Vec::new();
    };
    let mut events = risky_events(v.workflow);
    if v.workflow.on.events.repository_dispatch.is_present() {
        events.push("repository_dispatch".into());
    }
    if events.is_empty() {
        return Vec::new();
    }
    let Some(step) = v.steps().into_iter().position(checks_out_head) else {
        return Vec::new();
    };
    let line = v.line(spot);
    vec![Finding::new(
        RULE,
        v.src.loc(v.step_at(step), Some(v.id)),
        format!(
            "job `{}` runs on {} and checks out the pull request's head, and reads every secret (`{expr}`, line {line}): code the pull request controls can read the signing key, whatever it is called",
            v.id,
            events.join(", ")
        ),
        "Pass only the secrets the job needs (`secrets.NAME`), and never to a job that runs a pull request's code; run untrusted code in a job without secrets (`pull_request`), then act on its result.",
    )
    .about(Subject::secrets(v.names()))
    .detail(expr.clone())]
}

/// A checkout of the pull request's code: `actions/checkout` with a `ref` (or `repository`) from
/// the event, the head ref, or `refs/pull/…`.
fn checks_out_head(step: &yaml_serde::Value) -> bool {
    let Some(uses) = step_text(step, "uses") else {
        return false;
    };
    if !uses.to_ascii_lowercase().starts_with("actions/checkout") {
        return false;
    }
    ["ref", "repository"].iter().any(|k| {
        step.get("with")
            .and_then(|w| w.get(*k))
            .and_then(yaml_serde::Value::as_str)
            .is_some_and(|r| {
                let r = r.to_ascii_lowercase();
                r.contains("github.event.pull_request")
                    || r.contains("head_ref")
                    || r.contains("head.sha")
                    || r.contains("head.ref")
                    || r.contains("refs/pull/")
                    || r.contains("client_payload")
                    || r.contains("workflow_run.head")
            })
    })
}
