//! Offline audit of `.github/workflows/*.yml`: where can the signing secret be reached without an
//! enforced boundary? Parsed with github-actions-models; positions come from yamlpath.
//!
//! `source` reads a file, `signing_job` builds the view of each job that holds a signing secret,
//! and `rules` has one function per rule over those views.

pub mod beside;
pub mod calls;
pub mod expr;
pub mod flow;
pub mod rules;
pub mod signing_job;
pub mod source;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use github_actions_models::workflow::{Job, Workflow};
use yamlpath::Document;

use crate::audit::findings::Finding;
use crate::audit::secrets::SigningSecrets;
use crate::files::guarded::read_text_inside;
use signing_job::JobView;
pub use signing_job::SigningJob;
use source::{Parsed, Source};

#[derive(Clone, Debug, Default)]
pub struct WorkflowAudit {
    pub findings: Vec<Finding>,
    pub signing_jobs: Vec<SigningJob>,
    /// `on.push.tags` of the workflows that sign.
    pub tag_patterns: Vec<String>,
    pub workflows: Vec<PathBuf>,
    /// The signing keys the jobs hold (normalised names).
    pub keys: BTreeSet<String>,
}

/// Audits every workflow under `root/.github/workflows`. A root that does not exist, or a
/// workflows folder that cannot be read, is an error: an audit that saw nothing is not a pass.
pub fn audit_workflows(
    root: &Path,
    secrets: &SigningSecrets,
) -> crate::error::Result<WorkflowAudit> {
    use crate::error::Error;
    let mut audit = WorkflowAudit::default();
    if !root.is_dir() {
        return Err(Error::Usage(format!(
            "{}: no such directory (pass the repository with --root)",
            root.display()
        )));
    }
    let dir = root.join(".github/workflows");
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(audit),
        Err(e) => return Err(Error::io("reading", &dir, e)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .collect();
    files.sort();
    let mut parsed = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        audit.workflows.push(rel.clone());
        match parse(root, &file, &rel) {
            Ok(p) => parsed.push(p),
            Err((at, why)) => audit.findings.push(rules::unparseable(&rel, at, &why)),
        }
    }
    let callers = calls::callers(&parsed, secrets);
    // Every job's keys first: a job handed every secret holds the keys found anywhere.
    let mut views = Vec::new();
    for (src, wf, value) in &parsed {
        let caller = callers.get(&src.rel);
        let given = caller.map_or_else(|| secrets.clone(), |c| c.secrets_for_callee(secrets));
        for (id, job) in &wf.jobs {
            if let Job::NormalJob(job) = job {
                if let Some(v) = JobView::new(src, (wf, value), (id, job), root, &given) {
                    views.push(v);
                }
            }
        }
    }
    let known: BTreeSet<String> = views.iter().flat_map(|v| v.names()).collect();
    for v in &views {
        let caller = callers.get(&v.src.rel);
        let tag_trigger =
            rules::has_tag_trigger(v.workflow) || caller.is_some_and(|c| c.tag_trigger);
        if !v.secrets.keys.is_empty() {
            audit.signing_jobs.push(v.signing_job());
            audit
                .tag_patterns
                .extend(rules::release_tag_patterns(v.workflow));
            if let Some(c) = caller {
                audit.tag_patterns.extend(c.tag_patterns.iter().cloned());
            }
        }
        audit.findings.extend(
            [
                rules::outside_environment(v, &known),
                rules::tag_gate(v, tag_trigger),
                rules::write_permissions(v),
                beside::default_permissions(v),
                beside::self_hosted(v),
            ]
            .into_iter()
            .flatten(),
        );
        if !v.secrets.keys.is_empty() {
            audit.findings.extend(beside::unpinned_action(v));
            audit.findings.extend(beside::template_injection(v));
            audit.findings.extend(beside::cache_restore(v));
            audit.findings.extend(beside::foreign_artifact(v));
        }
    }
    for (src, wf, value) in &parsed {
        let file_keys: BTreeSet<String> = views
            .iter()
            .filter(|v| v.src.rel == src.rel)
            .flat_map(|v| v.names())
            .collect();
        audit
            .findings
            .extend(calls::call_findings(src, value, &known, &views));
        if !file_keys.is_empty() {
            audit
                .findings
                .extend(rules::dangerous_trigger(src, wf, &file_keys));
        }
    }
    audit.tag_patterns.sort();
    audit.tag_patterns.dedup();
    secrets_found(&mut audit, &known);
    Ok(audit)
}

/// The keys found, for the settings audit (`SigningSecrets::found`).
fn secrets_found(audit: &mut WorkflowAudit, known: &BTreeSet<String>) {
    audit.keys = known
        .iter()
        .map(|k| crate::audit::catalogue::Catalogue::normal(k))
        .collect();
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
fn parse(root: &Path, file: &Path, rel: &Path) -> Result<Parsed, Unparseable> {
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
    // The same text as plain YAML values, for the flow of secrets (aliases resolved).
    let value: yaml_serde::Value =
        yaml_serde::from_str(&text).map_err(|e| ((1, 1), e.to_string()))?;
    let doc = Document::new(text).map_err(|e| ((1, 1), e.to_string()))?;
    Ok((Source::new(rel.to_path_buf(), doc), workflow, value))
}
