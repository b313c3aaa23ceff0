//! The two patches of a job that holds a signing key outside an environment: the whole job
//! behind the environment (one line), or a split, written only when it is provably safe: the
//! steps from the first that reads the key to the end move to a `<job>-sign` job behind the
//! environment, and every one of them finds there what it used in the build (`needs`): the
//! tools (setup steps run again), the files (handed over by name), the variables and step
//! outputs (the steps that compute them run again), the job's settings (copied).

use std::collections::{BTreeMap, BTreeSet};

use yaml_serde::Value;
use yamlpath::{route, Document};

use super::needs::{self, Needs};
use super::steps::{exports, ids_of, reads_secret, reads_steps, tag_only_if};
use super::text::{indent, Edits, JobLines, Lines};

/// actions/upload-artifact v6.0.0 and actions/download-artifact v8.0.1 (both on Node 24), pinned
/// by commit (v8 refuses an archive whose digest is not the one recorded at upload:
/// `digest-mismatch: error`).
const UPLOAD: &str = "actions/upload-artifact@b7c566a772e6b6bfb58ed0dc250532a479d7789f # v6.0.0";
const DOWNLOAD: &str =
    "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1";

/// What the rewrite of one job needs to know.
pub(crate) struct JobFix<'a> {
    pub(crate) id: &'a str,
    pub(crate) job: &'a Value,
    pub(crate) workflow: &'a Value,
    /// The keys the job holds (upper-case names).
    pub(crate) keys: BTreeSet<String>,
    pub(crate) environment: &'a str,
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

/// The job settings a split copies to the new job: each changes what its steps do or may do.
const COPIED: &[&str] = &[
    "runs-on",
    "timeout-minutes",
    "defaults",
    "permissions",
    "concurrency",
    "continue-on-error",
    "env",
];

/// What a split takes with it: the steps that move, those that run again, the files handed
/// over and where they land.
struct Plan {
    moved: Vec<usize>,
    again: Vec<usize>,
    handover: Vec<String>,
    /// Where the handed-over files land (their common folder).
    into: String,
    condition: String,
}

/// The split, or why none is provably safe.
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
    check_job(fix)?;
    let plan = plan(fix, &steps)?;
    let sign_id = free_id(fix.workflow, &format!("{}-sign", fix.id));
    let mut needs_lines = Vec::new();
    let dependents = dependents(fix, doc, lines, &sign_id, &mut needs_lines)?;
    let mut edits = Edits::default();
    for &i in &plan.moved {
        let (a, b) = job.steps[i];
        edits.delete(a, b);
    }
    let kept_end = job.steps[plan.moved[0]].0;
    let artifact = format!("{}-for-{sign_id}", fix.id);
    if !plan.handover.is_empty() {
        edits.insert(
            kept_end,
            upload(job.step_indent, &sign_id, &artifact, &plan),
        );
    }
    let new_job = sign_job(fix, lines, job, &sign_id, &artifact, &plan);
    edits.insert(job.end, format!("\n{new_job}"));
    let mut words = plan_words(fix, &sign_id, &steps, &plan);
    words.extend(dependents);
    Ok(Rewrite {
        edits,
        words,
        needs: needs_lines,
    })
}

/// The job's own settings a split cannot carry: the key outside steps, a matrix, a container,
/// a runner other than GitHub's Ubuntu.
fn check_job(fix: &JobFix) -> Result<(), String> {
    if fix
        .workflow
        .get("env")
        .is_some_and(|env| reads_secret(env, &fix.keys))
    {
        return Err(
            "the workflow's `env:` holds the key: every step of every job can read it".into(),
        );
    }
    if let Some(Value::Mapping(map)) = Some(fix.job) {
        for (k, v) in map {
            let key = k.as_str().unwrap_or_default();
            if key != "steps" && reads_secret(v, &fix.keys) {
                return Err(format!(
                    "the job's `{key}:` holds the key, so every step can read it (electron-builder, Gradle and fastlane read keys from the environment by convention)"
                ));
            }
        }
    }
    for key in ["strategy", "container", "services"] {
        if fix.job.get(key).is_some() {
            return Err(format!(
                "the job has `{key}:`: the moved steps would need it, and warden does not carry it over"
            ));
        }
    }
    let runs_on = super::steps::all_strings(fix.job.get("runs-on").unwrap_or(&Value::Null));
    if runs_on.len() != 1 || !runs_on[0].starts_with("ubuntu-") {
        return Err(format!(
            "it runs on `{}`: warden knows which tools GitHub's hosted Ubuntu runners have, not that runner's",
            runs_on.join(", ")
        ));
    }
    if events(fix.workflow)
        .unwrap_or_default()
        .iter()
        .any(|(e, _)| *e == "workflow_call")
    {
        return Err("a reusable workflow: its callers decide what it runs on".into());
    }
    Ok(())
}

