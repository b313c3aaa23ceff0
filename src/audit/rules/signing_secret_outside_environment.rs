//! `signing-secret-outside-environment`: a job holds a signing key and no environment protects it.

use std::collections::BTreeSet;


use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::flow::Why;
use crate::audit::workflows::signing_job::{Environment, JobView};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-secret-outside-environment",
    severity: Severity::High,
    description: "A job that uses the signing secret has no `environment:`",
    explanation: "a job that uses the signing secret has no `environment:`",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, cx: &JobContext) -> Vec<Finding> {
    outside_environment(v, cx.known).into_iter().collect()
}

/// `signing-secret-outside-environment`: the job holds the key with no environment, so no
/// reviewer or deployment policy stands between a run and the key. An environment given by an
/// expression is `unverifiable` offline. A job handed every secret (`toJSON(secrets)`) holds the
/// keys found elsewhere (`known`).
fn outside_environment(v: &JobView, known: &BTreeSet<String>) -> Option<Finding> {
    let id = v.id;
    let loc = v.src.loc(v.key, Some(id));
    let (what, first, names) = match (v.first(), &v.secrets.every) {
        (Some(first), _) if matches!(first.why, Why::Context { .. }) => (
            v.reasons(),
            "the signing key (passed alone, as `secrets.NAME`, not the whole secrets context)".into(),
            v.names(),
        ),

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
        // No key is known here (the workflows name none), yet the job reads them all: whatever
        // key the repository's secrets hold is among them.
        (None, Some((expr, _))) => (
            format!("every secret (`{expr}`), any signing key the repository holds among them,"),
            "only the secrets it needs".to_string(),
            BTreeSet::new(),
        ),
        _ => return None,
    };
    // Gitea and Forgejo Actions read `environment:` and protect nothing with it: no reviewers,
    // no deployment policy.
    let forge = v.on_forge();
    match &v.environment {
        Environment::Named(name) if forge => Some(
            Finding::new(
                RULE,
                loc,
                format!("job `{id}` holds {what} in a Gitea/Forgejo workflow, where `environment: {name}` protects nothing (no required reviewers, no deployment policy): any run of this job can read the key"),
                format!("Sign where a reviewer or a protected runner stands between a run and {first}: a GitHub workflow behind an environment, or a runner that only release tags reach."),
            )
            .about(Subject::secrets(names)),
        ),
        Environment::Named(_) => None,
        // A dispatch input of `type: environment`: GitHub offers only the repository's
        // environments, so one of them protects the key; which one is the dispatcher's choice.
        Environment::Expression(expr) => Some(match environment_input(v.wf_value, expr) {
            Some(input) => super::unverifiable::finding(
                Severity::Medium,
                loc,
                format!(
                    "job `{id}` holds {what} and runs in the environment the `type: environment` input `{input}` of `workflow_dispatch` names (`{expr}`): one of the repository's environments, chosen by whoever dispatches, so which protection applies cannot be checked offline"
                ),
                format!("Name the environment literally (`environment: release`) in the job that holds {first}, or give every environment of the repository required reviewers."),
            ),
            None => super::unverifiable::finding(
                Severity::High,
                loc,
                format!(
                    "job `{id}` holds {what} and its environment is the expression `{expr}`: which environment{} protects the key is decided at run time, so it cannot be checked offline",
                    if expr.contains("''") { " (none, when it comes out empty)" } else { " (if any)" }
                ),
                format!("Name the environment literally (`environment: release`) in the job that holds {first}."),
            ),
        }
        .about(Subject::secrets(names))),
        Environment::None => Some(
            Finding::new(
                RULE,
                loc,
                format!("job `{id}` holds {what} and has no `environment:`: any run of this job can read the key{}", if forge { " (a Gitea/Forgejo workflow: an environment there would not protect it either)" } else { "" }),
                match v.first() {
                    _ if forge => format!("Sign where a reviewer or a protected runner stands between a run and {first}: a GitHub workflow behind an environment, or a runner that only release tags reach."),
                    None if names.is_empty() => format!("Pass job `{id}` only the secrets it needs (`secrets.NAME`), not every secret, and keep signing keys in an environment (`environment: release`) with required reviewers that this job does not use."),
                    Some(f) if matches!(f.why, Why::Fetched { .. }) => format!("Add `environment: release` to job `{id}`, let only that environment's runs read {first} (the store's trust policy on the environment's OIDC subject, not on a ref anyone who pushes a tag can make), and require reviewers on it."),
                    _ => format!("Add `environment: release` to job `{id}`, store {first} only in that environment (not as a repository secret), and require reviewers on it."),
                },
            )
            .about(Subject::secrets(names)),
        ),
    }
}

/// A job whose only secrets go to a local action that could not be read, with no environment
/// (or one decided at run time): whether the action signs with them cannot be checked, so the
/// job is `unverifiable`, naming what could not be read. Nothing more is said about the secrets:
/// they are no key here, nor anywhere else.
pub(crate) fn unread(v: &JobView) -> Option<Finding> {
    let (what, _, spot) = v.secrets.unread.first()?;
    let protection = match &v.environment {
        Environment::Named(_) => return None,
        Environment::Expression(expr) => {
            format!("its environment is the expression `{expr}`, decided at run time")
        }
        Environment::None => "it has no `environment:`".to_string(),
    };
    let id = v.id;
    let names: BTreeSet<String> = v
        .secrets
        .unread
        .iter()
        .flat_map(|(_, s, _)| s.iter().cloned())
        .collect();
    let list = names.iter().cloned().collect::<Vec<_>>().join(", ");
    let line = v.line(spot);
    Some(
        super::unverifiable::finding(
            Severity::High,
            v.src.loc(v.key, Some(id)),
            format!(
                "job `{id}` hands {list} (line {line}) to {what}, and {protection}: whether that action signs with {} cannot be checked",
                if names.len() == 1 { "it" } else { "them" }
            ),
            format!("Make the action readable (a valid action.yml in the repository), or run the job in a protected environment (`environment: release`) if {list} can sign."),
        )
        .about(Subject::secrets(names)),
    )
}

/// The `workflow_dispatch` input of `type: environment` that `expr` is exactly
/// (`${{ inputs.X }}`, `${{ github.event.inputs.X }}`).
fn environment_input(workflow: &yaml_serde::Value, expr: &str) -> Option<String> {
    let inner = expr.trim().strip_prefix("${{")?.strip_suffix("}}")?.trim();
    let name = inner
        .strip_prefix("inputs.")
        .or_else(|| inner.strip_prefix("github.event.inputs."))?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return None;
    }
    let kind = workflow
        .get("on")?
        .get("workflow_dispatch")?
        .get("inputs")?
        .get(name)?
        .get("type")?
        .as_str()?;
    (kind == "environment").then(|| name.to_string())
}
