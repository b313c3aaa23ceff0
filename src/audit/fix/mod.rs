//! `warden audit --fix`: the remedy of `signing-secret-outside-environment` as an edit of the
//! workflow files. A job that exists to sign gets `environment:`; a job that builds and signs
//! is split (`split`), its key's steps (`steps`) moved to a job behind the environment. Edits
//! are whole lines of the original text (`text`): what they do not name stays byte for byte.
//! Where no rewrite is safe, the job is left as it is, with the reason.

mod split;
mod steps;
mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use yaml_serde::Value;

use crate::audit::config::AuditConfig;
use crate::audit::findings::Location;
use crate::audit::rules::{self, signing_secret_outside_environment};
use crate::audit::secrets::SigningSecrets;
use crate::audit::workflows::audit_workflows;
use crate::audit::workflows::signing_job::JobView;
use crate::error::{Error, Result};
use split::JobFix;

/// A workflow file `--fix` changes: its text as read and as fixed, and what changed, in words.
#[derive(Clone, Debug)]
pub struct FixedFile {
    /// Relative to the repository root.
    pub path: PathBuf,
    pub(crate) old: String,
    pub(crate) new: String,
    pub changes: Vec<String>,
}

/// A job `--fix` leaves as it is, and why.
#[derive(Clone, Debug)]
pub struct NotFixed {
    pub path: PathBuf,
    pub job: String,
    pub line: usize,
    pub reason: String,
}

/// What `--fix` does to a checkout.
#[derive(Clone, Debug, Default)]
pub struct WorkflowFixes {
    pub environment: String,
    pub files: Vec<FixedFile>,
    pub not_fixed: Vec<NotFixed>,
    /// The keys that now belong to the environment (to be stored there, not in the repository).
    pub secrets: BTreeSet<String>,
    /// Of those, the ones a job the fix left (or one in another environment) still reads: the
    /// repository secret stays until that job is fixed too. Key → `path (job id)`.
    pub still_read: BTreeMap<String, Vec<String>>,
    /// The jobs fixed, by file.
    fixed_jobs: BTreeSet<(PathBuf, String)>,
}

/// An environment name `--fix` writes unquoted into YAML (letters, digits, `-`, `_`, `.`).
pub fn check_environment_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with(['-', '.']);
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "--fix-environment {}: an environment name of letters, digits, `-`, `_` and `.` (it is written into the workflows)",
            crate::markup::text_value(name)
        )))
    }
}

