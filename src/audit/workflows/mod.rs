//! Offline audit of `.github/workflows/*.yml`: where can the signing secret be reached without an
//! enforced boundary? Parsed with github-actions-models; positions come from yamlpath.
//!
//! `source` reads a file, `flow` finds which secrets of a job are keys, `signing_job` builds the
//! view of each job that holds one, `calls` follows reusable-workflow calls and `triggers` reads
//! what starts a workflow. The rules (`audit/rules/`) come in as [`Checks`]: this folder runs
//! them over its views and never names one.

mod build_files;
pub(crate) mod calls;
pub(crate) mod checks;
pub(crate) mod expr;
pub(crate) mod flow;
pub(crate) mod signing_job;
pub(crate) mod source;
pub(crate) mod travel;
pub(crate) mod triggers;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use github_actions_models::workflow::{Job, Workflow};

use crate::audit::findings::Finding;
use crate::audit::secrets::SigningSecrets;
use crate::files::guarded::read_text_inside;
pub(crate) use checks::Checks;
use checks::{JobContext, WorkflowView};
use flow::JobSecrets;
use signing_job::JobView;
pub use signing_job::SigningJob;
use signing_job::{environment, Environment};
use source::{Parsed, Source};

use crate::audit::findings::{Coverage, CoveredJob};

#[derive(Clone, Debug, Default)]
pub struct WorkflowAudit {
    pub(crate) findings: Vec<Finding>,
    pub(crate) signing_jobs: Vec<SigningJob>,
    /// `on.push.tags` of the workflows that sign.
    pub(crate) tag_patterns: Vec<String>,
    pub(crate) workflows: Vec<PathBuf>,
    /// The signing keys the jobs hold (normalised names).
    pub(crate) keys: BTreeSet<String>,
    /// What was read: files, jobs, signing jobs and what made them so, scripts and actions.
    pub(crate) coverage: Coverage,
}

/// Every workflow file of `root`, parsed (both cores): the ones that do not parse are findings
/// in `audit`. `None` when the repository has no workflows folder.
/// Where workflows live: GitHub's, then Gitea's and Forgejo's (the same syntax; go-ethereum
/// signs its releases in `.gitea/workflows`).
pub(crate) const WORKFLOW_FOLDERS: [&str; 3] = [
    ".github/workflows",
    ".gitea/workflows",
    ".forgejo/workflows",
];

fn parse_workflows(
    root: &Path,
    checks: &Checks,
    audit: &mut WorkflowAudit,
) -> crate::error::Result<Option<Vec<Parsed>>> {
    use crate::error::Error;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut any = false;
    for folder in WORKFLOW_FOLDERS {
        let dir = root.join(folder);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("reading", &dir, e)),
        };
        any = true;
        let mut of_folder: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
            .collect();
        of_folder.sort();
        files.extend(of_folder);
    }
    if !any {
        return Ok(None);
    }
    let mut parsed = Vec::new();
    // Parsing is most of the time: both cores.
    let results = crate::util::parallel_map(&files, |file| {
        let rel = file.strip_prefix(root).unwrap_or(file).to_path_buf();
        (parse(root, file, &rel), rel)
    });
    for (result, rel) in results {
        audit.workflows.push(rel.clone());
        match result {
            Ok(p) => parsed.push(p),
            Err((at, why)) => audit.findings.push((checks.unparseable)(&rel, at, &why)),
        }
    }
    Ok(Some(parsed))
}

/// Jobs in a table of files that matter to the rules.
type FileJobs = Vec<Vec<(String, JobSecrets)>>;

