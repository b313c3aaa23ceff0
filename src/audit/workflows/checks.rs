//! What a rule's check is given (rules live in `audit/rules/`, one file each, and are handed to
//! the workflow audit as [`Checks`], so this folder never names a rule): a job that may hold a
//! key ([`JobView`] with [`JobContext`]), or a whole workflow ([`WorkflowView`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use github_actions_models::workflow::Workflow;
use yaml_serde::Value;

use super::signing_job::JobView;
use super::source::Source;
use crate::audit::findings::Finding;

/// What every job's checks share.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobContext<'c> {
    /// Every key found in the repository's workflows (a job handed every secret holds them).
    pub(crate) known: &'c BTreeSet<String>,
    /// Whether a tag push runs the workflow (its own trigger, or a caller's).
    pub(crate) tag_trigger: bool,
}

/// A workflow as its checks see it.
#[derive(Clone, Copy)]
pub(crate) struct WorkflowView<'w> {
    pub(crate) src: &'w Source,
    pub(crate) workflow: &'w Workflow,
    pub(crate) value: &'w Value,
    /// Every key found in the repository's workflows.
    pub(crate) known: &'w BTreeSet<String>,
    /// For each workflow, its jobs that hold a key without an environment ("job `sign` holds
    /// KEY").
    pub(crate) exposed: &'w BTreeMap<PathBuf, Vec<String>>,
    /// The keys this workflow's jobs hold.
    pub(crate) keys: &'w BTreeSet<String>,
    /// The risky events of the workflows that call this one (a reusable workflow runs on them).
    pub(crate) via_callers: &'w [String],
    /// Every workflow file of the repository (`.github/workflows/x.yml`): a local callee not
    /// among them cannot be judged.
    pub(crate) local_workflows: &'w BTreeSet<PathBuf>,
}

impl WorkflowView<'_> {
    /// Whether `uses` names a reusable workflow this audit reads: a local one that exists.
    pub(crate) fn reads_callee(&self, uses: &str) -> bool {
        super::calls::local(uses).is_some_and(|c| self.local_workflows.contains(&c))
    }
}

/// A check of one job.
pub(crate) type JobCheck = fn(&JobView, &JobContext) -> Vec<Finding>;

/// A check of one workflow.
pub(crate) type WorkflowCheck = fn(&WorkflowView) -> Vec<Finding>;

/// The checks the workflow audit runs (from the rule list), and how it reports a file it could
/// not parse.
#[derive(Clone, Debug)]
pub struct Checks {
    pub(crate) job: Vec<JobCheck>,
    pub(crate) workflow: Vec<WorkflowCheck>,
    pub(crate) unparseable: fn(&Path, (usize, usize), &str) -> Finding,
    /// How it reports a job whose only secrets go to a local action it could not read.
    pub(crate) unread: fn(&JobView) -> Option<Finding>,
}
