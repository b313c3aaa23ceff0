//! `signing-secret-to-remote-workflow`: a key handed to a reusable workflow in another repository
//! (or to a local one this checkout does not have: out of sight all the same), or to one of this
//! checkout whose job holds it without an environment.

use yamlpath::route;

use crate::audit::catalogue::{Catalogue, NameClass};
use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::calls::{call_jobs, explicit, inherits, local};
use crate::audit::workflows::checks::WorkflowView;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-secret-to-remote-workflow",
    severity: Severity::High,
    description: "The signing key is passed to a reusable workflow in another repository",
    explanation: "the key is passed (`secrets: { x: ${{ secrets.KEY }} }`) to a reusable workflow in another repository, or to one of this repository whose job holds it without an environment",
});

/// The check (the workflow hook): each call of a remote workflow whose explicit `secrets:` read a
/// key (one found in the workflows, or one the catalogue names a key).
pub(crate) fn check(w: &WorkflowView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (id, uses, job) in call_jobs(w.value) {
        if inherits(job) {
            continue;
        }
        if w.reads_callee(&uses) {
            out.extend(to_exposing_callee(w, &id, &uses, job));
            continue;
        }
        let whose = if local(&uses).is_some() {
            "which this checkout does not have: nothing shows what it does with the key"
        } else {
            "a workflow in another repository: whoever controls that workflow and ref controls the key"
        };
        let keys: Vec<String> = explicit(job)
            .into_iter()
            .flat_map(|(_, from)| from)
            .filter(|n| w.known.contains(n) || Catalogue::get().classify(n) == NameClass::Key)
            .collect();
        if keys.is_empty() {
            continue;
        }
        let at = w.src.loc(w.src.key(&route!("jobs", id.as_str())), Some(&id));
        out.push(
            Finding::new(
                RULE,
                at,
                format!(
                    "job `{id}` passes {} to {uses}, {whose}, and no environment of this repository protects it",
                    keys.join(", ")
                ),
                "Sign in a job of this repository that runs in an environment with required reviewers; if the reusable workflow must sign, pin it to a full commit SHA and review it.",
            )
            .about(Subject::secrets(&keys))
            .detail(uses.to_string()),
        );
    }
    out
}

/// A call that passes a key (`secrets: { X: ${{ secrets.KEY }} }`) to a reusable workflow of
/// this checkout whose job holds it without an environment: the caller hands the key over, so it
/// is named at the call too (the callee's job has its own finding).
fn to_exposing_callee(
    w: &WorkflowView,
    id: &str,
    uses: &str,
    job: &yaml_serde::Value,
) -> Option<Finding> {
    let callee = local(uses)?;
    let exposed = w.exposed.get(&callee)?;
    let keys: Vec<String> = explicit(job)
        .into_iter()
        .filter(|(name, _)| {
            exposed
                .iter()
                .any(|e| e.split([' ', ',']).any(|w| w.eq_ignore_ascii_case(name)))
        })
        .flat_map(|(_, from)| from)
        .collect();
    if keys.is_empty() {
        return None;
    }
    let at = w.src.loc(w.src.key(&route!("jobs", id)), Some(id));
    Some(
        Finding::new(
            RULE,
            at,
            format!(
                "job `{id}` passes {} to {uses}, and there {}: the key reaches it without an environment",
                keys.join(", "),
                exposed.join("; ")
            ),
            "Give the job that signs in the called workflow an environment with required reviewers (`environment: release`), and store the key only there.",
        )
        .about(Subject::secrets(&keys))
        .detail(uses.to_string()),
    )
}
