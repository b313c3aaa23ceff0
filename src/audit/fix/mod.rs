//! `warden audit --fix`: the remedy of `signing-secret-outside-environment` as an edit of the
//! workflow files. The rule: a fix never changes what a workflow builds, signs or publishes, on
//! any trigger; where it cannot keep that, it is a plan in words, not a patch. Remedies
//! (`FixMode`): the whole job behind the environment (one line), a split written only when
//! every moved step finds what it used (`split`, `needs`, `shell`), or a plan. Which one a job
//! gets by default follows from its runs (`runs`). Edits are whole lines of the original text
//! (`text`): what they do not name stays byte for byte.

mod needs;
mod runs;
mod shell;
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
use crate::audit::workflows::{audit_workflows, SigningJob};
use crate::error::{Error, Result};
use runs::JobRuns;
use split::JobFix;

/// The remedy `--fix` writes for a job (`--fix-mode`); without one, the whole job where it runs
/// only on trusted triggers, a plan where it also runs on pull requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixMode {
    /// `environment:` on the job: nothing it does changes.
    WholeJob,
    /// The steps with the key in a new job behind the environment, where provably safe.
    Split,
    /// Words only: what to change, and what each remedy costs.
    Plan,
}

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
    /// Of `secrets`, the keys a job fetches from a store outside GitHub (a cloud secret manager)
    /// with its own OIDC token, as the workflow names them: moved by narrowing the store's
    /// trust, not by `gh secret set`.
    pub fetched: BTreeSet<String>,
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
    mode: Option<FixMode>,
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
    let mut fetched = BTreeSet::new();
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
            fetched.extend(
                f.evidence
                    .iter()
                    .filter(|e| e.kind == "fetched")
                    .map(|e| e.secret.clone()),
            );
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
        fix_file(root, path, jobs, mode, &mut one);
        one
    });
    for one in per_file {
        out.files.extend(one.files);
        out.not_fixed.extend(one.not_fixed);
        out.secrets.extend(one.secrets);
        out.fixed_jobs.extend(one.fixed_jobs);
    }
    out.fetched = fetched
        .into_iter()
        .filter(|k| out.secrets.contains(&k.to_ascii_uppercase()))
        .collect();
    mark_still_read(&mut out, &audit.signing_jobs, environment);
    Ok(out)
}

