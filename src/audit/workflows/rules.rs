//! The workflow rules, one function each. A job rule reads a [`JobView`]; the workflow rules read
//! the parsed workflow and the signing secrets it references anywhere.

use std::path::Path;

use github_actions_models::common::{BasePermission, If, Permission, Permissions};
use github_actions_models::workflow::event::{OptionalBody, TagFilters};
use github_actions_models::workflow::job::{ReusableWorkflowCallJob, Secrets};
use github_actions_models::workflow::Workflow;
use yamlpath::route;

use super::signing_job::JobView;
use super::source::Source;
use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::Rule;

/// Permissions a signing job may hold with write access: publishing the release needs
/// `contents`; `id-token` and `attestations` serve provenance.
const NEEDED_WRITES: &[&str] = &["contents", "id-token", "attestations"];

/// `signing-secret-outside-environment`: the job holds the key with no environment, so no
/// reviewer or deployment policy stands between a run and the key.
pub fn outside_environment(v: &JobView) -> Option<Finding> {
    if v.environment.is_some() {
        return None;
    }
    let (first_name, first_at) = &v.refs[0];
    let first = v.src.point(*first_at);
    let list = v.names().into_iter().collect::<Vec<_>>().join(", ");
    let through = if v.via.is_empty() {
        String::new()
    } else {
        format!(", passed to {}", v.via.join(", "))
    };
    let id = v.id;
    Some(
        Finding::new(
            Rule::SigningSecretOutsideEnvironment,
            v.src.loc(v.key, Some(id)),
            format!(
                "job `{id}` uses {list} (first at line {}{through}) and has no `environment:`: any run of this job can read the key",
                first.0
            ),
            format!(
                "Add `environment: release` to job `{id}`, store {first_name} only in that environment (not as a repository secret), and require reviewers on it."
            ),
        )
        .about(Subject::secrets(v.names())),
    )
}

/// `tag-gate-is-not-a-boundary`: an environment-less signing job whose only gate is an `if:` on
/// the ref, which the tagged commit's own workflow file decides.
pub fn tag_gate(v: &JobView) -> Option<Finding> {
    if v.environment.is_some() {
        return None;
    }
    let If::Expr(expr) = v.job.r#if.as_ref()? else {
        return None;
    };
    if !(expr.contains("github.ref_type")
        || expr.contains("github.ref")
        || expr.contains("refs/tags/"))
    {
        return None;
    }
    let id = v.id;
    let at = v.src.key(&route!("jobs", id, "if"));
    Some(Finding::new(
        Rule::TagGateIsNotABoundary,
        v.src.loc(at, Some(id)),
        format!(
            "job `{id}` is gated by `if: {expr}`; a tag push runs the workflow file of the tagged commit, so whoever can push a tag can rewrite this gate"
        ),
        "Rely on an environment with required reviewers and a tag ruleset instead of an `if:` on the ref.",
    ))
}

/// `signing-job-write-permissions`: the job that holds the key can also write what it need not.
pub fn write_permissions(v: &JobView) -> Option<Finding> {
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
            Rule::SigningJobWritePermissions,
            v.src.loc(perm_at, Some(id)),
            message,
            remediation,
        )
        .about(Subject::secrets(v.names())),
    )
}

/// `signing-secrets-inherit`: a reusable-workflow call with `secrets: inherit` in a workflow that
/// signs (or runs on tags), so the key reaches the called workflow.
pub fn secrets_inherit(
    src: &Source,
    wf: &Workflow,
    (id, call): (&str, &ReusableWorkflowCallJob),
    file_refs: &[(String, usize)],
) -> Option<Finding> {
    let signs = !file_refs.is_empty() || has_tag_trigger(wf);
    if !matches!(call.secrets, Some(Secrets::Inherit)) || !signs {
        return None;
    }
    Some(
        Finding::new(
            Rule::SigningSecretsInherit,
            src.loc(src.key(&route!("jobs", id)), Some(id)),
            format!(
                "job `{id}` calls {} with `secrets: inherit`: every secret, the signing key included, reaches the called workflow",
                call.uses.raw()
            ),
            "Pass only the secrets the called workflow needs (`secrets: { NAME: ... }`), and keep the signing key in an environment of the job that signs.",
        )
        .about(Subject::secrets(file_refs.iter().map(|(n, _)| n))),
    )
}

/// `signing-secret-dangerous-trigger`: a workflow that references the key runs on events that
/// carry code or input from outside the repository.
pub fn dangerous_trigger(
    src: &Source,
    wf: &Workflow,
    file_refs: &[(String, usize)],
) -> Option<Finding> {
    let ev = &wf.on.events;
    let risky: Vec<&str> = [
        ("pull_request_target", ev.pull_request_target.is_present()),
        ("workflow_run", ev.workflow_run.is_present()),
        ("issue_comment", ev.issue_comment.is_present()),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(n, _)| *n)
    .collect();
    if risky.is_empty() {
        return None;
    }
    Some(
        Finding::new(
            Rule::SigningSecretDangerousTrigger,
            src.loc(src.key(&route!("on")), None),
            format!(
                "this workflow references {} and runs on {}: code or input from outside the repository can reach the signing key",
                file_refs.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "),
                risky.join(", ")
            ),
            "Sign only in a workflow triggered by a tag push (or a release), never from pull_request_target, workflow_run or issue_comment.",
        )
        .about(Subject::secrets(file_refs.iter().map(|(n, _)| n))),
    )
}

/// `workflow-unparseable`: a workflow that could not be read or parsed was not audited.
pub fn unparseable(rel: &Path, (line, column): (usize, usize), why: &str) -> Finding {
    Finding::new(
        Rule::WorkflowUnparseable,
        Location::Workflow {
            path: rel.to_path_buf(),
            line,
            column,
            job: None,
        },
        format!("this workflow could not be parsed, so it was not audited: {why}"),
        "Fix the YAML (GitHub would reject it too) and run the audit again.",
    )
}

/// The release tags a signing workflow runs on: the positive `on.push.tags` patterns (`!`
/// patterns only narrow them); `tags-ignore` means any tag not ignored, so any tag (`**`).
pub fn release_tag_patterns(wf: &Workflow) -> Vec<String> {
    let OptionalBody::Body(push) = &wf.on.events.push else {
        return Vec::new();
    };
    match &push.tag_filters {
        Some(TagFilters::Tags(tags)) => tags
            .iter()
            .filter(|t| !t.starts_with('!'))
            .cloned()
            .collect(),
        Some(TagFilters::TagsIgnore(_)) => vec!["**".into()],
        None => Vec::new(),
    }
}

fn has_tag_trigger(wf: &Workflow) -> bool {
    matches!(&wf.on.events.push, OptionalBody::Body(p) if matches!(p.tag_filters, Some(TagFilters::Tags(_))))
}
