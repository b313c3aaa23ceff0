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