/// Which steps move, which run again and which files are handed over, or why a step cannot
/// move with everything it used.
fn plan(fix: &JobFix, steps: &[Value]) -> Result<Plan, String> {
    let n = |i: usize| format!("step {} ({})", i + 1, step_name(&steps[i]));
    let Some(first) = steps.iter().position(|s| reads_secret(s, &fix.keys)) else {
        return Err("no step reads the key".into());
    };
    if first == 0 {
        return Err("its first step reads the key: nothing is left to build without it".into());
    }
    let moved: Vec<usize> = (first..steps.len()).collect();
    if let Some(outputs) = fix.job.get("outputs") {
        if reads_steps(outputs, &ids_of(steps, &moved)) {
            return Err("the job's `outputs:` read a step that would move (the jobs that need it would lose them)".into());
        }
    }
    let condition = tag_condition(steps, &moved, &n)?;
    let workdir = fix
        .job
        .get("defaults")
        .and_then(|d| d.get("run"))
        .and_then(|r| r.get("working-directory"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if workdir.contains('$') {
        return Err("the job's `defaults.run.working-directory` is an expression".into());
    }
    let mut models: BTreeMap<usize, Needs> = BTreeMap::new();
    for &i in &moved {
        models.insert(
            i,
            needs::of_step(&steps[i], workdir).map_err(|e| format!("{}: {e}", n(i)))?,
        );
    }
    let mut again = values_again(steps, first, &models, &n)?;
    tools_again(steps, first, &models, &n, &mut again)?;
    check_commands(steps, &moved, &models, &again)?;
    let (handover, into) = handover(&moved, &models, &n)?;
    Ok(Plan {
        moved,
        again: again.into_iter().collect(),
        handover,
        into,
        condition,
    })
}

/// The new job's `if:`: every moved step runs only on tags (the job's other runs never ran
/// them, so they make exactly what they made before); their conditions, or-ed.
fn tag_condition(
    steps: &[Value],
    moved: &[usize],
    n: &dyn Fn(usize) -> String,
) -> Result<String, String> {
    let mut conditions: Vec<String> = Vec::new();
    for &i in moved {
        match steps[i].get("if").and_then(Value::as_str) {
            Some(c) if tag_only_if(c) => {
                let c = unwrap_expression(c);
                if !conditions.contains(&c) {
                    conditions.push(c);
                }
            }
            _ => {
                return Err(format!(
                    "{} comes after the first step with the key and runs on other refs than tags: moved, it would run only after a reviewer, or not at all",
                    n(i)
                ))
            }
        }
    }
    Ok(match conditions.as_slice() {
        [one] => one.clone(),
        many => many
            .iter()
            .map(|c| format!("({c})"))
            .collect::<Vec<_>>()
            .join(" || "),
    })
}

/// Kept steps that compute a variable (`$GITHUB_ENV`) or an output a moved step reads: run
/// again in the new job where they read only the run's context, else no split.
fn values_again(
    steps: &[Value],
    first: usize,
    models: &BTreeMap<usize, Needs>,
    n: &dyn Fn(usize) -> String,
) -> Result<BTreeSet<usize>, String> {
    let mut again = BTreeSet::new();
    let kept_ids: BTreeMap<String, usize> = (0..first)
        .filter_map(|i| Some((steps[i].get("id")?.as_str()?.to_string(), i)))
        .collect();
    for (&i, m) in models {
        for (k, step) in steps.iter().enumerate().take(first) {
            let (vars, _) = exports(step);
            if let Some(v) = vars.iter().find(|v| m.env.contains(*v)) {
                if !needs::only_computes(step) {
                    return Err(format!("{} reads `{v}`, which {} sets from what the build made: it cannot be set again in the new job", n(i), n(k)));
                }
                again.insert(k);
            }
        }
        for id in &m.steps {
            if let Some(&k) = kept_ids.get(id) {
                if !needs::only_computes(&steps[k]) {
                    return Err(format!(
                        "{} reads the outputs of {}, which the build computes",
                        n(i),
                        n(k)
                    ));
                }
                again.insert(k);
            }
        }
    }
    Ok(again)
}

/// Tools: a setup step runs again when a moved step may use what it set up (an action that
/// runs the job's tools, or a command named for the tool); a kept step that changes PATH
/// otherwise is a tool the new job would not have.
fn tools_again(
    steps: &[Value],
    first: usize,
    models: &BTreeMap<usize, Needs>,
    n: &dyn Fn(usize) -> String,
    again: &mut BTreeSet<usize>,
) -> Result<(), String> {
    let all_tools = models.values().any(|m| m.set_up_tools);
    let commands: BTreeSet<&str> = models
        .values()
        .flat_map(|m| m.commands.iter().map(String::as_str))
        .collect();
    for (k, step) in steps.iter().enumerate().take(first) {
        if needs::sets_up_tools(step) {
            let used =
                all_tools || needs::tool_of(step).is_some_and(|t| commands.contains(t.as_str()));
            if !used {
                continue;
            }
            if let Some(input) = needs::setup_reads_checkout(step) {
                return Err(format!(
                    "{} would run again in the new job, but its `{input}` reads the checkout",
                    n(k)
                ));
            }
            again.insert(k);
        } else if exports(step).1 && !commands.is_empty() {
            return Err(format!(
                "{} adds to `$GITHUB_PATH` a tool the moved steps may run",
                n(k)
            ));
        }
    }
    Ok(())
}

/// Every command a moved step runs is on the runner, installed or built by a moved step
/// before it, or set up by a step that runs again.
fn check_commands(
    steps: &[Value],
    moved: &[usize],
    models: &BTreeMap<usize, Needs>,
    again: &BTreeSet<usize>,
) -> Result<(), String> {
    let mut installed: BTreeSet<String> = BTreeSet::new();
    let mut built: BTreeSet<String> = BTreeSet::new();
    // A setup action that runs again provides the tool it is named for (`setup-java`: java).
    let set_up: Vec<String> = again
        .iter()
        .filter_map(|&k| steps[k].get("uses").and_then(Value::as_str))
        .map(|u| {
            let name = needs::action_name(u);
            name.rsplit('/')
                .next()
                .unwrap_or(name)
                .trim_start_matches("setup-")
                .to_string()
        })
        .collect();
    for &i in moved {
        // What the step installs or builds, before or after a use in it: the script's order
        // within one step is not followed that finely.
        installed.extend(models[&i].installs.iter().cloned());
        built.extend(
            models[&i]
                .writes
                .iter()
                .filter(|w| w.starts_with('/'))
                .cloned(),
        );
        for c in &models[&i].commands {
            let known = needs::on_the_runner(c)
                || installed.contains(c)
                || built.contains(c)
                || set_up.iter().any(|s| s == c);
            if !known {
                return Err(format!(
                    "step {} ({}) runs `{c}`, which is neither on GitHub's runner nor installed by the steps that move",
                    i + 1,
                    step_name(&steps[i])
                ));
            }
        }
    }
    Ok(())
}

/// The files the moved steps read that no moved step wrote first, and the one folder they
/// share (where the download puts them back).
fn handover(
    moved: &[usize],
    models: &BTreeMap<usize, Needs>,
    n: &dyn Fn(usize) -> String,
) -> Result<(Vec<String>, String), String> {
    let mut written: Vec<String> = Vec::new();
    let mut out: BTreeSet<String> = BTreeSet::new();
    let mut folders: BTreeSet<String> = BTreeSet::new();
    for &i in moved {
        let m = &models[&i];
        for (writes, r) in &m.order {
            if *writes {
                written.push(r.path.clone());
                continue;
            }
            let p = &r.path;
            let covered = written
                .iter()
                .any(|w| w == p || p.starts_with(&format!("{w}/")));
            if covered {
                continue;
            }
            if p.starts_with('/') || p.starts_with('~') {
                let system = ["/dev/", "/usr/", "/etc/", "/opt/", "/proc/"]
                    .iter()
                    .any(|s| p.starts_with(s));
                if system {
                    continue;
                }
                return Err(format!("{} reads `{p}`, outside the workspace, which a step that stays may have written", n(i)));
            }
            if p.contains("${{") || p.contains('$') {
                return Err(format!(
                    "{} reads `{p}`, a path that only a step of the build can spell out",
                    n(i)
                ));
            }
            if p.is_empty() || p.split('/').any(|c| c == ".." || c == "**" || c == ".") {
                return Err(format!("{} reads `{p}`: not a path warden hands over by name (the workspace, a parent or a `**`)", n(i)));
            }
            let last = p.rsplit('/').next().unwrap_or(p);
            let has_extension = last
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty());
            if !r.folder && !has_extension {
                return Err(format!("{} reads `{p}`, which may be a program: handed over as an artifact it would lose its mode", n(i)));
            }
            let folder = if r.folder {
                p.clone()
            } else {
                let literal = p.split(['*', '?', '[']).next().unwrap_or(p);
                literal
                    .rsplit_once('/')
                    .map_or(String::new(), |(d, _)| d.to_string())
            };
            folders.insert(folder);
            out.insert(if r.folder { format!("{p}/") } else { p.clone() });
        }
    }
    if folders.len() > 1 {
        return Err(format!(
            "the moved steps read files of several folders ({}): handed over in one artifact they would not land where they were",
            folders.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok((
        out.into_iter().collect(),
        folders.into_iter().next().unwrap_or_default(),
    ))
}

/// `text` as a YAML scalar that reads back as itself: plain where nothing in it means
/// something to YAML, else single-quoted (`'` doubled).
fn yaml_scalar(text: &str) -> String {
    let plain = !text.is_empty()
        && !text.starts_with(|c: char| "-?:,[]{}#&*!|>'\"%@` ".contains(c))
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.chars().any(|c| c.is_control());
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// An `if:` without its `${{ }}`.
fn unwrap_expression(c: &str) -> String {
    let t = c.trim();
    t.strip_prefix("${{")
        .and_then(|r| r.strip_suffix("}}"))
        .unwrap_or(t)
        .trim()
        .to_string()
}

/// A step's name for a reader: its `name:`, else what it uses or the first line it runs.
fn step_name(step: &Value) -> String {
    let raw = step
        .get("name")
        .or_else(|| step.get("uses"))
        .and_then(Value::as_str)
        .or_else(|| {
            step.get("run")
                .and_then(Value::as_str)
                .and_then(|r| r.lines().next())
        })
        .unwrap_or("unnamed");
    let mut name: String = raw.chars().filter(|c| !c.is_control()).take(60).collect();
    if raw.chars().count() > 60 {
        name.push('…');
    }
    crate::markup::text_value(&name).to_string()
}

/// The build's new last step: the files the new job takes, by name, kept one day.
fn upload(at: usize, sign_id: &str, artifact: &str, plan: &Plan) -> String {
    let p = " ".repeat(at);
    let mut paths = String::new();
    for h in &plan.handover {
        paths.push_str(&format!("{p}      {h}\n"));
    }
    format!(
        "{p}# warden audit --fix: the files `{sign_id}` signs and publishes, by name.\n\
         {p}- name: Hand the files to `{sign_id}`\n\
         {p}  if: {cond}\n\
         {p}  uses: {UPLOAD}\n\
         {p}  with:\n\
         {p}    name: {artifact}\n\
         {p}    path: |\n\
         {paths}\
         {p}    if-no-files-found: error\n\
         {p}    retention-days: 1\n",
        cond = yaml_scalar(&plan.condition),
    )
}

/// The text of the signing job: the build's settings, the download, the steps that run again
/// and the moved steps, in the build's order.
fn sign_job(
    fix: &JobFix,
    lines: &Lines,
    job: &JobLines,
    sign_id: &str,
    artifact: &str,
    plan: &Plan,
) -> String {
    let outer = " ".repeat(job.key_line_indent(lines));
    let p = " ".repeat(job.body_indent);
    let s = " ".repeat(job.step_indent);
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
        "{outer}# warden audit --fix: the steps of `{build}` from the first that reads the signing key, behind the `{env}` environment.\n\
         {outer}{sign_id}:\n\
         {p}needs: [{needs}]\n\
         {p}if: {cond}\n\
         {p}environment: {env}\n",
        build = fix.id,
        env = fix.environment,
        needs = needs.join(", "),
        cond = yaml_scalar(&plan.condition),
    );
    for key in COPIED {
        if let Some((a, b)) = job.entry(key) {
            out.push_str(&lines.slice(a, b));
        }
    }
    out.push_str(&format!("{p}steps:\n"));
    if !plan.handover.is_empty() {
        let into = if plan.into.is_empty() {
            "."
        } else {
            plan.into.as_str()
        };
        out.push_str(&format!(
            "{s}- name: Take the files of `{build}`\n\
             {s}  uses: {DOWNLOAD}\n\
             {s}  with:\n\
             {s}    name: {artifact}\n\
             {s}    path: {into}\n\
             {s}    digest-mismatch: error\n",
            build = fix.id,
        ));
    }
    let mut order: Vec<usize> = plan.again.clone();
    order.extend(&plan.moved);
    for i in order {
        let (a, b) = job.steps[i];
        out.push_str(&lines.slice(a, b));
    }
    out
}

/// What the split does, in words.
fn plan_words(fix: &JobFix, sign_id: &str, steps: &[Value], plan: &Plan) -> Vec<String> {
    let list = |ix: &[usize]| {
        ix.iter()
            .map(|&i| format!("{} ({})", i + 1, step_name(&steps[i])))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut words = vec![format!(
        "job `{}`: step{} {} moved to a new job `{sign_id}` (`environment: {}`, `needs: {}`, `if: {}`: the runs on which they ran)",
        fix.id,
        if plan.moved.len() == 1 { "" } else { "s" },
        list(&plan.moved),
        fix.environment,
        fix.id,
        plan.condition,
    )];
    if !plan.again.is_empty() {
        words.push(format!(
            "job `{sign_id}` runs again what the moved steps used of the build: step{} {}",
            if plan.again.len() == 1 { "" } else { "s" },
            list(&plan.again)
        ));
    }
    if !plan.handover.is_empty() {
        words.push(format!(
            "job `{}` hands `{sign_id}` the files it reads, by name: {} (as an artifact: files lose their mode bits)",
            fix.id,
            plan.handover.join(", ")
        ));
    }
    let copied: Vec<&str> = COPIED
        .iter()
        .copied()
        .filter(|k| fix.job.get(*k).is_some())
        .collect();
    if !copied.is_empty() {
        words.push(format!(
            "job `{sign_id}` keeps the build's `{}`",
            copied.join("`, `")
        ));
    }
    words
}

/// Jobs that need the build: one that runs only on tags takes what the signing job made, so it
/// needs that job too (added); any other cannot be kept as it was: no split.
fn dependents(
    fix: &JobFix,
    doc: &Document,
    lines: &Lines,
    sign_id: &str,
    needs_lines: &mut Vec<NeedsLine>,
) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let Some(Value::Mapping(jobs)) = fix.workflow.get("jobs") else {
        return Ok(words);
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
            (true, ..) => return Err(format!("job `{other}` needs `{}` on tags, and its `needs:` is not on one plain line to add `{sign_id}` to", fix.id)),
            _ => return Err(format!("job `{other}` needs `{}` on other refs than tags too: it would run before the signing job on tags, or be skipped with it on the others", fix.id)),
        }
    }
    Ok(words)
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
