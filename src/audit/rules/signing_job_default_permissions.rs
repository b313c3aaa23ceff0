//! `signing-job-default-permissions`: no `permissions:` on a signing job or its workflow.

use github_actions_models::common::{BasePermission, Permissions};
use yaml_serde::Value;

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::JobView;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-default-permissions",
    severity: Severity::Medium,
    description: "A signing job sets no `permissions:`, so its token gets the repository default (write-all on older repositories)",
    explanation: "a signing job and its workflow set no `permissions:`: the token gets the repository default (write-all on older repositories)",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    // GitHub's alone: Gitea and Forgejo have neither (docs/audit.md).
    if v.on_forge() {
        return Vec::new();
    }
    default_permissions(v).into_iter().collect()
}

/// `signing-job-default-permissions`: no `permissions:` on the job or the workflow, so the token
/// gets the repository's default, which is write-all on repositories created before 2023.
fn default_permissions(v: &JobView) -> Option<Finding> {
    let default = |p: &Permissions| matches!(p, Permissions::Base(BasePermission::Default));
    if !(default(&v.job.permissions) && default(&v.workflow.permissions)) {
        return None;
    }
    let has_key = |m: &Value, k: &str| m.get(k).is_some();
    let job = v.wf_value.get("jobs").and_then(|j| j.get(v.id));
    if has_key(v.wf_value, "permissions") || job.is_some_and(|j| has_key(j, "permissions")) {
        return None;
    }
    Some(v.finding(RULE,
        v.key,
        format!(
            "job `{}` holds {} and neither it nor its workflow sets `permissions:`: its token gets the repository default (write-all on older repositories)",
            v.id,
            v.key_list()
        ),
        "Set `permissions: { contents: read }` on the workflow and grant the signing job only what it needs (`contents: write` to publish).",
    ))
}
