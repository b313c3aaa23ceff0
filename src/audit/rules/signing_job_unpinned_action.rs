//! `signing-job-unpinned-action`: an action by tag or branch in a job that holds the key.


use crate::audit::findings::Finding;
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::{step_text, JobView};

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-job-unpinned-action",
    severity: Severity::High,
    description: "A job that holds the signing key runs an action by a tag or branch, not a full commit SHA",
    explanation: "a job that holds the key runs an action by a tag or branch, not a full commit SHA (low for GitHub's own `actions/*` and `github/*`, whose tags GitHub controls)",
});

/// The check (the job hook).
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    if v.holds_key() { unpinned_action(v) } else { Vec::new() }
}

/// `signing-job-unpinned-action`: the actions by tag or branch in a job that holds the key, as
/// one finding listing each (a retagged action runs with the key: the tj-actions compromise).
/// High when one is a third party's; low when all are GitHub's own (`actions/`, `github/`),
/// whose tags GitHub itself controls (zizmor's default policy accepts those pinned by tag too).
fn unpinned_action(v: &JobView) -> Vec<Finding> {
    let mut parts = Vec::new();
    let mut third_party = false;
    for (i, step) in v.steps().into_iter().enumerate() {
        let Some(uses) = step_text(step, "uses") else {
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
        third_party |= !(action.starts_with("actions/") || action.starts_with("github/"));
        parts.push((v.step_at(i), uses.to_string(), r#ref.to_string()));
    }
    let Some((first, ..)) = parts.first() else {
        return Vec::new();
    };
    let listed: Vec<String> = parts
        .iter()
        .map(|((line, _), uses, _)| format!("`{uses}` (line {line})"))
        .collect();
    let message = match parts.as_slice() {
        [(_, uses, r#ref)] => format!(
            "job `{}` holds {} and runs `{uses}` by the mutable ref `{}`: whoever can move that ref runs code with the key",
            v.id,
            v.key_list(),
            r#ref
        ),
        _ => format!(
            "job `{}` holds {} and runs {} actions by mutable refs: {}: whoever can move one of those refs runs code with the key",
            v.id,
            v.key_list(),
            parts.len(),
            listed.join(", ")
        ),
    };
    let mut f = v
        .finding(
            RULE,
            *first,
            message,
            "Pin each action to a full commit SHA (`uses: owner/repo@<40-hex sha> # v1.2.3`), or move it to a job without the key.",
        )
        .detail(parts.iter().map(|(_, u, _)| u.as_str()).collect::<Vec<_>>().join(","));
    if !third_party {
        f.severity = Severity::Low;
    }
    f.parts = parts
        .into_iter()
        .map(|(loc, uses, r#ref)| {
            (
                v.src.loc(loc, Some(v.id)),
                format!(
                    "job `{}` runs `{uses}` by the mutable ref `{}` while it holds {}",
                    v.id,
                    r#ref,
                    v.key_list()
                ),
            )
        })
        .collect();
    vec![f]
}
