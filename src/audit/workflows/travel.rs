//! Keys that travel between the jobs of one workflow. A key a job writes to a file that an
//! `actions/upload-artifact` step uploads reaches every job that downloads the artifact; a key a
//! step writes to `$GITHUB_OUTPUT` (as it is, or re-encoded: GitHub withholds an output only when
//! it holds a secret verbatim) reaches, through the job's `outputs:`, every job that reads
//! `needs.<job>.outputs.<name>`. Each receiving job holds the key, with the way it came.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;
use yaml_serde::Value;

use super::expr::secrets_in_value;
use super::flow::{
    env_secrets, names, scalar, vars_read, write_target, JobSecrets, KeyUse, Spot, Why,
};

/// What one job hands over: its artifacts' keys (artifact name → keys) and its outputs' keys
/// (output name → keys).
#[derive(Default)]
struct HandedOver {
    artifacts: BTreeMap<String, BTreeSet<String>>,
    outputs: BTreeMap<String, BTreeSet<String>>,
}

/// A path as a script and an `upload-artifact` input both write it: `$RUNNER_TEMP`,
/// `${{ runner.temp }}` and the workspace prefix spelt one way, no leading `./` or quotes.
fn normal_path(p: &str) -> String {
    static VARS: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let vars = VARS.get_or_init(|| {
        Regex::new(r"(?i)\$\{\{\s*(runner\.temp|github\.workspace)\s*\}\}|\$\{?(RUNNER_TEMP|GITHUB_WORKSPACE)\}?")
            .expect("static regex")
    });
    let p = p.trim().trim_matches(['"', '\'']);
    let p = vars.replace_all(p, |c: &regex::Captures<'_>| {
        let v = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
        if v.eq_ignore_ascii_case("runner.temp") || v.eq_ignore_ascii_case("RUNNER_TEMP") {
            "<temp>".to_string()
        } else {
            String::new()
        }
    });
    p.trim_start_matches('/')
        .trim_start_matches("./")
        .trim_end_matches('/')
        .to_string()
}

/// Whether an `upload-artifact` `path:` entry covers the file `file`: the file itself, a folder
/// above it, or a glob that matches it.
fn covers(entry: &str, file: &str) -> bool {
    let entry = normal_path(entry);
    if entry.is_empty() || entry.starts_with('!') {
        return false;
    }
    if entry == file || file.starts_with(&format!("{entry}/")) || entry == "." {
        return true;
    }
    globset::Glob::new(&entry).is_ok_and(|g| g.compile_matcher().is_match(file))
}

/// The keys (of `keys`, normalised names) a script line reads: directly or through the
/// environment `env` the step sees.
fn keys_on(
    line: &str,
    env: &BTreeMap<String, Vec<super::expr::SecretRef>>,
    keys: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut found: BTreeSet<String> = names(&secrets_in_value(line, false))
        .map(str::to_string)
        .collect();
    for var in vars_read(line) {
        if let Some(refs) = env.get(&var) {
            found.extend(names(refs).map(str::to_string));
        }
    }
    found
        .into_iter()
        .filter(|n| keys.contains(&crate::audit::catalogue::Catalogue::normal(n)))
        .collect()
}

