//! The two rewrites of a job that holds a signing key outside an environment: add
//! `environment:` to a job that exists to sign, or split a job that also builds on pull
//! requests, branches or schedules into the build and a `<job>-sign` job behind the environment.

use std::collections::BTreeSet;

use yaml_serde::Value;
use yamlpath::{route, Document};

use super::steps::{ids_of, moved_steps, permissions, reads_secret, reads_steps, tag_only_if};
use super::text::{indent, Edits, JobLines, Lines};

/// actions/upload-artifact v4.6.2 and actions/download-artifact v8.0.1, pinned by commit (v8
/// refuses an archive whose digest is not the one recorded at upload: `digest-mismatch: error`).
const UPLOAD: &str = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2";
const DOWNLOAD: &str =
    "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1";

/// What the rewrite of one job needs to know.
pub(crate) struct JobFix<'a> {
    pub(crate) id: &'a str,
    pub(crate) job: &'a Value,
    pub(crate) workflow: &'a Value,
    /// The keys the job holds (upper-case names).
    pub(crate) keys: BTreeSet<String>,
    /// The step that signs, as the audit found it.
    pub(crate) signs: Option<usize>,
    pub(crate) environment: &'a str,
    /// The workflow runs on releases too.
    pub(crate) on_release: bool,
}

/// One job's rewrite: the edits and what they do, in words.
pub(crate) struct Rewrite {
    pub(crate) edits: Edits,
    pub(crate) words: Vec<String>,
    /// Jobs that need another job's new signing job: one line each, written once per file
    /// (two splits can add to one `needs:`).
    pub(crate) needs: Vec<NeedsLine>,
}

/// A dependent's one-line `needs:`, and the signing job to add to it.
pub(crate) struct NeedsLine {
    pub(crate) line: usize,
    /// The text before `needs:`, the ids it lists, and a trailing comment.
    pub(crate) prefix: String,
    pub(crate) ids: Vec<String>,
    pub(crate) comment: String,
    pub(crate) add: String,
}

impl NeedsLine {
    /// The line with every addition of `all` (the lines' additions, in order, once each).
    pub(crate) fn written(&self, all: &[&NeedsLine]) -> String {
        let mut ids = self.ids.clone();
        for n in all {
            if !ids.contains(&n.add) {
                ids.push(n.add.clone());
            }
        }
        format!(
            "{}needs: [{}]{}\n",
            self.prefix,
            ids.join(", "),
            self.comment
        )
    }
}

/// `environment: NAME` added to a job that exists to sign (after `runs-on:`).
pub(crate) fn add_environment(fix: &JobFix, job: &JobLines) -> Rewrite {
    let at = job
        .entry("runs-on")
        .map(|(_, b)| b)
        .or_else(|| job.entry("steps").map(|(a, _)| a))
        .unwrap_or(job.key_line + 1);
    let line = format!(
        "{}environment: {}\n",
        " ".repeat(job.body_indent),
        fix.environment
    );
    let mut edits = Edits::default();
    match job.entry("environment") {
        // `environment: ""` (or one that comes out empty) is no environment: replaced.
        Some((a, b)) => edits.replace(a, b, line),
        None => edits.insert(at, line),
    }
    Rewrite {
        edits,
        words: vec![format!(
            "job `{}`: added `environment: {}`",
            fix.id, fix.environment
        )],
        needs: Vec::new(),
    }
}

/// The job's environment variables that hold a key, with their lines; refused when the job's
/// `env:` cannot be edited line by line.
fn key_vars(
    fix: &JobFix,
    doc: &Document,
    lines: &Lines,
) -> Result<Vec<(String, usize, usize)>, String> {
    let Some(Value::Mapping(env)) = fix.job.get("env") else {
        return Ok(Vec::new());
    };
    if let Some(Ok(key)) = Some(doc.query_key_only(&route!("jobs", fix.id, "env"))) {
        if super::text::flow_value(lines.line(lines.line_of(key.location.byte_span.0))) {
            return Err("the job's `env:` is written in flow style (`{ … }`)".into());
        }
    }
    let mut out = Vec::new();
    for (k, v) in env {
        let Some(name) = k.as_str() else { continue };
        if !reads_secret(v, &fix.keys) {
            continue;
        }
        let r = route!("jobs", fix.id, "env", name);
        let (Ok(key), Ok(value)) = (doc.query_key_only(&r), doc.query_pretty(&r)) else {
            return Err(format!(
                "the job's `env.{name}` cannot be found in the text"
            ));
        };
        let (a, b) = (
            lines.line_of(key.location.byte_span.0),
            lines.line_of(value.location.byte_span.1.max(1) - 1) + 1,
        );
        out.push((name.to_string(), a, b));
    }
    Ok(out)
}

