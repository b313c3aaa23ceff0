//! Offline audit of `.github/workflows/*.yml`: where can the signing secret be reached without an
//! enforced boundary? Parsed with github-actions-models; positions come from yamlpath.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use github_actions_models::common::{BasePermission, If, Permission, Permissions, Uses};
use github_actions_models::workflow::event::{OptionalBody, TagFilters};
use github_actions_models::workflow::job::{DeploymentEnvironment, Secrets, Step, UsesStep};
use github_actions_models::workflow::{Job, Workflow};
use regex::Regex;
use yamlpath::{route, Document};

use super::{Finding, Location, Severity, SigningSecrets};

/// A job that uses a signing secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigningJob {
    pub workflow: PathBuf,
    pub job: String,
    pub environment: Option<String>,
    pub secrets: BTreeSet<String>,
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
pub struct WorkflowAudit {
    pub findings: Vec<Finding>,
    pub signing_jobs: Vec<SigningJob>,
    /// `on.push.tags` of the workflows that sign.
    pub tag_patterns: Vec<String>,
    pub workflows: Vec<PathBuf>,
}

/// Permissions a signing job may hold with write access: publishing the release needs
/// `contents`; `id-token` and `attestations` serve provenance.
const NEEDED_WRITES: &[&str] = &["contents", "id-token", "attestations"];

fn secret_refs() -> Regex {
    Regex::new(
        r#"secrets\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\])"#,
    )
    .expect("valid regex")
}

struct Source {
    rel: PathBuf,
    doc: Document,
}

impl Source {
    /// 1-based (line, column) of a byte offset.
    fn point(&self, offset: usize) -> (usize, usize) {
        let text = self.doc.source();
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// Position of a key (`jobs.build`, `on`), else of the document start.
    fn key(&self, route: &yamlpath::Route) -> (usize, usize) {
        self.doc
            .query_key_only(route)
            .map(|f| {
                (
                    f.location.point_span.0 .0 + 1,
                    f.location.point_span.0 .1 + 1,
                )
            })
            .unwrap_or((1, 1))
    }

    fn span(&self, route: &yamlpath::Route) -> Option<(usize, usize)> {
        self.doc
            .query_pretty(route)
            .ok()
            .map(|f| f.location.byte_span)
    }

    fn loc(&self, (line, column): (usize, usize), job: Option<&str>) -> Location {
        Location::Workflow {
            path: self.rel.clone(),
            line,
            column,
            job: job.map(str::to_string),
        }
    }

    /// Signing secrets referenced in a byte range (comments skipped): name → first offset.
    fn signing_refs(
        &self,
        (start, end): (usize, usize),
        secrets: &SigningSecrets,
        re: &Regex,
    ) -> Vec<(String, usize)> {
        let text = &self.doc.source()[start..end];
        let mut out: Vec<(String, usize)> = Vec::new();
        for c in re.captures_iter(text) {
            let m = c.get(0).map_or(0, |m| m.start()) + start;
            if self.doc.offset_inside_comment(m) {
                continue;
            }
            let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            if secrets.is_signing(name) && !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_string(), m));
            }
        }
        out
    }
}

fn ref_gate(cond: &If) -> Option<&str> {
    match cond {
        If::Expr(e)
            if e.contains("github.ref_type")
                || e.contains("github.ref")
                || e.contains("refs/tags/") =>
        {
            Some(e)
        }
        _ => None,
    }
}

fn env_name(env: &DeploymentEnvironment) -> &str {
    match env {
        DeploymentEnvironment::Name(n) => n,
        DeploymentEnvironment::NameURL { name, .. } => name,
    }
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
        let text = match crate::fsutil::read_text_inside(root, &file) {
            Ok(t) => t,
            Err(e) => {
                audit
                    .findings
                    .push(unparseable(&rel, (1, 1), &format!("cannot read: {e}")));
                continue;
            }
        };
        let workflow: Workflow = match yaml_serde::from_str(&text) {
            Ok(w) => w,
            Err(e) => {
                let at = e.location().map_or((1, 1), |l| (l.line(), l.column()));
                audit.findings.push(unparseable(&rel, at, &e.to_string()));
                continue;
            }
        };
        let doc = match Document::new(text) {
            Ok(d) => d,
            Err(e) => {
                audit
                    .findings
                    .push(unparseable(&rel, (1, 1), &e.to_string()));
                continue;
            }
        };
        audit_one(
            &Source { rel, doc },
            &workflow,
            root,
            secrets,
            &re,
            &mut audit,
        );
    }
    audit.tag_patterns.sort();
    audit.tag_patterns.dedup();
    audit
}

