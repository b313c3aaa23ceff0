//! `tag-gate-is-not-a-boundary`: an `if:` on the ref is the only gate of an environment-less signing job.

use github_actions_models::common::If;
use yamlpath::route;

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::{Environment, JobView};
use crate::audit::workflows::expr::one_line;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "tag-gate-is-not-a-boundary",
    severity: Severity::Info,
    description: "A signing job is gated only by an `if:` on the ref, which a tag pusher can rewrite",
    explanation: "such a job is gated only by an `if:` on the ref, which a tag pusher can rewrite",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, cx: &JobContext) -> Vec<Finding> {
    tag_gate(v, cx.tag_trigger).into_iter().collect()
}

/// An `if:` that tests the ref (`github.ref`, `github.ref_type`, `refs/tags/`).
fn ref_gate(expr: &str) -> bool {
    expr.contains("github.ref") || expr.contains("refs/tags/")
}

/// `tag-gate-is-not-a-boundary`: an environment-less signing job whose only gate is an `if:` on
/// the ref (on the job, or on the step that signs), which the run's own workflow file decides.
fn tag_gate(v: &JobView, tag_trigger: bool) -> Option<Finding> {
    if v.environment != Environment::None || v.secrets.keys.is_empty() {
        return None;
    }
    let id = v.id;
    let job_gate = match v.job.r#if.as_ref() {
        Some(If::Expr(e)) if ref_gate(e) => Some((e.clone(), route!("jobs", id, "if"))),
        _ => None,
    };
    let step_gate = || {
        let (_, i) = v.secrets.signs.as_ref()?;
        let e = v
            .wf_value
            .get("jobs")?
            .get(id)?
            .get("steps")?
            .get(*i)?
            .get("if")?;
        let e = match e {
            yaml_serde::Value::String(s) => s.clone(),
            _ => return None,
        };
        ref_gate(&e).then(|| (e, route!("jobs", id, "steps", *i, "if")))
    };
    let (expr, at) = job_gate.or_else(step_gate)?;
    let why = if tag_trigger {
        "a tag push runs the workflow file of the tagged commit, so whoever can push a tag can rewrite this gate"
    } else {
        "the gate is read from the workflow file of the commit that runs, so whoever can push that commit can rewrite it"
    };
    Some(Finding::new(
        RULE,
        v.src.loc(v.src.key(&at), Some(id)),
        format!("job `{id}` is gated by `if: {}`; {why}", one_line(&expr)),
        "Rely on an environment with required reviewers and a tag ruleset instead of an `if:` on the ref.",
    ))
}