/// A job id not taken in the workflow.
fn free_id(workflow: &Value, base: &str) -> String {
    let taken = |id: &str| workflow.get("jobs").and_then(|j| j.get(id)).is_some();
    let mut id = base.to_string();
    let mut n = 2;
    while taken(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

/// Checks that nothing outside the steps and `env:` reads the key, and that no job output
/// reads a step that moves.
fn refuse_unsafe(fix: &JobFix, steps: &[Value], moved: &[usize]) -> Result<(), String> {
    if let Some(Value::Mapping(map)) = Some(fix.job) {
        for (k, v) in map {
            let key = k.as_str().unwrap_or_default();
            if !matches!(key, "steps" | "env") && reads_secret(v, &fix.keys) {
                return Err(format!(
                    "the job's `{key}:` reads the key: only steps and `env:` can move"
                ));
            }
        }
    }
    if let Some(outputs) = fix.job.get("outputs") {
        if reads_steps(outputs, &ids_of(steps, moved)) {
            return Err("the job's `outputs:` read a step that would move to the signing job (other jobs would lose them)".into());
        }
    }
    Ok(())
}

/// The split: the key's steps move to `<job>-sign`, the build hands its workspace over.
pub(crate) fn split(
    fix: &JobFix,
    doc: &Document,
    lines: &Lines,
    job: &JobLines,
) -> Result<Rewrite, String> {
    let steps: Vec<Value> = match fix.job.get("steps") {
        Some(Value::Sequence(s)) => s.clone(),
        _ => return Err("the job has no steps".into()),
    };
    let vars = key_vars(fix, doc, lines)?;
    let var_names: BTreeSet<String> = vars.iter().map(|(n, ..)| n.clone()).collect();
    let moved = moved_steps(&steps, &fix.keys, &var_names, fix.signs)?;
    refuse_unsafe(fix, &steps, &moved)?;
    if moved.len() == steps.len() {
        return Err("every step reads the key: nothing is left to build without it; give the job `environment:` and an `if:` that admits only tags".into());
    }
    // A local action that stays, in a job whose `env:` holds the key, can read it.
    if !vars.is_empty() {
        if let Some(i) = (0..steps.len()).find(|i| {
            !moved.contains(i)
                && steps[*i]
                    .get("uses")
                    .and_then(Value::as_str)
                    .is_some_and(|u| u.starts_with("./"))
        }) {
            return Err(format!(
                "step {} runs a local action in a job whose `env:` holds the key: what it reads of it is not this workflow's to split",
                i + 1
            ));
        }
    }
    let sign_id = free_id(fix.workflow, &format!("{}-sign", fix.id));
    let moved_values: Vec<&Value> = moved.iter().map(|&i| &steps[i]).collect();
    // What the signing job copies of the build (`env:`, `container:`, `defaults:`, `runs-on:`…)
    // or moves of it, reading a matrix value: it runs per entry.
    let copied_reads_matrix = fix.job.as_mapping().is_some_and(|m| {
        m.iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    Some("steps" | "strategy" | "outputs" | "needs" | "if")
                )
            })
            .any(|(_, v)| {
                super::steps::all_strings(v)
                    .iter()
                    .any(|t| t.contains("matrix."))
            })
    });
    let per_entry = fix.job.get("strategy").is_some()
        && (copied_reads_matrix
            || moved_values.iter().any(|s| {
                super::steps::all_strings(s)
                    .iter()
                    .any(|t| t.contains("matrix."))
            }));
    let matrix = fix.job.get("strategy").is_some();
    let handover = Handover {
        build: fix.id,
        sign: &sign_id,
        matrix,
        per_entry,
        condition: condition(fix.on_release),
    };
    let mut edits = Edits::default();
    for &i in &moved {
        let (a, b) = job.steps[i];
        edits.delete(a, b);
    }
    remove_vars(&mut edits, job, &vars, fix);
    let steps_end = job.steps.last().map_or(job.end, |&(_, b)| b);
    edits.insert(steps_end, handover.upload(job.step_indent));
    let new_job = sign_job(fix, lines, job, &handover, &moved, &moved_values);
    edits.insert(job.end, format!("\n{new_job}"));
    let mut needs_lines = Vec::new();
    let dependents = dependents(fix, doc, lines, &sign_id, &mut needs_lines);
    let how = if per_entry {
        ", per matrix entry"
    } else if matrix {
        ", once after the whole matrix"
    } else {
        ""
    };
    let mut words = moved_words(fix, &sign_id, &moved, how, &var_names);
    words.extend(dependents);
    words.extend(order_words(fix.id, &sign_id, &steps, &moved));
    words.extend(setup_words(&sign_id, &steps, &moved));
    Ok(Rewrite {
        edits,
        words,
        needs: needs_lines,
    })
}

