//! `signing-job-write-permissions`: the job that holds the key can also write what it need not.

use github_actions_models::common::{BasePermission, Permission, Permissions};
use yamlpath::route;

use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::JobView;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-write-permissions",
    severity: Severity::Medium,
    description: "A signing job has write-all or write permissions it does not need",
    explanation: "a signing job has `write-all`, or write access beyond `contents`, `id-token` and `attestations`",
});

/// Permissions a signing job may hold with write access: publishing the release needs
/// `contents`; `id-token` and `attestations` serve provenance.
const NEEDED_WRITES: &[&str] = &["contents", "id-token", "attestations"];

/// The check (the job hook).
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    write_permissions(v).into_iter().collect()
}

/// `signing-job-write-permissions`: the job that holds the key can also write what it need not.
fn write_permissions(v: &JobView) -> Option<Finding> {
    let inherited = matches!(
        v.job.permissions,
        Permissions::Base(BasePermission::Default)
    );
    let (perms, perm_at) = if inherited {
        (&v.workflow.permissions, v.src.key(&route!("permissions")))
    } else {
        (
            &v.job.permissions,
            v.src.key(&route!("jobs", v.id, "permissions")),
        )
    };
    let id = v.id;
    let (message, remediation) = match perms {
        Permissions::Base(BasePermission::WriteAll) => (
            format!("job `{id}` holds the signing key with `permissions: write-all`"),
            "Give the signing job `contents: write` at most (to publish), and nothing else.",
        ),
        Permissions::Explicit(map) => {
            let extra: Vec<&str> = map
                .iter()
                .filter(|(k, v)| **v == Permission::Write && !NEEDED_WRITES.contains(&k.as_str()))
                .map(|(k, _)| k.as_str())
                .collect();
            if extra.is_empty() {
                return None;
            }
            (
                format!(
                    "job `{id}` holds the signing key with write access to {}",
                    extra.join(", ")
                ),
                "Drop the write permissions the signing job does not need; do other writes in a job without the key.",
            )
        }
        _ => return None,
    };
    Some(
        Finding::new(
            RULE,
            v.src.loc(perm_at, Some(id)),
            message,
            remediation,
        )
        .about(Subject::secrets(v.names())),
    )
}