fn unparseable(rel: &Path, (line, column): (usize, usize), why: &str) -> Finding {
    Finding::new(
        "workflow-unparseable",
        Severity::High,
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

fn audit_one(
    src: &Source,
    wf: &Workflow,
    root: &Path,
    secrets: &SigningSecrets,
    re: &Regex,
    audit: &mut WorkflowAudit,
) {
    let mut signing_here = false;
    let whole = (0, src.doc.source().len());
    let file_refs = src.signing_refs(whole, secrets, re);
    for (job_id, job) in &wf.jobs {
        let job_route = route!("jobs", job_id.as_str());
        let key = src.key(&job_route);
        let span = src.span(&job_route).unwrap_or(whole);
        let refs = src.signing_refs(span, secrets, re);
        match job {
            Job::ReusableWorkflowCallJob(call) => {
                if matches!(call.secrets, Some(Secrets::Inherit))
                    && (!file_refs.is_empty() || wf_has_tag_trigger(wf))
                {
                    audit.findings.push(Finding::new("signing-secrets-inherit", Severity::High, src.loc(key, Some(job_id)), format!(
                            "job `{job_id}` calls {} with `secrets: inherit`: every secret, the signing key included, reaches the called workflow",
                            call.uses.raw()
                        ), "Pass only the secrets the called workflow needs (`secrets: { NAME: ... }`), and keep the signing key in an environment of the job that signs."));
                }
            }
            Job::NormalJob(job) => {
                if refs.is_empty() {
                    continue;
                }
                signing_here = true;
                let names: BTreeSet<String> = refs.iter().map(|(n, _)| n.clone()).collect();
                let list = names.iter().cloned().collect::<Vec<_>>().join(", ");
                let environment = job.environment.as_ref().map(|e| env_name(e).to_string());
                audit.signing_jobs.push(SigningJob {
                    workflow: src.rel.clone(),
                    job: job_id.clone(),
                    environment: environment.clone(),
                    secrets: names.clone(),
                    line: key.0,
                });
                // Secrets handed to a local composite action: name the action and its inputs.
                let mut via = Vec::new();
                for (i, step) in job.steps.iter().enumerate() {
                    if let Step::Uses(UsesStep {
                        uses: Uses::Local(local),
                        ..
                    }) = step
                    {
                        let step_route = route!("jobs", job_id.as_str(), "steps", i);
                        if let Some(span) = src.span(&step_route) {
                            if !src.signing_refs(span, secrets, re).is_empty() {
                                let path = local.raw().trim_start_matches("./");
                                let found = ["action.yml", "action.yaml"]
                                    .iter()
                                    .any(|f| root.join(path).join(f).is_file());
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
                        }
                    }
                }
                let (first_name, first_at) = &refs[0];
                let first = src.point(*first_at);
                if environment.is_none() {
                    let through = if via.is_empty() {
                        String::new()
                    } else {
                        format!(", passed to {}", via.join(", "))
                    };
                    audit.findings.push(Finding::new("signing-secret-outside-environment", Severity::High, src.loc(key, Some(job_id)), format!(
                            "job `{job_id}` uses {list} (first at line {}{through}) and has no `environment:`: any run of this job can read the key",
                            first.0
                        ), format!(
                            "Add `environment: release` to job `{job_id}`, store {first_name} only in that environment (not as a repository secret), and require reviewers on it."
                        )));
                    if let Some(expr) = job.r#if.as_ref().and_then(ref_gate) {
                        let at = src.key(&route!("jobs", job_id.as_str(), "if"));
                        audit.findings.push(Finding::new("tag-gate-is-not-a-boundary", Severity::Info, src.loc(at, Some(job_id)), format!(
                                "job `{job_id}` is gated by `if: {expr}`; a tag push runs the workflow file of the tagged commit, so whoever can push a tag can rewrite this gate"
                            ), "Rely on an environment with required reviewers and a tag ruleset instead of an `if:` on the ref."));
                    }
                }
                let perms = match &job.permissions {
                    Permissions::Base(BasePermission::Default) => &wf.permissions,
                    p => p,
                };
                let perm_at =
                    if matches!(job.permissions, Permissions::Base(BasePermission::Default)) {
                        src.key(&route!("permissions"))
                    } else {
                        src.key(&route!("jobs", job_id.as_str(), "permissions"))
                    };
                match perms {
                    Permissions::Base(BasePermission::WriteAll) => audit.findings.push(Finding::new("signing-job-write-permissions", Severity::Medium, src.loc(perm_at, Some(job_id)), format!("job `{job_id}` holds the signing key with `permissions: write-all`"), "Give the signing job `contents: write` at most (to publish), and nothing else.")),
                    Permissions::Explicit(map) => {
                        let extra: Vec<&str> = map
                            .iter()
                            .filter(|(k, v)| **v == Permission::Write && !NEEDED_WRITES.contains(&k.as_str()))
                            .map(|(k, _)| k.as_str())
                            .collect();
                        if !extra.is_empty() {
                            audit.findings.push(Finding::new("signing-job-write-permissions", Severity::Medium, src.loc(perm_at, Some(job_id)), format!("job `{job_id}` holds the signing key with write access to {}", extra.join(", ")), "Drop the write permissions the signing job does not need; do other writes in a job without the key."));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    if signing_here || !file_refs.is_empty() {
        let ev = &wf.on.events;
        let risky: Vec<&str> = [
            ("pull_request_target", ev.pull_request_target.is_present()),
            ("workflow_run", ev.workflow_run.is_present()),
            ("issue_comment", ev.issue_comment.is_present()),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| *n)
        .collect();
        if !risky.is_empty() {
            audit.findings.push(Finding::new("signing-secret-dangerous-trigger", Severity::High, src.loc(src.key(&route!("on")), None), format!(
                    "this workflow references {} and runs on {}: code or input from outside the repository can reach the signing key",
                    file_refs.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "),
                    risky.join(", ")
                ), "Sign only in a workflow triggered by a tag push (or a release), never from pull_request_target, workflow_run or issue_comment."));
        }
    }
    if signing_here {
        if let OptionalBody::Body(push) = &wf.on.events.push {
            match &push.tag_filters {
                // `!pattern` only narrows the ones before it: the positive patterns say which
                // tags can run the signing job.
                Some(TagFilters::Tags(tags)) => audit
                    .tag_patterns
                    .extend(tags.iter().filter(|t| !t.starts_with('!')).cloned()),
                // Every tag not ignored runs it: any tag is a release tag.
                Some(TagFilters::TagsIgnore(_)) => audit.tag_patterns.push("**".into()),
                None => {}
            }
        }
    }
}

fn wf_has_tag_trigger(wf: &Workflow) -> bool {
    matches!(&wf.on.events.push, OptionalBody::Body(p) if matches!(p.tag_filters, Some(TagFilters::Tags(_))))
}