/// What job `job` (its YAML value, in workflow `wf`) hands over of its `keys`, and the artifact
/// uploads that carry one (artifact, key, step).
fn handed_over(
    wf: &Value,
    job: &Value,
    keys: &BTreeSet<String>,
) -> (HandedOver, Vec<(String, String, usize)>) {
    let mut out = HandedOver::default();
    let mut uploads = Vec::new();
    let mut visible = env_secrets(wf);
    visible.extend(env_secrets(job));
    // Files written from a key, and step outputs set from one, so far.
    let mut files: Vec<(String, String)> = Vec::new();
    let mut step_outputs: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let steps = match job.get("steps") {
        Some(Value::Sequence(s)) => s.as_slice(),
        _ => &[],
    };
    static OUTPUT: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let output = OUTPUT.get_or_init(|| {
        Regex::new(r#"["']?([A-Za-z_][A-Za-z0-9_-]*)=.*>>\s*["']?\$\{?GITHUB_OUTPUT|::set-output name=([A-Za-z_][A-Za-z0-9_-]*)::"#)
            .expect("static regex")
    });
    for (i, step) in steps.iter().enumerate() {
        let mut env = visible.clone();
        env.extend(env_secrets(step));
        if let Some(run) = step.get("run").and_then(scalar) {
            let id = step.get("id").and_then(scalar).unwrap_or_default();
            for line in run.lines() {
                let carried = keys_on(line, &env, keys);
                if carried.is_empty() {
                    continue;
                }
                if let Some(c) = output.captures(line) {
                    let name = c.get(1).or(c.get(2)).map_or("", |m| m.as_str()).to_string();
                    step_outputs
                        .entry((id.clone(), name))
                        .or_default()
                        .extend(carried.iter().cloned());
                    continue;
                }
                for m in write_target().captures_iter(line).filter_map(|c| c.get(1)) {
                    if !m.as_str().contains("GITHUB_") {
                        for k in &carried {
                            files.push((normal_path(m.as_str()), k.clone()));
                        }
                    }
                }
            }
        }
        let uses = step.get("uses").and_then(Value::as_str).unwrap_or_default();
        if uses
            .to_ascii_lowercase()
            .starts_with("actions/upload-artifact")
        {
            let with = step.get("with");
            let name = with
                .and_then(|w| w.get("name"))
                .and_then(scalar)
                .unwrap_or_else(|| "artifact".to_string());
            let paths = with
                .and_then(|w| w.get("path"))
                .and_then(scalar)
                .unwrap_or_default();
            for (file, key) in &files {
                if paths.lines().any(|entry| covers(entry, file)) {
                    out.artifacts
                        .entry(name.clone())
                        .or_default()
                        .insert(key.clone());
                    if !uploads
                        .iter()
                        .any(|(n, k, _): &(String, String, usize)| n == &name && k == key)
                    {
                        uploads.push((name.clone(), key.clone(), i));
                    }
                }
            }
        }
    }
    // The job's outputs: `outputs: { x: ${{ steps.s.outputs.y }} }`.
    static STEP_OUTPUT: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let step_output = STEP_OUTPUT.get_or_init(|| {
        Regex::new(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)").expect("static regex")
    });
    if let Some(Value::Mapping(outputs)) = job.get("outputs") {
        for (k, v) in outputs {
            let (Some(k), Some(v)) = (k.as_str(), scalar(v)) else {
                continue;
            };
            for c in step_output.captures_iter(&v) {
                if let Some(carried) = step_outputs.get(&(c[1].to_string(), c[2].to_string())) {
                    out.outputs
                        .entry(k.to_string())
                        .or_default()
                        .extend(carried.iter().cloned());
                }
            }
        }
    }
    (out, uploads)
}

/// The artifacts a job's `download-artifact` steps fetch: (step, name or pattern; `None`: all).
fn downloads(job: &Value) -> Vec<(usize, Option<String>)> {
    let steps = match job.get("steps") {
        Some(Value::Sequence(s)) => s.as_slice(),
        _ => &[],
    };
    steps
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.get("uses").and_then(Value::as_str).is_some_and(|u| {
                u.to_ascii_lowercase()
                    .starts_with("actions/download-artifact")
            })
        })
        .map(|(i, s)| {
            let with = s.get("with");
            let wanted = ["name", "pattern"]
                .iter()
                .find_map(|k| with.and_then(|w| w.get(*k)).and_then(scalar));
            (i, wanted)
        })
        .collect()
}

/// Every scalar of a job's YAML, joined: where `needs.<job>.outputs.<name>` may be read.
fn text_of(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Sequence(items) => items.iter().for_each(|i| text_of(i, out)),
        Value::Mapping(m) => m.values().for_each(|i| text_of(i, out)),
        Value::Tagged(t) => text_of(&t.value, out),
        _ => {}
    }
}

/// Adds to each job of `jobs` (ids with what they do with secrets, in workflow `wf`) the keys
/// other jobs of the workflow hand it, and records each job's artifact uploads of a key.
pub(crate) fn follow(wf: &Value, jobs: &mut [(String, JobSecrets)]) {
    let normal = crate::audit::catalogue::Catalogue::normal;
    let job_value = |id: &str| wf.get("jobs").and_then(|j| j.get(id));
    let mut handed: Vec<(String, HandedOver)> = Vec::new();
    for (id, secrets) in jobs.iter_mut() {
        if secrets.keys.is_empty() {
            continue;
        }
        let keys: BTreeSet<String> = secrets.keys.iter().map(|k| normal(&k.name)).collect();
        let Some(job) = job_value(id) else { continue };
        let (over, uploads) = handed_over(wf, job, &keys);
        secrets.uploads = uploads;
        if !over.artifacts.is_empty() || !over.outputs.is_empty() {
            handed.push((id.clone(), over));
        }
    }
    if handed.is_empty() {
        return;
    }
    for (id, secrets) in jobs.iter_mut() {
        let Some(job) = job_value(id) else { continue };
        let mut received: Vec<(String, Why, Spot)> = Vec::new();
        for (i, wanted) in downloads(job) {
            for (from, over) in handed.iter().filter(|(from, _)| from != id) {
                for (name, keys) in &over.artifacts {
                    let matches = wanted.as_deref().is_none_or(|w| {
                        w == name
                            || globset::Glob::new(w)
                                .is_ok_and(|g| g.compile_matcher().is_match(name))
                    });
                    if matches {
                        for k in keys {
                            let via = format!("artifact `{name}` of job `{from}`");
                            received.push((k.clone(), Why::Travelled { via }, Spot::Step(i)));
                        }
                    }
                }
            }
        }
        let mut text = String::new();
        text_of(job, &mut text);
        let text = text.to_ascii_lowercase();
        for (from, over) in handed.iter().filter(|(from, _)| from != id) {
            for (name, keys) in &over.outputs {
                let read = format!(
                    "needs.{}.outputs.{}",
                    from.to_ascii_lowercase(),
                    name.to_ascii_lowercase()
                );
                if text.contains(&read) {
                    for k in keys {
                        let via = format!("output `{name}` of job `{from}`");
                        received.push((k.clone(), Why::Travelled { via }, Spot::Job));
                    }
                }
            }
        }
        for (name, why, spot) in received {
            if !secrets
                .keys
                .iter()
                .any(|k| normal(&k.name) == normal(&name))
            {
                secrets.keys.push(KeyUse { name, why, spot });
            }
        }
    }
}
