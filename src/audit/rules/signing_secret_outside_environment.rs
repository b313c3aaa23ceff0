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
        _ => return None,
    };
    match &v.environment {
        Environment::Named(_) => None,
        Environment::Expression(expr) => Some(
            super::unverifiable::finding(
                Severity::High,
                loc,
                format!(
                    "job `{id}` holds {what} and its environment is the expression `{expr}`: which environment{} protects the key is decided at run time, so it cannot be checked offline",
                    if expr.contains("''") { " (none, when it comes out empty)" } else { " (if any)" }
                ),
                format!("Name the environment literally (`environment: release`) in the job that holds {first}."),
            )
            .about(Subject::secrets(names)),
        ),
        Environment::None => Some(
            Finding::new(
                RULE,
                loc,
                format!("job `{id}` holds {what} and has no `environment:`: any run of this job can read the key"),
                match v.first() {
                    Some(f) if matches!(f.why, Why::Fetched { .. }) => format!("Add `environment: release` to job `{id}`, let only that environment's runs read {first} (the store's trust policy on the environment's OIDC subject, not on a ref anyone who pushes a tag can make), and require reviewers on it."),
                    _ => format!("Add `environment: release` to job `{id}`, store {first} only in that environment (not as a repository secret), and require reviewers on it."),
                },
            )
            .about(Subject::secrets(names)),
        ),
    }
}
