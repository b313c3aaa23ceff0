//! `signing-job-cache-restore`: a cache restored in a job that holds the key.

use yaml_serde::Value;

use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::{step_text, JobView};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-cache-restore",
    severity: Severity::Medium,
    description: "A job that holds the signing key restores a cache another, less protected job can write",
    explanation: "a job that holds the key restores a cache (`actions/cache`, `Swatinem/rust-cache`, `setup-go`, `setup-*` with `cache:`)",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    if v.holds_key() { cache_restore(v) } else { Vec::new() }
}

/// Actions that restore a cache: always, or when a `cache` input is set, or unless it is off.
fn restores_cache(uses: &str, step: &Value) -> bool {
    let action = uses
        .split('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let cache_input = step
        .get("with")
        .and_then(|w| w.get("cache"))
        .map(|c| match c {
            Value::Bool(b) => *b,
            Value::String(s) => !s.is_empty() && s != "false",
            _ => true,
        });
    match action.as_str() {
        "actions/cache" | "actions/cache/restore" | "swatinem/rust-cache" => true,
        "actions/setup-go" | "gradle/actions/setup-gradle" | "gradle/gradle-build-action" => {
            cache_input != Some(false)
        }
        a if a.starts_with("actions/setup-") => cache_input == Some(true),
        _ => false,
    }
}

/// `signing-job-cache-restore`: a cache restored in the job that holds the key; any job of the
/// repository (a pull request's, too) can write the cache it restores.
fn cache_restore(v: &JobView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in v.steps().into_iter().enumerate() {
        let Some(uses) = step_text(step, "uses") else {
            continue;
        };
        if !restores_cache(uses, step) {
            continue;
        }
        out.push(v.finding(RULE,
            v.step_at(i),
            format!(
                "job `{}` holds {} and restores a cache with `{uses}`: a less protected job can poison that cache",
                v.id,
                v.key_list()
            ),
            "Build in a job without the key and hand the signing job only the artifacts (upload/download-artifact); turn caching off in the signing job.",
        ).detail(uses));
    }
    out
}
