//! `secrets-overprovisioned`: a job handed every secret in a repository that signs.

use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::JobView;
use crate::audit::workflows::triggers::risky_events;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "secrets-overprovisioned",
    severity: Severity::Medium,
    description: "A job reads every secret (`toJSON(secrets)`, `secrets[...]`) in a repository whose workflows sign",
    explanation: "a job reads every secret (`toJSON(secrets)`, `secrets[<expression>]`) while the repository signs: the signing key reaches a job that names no need for it",
});

/// The check (the job hook): every secret, in a repository whose workflows hold a key, in a job
/// that is not already reported for running a pull request's code, or for holding the key
/// without an environment.
pub(crate) fn check(v: &JobView, cx: &JobContext) -> Vec<Finding> {
    let Some((expr, spot)) = &v.secrets.every else {
        return Vec::new();
    };
    let named: Vec<String> = cx
        .known
        .iter()
        .filter(|k| !k.contains('('))
        .cloned()
        .collect();
    if named.is_empty() || !risky_events(v.workflow).is_empty() {
        return Vec::new();
    }
    // Without an environment, `signing-secret-outside-environment` already says it, louder.
    if v.environment == crate::audit::workflows::signing_job::Environment::None {
        return Vec::new();
    }
    let line = v.line(spot);
    vec![Finding::new(
        RULE,
        v.src.loc(v.key, Some(v.id)),
        format!(
            "job `{}` reads every secret (`{expr}`, line {line}) while the repository signs with {}: the key reaches a job that names no need for it",
            v.id,
            named.join(", ")
        ),
        "Pass only the secrets the job needs (`secrets.NAME`), by name.",
    )
    .about(Subject::secrets(named))
    .detail(expr.clone())]
}
