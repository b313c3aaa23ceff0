//! `signing-secrets-inherit`: `secrets: inherit` into a reusable workflow that exposes a key.

use yamlpath::route;

use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::calls::{call_jobs, inherits, local};
use crate::audit::workflows::checks::WorkflowView;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-secrets-inherit",
    severity: Severity::High,
    description: "`secrets: inherit` passes every secret, the signing key included, to a reusable workflow",
    explanation: "`secrets: inherit` passes the key to a reusable workflow",
});

/// The check (the workflow hook): each call job with `secrets: inherit` whose callee has jobs that
/// hold a key without an environment (a remote callee: out of this audit's sight, reported when
/// the repository has keys at all).
pub(crate) fn check(w: &WorkflowView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (id, uses, job) in call_jobs(w.value) {
        if !inherits(job) {
            continue;
        }
        let exposed: Vec<String> = match local(&uses) {
            Some(_) if !w.reads_callee(&uses) && !w.known.is_empty() => {
                vec!["it is not in this checkout, out of this audit's sight".to_string()]
            }
            Some(callee) => w.exposed.get(&callee).cloned().unwrap_or_default(),
            None if !w.known.is_empty() => {
                vec!["it is in another repository, out of this audit's sight".to_string()]
            }
            None => Vec::new(),
        };
        if exposed.is_empty() {
            continue;
        }
        let at = w.src.loc(w.src.key(&route!("jobs", id.as_str())), Some(&id));
        out.push(
            Finding::new(
                RULE,
                at,
                format!(
                    "job `{id}` calls {uses} with `secrets: inherit`, and there {}: every secret, the signing key included, reaches it without an environment",
                    exposed.join("; ")
                ),
                "Pass only the secrets the called workflow needs (`secrets: { NAME: ... }`), and keep the signing key in an environment of the job that signs.",
            )
            .about(Subject::secrets(w.known)),
        );
    }
    out
}
