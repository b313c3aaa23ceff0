//! The known-issues registry: lint, render, exclusions, summary and the sticky PR comment.

mod pr_comment;
mod registry;
