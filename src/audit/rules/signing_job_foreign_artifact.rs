//! `signing-job-foreign-artifact`: artifacts of another workflow run, signed with the key.


use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::{step_text, JobView};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-foreign-artifact",
    severity: Severity::High,
    description: "A job that holds the signing key downloads artifacts from another workflow run",
    explanation: "a job that holds the key downloads artifacts of another run (`download-artifact` with `run-id`, `dawidd6/action-download-artifact`)",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    if v.holds_key() { foreign_artifact(v) } else { Vec::new() }
}

/// `signing-job-foreign-artifact`: artifacts from another workflow run, which a pull request's run
/// may have produced, signed with the key.
fn foreign_artifact(v: &JobView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in v.steps().into_iter().enumerate() {
        let Some(uses) = step_text(step, "uses") else {
            continue;
        };
        let action = uses
            .split('@')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let with = |k: &str| step.get("with").and_then(|w| w.get(k)).is_some();
        let foreign = (action == "actions/download-artifact" && with("run-id"))
            || action == "dawidd6/action-download-artifact";
        if !foreign {
            continue;
        }
        out.push(v.finding(RULE,
            v.step_at(i),
            format!(
                "job `{}` holds {} and downloads artifacts from another workflow run with `{uses}`: what it signs may come from a pull request's run",
                v.id,
                v.key_list()
            ),
            "Build the artifacts in the same workflow run (an earlier job, `needs:`) and download them without `run-id`.",
        ).detail(uses));
    }
    out
}