/// The fixes of every job of `root`'s workflows that holds a key outside an environment.
pub fn fix_workflows(
    root: &Path,
    secrets: &SigningSecrets,
    environment: &str,
) -> Result<WorkflowFixes> {
    check_environment_name(environment)?;
    let config = AuditConfig::load(root)?;
    let mut secrets = secrets.clone();
    secrets.extra.extend(config.secrets.iter().cloned());
    secrets.only.extend(config.only_secrets.iter().cloned());
    secrets.actions.extend(config.actions.iter().cloned());
    let audit = audit_workflows(root, &secrets, &rules::workflow_checks())?;
    let (y, m, d) = crate::util::today();
    let (active, _) = config.apply(audit.findings, &format!("{y:04}-{m:02}-{d:02}"));
    let mut out = WorkflowFixes {
        environment: environment.to_string(),
        ..WorkflowFixes::default()
    };
    // A workflow the parser refuses is left as it is, and named.
    for f in active
        .iter()
        .filter(|f| f.rule == rules::workflow_unparseable::RULE)
    {
        if let Location::Workflow { path, line, .. } = &f.location {
            out.not_fixed.push(NotFixed {
                path: path.clone(),
                job: String::new(),
                line: *line,
                reason: "the workflow does not parse: not changed".into(),
            });
        }
    }
    let mut by_file: BTreeMap<PathBuf, Vec<(String, usize, BTreeSet<String>)>> = BTreeMap::new();
    for f in active
        .iter()
        .filter(|f| f.rule == signing_secret_outside_environment::RULE)
    {
        if let Location::Workflow {
            path,
            line,
            job: Some(job),
            ..
        } = &f.location
        {
            let keys = f
                .subject
                .secrets
                .iter()
                .map(|s| s.to_ascii_uppercase())
                .collect();
            by_file
                .entry(path.clone())
                .or_default()
                .push((job.clone(), *line, keys));
        }
    }
    // Each file on its own, both cores.
    let files: Vec<_> = by_file.into_iter().collect();
    let per_file = crate::util::parallel_map(&files, |(path, jobs)| {
        let mut one = WorkflowFixes {
            environment: environment.to_string(),
            ..WorkflowFixes::default()
        };
        fix_file(root, path, jobs, &secrets, &mut one);
        one
    });
    for one in per_file {
        out.files.extend(one.files);
        out.not_fixed.extend(one.not_fixed);
        out.secrets.extend(one.secrets);
        out.fixed_jobs.extend(one.fixed_jobs);
    }
    // A key moves to the environment; the repository secret goes only when no job outside it
    // is left reading it.
    for job in &audit.signing_jobs {
        let fixed = out
            .fixed_jobs
            .contains(&(job.workflow.clone(), job.job.clone()));
        if fixed || job.environment.as_deref() == Some(environment) {
            continue;
        }
        for key in &job.secrets {
            let upper = key.to_ascii_uppercase();
            if out.secrets.contains(&upper) {
                out.still_read.entry(upper).or_default().push(format!(
                    "{} (job {})",
                    job.workflow.display(),
                    job.job
                ));
            }
        }
    }
    Ok(out)
}

/// The fixes of one file's jobs; a file warden cannot read again is named and left.
fn fix_file(
    root: &Path,
    rel: &Path,
    jobs: &[(String, usize, BTreeSet<String>)],
    secrets: &SigningSecrets,
    out: &mut WorkflowFixes,
) {
    let refuse = |out: &mut WorkflowFixes, job: &str, line: usize, reason: String| {
        refuse_job(out, rel, job, line, reason)
    };
    // A link is not replaced by a file: the workflow it points to is edited there, by hand.
    if std::fs::symlink_metadata(root.join(rel)).is_ok_and(|m| m.file_type().is_symlink()) {
        let why = "a symbolic link: not changed (edit the file it points to)";
        return refuse(out, "", 1, why.into());
    }
    let text = match crate::files::guarded::read_text_inside(root, &root.join(rel), 1 << 20) {
        Ok(t) => t,
        Err(e) => return refuse(out, "", 1, format!("cannot read: {e}")),
    };
    let (value, doc) = match (
        crate::yaml::parse(&text),
        yamlpath::Document::new(text.as_str()),
    ) {
        (Ok(v), Ok(d)) => (v, d),
        _ => return refuse(out, "", 1, "the YAML cannot be read again".into()),
    };
    if doc.has_anchors() {
        for (job, line, _) in jobs {
            refuse(out, job, *line, "the workflow uses YAML anchors (`&`, `*`): a moved line could lose what it refers to".into());
        }
        return;
    }
    let lines = text::Lines::new(&text);
    let file = FileToFix {
        root,
        rel,
        value: &value,
        doc: &doc,
        lines: &lines,
    };
    let done = rewrite_jobs(&file, jobs, secrets, out);
    let (edits, changes, keys_fixed, jobs_fixed) = (done.edits, done.changes, done.keys, done.jobs);
    if !edits.is_empty() {
        let line = jobs.first().map_or(1, |j| j.1);
        match checked(edits.apply(&lines)) {
            Some(new) => {
                out.secrets.extend(keys_fixed);
                out.fixed_jobs
                    .extend(jobs_fixed.into_iter().map(|j| (rel.to_path_buf(), j)));
                out.files.push(FixedFile {
                    path: rel.to_path_buf(),
                    old: text,
                    new,
                    changes,
                });
            }
            None => refuse(
                out,
                "",
                line,
                "warden's rewrite does not parse as a workflow: nothing written (please report it)"
                    .into(),
            ),
        }
    }
}