/// The jobs the rules look at, per file (a key, or every secret), with the keys `shown`
/// elsewhere added; and per file, the jobs that hold a key without an environment.
fn jobs_with_keys(
    parsed: &[Parsed],
    all: FileJobs,
    shown: &BTreeSet<String>,
    coverage: &mut Coverage,
) -> (FileJobs, BTreeMap<PathBuf, Vec<String>>) {
    let mut jobs: Vec<Vec<(String, JobSecrets)>> = Vec::new();
    let mut exposed: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for ((rel, _, wf, _), of_file) in parsed.iter().zip(all) {
        let mut kept = Vec::new();
        for (id, mut s) in of_file {
            s.add_known(shown);
            // Neither a key nor every secret nor an action that could not be read: nothing for
            // the rules.
            if s.keys.is_empty() && s.every.is_none() && s.unread.is_empty() {
                continue;
            }
            if !s.keys.is_empty() {
                coverage.signing_jobs.push(CoveredJob {
                    workflow: rel.clone(),
                    job: id.clone(),
                    secrets: s.keys.iter().map(|k| k.name.clone()).collect(),
                });
            }
            let Some(Job::NormalJob(job)) = wf.jobs.get(&id) else {
                continue;
            };
            if !s.keys.is_empty() && environment(job) == Environment::None {
                let names: BTreeSet<&str> = s.keys.iter().map(|k| k.name.as_str()).collect();
                exposed.entry(rel.clone()).or_default().push(format!(
                    "job `{id}` holds {}",
                    names.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
            kept.push((id, s));
        }
        jobs.push(kept);
    }
    (jobs, exposed)
}

/// Audits every workflow under `root/.github/workflows`. A root that does not exist, or a
/// workflows folder that cannot be read, is an error: an audit that saw nothing is not a pass.
pub fn audit_workflows(
    root: &Path,
    secrets: &SigningSecrets,
    checks: &Checks,
) -> crate::error::Result<WorkflowAudit> {
    use crate::error::Error;
    let mut audit = WorkflowAudit::default();
    if !root.is_dir() {
        return Err(Error::Usage(format!(
            "{}: no such directory (pass the repository with --root)",
            root.display()
        )));
    }
    let Some(parsed) = parse_workflows(root, checks, &mut audit)? else {
        return Ok(audit);
    };
    audit.coverage.workflow_files = audit.workflows.len();
    let callers = calls::callers(&parsed, secrets);
    // Every job's keys first (from the YAML values alone): a job handed every secret holds the
    // keys found anywhere, and a caller is judged by what its callee exposes.
    let mut all: Vec<Vec<(String, JobSecrets)>> = Vec::new();
    for (rel, _, wf, value) in &parsed {
        let given = callers
            .get(rel)
            .map_or_else(|| secrets.clone(), |c| c.secrets_for_callee(secrets));
        let mut of_file = Vec::new();
        for (id, job) in &wf.jobs {
            let Job::NormalJob(normal) = job else {
                continue;
            };
            // A job whose `if:` is always false never runs: not audited, and said so.
            if normal.r#if.as_ref().is_some_and(triggers::never_true) {
                audit
                    .coverage
                    .never_run
                    .push(format!("{} `{id}`", rel.display()));
                continue;
            }
            let s = JobView::secrets_of(value, id, root, &given);
            audit.coverage.jobs += 1;
            audit.coverage.followed.extend(s.followed.iter().cloned());
            of_file.push((id.clone(), s));
        }
        all.push(of_file);
    }
    // A secret one job shows to be a key, by evidence (not a guess), is a key in every job
    // that reads it.
    let shown: BTreeSet<String> = all
        .iter()
        .flatten()
        .flat_map(|(_, s)| s.keys.iter())
        .filter(|k| k.why.propagates())
        .map(|k| crate::audit::catalogue::Catalogue::normal(&k.name))
        .collect();
    // Then keys handed from job to job (artifacts, outputs) reach the jobs that take them,
    // a key another job showed included.
    for ((_, _, _, value), of_file) in parsed.iter().zip(all.iter_mut()) {
        for (_, s) in of_file.iter_mut() {
            s.add_known(&shown);
        }
        travel::follow(value, of_file);
    }
    let (jobs, exposed) = jobs_with_keys(&parsed, all, &shown, &mut audit.coverage);
    // A key read from a store outside GitHub is not a secret the settings audit can look for.
    let known: BTreeSet<String> = jobs
        .iter()
        .flat_map(|f| f.iter().map(|(_, s)| s))
        .flat_map(|s| s.keys.iter())
        .filter(|k| !matches!(k.why, flow::Why::Fetched { .. }))
        .map(|k| k.name.clone())
        .collect();
    // Then each file on its own, its document (positions) parsed only while its findings are
    // made: memory stays that of one document.
    let local_workflows: BTreeSet<PathBuf> = audit.workflows.iter().cloned().collect();
    let context = FileContext {
        local_workflows: &local_workflows,
        callers: &callers,
        known: &known,
        exposed: &exposed,
        checks,
    };
    let per_file =
        crate::util::parallel_map(&parsed.iter().zip(jobs).collect::<Vec<_>>(), |(p, jobs)| {
            file_findings(p, jobs.clone(), &context)
        });
    for (findings, signing_jobs, tags) in per_file {
        audit.findings.extend(findings);
        audit.signing_jobs.extend(signing_jobs);
        audit.tag_patterns.extend(tags);
    }
    audit.tag_patterns.sort();
    audit.tag_patterns.dedup();
    secrets_found(&mut audit, &known);
    Ok(audit)
}

/// What every file's findings need from the others.
struct FileContext<'c> {
    local_workflows: &'c BTreeSet<PathBuf>,
    callers: &'c BTreeMap<PathBuf, calls::Caller>,
    known: &'c BTreeSet<String>,
    exposed: &'c BTreeMap<PathBuf, Vec<String>>,
    checks: &'c Checks,
}

/// The findings, signing jobs and release tag patterns of one workflow.
fn file_findings(
    (rel, text, wf, value): &Parsed,
    jobs: Vec<(String, JobSecrets)>,
    cx: &FileContext,
) -> (Vec<Finding>, Vec<SigningJob>, Vec<String>) {
    let (mut findings, mut signing_jobs, mut tags) = (Vec::new(), Vec::new(), Vec::new());
    let src = Source::new(rel.clone(), text);
    let caller = cx.callers.get(rel);
    let tag_trigger = triggers::has_tag_trigger(wf) || caller.is_some_and(|c| c.tag_trigger);
    let job_cx = JobContext {
        known: cx.known,
        tag_trigger,
    };
    let mut file_keys = BTreeSet::new();
    for (id, secrets) in jobs {
        let Some(Job::NormalJob(job)) = wf.jobs.get(&id) else {
            continue;
        };
        let v = JobView::new(&src, (wf, value), (&id, job), secrets);
        if v.holds_key() {
            // A job that runs only on tags is out of reach of the events that carry outside
            // code (none runs on a tag ref).
            let tag_only = matches!(&job.r#if, Some(github_actions_models::common::If::Expr(c)) if triggers::admits_only_tags(c));
            if !tag_only {
                file_keys.extend(v.names());
            }
            signing_jobs.push(v.signing_job());
            tags.extend(triggers::release_tag_patterns(wf));
            if let Some(c) = caller {
                tags.extend(c.tag_patterns.iter().cloned());
            }
        }
        // Only secrets handed to a local action that could not be read: that is all there is
        // to say (no rule about what runs beside a key applies to a job that holds none).
        if !v.holds_key() && v.secrets.every.is_none() {
            findings.extend((cx.checks.unread)(&v));
            continue;
        }
        for check in &cx.checks.job {
            // Every finding about the job's keys carries the one decision of what they are.
            findings.extend(check(&v, &job_cx).into_iter().map(|mut f| {
                f.evidence = v.evidence(&f.subject.secrets);
                f
            }));
        }
    }
    let view = WorkflowView {
        src: &src,
        workflow: wf,
        value,
        known: cx.known,
        exposed: cx.exposed,
        keys: &file_keys,
        via_callers: caller.map(|c| c.risky.as_slice()).unwrap_or_default(),
        local_workflows: cx.local_workflows,
    };
    for check in &cx.checks.workflow {
        findings.extend(check(&view));
    }
    (findings, signing_jobs, tags)
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

/// Where in a file, and why, it could not be read or parsed.
type Unparseable = ((usize, usize), String);

/// The workflow and its document, or where and why it could not be had.
/// What GitHub accepts and the typed model does not, made the model's: an empty
/// `workflow_dispatch: inputs:` or `workflow_call: inputs:/outputs:/secrets:` (GitHub runs the
/// workflow; a key with no value is no key).
pub(crate) fn as_github_reads(value: &mut yaml_serde::Value) {
    let Some(on) = value.get_mut("on").and_then(|o| o.as_mapping_mut()) else {
        return;
    };
    for (event, keys) in [
        ("workflow_dispatch", &["inputs"][..]),
        ("workflow_call", &["inputs", "outputs", "secrets"][..]),
    ] {
        if let Some(body) = on.get_mut(event).and_then(|b| b.as_mapping_mut()) {
            for key in keys {
                if body.get(*key).is_some_and(|v| v.is_null()) {
                    body.remove(*key);
                }
            }
        }
    }
}

fn parse(root: &Path, file: &Path, rel: &Path) -> Result<Parsed, Unparseable> {
    // A pull request controls this file: no link out of the repository, no FIFO, no size,
    // nesting or alias expansion that makes the parsers slow (see `yaml`).
    let text = read_text_inside(root, file, WORKFLOW_CAP)
        .map_err(|e| ((1, 1), format!("cannot read: {e}")))?;
    let located = |e: yaml_serde::Error| {
        let at = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        (at, e.to_string())
    };
    // Parsed once as YAML values (aliases resolved, within a node budget), then read as the
    // typed model; only a model error parses the text again, for its line and column.
    let mut value: yaml_serde::Value = crate::yaml::parse(&text)?;
    as_github_reads(&mut value);
    let workflow: Workflow = match yaml_serde::from_value(value.clone()) {
        Ok(w) => w,
        Err(_) => yaml_serde::from_str(&text).map_err(located)?,
    };
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
    Ok((rel.to_path_buf(), text, workflow, value))
}
