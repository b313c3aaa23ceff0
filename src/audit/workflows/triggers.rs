//! What starts a workflow, as far as the audit needs it: the release tags a push of a tag runs it
//! on, and the events that carry code or input from outside the repository.

use github_actions_models::workflow::event::{OptionalBody, TagFilters};
use github_actions_models::workflow::Workflow;

/// The events of a workflow that carry code or input from outside the repository.
pub(crate) fn risky_events(wf: &Workflow) -> Vec<String> {
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

/// The release tags a signing workflow runs on: the positive `on.push.tags` patterns (`!`
/// patterns only narrow them); `tags-ignore` means any tag not ignored, so any tag (`**`).
pub(crate) fn release_tag_patterns(wf: &Workflow) -> Vec<String> {
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
pub(crate) fn has_tag_trigger(wf: &Workflow) -> bool {
    matches!(&wf.on.events.push, OptionalBody::Body(p) if matches!(p.tag_filters, Some(TagFilters::Tags(_))))
}

/// Whether a job's `if:` admits only tag refs (or releases, whose ref is their tag), with no
/// `||` that could admit anything else. No event that carries outside code or input
/// (`pull_request_target`, `workflow_run`, `issue_comment`) runs on a tag ref.
pub(crate) fn admits_only_tags(cond: &str) -> bool {
    let c = cond.replace(' ', "").replace('"', "'");
    let tag_ref = [
        "startsWith(github.ref,'refs/tags/",
        "startsWith(github.ref,'refs/tags'",
    ];
    let negated = tag_ref.iter().any(|t| c.contains(&format!("!{t}")))
        || c.contains("ref_type!=")
        || c.contains("event_name!='release'");
    !c.contains("||")
        && !negated
        && (tag_ref.iter().any(|t| c.contains(t))
            || c.contains("ref_type=='tag'")
            || c.contains("event_name=='release'"))
}

#[cfg(test)]
mod tests {
    use super::admits_only_tags;

    #[test]
    fn only_a_gate_that_admits_nothing_but_tags_is_one() {
        for gate in [
            "startsWith(github.ref, 'refs/tags/')",
            "${{ startsWith(github.ref, 'refs/tags/v') }}",
            "github.ref_type == 'tag' && github.event_name != 'workflow_dispatch'",
            "github.ref_type == \"tag\"",
            "github.event_name == 'release'",
        ] {
            assert!(admits_only_tags(gate), "{gate}");
        }
        for not in [
            "${{ !startsWith(github.ref, 'refs/tags/v') }}",
            "startsWith(github.ref, 'refs/tags/') || github.event_name == 'schedule'",
            "github.ref_type != 'tag'",
            "github.ref == 'refs/heads/main'",
            "always()",
        ] {
            assert!(!admits_only_tags(not), "{not}");
        }
    }
}