/// A job (or, with no job, a file) left as it is, and why.
fn refuse_job(out: &mut WorkflowFixes, rel: &Path, job: &str, line: usize, reason: String) {
    out.not_fixed.push(NotFixed {
        path: rel.to_path_buf(),
        job: job.to_string(),
        line,
        reason,
    })
}

/// One workflow file as read, for its jobs' rewrites.
struct FileToFix<'a> {
    root: &'a Path,
    rel: &'a Path,
    value: &'a Value,
    doc: &'a yamlpath::Document,
    lines: &'a text::Lines<'a>,
}

/// What the rewrites of one file's jobs came to.
struct Rewritten {
    edits: text::Edits,
    changes: Vec<String>,
    keys: BTreeSet<String>,
    jobs: Vec<String>,
}

/// Each job's rewrite, the edits of all of them (each dependent's `needs:` written once), or
/// the reason a job is left.
fn rewrite_jobs(
    file: &FileToFix<'_>,
    jobs: &[(String, usize, BTreeSet<String>)],
    secrets: &SigningSecrets,
    out: &mut WorkflowFixes,
) -> Rewritten {
    let (root, rel, value, doc, lines) = (file.root, file.rel, file.value, file.doc, file.lines);
    let refuse = |out: &mut WorkflowFixes, job: &str, line: usize, reason: String| {
        refuse_job(out, rel, job, line, reason)
    };
    let on_release = runs_on_release(value);
    let mut edits = text::Edits::default();
    let mut changes = Vec::new();
    let mut keys_fixed = BTreeSet::new();
    let mut jobs_fixed = Vec::new();
    let mut needs_lines: Vec<split::NeedsLine> = Vec::new();
    for (id, line, keys) in jobs {
        let Some(job) = value.get("jobs").and_then(|j| j.get(id.as_str())) else {
            continue;
        };
        let fix = JobFix {
            id,
            job,
            workflow: value,
            keys: keys.clone(),
            // The audit's signing step, only for a split (it reads the job's flow again).
            signs: if split::exists_to_sign(value, job) {
                None
            } else {
                JobView::secrets_of(value, id, root, secrets)
                    .signs
                    .map(|(_, i)| i)
            },
            environment: &out.environment,
            on_release,
        };
        match rewrite(&fix, doc, lines) {
            Ok(r) if edits.overlaps(&r.edits) => refuse(
                out,
                id,
                *line,
                "its rewrite changes a line another job's fix in this file changes too (a `needs:` both name): run --fix again once the first is in".into(),
            ),
            Ok(r) => {
                edits.extend(r.edits);
                needs_lines.extend(r.needs);
                changes.extend(r.words);
                keys_fixed.extend(keys.iter().cloned());
                jobs_fixed.push(id.clone());
            }
            Err(reason) => refuse(out, id, *line, reason),
        }
    }
    // Each dependent's `needs:` once, with every signing job the splits add to it.
    let mut by_line: BTreeMap<usize, Vec<&split::NeedsLine>> = BTreeMap::new();
    for n in &needs_lines {
        by_line.entry(n.line).or_default().push(n);
    }
    for (line, all) in by_line {
        edits.replace(line, line + 1, all[0].written(&all));
    }
    Rewritten {
        edits,
        changes,
        keys: keys_fixed,
        jobs: jobs_fixed,
    }
}

/// Whether the workflow runs on `release` events.
fn runs_on_release(workflow: &Value) -> bool {
    events(workflow).contains(&"release")
}

/// The rewrite, if it reads as a workflow again.
fn checked(new: String) -> Option<String> {
    // The rewrite must read as a workflow again, or nothing is written.
    crate::yaml::parse(&new)
        .ok()
        .and_then(|v| yaml_serde::from_value::<github_actions_models::workflow::Workflow>(v).ok())
        .map(|_| new)
}