/// A key moves to the environment; the repository secret goes only when no job outside it is
/// left reading it.
fn mark_still_read(out: &mut WorkflowFixes, signing_jobs: &[SigningJob], environment: &str) {
    for job in signing_jobs {
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
}

/// The fixes of one file's jobs; a file warden cannot read again is named and left.
fn fix_file(
    root: &Path,
    rel: &Path,
    jobs: &[(String, usize, BTreeSet<String>)],
    mode: Option<FixMode>,
    out: &mut WorkflowFixes,
) {
    let refuse = |out: &mut WorkflowFixes, job: &str, line: usize, reason: String| {
        refuse_job(out, rel, job, line, reason)
    };
    // Gitea and Forgejo read `environment:` and protect nothing with it: no patch pretends.
    if rel.starts_with(".gitea") || rel.starts_with(".forgejo") {
        for (job, line, _) in jobs {
            refuse(out, job, *line, "plan: a Gitea/Forgejo workflow, where `environment:` protects nothing (no reviewers, no deployment policy): sign where a reviewer or a protected runner stands between a run and the key (a GitHub workflow behind an environment, or a runner only release tags reach)".into());
        }
        return;
    }
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
        rel,
        value: &value,
        doc: &doc,
        lines: &lines,
    };
    let done = rewrite_jobs(&file, jobs, mode, out);
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
    mode: Option<FixMode>,
    out: &mut WorkflowFixes,
) -> Rewritten {
    let (rel, value, doc, lines) = (file.rel, file.value, file.doc, file.lines);
    let refuse = |out: &mut WorkflowFixes, job: &str, line: usize, reason: String| {
        refuse_job(out, rel, job, line, reason)
    };
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
            environment: &out.environment,
        };
        match rewrite(&fix, doc, lines, mode) {
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

/// The rewrite, if it reads as a workflow again.
fn checked(new: String) -> Option<String> {
    // The rewrite must read as a workflow again, or nothing is written.
    crate::yaml::parse(&new)
        .ok()
        .and_then(|mut v| {
            crate::audit::workflows::as_github_reads(&mut v);
            yaml_serde::from_value::<github_actions_models::workflow::Workflow>(v).ok()
        })
        .map(|_| new)
}

/// The rewrite of one job, or why there is none (a plan, in words).
fn rewrite(
    fix: &JobFix,
    doc: &yamlpath::Document,
    lines: &text::Lines,
    mode: Option<FixMode>,
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
    let runs = JobRuns::of(fix.workflow, fix.job);
    let env = fix.environment;
    let chosen = mode.unwrap_or(if runs.pull_requests.is_empty() {
        FixMode::WholeJob
    } else {
        FixMode::Plan
    });
    let keys: Vec<String> = fix
        .job
        .as_mapping()
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let whole_job = |why: String| -> std::result::Result<split::Rewrite, String> {
        let job = text::job_lines(doc, lines, fix.id, &keys, 0)?;
        let mut r = split::add_environment(fix, &job);
        r.words[0] = format!(
            "job `{}`: whole job behind `{env}` (added `environment: {env}`): {why}",
            fix.id
        );
        for cost in runs.whole_job_costs(env) {
            r.words.push(format!("job `{}`: {cost}", fix.id));
        }
        if fix
            .workflow
            .get("env")
            .is_some_and(|e| steps::reads_secret(e, &fix.keys))
        {
            r.words.push(format!("job `{}`: the workflow's `env:` holds the key, so every job of the workflow reads it: once the repository secret is deleted, only jobs in `{env}` get its value", fix.id));
        }
        Ok(r)
    };
    match chosen {
        FixMode::Plan => Err(plan_words(fix, &runs)),
        FixMode::WholeJob if mode.is_none() => whole_job(if runs.only_releases() {
            "every run of it is a release".into()
        } else {
            "it runs on no pull request; what that costs:".into()
        }),
        FixMode::WholeJob => whole_job("--fix-mode whole-job".into()),
        FixMode::Split if runs.only_releases() || split::exists_to_sign(fix.workflow, fix.job) => {
            whole_job("every run of it is a release: nothing to split off".into())
        }
        FixMode::Split => {
            let step_count = fix
                .job
                .get("steps")
                .and_then(Value::as_sequence)
                .map_or(0, Vec::len);
            let job = text::job_lines(doc, lines, fix.id, &keys, step_count)?;
            split::split(fix, doc, lines, &job).map_err(|why| {
                format!(
                    "plan: not split, as no split is provably safe: {why}. The whole job behind `{env}` changes nothing it does (`--fix-mode whole-job`){}",
                    match runs.whole_job_costs(env).as_slice() {
                        [] => String::new(),
                        costs => format!("; what that costs: {}", costs.join("; ")),
                    }
                )
            })
        }
    }
}

/// The plan for a job that runs on pull requests: no patch, what each remedy costs.
fn plan_words(fix: &JobFix, runs: &JobRuns) -> String {
    let env = fix.environment;
    format!(
        "plan: the job runs on {}, so no patch is written by default. Either (a) move the steps that sign into a job that runs only on tags, behind `{env}` (`--fix-mode split` writes that where warden can prove every moved step keeps what it used), or (b) put the whole job behind `{env}` (`--fix-mode whole-job`): {}",
        runs.pull_requests.join(", "),
        runs.whole_job_costs(env).join("; ")
    )
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
    /// A unified diff of every fixed file, as `git diff` writes it: `git apply` takes it. A path
    /// git would quote (a control character, a quote, a backslash, a byte outside ASCII) is
    /// quoted its way; one with a space ends its `---`/`+++` lines with a tab, as git does.
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            let path = f.path.to_string_lossy();
            let (a, b) = (git_path("a/", &path), git_path("b/", &path));
            let tab = if path.contains(' ') { "\t" } else { "" };
            let diff = similar::TextDiff::from_lines(&f.old, &f.new);
            out.push_str(&format!("diff --git {a} {b}\n"));
            out.push_str(&format!("--- {a}{tab}\n+++ {b}{tab}\n"));
            for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
                out.push_str(&hunk.to_string());
            }
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

/// `prefix` + `path` as git writes it in a diff header: C-quoted when it holds a byte git
/// quotes (`core.quotePath`, git's default).
fn git_path(prefix: &str, path: &str) -> String {
    let plain = format!("{prefix}{path}");
    let quote = plain
        .bytes()
        .any(|b| b < 0x20 || b == 0x7f || b >= 0x80 || b == b'"' || b == b'\\');
    if !quote {
        return plain;
    }
    let mut out = String::from("\"");
    for b in plain.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b if !(0x20..0x7f).contains(&b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(b as char),
        }
    }
    out.push('"');
    out
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
