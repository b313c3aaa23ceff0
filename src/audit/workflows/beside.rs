//! What runs beside the key: rules about the other steps of a job that holds a signing key. A
//! general linter flags these everywhere; here they are findings because the job holds the key.

use github_actions_models::common::{BasePermission, Permissions};
use yaml_serde::Value;
use yamlpath::route;

use super::expr::expressions;
use super::signing_job::JobView;
use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::Rule;
use crate::audit::severity::Severity;

/// The job's steps, as YAML values.
fn steps<'v>(v: &'v JobView) -> Vec<&'v Value> {
    match v
        .wf_value
        .get("jobs")
        .and_then(|j| j.get(v.id))
        .and_then(|j| j.get("steps"))
    {
        Some(Value::Sequence(s)) => s.iter().collect(),
        _ => Vec::new(),
    }
}

fn text<'v>(step: &'v Value, key: &str) -> Option<&'v str> {
    step.get(key).and_then(Value::as_str)
}

fn step_at(v: &JobView, i: usize) -> (usize, usize) {
    v.src.at(&route!("jobs", v.id, "steps", i))
}

fn finding(v: &JobView, rule: Rule, at: (usize, usize), message: String, fix: &str) -> Finding {
    Finding::new(rule, v.src.loc(at, Some(v.id)), message, fix).about(Subject::secrets(v.names()))
}

fn keys(v: &JobView) -> String {
    v.names().into_iter().collect::<Vec<_>>().join(", ")
}

/// `signing-job-unpinned-action`: an action by tag or branch in a job that holds the key. A
/// retagged action runs with the key (the tj-actions compromise). High for third-party actions;
/// low for GitHub's own (`actions/`, `github/`), whose tags GitHub itself controls (zizmor's
/// default policy accepts those pinned by tag too).
pub fn unpinned_action(v: &JobView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in steps(v).into_iter().enumerate() {
        let Some(uses) = text(step, "uses") else {
            continue;
        };
        if uses.starts_with("./") || uses.starts_with("docker://") {
            continue;
        }
        let Some((action, r#ref)) = uses.rsplit_once('@') else {
            continue;
        };
        let pinned = r#ref.len() == 40 && r#ref.bytes().all(|b| b.is_ascii_hexdigit());
        if pinned {
            continue;
        }
        let first_party = action.starts_with("actions/") || action.starts_with("github/");
        let mut f = finding(
            v,
            Rule::SigningJobUnpinnedAction,
            step_at(v, i),
            format!(
                "job `{}` holds {} and runs `{uses}` by the mutable ref `{}`: whoever can move that ref runs code with the key",
                v.id,
                keys(v),
                r#ref
            ),
            "Pin the action to a full commit SHA (`uses: owner/repo@<40-hex sha> # v1.2.3`), or move it to a job without the key.",
        );
        if first_party {
            f.severity = Severity::Low;
        }
        out.push(f);
    }
    out
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
pub fn template_injection(v: &JobView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in steps(v).into_iter().enumerate() {
        let Some(run) = text(step, "run") else {
            continue;
        };
        let Some(input) = expressions(run).find_map(|(_, e)| untrusted(e)) else {
            continue;
        };
        out.push(finding(
            v,
            Rule::SigningJobTemplateInjection,
            step_at(v, i),
            format!(
                "job `{}` holds {} and expands `${{{{ {input} }}}}` inside `run:`: that text is written by whoever triggers the run, and runs as shell",
                v.id,
                keys(v)
            ),
            "Pass the value through `env:` (`env: { VALUE: ${{ ... }} }`, then `\"$VALUE\"` in the script), never inline in `run:`.",
        ));
    }
    out
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
pub fn cache_restore(v: &JobView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in steps(v).into_iter().enumerate() {
        let Some(uses) = text(step, "uses") else {
            continue;
        };
        if !restores_cache(uses, step) {
            continue;
        }
        out.push(finding(
            v,
            Rule::SigningJobCacheRestore,
            step_at(v, i),
            format!(
                "job `{}` holds {} and restores a cache with `{uses}`: a less protected job can poison that cache",
                v.id,
                keys(v)
            ),
            "Build in a job without the key and hand the signing job only the artifacts (upload/download-artifact); turn caching off in the signing job.",
        ));
    }
    out
}

/// `signing-job-self-hosted-runner`: the key on a runner that outlives the job.
pub fn self_hosted(v: &JobView) -> Option<Finding> {
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
    Some(finding(
        v,
        Rule::SigningJobSelfHostedRunner,
        v.src.key(&route!("jobs", v.id, "runs-on")),
        format!(
            "job `{}` holds {} on a self-hosted runner: whatever ran there before (or runs there next) can read what the key leaves behind",
            v.id,
            keys(v)
        ),
        "Sign on a GitHub-hosted (ephemeral) runner, or use ephemeral self-hosted runners that run one job each.",
    ))
}

/// `signing-job-foreign-artifact`: artifacts from another workflow run, which a pull request's run
/// may have produced, signed with the key.
pub fn foreign_artifact(v: &JobView) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in steps(v).into_iter().enumerate() {
        let Some(uses) = text(step, "uses") else {
            continue;
        };
        let action = uses
            .split('@')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let with = |k: &str| step.get("with").and_then(|w| w.get(k)).is_some();
        let foreign = (action == "actions/download-artifact" && with("run-id"))
            || action == "dawidd6/action-download-artifact";
        if !foreign {
            continue;
        }
        out.push(finding(
            v,
            Rule::SigningJobForeignArtifact,
            step_at(v, i),
            format!(
                "job `{}` holds {} and downloads artifacts from another workflow run with `{uses}`: what it signs may come from a pull request's run",
                v.id,
                keys(v)
            ),
            "Build the artifacts in the same workflow run (an earlier job, `needs:`) and download them without `run-id`.",
        ));
    }
    out
}

/// `signing-job-default-permissions`: no `permissions:` on the job or the workflow, so the token
/// gets the repository's default, which is write-all on repositories created before 2023.
pub fn default_permissions(v: &JobView) -> Option<Finding> {
    let default = |p: &Permissions| matches!(p, Permissions::Base(BasePermission::Default));
    if !(default(&v.job.permissions) && default(&v.workflow.permissions)) {
        return None;
    }
    let has_key = |m: &Value, k: &str| m.get(k).is_some();
    let job = v.wf_value.get("jobs").and_then(|j| j.get(v.id));
    if has_key(v.wf_value, "permissions") || job.is_some_and(|j| has_key(j, "permissions")) {
        return None;
    }
    Some(finding(
        v,
        Rule::SigningJobDefaultPermissions,
        v.key,
        format!(
            "job `{}` holds {} and neither it nor its workflow sets `permissions:`: its token gets the repository default (write-all on older repositories)",
            v.id,
            keys(v)
        ),
        "Set `permissions: { contents: read }` on the workflow and grant the signing job only what it needs (`contents: write` to publish).",
    ))
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
