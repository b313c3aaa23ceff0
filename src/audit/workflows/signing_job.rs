//! A job that uses a signing secret: what the settings audit needs of it ([`SigningJob`]), and the
//! view of it every workflow rule reads ([`JobView`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use github_actions_models::common::Uses;
use github_actions_models::workflow::job::{DeploymentEnvironment, NormalJob, Step, UsesStep};
use github_actions_models::workflow::Workflow;
use regex::Regex;
use yamlpath::route;

use super::source::Source;
use crate::audit::secrets::SigningSecrets;

/// A job that uses a signing secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigningJob {
    pub workflow: PathBuf,
    pub job: String,
    pub environment: Option<String>,
    pub secrets: BTreeSet<String>,
    pub line: usize,
}

/// A signing job as the rules see it.
pub struct JobView<'a> {
    pub src: &'a Source,
    pub workflow: &'a Workflow,
    pub id: &'a str,
    pub job: &'a NormalJob,
    /// Position of `jobs.<id>`.
    pub key: (usize, usize),
    /// Signing secrets the job references, each with its first byte offset, in order.
    pub refs: Vec<(String, usize)>,
    pub environment: Option<String>,
    /// Local composite actions the secrets are handed to (`./.github/actions/x`).
    pub via: Vec<String>,
}

impl<'a> JobView<'a> {
    /// The view of `jobs.<id>`, or `None` when it references no signing secret.
    pub fn new(
        src: &'a Source,
        workflow: &'a Workflow,
        (id, job): (&'a str, &'a NormalJob),
        root: &Path,
        secrets: &SigningSecrets,
        re: &Regex,
    ) -> Option<Self> {
        let job_route = route!("jobs", id);
        let span = src.span(&job_route).unwrap_or(src.whole());
        let refs = src.signing_refs(span, secrets, re);
        if refs.is_empty() {
            return None;
        }
        let environment = job.environment.as_ref().map(|e| match e {
            DeploymentEnvironment::Name(n) => n.clone(),
            DeploymentEnvironment::NameURL { name, .. } => name.clone(),
        });
        Some(JobView {
            src,
            workflow,
            id,
            job,
            key: src.key(&job_route),
            via: composite_actions(src, id, job, root, secrets, re),
            refs,
            environment,
        })
    }

    /// The signing secrets, sorted.
    pub fn names(&self) -> BTreeSet<String> {
        self.refs.iter().map(|(n, _)| n.clone()).collect()
    }

    pub fn signing_job(&self) -> SigningJob {
        SigningJob {
            workflow: self.src.rel.clone(),
            job: self.id.to_string(),
            environment: self.environment.clone(),
            secrets: self.names(),
            line: self.key.0,
        }
    }
}

/// Steps that hand a signing secret to a local composite action: the action, and whether its
/// `action.yml` was found.
fn composite_actions(
    src: &Source,
    id: &str,
    job: &NormalJob,
    root: &Path,
    secrets: &SigningSecrets,
    re: &Regex,
) -> Vec<String> {
    let mut via = Vec::new();
    for (i, step) in job.steps.iter().enumerate() {
        let Step::Uses(UsesStep {
            uses: Uses::Local(local),
            ..
        }) = step
        else {
            continue;
        };
        let Some(span) = src.span(&route!("jobs", id, "steps", i)) else {
            continue;
        };
        if src.signing_refs(span, secrets, re).is_empty() {
            continue;
        }
        // The workflow names the path: it is looked up only as a plain path inside the
        // repository (no `..`, no `.git`), so the audit never probes the runner's files.
        let path = local.raw().trim_start_matches("./");
        let found = crate::files::paths::is_repo_relative(path)
            && ["action.yml", "action.yaml"].iter().any(|f| {
                let file = root.join(path).join(f);
                std::fs::canonicalize(&file)
                    .ok()
                    .zip(std::fs::canonicalize(root).ok())
                    .is_some_and(|(real, root)| real.starts_with(root) && real.is_file())
            });
        via.push(format!(
            "{}{}",
            local.raw(),
            if found {
                ""
            } else {
                " (action file not found)"
            }
        ));
    }
    via
}
