//! Reading steps for a fix: the strings of a value, whether it reads the key, what a step
//! exports to later steps, which step outputs it reads.

use std::collections::BTreeSet;

use regex::Regex;
use yaml_serde::Value;

use crate::audit::workflows::expr::{secrets_in_value, SecretRef};

/// Every string of a value (mapping values, not keys).
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Bool(b) => out.push(b.to_string()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Sequence(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Mapping(m) => m.values().for_each(|v| strings(v, out)),
        Value::Tagged(t) => strings(&t.value, out),
        Value::Null => {}
    }
}

pub(crate) fn all_strings(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    strings(v, &mut out);
    out
}

/// Whether a value reads one of `keys` (upper-case names) or every secret.
pub(crate) fn reads_secret(v: &Value, keys: &BTreeSet<String>) -> bool {
    all_strings(v).iter().any(|s| {
        secrets_in_value(s, false).iter().any(|r| match r {
            SecretRef::Named(n) => keys.contains(&n.to_ascii_uppercase()),
            SecretRef::Every(_) => true,
        })
    })
}

/// The variables a step exports to later steps through `$GITHUB_ENV` (`NAME=value`,
/// `NAME<<EOF`), and whether it changes `$GITHUB_PATH`.
pub(crate) fn exports(step: &Value) -> (Vec<String>, bool) {
    static EXPORT: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let export = EXPORT
        .get_or_init(|| Regex::new(r"\b([A-Za-z_][A-Za-z0-9_]*)(<<[A-Za-z_]+)?=").expect("regex"));
    let Some(run) = step.get("run").and_then(Value::as_str) else {
        return (Vec::new(), false);
    };
    let vars = run
        .lines()
        .filter(|l| l.contains("GITHUB_ENV"))
        .flat_map(|l| {
            export
                .captures_iter(l)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.starts_with("GITHUB_"))
        .collect();
    (vars, run.contains("GITHUB_PATH"))
}

/// `steps.<id>` references of a value.
fn step_refs(v: &Value) -> BTreeSet<String> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"\bsteps\.([A-Za-z_][A-Za-z0-9_-]*)").expect("regex"));
    all_strings(v)
        .iter()
        .flat_map(|s| {
            re.captures_iter(s)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

pub(crate) use crate::audit::workflows::triggers::admits_only_tags as tag_only_if;

/// `moved_ids` of the steps that move, for the job's `outputs:` check.
pub(crate) fn ids_of(steps: &[Value], moved: &[usize]) -> BTreeSet<String> {
    moved
        .iter()
        .filter_map(|&i| {
            steps[i]
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

/// Whether a value reads `steps.<id>` for one of `ids`.
pub(crate) fn reads_steps(v: &Value, ids: &BTreeSet<String>) -> bool {
    step_refs(v).iter().any(|r| ids.contains(r))
}
