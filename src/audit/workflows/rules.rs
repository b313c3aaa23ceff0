//! The workflow rules, one function each. A job rule reads a [`JobView`]; the workflow rules read
//! the parsed workflow and the signing secrets it references anywhere.

use std::path::Path;

use github_actions_models::common::{BasePermission, If, Permission, Permissions};
use github_actions_models::workflow::event::{OptionalBody, TagFilters};
use github_actions_models::workflow::Workflow;
use yamlpath::route;

use std::collections::BTreeSet;

use super::expr::one_line;
use super::signing_job::{Environment, JobView};
use super::source::Source;
use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::Rule;
use crate::audit::severity::Severity;

/// Permissions a signing job may hold with write access: publishing the release needs
/// `contents`; `id-token` and `attestations` serve provenance.
const NEEDED_WRITES: &[&str] = &["contents", "id-token", "attestations"];

/// `signing-secret-outside-environment`: the job holds the key with no environment, so no
/// reviewer or deployment policy stands between a run and the key. An environment given by an
/// expression is `unverifiable` offline. A job handed every secret (`toJSON(secrets)`) holds the
/// keys found elsewhere (`known`).
pub fn outside_environment(v: &JobView, known: &BTreeSet<String>) -> Option<Finding> {
    let id = v.id;
    let loc = v.src.loc(v.key, Some(id));
    let (what, first, names) = match (v.first(), &v.secrets.every) {
        (Some(first), _) => (v.reasons(), first.name.clone(), v.names()),
        (None, Some((expr, _))) if !known.is_empty() => (
            format!(
                "every secret (`{}`), {} included,",
                expr,
                known.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            known.iter().next().cloned().unwrap_or_default(),
            known.clone(),
        ),
        _ => return None,
    };
    match &v.environment {
        Environment::Named(_) => None,
        Environment::Expression(expr) => Some(
            Finding::unverifiable(
                Severity::High,
                loc,
                format!("job `{id}` holds {what} and its environment is the expression `{expr}`: which environment (if any) protects the key is decided at run time, so it cannot be checked offline"),
                format!("Name the environment literally (`environment: release`) in the job that holds {first}."),
            )
            .about(Subject::secrets(names)),
        ),
        Environment::None => Some(
            Finding::new(
                Rule::SigningSecretOutsideEnvironment,
                loc,
                format!("job `{id}` holds {what} and has no `environment:`: any run of this job can read the key"),
                format!("Add `environment: release` to job `{id}`, store {first} only in that environment (not as a repository secret), and require reviewers on it."),
            )
            .about(Subject::secrets(names)),
        ),
    }
}

/// An `if:` that tests the ref (`github.ref`, `github.ref_type`, `refs/tags/`).
fn ref_gate(expr: &str) -> bool {
    expr.contains("github.ref") || expr.contains("refs/tags/")
}

/// `tag-gate-is-not-a-boundary`: an environment-less signing job whose only gate is an `if:` on
/// the ref (on the job, or on the step that signs), which the run's own workflow file decides.
pub fn tag_gate(v: &JobView, tag_trigger: bool) -> Option<Finding> {
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
        Rule::TagGateIsNotABoundary,
        v.src.loc(v.src.key(&at), Some(id)),
        format!("job `{id}` is gated by `if: {}`; {why}", one_line(&expr)),
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

/// `signing-secret-dangerous-trigger`: a workflow that references the key runs on events that
/// carry code or input from outside the repository.
pub fn dangerous_trigger(
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
            Rule::SigningSecretDangerousTrigger,
            src.loc(src.key(&route!("on")), None),
            format!(
                "this workflow references {} and runs on {}: code or input from outside the repository can reach the signing key",
                keys.iter().cloned().collect::<Vec<_>>().join(", "),
                risky.join(", ")
            ),
            "Sign only in a workflow triggered by a tag push (or a release), never from pull_request_target, workflow_run or issue_comment.",
        )
        .about(Subject::secrets(keys)),
    )
}

/// The events of a workflow that carry code or input from outside the repository.
pub fn risky_events(wf: &Workflow) -> Vec<String> {
    let ev = &wf.on.events;
    [
        ("pull_request_target", ev.pull_request_target.is_present()),
        ("workflow_run", ev.workflow_run.is_present()),
        ("issue_comment", ev.issue_comment.is_present()),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(n, _)| n.to_string())
    .collect()
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

/// Whether a push of a tag runs the workflow.
pub fn has_tag_trigger(wf: &Workflow) -> bool {
    matches!(&wf.on.events.push, OptionalBody::Body(p) if matches!(p.tag_filters, Some(TagFilters::Tags(_))))
}
