//! `signing-secret-dangerous-trigger`: a workflow that references the key runs on events that carry outside code or input.

use std::collections::BTreeSet;

use yamlpath::route;

use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::WorkflowView;
use crate::audit::workflows::source::Source;
use crate::audit::workflows::triggers::risky_events;
use github_actions_models::workflow::Workflow;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-secret-dangerous-trigger",
    severity: Severity::High,
    description: "The signing secret is reachable from pull_request_target, workflow_run or issue_comment",
    explanation: "the secret is reachable from `pull_request_target`, `workflow_run` or `issue_comment`",
});

/// The check (the workflow hook): only a workflow whose jobs hold a key.
pub(crate) fn check(w: &WorkflowView) -> Vec<Finding> {
    if w.keys.is_empty() {
        return Vec::new();
    }
    dangerous_trigger(w.src, w.workflow, w.keys, w.via_callers)
        .into_iter()
        .collect()
}

/// `signing-secret-dangerous-trigger`: a workflow that references the key runs on events that
/// carry code or input from outside the repository.
fn dangerous_trigger(
    src: &Source,
    wf: &Workflow,
    keys: &BTreeSet<String>,
    via_callers: &[String],
) -> Option<Finding> {
    let mut risky = risky_events(wf);
    // A reusable workflow runs on its callers' events.
    risky.extend(
        via_callers
            .iter()
            .map(|e| format!("{e} (through a caller)")),
    );
    risky.dedup();
    if risky.is_empty() {
        return None;
    }
    Some(
        Finding::new(
            RULE,
            src.loc(src.key(&route!("on")), None),
            format!(
                "this workflow references {} and runs on {}: code or input from outside the repository can reach the signing key",
                keys.iter().cloned().collect::<Vec<_>>().join(", "),
                risky.join(", ")
            ),
            "Sign only in a workflow triggered by a tag push (or a release), never from pull_request_target, workflow_run or issue_comment.",
        )
        .about(Subject::secrets(keys))
        .detail(risky.join(", ")),
    )
}
