//! `signing-job-template-injection`: untrusted input expanded into `run:` in a job that holds the key.


use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::{step_text, JobView};
use crate::audit::workflows::expr::expressions;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-template-injection",
    severity: Severity::High,
    description: "A job that holds the signing key expands untrusted input (`github.event.*`, `inputs.*`) inside `run:`",
    explanation: "a job that holds the key expands `github.event.*` text, `github.head_ref` or `inputs.*` inside `run:`",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    if v.holds_key() { template_injection(v) } else { Vec::new() }
}

/// Whether an expression reads input an outsider controls: event payload text, branch names,
/// workflow inputs. Ids, numbers and SHAs are not text.
fn untrusted(expr: &str) -> Option<String> {
    let e = expr.trim();
    let words: Vec<&str> = e
        .split(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .into_iter()
        .find(|w| {
            let safe_tail = w.ends_with(".id")
                || w.ends_with(".number")
                || w.ends_with("sha")
                || w.ends_with(".run_id");
            (w.starts_with("github.event.") && !safe_tail)
                || *w == "github.head_ref"
                || w.starts_with("inputs.")
        })
        .map(str::to_string)
}

/// `signing-job-template-injection`: untrusted input expanded into a `run:` script of a job that
/// holds the key: a crafted title or branch name runs as shell with the key in reach.
fn template_injection(v: &JobView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in v.steps().into_iter().enumerate() {
        let Some(run) = step_text(step, "run") else {
            continue;
        };
        let Some(input) = expressions(run).find_map(|(_, e)| untrusted(e)) else {
            continue;
        };
        out.push(v.finding(RULE,
            v.step_at(i),
            format!(
                "job `{}` holds {} and expands `${{{{ {input} }}}}` inside `run:`: that text is written by whoever triggers the run, and runs as shell",
                v.id,
                v.key_list()
            ),
            "Pass the value through `env:` (`env: { VALUE: ${{ ... }} }`, then `\"$VALUE\"` in the script), never inline in `run:`.",
        ).detail(input.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_input() {
        assert_eq!(
            untrusted(" github.event.pull_request.title "),
            Some("github.event.pull_request.title".into())
        );
        assert_eq!(untrusted("github.head_ref"), Some("github.head_ref".into()));
        assert_eq!(untrusted("inputs.version"), Some("inputs.version".into()));
        assert_eq!(untrusted("github.event.pull_request.number"), None);
        assert_eq!(untrusted("github.event.workflow_run.head_sha"), None);
        assert_eq!(untrusted("github.ref_name"), None);
        assert_eq!(untrusted("secrets.KEY"), None);
    }
}