/// What moved, in words: the steps and the variables that went with them.
fn moved_words(
    fix: &JobFix,
    sign_id: &str,
    moved: &[usize],
    how: &str,
    var_names: &BTreeSet<String>,
) -> Vec<String> {
    let numbers: Vec<String> = moved.iter().map(|i| (i + 1).to_string()).collect();
    let mut words = vec![format!(
        "job `{}`: step{} {} moved to a new job `{sign_id}` (`environment: {}`, `needs: {}`, tags only{how}); the build hands its workspace over as an artifact",
        fix.id,
        if moved.len() == 1 { "" } else { "s" },
        numbers.join(", "),
        fix.environment,
        fix.id,
    )];
    if !var_names.is_empty() {
        words.push(format!(
            "job `{}`: `env.{}` moved with them",
            fix.id,
            var_names
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join("`, `env.")
        ));
    }
    words
}

/// Tools a kept step installs are not on the signing job's fresh runner: named.
fn setup_words(sign_id: &str, steps: &[Value], moved: &[usize]) -> Option<String> {
    let setups: Vec<String> = steps
        .iter()
        .enumerate()
        .filter(|(i, _)| !moved.contains(i))
        .filter_map(|(i, s)| {
            let uses = s.get("uses").and_then(Value::as_str)?;
            let action = uses.split('@').next().unwrap_or(uses);
            let name = action.rsplit('/').next().unwrap_or(action);
            (name.starts_with("setup-") || name.ends_with("-toolchain") || name == "toolchain")
                .then(|| format!("{} (`{action}`)", i + 1))
        })
        .collect();
    (!setups.is_empty()).then(|| {
        format!(
            "job `{sign_id}` starts on a fresh runner with the build's files, not the tools step{} {} set up: if a moved step needs one, copy that step into `{sign_id}`",
            if setups.len() == 1 { "" } else { "s" },
            setups.join(", ")
        )
    })
}

/// What the new order changes, in words: steps that stay but came after the first moved one now
/// run before the signing job, and what kept steps export (`$GITHUB_ENV`, `$GITHUB_PATH`) does not
/// reach its fresh runner.
fn order_words(build: &str, sign_id: &str, steps: &[Value], moved: &[usize]) -> Vec<String> {
    let mut words = Vec::new();
    let Some(&first) = moved.first() else {
        return words;
    };
    let after: Vec<String> = (first..steps.len())
        .filter(|i| !moved.contains(i))
        .map(|i| (i + 1).to_string())
        .collect();
    if !after.is_empty() {
        words.push(format!(
            "job `{build}`: step{} {} came after the signing and still run{} in `{build}`, now before `{sign_id}`: if one takes what is signed (an upload, a publish), move it to `{sign_id}`",
            if after.len() == 1 { "" } else { "s" },
            after.join(", "),
            if after.len() == 1 { "s" } else { "" },
        ));
    }
    for i in (0..steps.len()).filter(|i| !moved.contains(i)) {
        let (vars, path) = super::steps::exports(&steps[i]);
        let read: Vec<&String> = vars
            .iter()
            .filter(|v| moved.iter().any(|&m| super::steps::names_var(&steps[m], v)))
            .collect();
        if !read.is_empty() || (path && i < first) {
            let what = match (read.is_empty(), path) {
                (false, _) => format!(
                    "sets `{}` for later steps (`$GITHUB_ENV`)",
                    read.iter()
                        .map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join("`, `")
                ),
                _ => "changes `$GITHUB_PATH` for later steps".to_string(),
            };
            words.push(format!(
                "job `{build}`: step {} {what}, which a moved step may read: `{sign_id}` runs on a fresh runner, so set {} there too",
                i + 1,
                if read.is_empty() { "it" } else { "them" }
            ));
        }
    }
    words
}