/// The rewrite of one job, or why there is none.
fn rewrite(
    fix: &JobFix,
    doc: &yamlpath::Document,
    lines: &text::Lines,
) -> std::result::Result<split::Rewrite, String> {
    // warden writes job ids into new keys and `needs:`: only ids GitHub accepts.
    let needs: Vec<String> = steps::all_strings(fix.job.get("needs").unwrap_or(&Value::Null));
    if let Some(bad) = std::iter::once(fix.id)
        .chain(needs.iter().map(String::as_str))
        .find(|id| !job_id(id))
    {
        return Err(format!(
            "`{bad}` is not a job id GitHub accepts (a letter or `_`, then letters, digits, `-`, `_`)"
        ));
    }
    if events(fix.workflow).contains(&"workflow_call") {
        return Err("a reusable workflow (`on: workflow_call`): what it runs on and what it receives are its callers' to say; add `environment:` to this job (an environment's secret takes the place of the one a caller passes), store the key there, and check each caller".into());
    }
    if fix
        .workflow
        .get("env")
        .is_some_and(|env| steps::reads_secret(env, &fix.keys))
    {
        return Err("the workflow's `env:` holds the key, so every job of the workflow does: move it into the step that signs".into());
    }
    let step_values = fix
        .job
        .get("steps")
        .and_then(Value::as_sequence)
        .cloned()
        .unwrap_or_default();
    let keys: Vec<String> = fix
        .job
        .as_mapping()
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    // Adding `environment:` needs the job's keys, not its steps' lines.
    if split::exists_to_sign(fix.workflow, fix.job) {
        let job = text::job_lines(doc, lines, fix.id, &keys, 0)?;
        return Ok(split::add_environment(fix, &job));
    }
    let job = text::job_lines(doc, lines, fix.id, &keys, step_values.len())?;
    let runs_on = steps::all_strings(fix.job.get("runs-on").unwrap_or(&Value::Null)).join(" ");
    for (i, step) in step_values.iter().enumerate() {
        let uses = step.get("uses").and_then(Value::as_str).unwrap_or_default();
        if uses.starts_with("./") && steps::reads_secret(step, &fix.keys) {
            return Err(format!("step {} hands the key to the local action `{uses}`: what it does with it is not this workflow's to split", i + 1));
        }
    }
    // `runs-on` from the matrix: the matrix's values say where it runs.
    let matrix_runner = runs_on.contains("matrix.")
        && steps::all_strings(fix.job.get("strategy").unwrap_or(&Value::Null))
            .iter()
            .any(|s| s.contains("self-hosted"));
    let group = fix
        .job
        .get("runs-on")
        .is_some_and(|r| r.get("group").is_some());
    if runs_on.contains("self-hosted") || matrix_runner || group {
        return Err("a self-hosted runner (or a runner group): the signing job would run where pull-request builds run, and what they leave behind; sign on a GitHub-hosted runner".into());
    }
    let job_if = fix.job.get("if").and_then(Value::as_str);
    if job_if.is_some_and(crate::audit::workflows::triggers::never_on_tags) {
        return Err("the job's `if:` is false on every tag: it signs builds that are not releases, so a signing job admitted only on tags would never run; give this job `environment:` with a deployment branch policy for the branch it signs, so that pull requests cannot reach the key".into());
    }
    let tags = tag_runs(fix.workflow);
    if tags == TagRuns::Never {
        return Err(format!(
            "the workflow never runs on a tag (on: {}): a signing job admitted only on tags would never run, and these builds would stop being signed; sign releases in a workflow that runs on tags, or give this job `environment:` with a deployment branch policy for the default branch so that pull requests cannot reach the key",
            events(fix.workflow).join(", ")
        ));
    }
    let mut rewrite = split::split(fix, doc, lines, &job)?;
    if tags == TagRuns::WhenDispatchedOnOne {
        rewrite.words.push(format!(
            "the workflow reaches a tag only when dispatched on one (`workflow_dispatch` with a tag as its ref): the signing job runs then, and no longer on the branch runs `{}` signed before",
            fix.id
        ));
    }
    Ok(rewrite)
}

