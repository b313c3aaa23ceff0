//! `workflow-unparseable`: a workflow file that could not be read or parsed was not audited.

use std::path::Path;

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "workflow-unparseable",
    severity: Severity::High,
    description: "A workflow file could not be parsed, so it could not be audited",
    explanation: "a workflow could not be parsed, so it was not audited",
});

/// `workflow-unparseable`: a workflow that could not be read or parsed was not audited.
pub(crate) fn finding(rel: &Path, (line, column): (usize, usize), why: &str) -> Finding {
    Finding::new(
        RULE,
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