/// Jobs that need the build: one that runs only on tags takes what the signing job made, so it
/// needs that job too (added); any other would be skipped with it on pull requests, so it is
/// named, not changed.
fn dependents(
    fix: &JobFix,
    doc: &Document,
    lines: &Lines,
    sign_id: &str,
    needs_lines: &mut Vec<NeedsLine>,
) -> Vec<String> {
    let mut words = Vec::new();
    let Some(Value::Mapping(jobs)) = fix.workflow.get("jobs") else {
        return words;
    };
    for (other, job) in jobs {
        let Some(other) = other.as_str() else {
            continue;
        };
        let needs: Vec<&str> = match job.get("needs") {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Sequence(s)) => s.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        if !needs.contains(&fix.id) {
            continue;
        }
        let gated = job
            .get("if")
            .and_then(Value::as_str)
            .is_some_and(tag_only_if);
        let r = route!("jobs", other, "needs");
        let at = doc
            .query_key_only(&r)
            .ok()
            .map(|f| lines.line_of(f.location.byte_span.0));
        let one_line = doc
            .query_pretty(&r)
            .ok()
            .map(|f| lines.line_of(f.location.byte_span.1.max(1) - 1));
        // The key as plainly written (`needs:`): other spellings are named, not rewritten.
        let plain_key = at.and_then(|a| lines.line(a).find("needs:"));
        match (gated, at, one_line, plain_key) {
            (true, Some(a), Some(b), Some(key_at)) if a == b => {
                let line = lines.line(a);
                let key_end = key_at + "needs:".len();
                let comment = line[key_end..].find(" #").map(|i| &line[key_end + i..]).unwrap_or("");
                needs_lines.push(NeedsLine {
                    line: a,
                    prefix: line[..key_at].to_string(),
                    ids: needs.iter().map(|n| n.to_string()).collect(),
                    comment: comment.trim_end_matches(['\n', '\r']).to_string(),
                    add: sign_id.to_string(),
                });
                words.push(format!("job `{other}`: runs on tags only and needs `{}`, so now needs `{sign_id}` too", fix.id));
            }
            (true, ..) => words.push(format!("job `{other}` needs `{}` and runs on tags only: make it need `{sign_id}` too (its `needs:` is not on one plain line: not changed)", fix.id)),
            _ => words.push(format!("job `{other}` needs `{}` and now runs before `{sign_id}`: if it takes what is signed, make it need `{sign_id}` and run on tags only", fix.id)),
        }
    }
    words
}

/// The key's variables leave the build's `env:` (the whole `env:` when nothing else is left).
fn remove_vars(edits: &mut Edits, job: &JobLines, vars: &[(String, usize, usize)], fix: &JobFix) {
    let all = fix
        .job
        .get("env")
        .and_then(Value::as_mapping)
        .is_some_and(|m| m.len() == vars.len());
    match (all, job.entry("env")) {
        (true, Some((a, b))) if !vars.is_empty() => edits.delete(a, b),
        _ => vars.iter().for_each(|(_, a, b)| edits.delete(*a, *b)),
    }
}

/// The `if:` of the signing job and of the handover.
fn condition(on_release: bool) -> String {
    if on_release {
        "startsWith(github.ref, 'refs/tags/') || github.event_name == 'release'".into()
    } else {
        "startsWith(github.ref, 'refs/tags/')".into()
    }
}

/// How the build's workspace reaches the signing job: a tar (file modes kept, `.git/config`
/// and its credentials left out) in an artifact kept one day.
struct Handover<'a> {
    build: &'a str,
    sign: &'a str,
    /// The build is a matrix: one artifact per entry.
    matrix: bool,
    /// The signing job runs per entry too (same matrix, same `strategy.job-index`).
    per_entry: bool,
    condition: String,
}

impl Handover<'_> {
    fn name(&self) -> String {
        match self.matrix {
            true => format!("{}-handover-${{{{ strategy.job-index }}}}", self.build),
            false => format!("{}-handover", self.build),
        }
    }

    /// The build's last steps: pack the workspace, upload it (on tags only).
    fn upload(&self, at: usize) -> String {
        let p = " ".repeat(at);
        format!(
            "{p}# warden audit --fix: the workspace, for `{sign}`, which signs behind an environment.\n\
             {p}- name: Pack the workspace for `{sign}`\n\
             {p}  if: {cond}\n\
             {p}  shell: bash\n\
             {p}  run: tar -C \"$GITHUB_WORKSPACE\" --exclude=./.git/config --exclude='./.git/modules/*/config' -cf - . > \"$RUNNER_TEMP/{name}.tar\"\n\
             {p}- name: Hand the workspace to `{sign}`\n\
             {p}  if: {cond}\n\
             {p}  uses: {UPLOAD}\n\
             {p}  with:\n\
             {p}    name: {name}\n\
             {p}    path: ${{{{ runner.temp }}}}/{name}.tar\n\
             {p}    if-no-files-found: error\n\
             {p}    retention-days: 1\n",
            sign = self.sign,
            cond = self.condition,
            name = self.name(),
        )
    }

    /// The signing job's first steps: download (digest checked), unpack.
    fn download(&self, at: usize) -> String {
        let p = " ".repeat(at);
        let which = match (self.matrix, self.per_entry) {
            (true, false) => format!(
                "{p}    pattern: {}-handover-*\n{p}    merge-multiple: true\n",
                self.build
            ),
            _ => format!("{p}    name: {}\n", self.name()),
        };
        format!(
            "{p}- name: Take the workspace of `{build}`\n\
             {p}  uses: {DOWNLOAD}\n\
             {p}  with:\n\
             {which}\
             {p}    path: ${{{{ runner.temp }}}}/handover\n\
             {p}    digest-mismatch: error\n\
             {p}- name: Unpack it\n\
             {p}  shell: bash\n\
             {p}  run: for f in \"$RUNNER_TEMP\"/handover/*.tar; do tar -C \"$GITHUB_WORKSPACE\" -xf - < \"$f\"; done\n",
            build = self.build,
        )
    }
}

