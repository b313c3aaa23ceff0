//! `signing-job-self-hosted-runner`: the key on a runner that outlives the job.

use yaml_serde::Value;
use yamlpath::route;

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::JobView;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-self-hosted-runner",
    severity: Severity::Medium,
    description: "A job that holds the signing key runs on a self-hosted runner",
    explanation: "a job that holds the key runs on `self-hosted`",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    self_hosted(v).into_iter().collect()
}

/// `signing-job-self-hosted-runner`: the key on a runner that outlives the job.
fn self_hosted(v: &JobView) -> Option<Finding> {
    let runs_on = v.wf_value.get("jobs")?.get(v.id)?.get("runs-on")?;
    let labels: Vec<String> = match runs_on {
        Value::String(s) => vec![s.clone()],
        Value::Sequence(items) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        Value::Mapping(m) => m
            .get("labels")
            .map(|l| match l {
                Value::String(s) => vec![s.clone()],
                Value::Sequence(items) => items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if !labels.iter().any(|l| l.eq_ignore_ascii_case("self-hosted")) {
        return None;
    }
    Some(v.finding(RULE,
        v.src.key(&route!("jobs", v.id, "runs-on")),
        format!(
            "job `{}` holds {} on a self-hosted runner: whatever ran there before (or runs there next) can read what the key leaves behind",
            v.id,
            v.key_list()
        ),
        "Sign on a GitHub-hosted (ephemeral) runner, or use ephemeral self-hosted runners that run one job each.",
    ))
}
