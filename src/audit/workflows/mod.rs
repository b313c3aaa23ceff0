//! Offline audit of `.github/workflows/*.yml`: where can the signing secret be reached without an
//! enforced boundary? Parsed with github-actions-models; positions come from yamlpath.
//!
//! `source` reads a file, `signing_job` builds the view of each job that holds a signing secret,
//! and `rules` has one function per rule over those views.

pub mod rules;
pub mod signing_job;
pub mod source;

use std::fs;
use std::path::{Path, PathBuf};

use github_actions_models::workflow::{Job, Workflow};
use regex::Regex;
use yamlpath::Document;

use crate::audit::findings::Finding;
use crate::audit::secrets::SigningSecrets;
use crate::files::guarded::read_text_inside;
use signing_job::JobView;
pub use signing_job::SigningJob;
use source::{secret_refs, Source};

#[derive(Clone, Debug, Default)]
pub struct WorkflowAudit {
    pub findings: Vec<Finding>,
    pub signing_jobs: Vec<SigningJob>,
    /// `on.push.tags` of the workflows that sign.
    pub tag_patterns: Vec<String>,
    pub workflows: Vec<PathBuf>,
}

/// Audits every workflow under `root/.github/workflows`.
pub fn audit_workflows(root: &Path, secrets: &SigningSecrets) -> WorkflowAudit {
    let mut audit = WorkflowAudit::default();
    let dir = root.join(".github/workflows");
    let Ok(entries) = fs::read_dir(&dir) else {
        return audit;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .collect();
    files.sort();
    let re = secret_refs();
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        audit.workflows.push(rel.clone());
        match parse(root, &file, &rel) {
            Ok((src, workflow)) => audit_file(&src, &workflow, root, secrets, &re, &mut audit),
            Err((at, why)) => audit.findings.push(rules::unparseable(&rel, at, &why)),
        }
    }
    audit.tag_patterns.sort();
    audit.tag_patterns.dedup();
    audit
}

/// More jobs than this in one workflow file are refused (see `parse`).
const MAX_JOBS: usize = 500;

/// GitHub's largest real workflows are a few hundred KiB.
const WORKFLOW_CAP: u64 = 1 << 20;

/// Deeper flow collections than this are refused before parsing. Brackets inside strings count
/// too, which over-counts only text no real workflow has (64 unclosed `[` in a row).
const MAX_FLOW_DEPTH: usize = 64;

/// The line at which `[`/`{` nesting passes `MAX_FLOW_DEPTH`, if it does.
fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut line = 1;
    for b in text.bytes() {
        match b {
            b'\n' => line += 1,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Some(line);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Where in a file, and why, it could not be read or parsed.
type Unparseable = ((usize, usize), String);

/// The workflow and its document, or where and why it could not be had.
fn parse(root: &Path, file: &Path, rel: &Path) -> Result<(Source, Workflow), Unparseable> {
    // A pull request controls this file: no link out of the repository, no FIFO, no size or
    // nesting that makes the parsers slow (a 200 KB file of nested `[` took 30 s).
    let text = read_text_inside(root, file, WORKFLOW_CAP)
        .map_err(|e| ((1, 1), format!("cannot read: {e}")))?;
    if let Some(line) = too_deep(&text) {
        return Err((
            (line, 1),
            format!("nested more than {MAX_FLOW_DEPTH} levels of [ or {{ deep: not audited"),
        ));
    }
    let workflow: Workflow = yaml_serde::from_str(&text).map_err(|e| {
        let at = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        (at, e.to_string())
    })?;
    // Each job is found in the document by a walk of the `jobs` mapping: quadratic in the
    // number of jobs (4,000 took 4 s). No real workflow comes near the cap.
    if workflow.jobs.len() > MAX_JOBS {
        return Err((
            (1, 1),
            format!(
                "{} jobs, more than {MAX_JOBS}: not audited",
                workflow.jobs.len()
            ),
        ));
    }
    let doc = Document::new(text).map_err(|e| ((1, 1), e.to_string()))?;
    Ok((Source::new(rel.to_path_buf(), doc), workflow))
}

/// Runs every rule on one workflow.
fn audit_file(
    src: &Source,
    wf: &Workflow,
    root: &Path,
    secrets: &SigningSecrets,
    re: &Regex,
    audit: &mut WorkflowAudit,
) {
    let file_refs = src.signing_refs(src.whole(), secrets, re);
    let mut signs = false;
    for (id, job) in &wf.jobs {
        match job {
            Job::ReusableWorkflowCallJob(call) => {
                audit
                    .findings
                    .extend(rules::secrets_inherit(src, wf, (id, call), &file_refs));
            }
            Job::NormalJob(job) => {
                let Some(view) = JobView::new(src, wf, (id, job), root, secrets, re) else {
                    continue;
                };
                signs = true;
                audit.signing_jobs.push(view.signing_job());
                audit.findings.extend(
                    [
                        rules::outside_environment(&view),
                        rules::tag_gate(&view),
                        rules::write_permissions(&view),
                    ]
                    .into_iter()
                    .flatten(),
                );
            }
        }
    }
    if signs || !file_refs.is_empty() {
        audit
            .findings
            .extend(rules::dangerous_trigger(src, wf, &file_refs));
    }
    if signs {
        audit.tag_patterns.extend(rules::release_tag_patterns(wf));
    }
}