/// The text of the signing job.
fn sign_job(
    fix: &JobFix,
    lines: &Lines,
    job: &JobLines,
    handover: &Handover,
    moved: &[usize],
    moved_values: &[&Value],
) -> String {
    let outer = " ".repeat(job.key_line_indent(lines));
    let p = " ".repeat(job.body_indent);
    let mut needs: Vec<String> = match fix.job.get("needs") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Sequence(s)) => s
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    needs.push(fix.id.to_string());
    let mut out = format!(
        "{outer}# warden audit --fix: the steps of `{build}` that read the signing key, on tags only, behind the `{env}` environment.\n\
         {outer}{sign}:\n\
         {p}needs: [{needs}]\n\
         {p}if: {cond}\n",
        build = fix.id,
        env = fix.environment,
        sign = handover.sign,
        needs = needs.join(", "),
        cond = handover.condition,
    );
    let copied: &[&str] = if handover.per_entry {
        &[
            "strategy",
            "runs-on",
            "container",
            "services",
            "defaults",
            "timeout-minutes",
        ]
    } else {
        &[
            "runs-on",
            "container",
            "services",
            "defaults",
            "timeout-minutes",
        ]
    };
    for key in copied {
        if let Some((a, b)) = job.entry(key) {
            out.push_str(&lines.slice(a, b));
        }
    }
    out.push_str(&format!(
        "{p}environment: {}\n{p}permissions:\n",
        fix.environment
    ));
    for (scope, level) in permissions(moved_values) {
        out.push_str(&format!("{p}  {scope}: {level}\n"));
    }
    if let Some((a, b)) = job.entry("env") {
        out.push_str(&lines.slice(a, b));
    }
    out.push_str(&format!("{p}steps:\n"));
    out.push_str(&handover.download(job.step_indent));
    for &i in moved {
        let (a, b) = job.steps[i];
        out.push_str(&lines.slice(a, b));
    }
    out
}

impl JobLines {
    /// The indentation of the job's own `<id>:` line.
    fn key_line_indent(&self, lines: &Lines) -> usize {
        indent(lines.line(self.key_line))
    }
}

/// Whether the job is there to sign: the workflow runs only on tags and releases (or by hand),
/// or the job's `if:` admits only tags.
/// The events a workflow names under `on:` (a name, a list of names, or a mapping with each
/// event's filters); `None` when `on:` is missing or none of those.
pub(super) fn events(workflow: &Value) -> Option<Vec<(&str, Option<&Value>)>> {
    Some(match workflow.get("on")? {
        Value::String(s) => vec![(s.as_str(), None)],
        Value::Sequence(s) => s.iter().filter_map(|v| Some((v.as_str()?, None))).collect(),
        Value::Mapping(m) => m
            .iter()
            .filter_map(|(k, v)| Some((k.as_str()?, Some(v))))
            .collect(),
        _ => return None,
    })
}

pub(crate) fn exists_to_sign(workflow: &Value, job: &Value) -> bool {
    if job
        .get("if")
        .and_then(Value::as_str)
        .is_some_and(tag_only_if)
    {
        return true;
    }
    let Some(events) = events(workflow) else {
        return false;
    };
    events.iter().all(|(e, body)| match *e {
        "release" | "workflow_dispatch" => true,
        "push" => body.is_some_and(|b| {
            b.get("tags").is_some()
                && b.get("branches").is_none()
                && b.get("branches-ignore").is_none()
        }),
        _ => false,
    })
}