/// Whether a workflow runs on tag refs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TagRuns {
    /// A push of a tag, a release, a tag's creation.
    Yes,
    /// Only a dispatch whose ref is a tag.
    WhenDispatchedOnOne,
    Never,
}

/// The names of the events a workflow runs on.
fn events(workflow: &Value) -> Vec<&str> {
    split::events(workflow)
        .unwrap_or_default()
        .into_iter()
        .map(|(e, _)| e)
        .collect()
}

/// Whether the workflow runs on tag refs: a push with no ref filter runs on tags, one that
/// filters only branches does not (GitHub's rule: a ref kind with no filter of its own is left out).
fn tag_runs(workflow: &Value) -> TagRuns {
    let mut dispatch = false;
    for (event, body) in split::events(workflow).unwrap_or_default() {
        match event {
            "release" | "create" => return TagRuns::Yes,
            "push" => {
                let filtered = |key: &str| body.is_some_and(|b| b.get(key).is_some());
                let tags = filtered("tags") || filtered("tags-ignore");
                let branches = filtered("branches") || filtered("branches-ignore");
                if tags || !branches {
                    return TagRuns::Yes;
                }
            }
            "workflow_dispatch" => dispatch = true,
            _ => {}
        }
    }
    if dispatch {
        TagRuns::WhenDispatchedOnOne
    } else {
        TagRuns::Never
    }
}

/// A job id as GitHub accepts it.
fn job_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl WorkflowFixes {
    /// A unified diff of every fixed file.
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            let path = f.path.display().to_string();
            let diff = similar::TextDiff::from_lines(&f.old, &f.new);
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{path}"), &format!("b/{path}"))
                    .to_string(),
            );
        }
        out
    }

    /// Writes every fixed file under `root` (a temporary file, then a rename); a file that
    /// changed on disk since it was read is left, named in the result.
    pub fn write(&self, root: &Path) -> Vec<(PathBuf, std::result::Result<(), String>)> {
        self.files
            .iter()
            .map(|f| {
                let target = root.join(&f.path);
                let result = match std::fs::read_to_string(&target) {
                    Ok(now) if now == f.old => {
                        let mode = file_mode(&target);
                        crate::files::atomic::write_atomic(&target, f.new.as_bytes(), mode, true)
                            .map_err(|e| e.to_string())
                    }
                    Ok(_) => Err("it changed on disk since warden read it: not overwritten (run --fix again)".into()),
                    Err(e) => Err(format!("cannot read it again: {e}")),
                };
                (f.path.clone(), result)
            })
            .collect()
    }
}

#[cfg(unix)]
fn file_mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn file_mode(_: &Path) -> u32 {
    0o644
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixes(old: &str, new: &str) -> WorkflowFixes {
        WorkflowFixes {
            environment: "release".into(),
            files: vec![FixedFile {
                path: PathBuf::from("w.yml"),
                old: old.into(),
                new: new.into(),
                changes: Vec::new(),
            }],
            ..WorkflowFixes::default()
        }
    }

    #[test]
    fn a_file_that_changed_since_it_was_read_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.yml");
        std::fs::write(&file, "edited meanwhile\n").unwrap();
        let written = fixes("as read\n", "fixed\n").write(dir.path());
        assert!(written[0]
            .1
            .as_ref()
            .unwrap_err()
            .contains("changed on disk"));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "edited meanwhile\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fixed_file_is_replaced_whole_with_its_mode_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.yml");
        std::fs::write(&file, "as read\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let written = fixes("as read\n", "fixed\n").write(dir.path());
        assert!(written[0].1.is_ok());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "fixed\n");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // No temporary file left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_environment_name_is_one_warden_can_write_unquoted() {
        for ok in ["release", "prod-signing", "v1.release_env"] {
            assert!(check_environment_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "two words",
            "x: y",
            "-x",
            "a\nb",
            "${{ x }}",
            "rel#ease",
        ] {
            assert!(check_environment_name(bad).is_err(), "{bad:?}");
        }
    }
}
