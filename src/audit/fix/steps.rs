//! Which steps of a build-and-sign job move to its signing job: every step that reads the key,
//! and every later step that takes what those made (a file they wrote, a variable they
//! exported, their outputs), that runs only on tags, or that publishes. The rest stay, in order.

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

/// Whether `word` appears in `text` as a whole word (names and file names).
fn has_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
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

/// Whether a value names the variable `name` (`$NAME`, `${NAME}`, `env.NAME`, `%NAME%`).
pub(crate) fn names_var(v: &Value, name: &str) -> bool {
    all_strings(v).iter().any(|s| has_word(s, name))
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

/// What a step that reads the key leaves for later steps: variables it exports through
/// `$GITHUB_ENV` and the names of files it writes (`> release.jks`, `-o key.asc`).
fn leaves(step: &Value) -> Vec<String> {
    static EXPORT: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    static WRITE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let export = EXPORT
        .get_or_init(|| Regex::new(r"\b([A-Za-z_][A-Za-z0-9_]*)(<<[A-Za-z_]+)?=").expect("regex"));
    let write = WRITE.get_or_init(|| {
        Regex::new(r#"(?:>>?|\s-o|\s--output|\s-out)[ =]?\s*["']?([^\s"';|&<>()]+)"#)
            .expect("regex")
    });
    let Some(run) = step.get("run").and_then(Value::as_str) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in run.lines() {
        if line.contains("GITHUB_ENV") {
            out.extend(export.captures_iter(line).map(|c| c[1].to_string()));
        }
        for c in write.captures_iter(line) {
            let path = &c[1];
            if path.contains("GITHUB_") || path.starts_with("/dev/") || path.starts_with('&') {
                continue;
            }
            let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
            if name.len() >= 3 && !name.contains('$') {
                out.push(name.to_string());
            }
        }
    }
    out
}

pub(crate) use crate::audit::workflows::triggers::admits_only_tags as tag_only_if;

/// A step that publishes what the job made (an artifact, a release).
fn publishes(step: &Value) -> bool {
    const ACTIONS: [&str; 7] = [
        "actions/upload-artifact",
        "softprops/action-gh-release",
        "ncipollo/release-action",
        "svenstaro/upload-release-action",
        "actions/upload-release-asset",
        "actions/create-release",
        "marvinpinto/action-automatic-releases",
    ];
    let uses = step.get("uses").and_then(Value::as_str).unwrap_or_default();
    let run = step.get("run").and_then(Value::as_str).unwrap_or_default();
    ACTIONS
        .iter()
        .any(|a| uses.to_ascii_lowercase().starts_with(a))
        || run.contains("gh release ")
}

/// The steps to move (indices), or why the job cannot be split safely. `vars` are the job's
/// environment variables that hold a key; `signs`, the step that signs (it reads `vars`
/// without naming them, as a tool reads its conventional variable).
pub(crate) fn moved_steps(
    steps: &[Value],
    keys: &BTreeSet<String>,
    vars: &BTreeSet<String>,
    signs: Option<usize>,
) -> Result<Vec<usize>, String> {
    let mut tokens: BTreeSet<String> = vars.clone();
    let reads = |i: usize, step: &Value, tokens: &BTreeSet<String>| {
        reads_secret(step, keys)
            || (signs == Some(i) && !vars.is_empty())
            || all_strings(step)
                .iter()
                .any(|s| tokens.iter().any(|t| has_word(s, t)))
    };
    let first = (0..steps.len())
        .find(|&i| reads(i, &steps[i], &tokens))
        .ok_or_else(|| "no step names the key (it reaches the job another way)".to_string())?;
    let mut moved = Vec::new();
    let mut moved_ids = BTreeSet::new();
    for (i, step) in steps.iter().enumerate().skip(first) {
        let refs = step_refs(step);
        let gated = step
            .get("if")
            .and_then(Value::as_str)
            .is_some_and(tag_only_if);
        let takes = refs.iter().any(|r| moved_ids.contains(r));
        if !(reads(i, step, &tokens) || takes || gated || publishes(step)) {
            continue;
        }
        moved.push(i);
        if let Some(id) = step.get("id").and_then(Value::as_str) {
            moved_ids.insert(id.to_string());
        }
        tokens.extend(leaves(step));
    }
    // A moved step cannot read the outputs of a step that stays: `steps.<id>` is the job's own.
    let kept_ids: BTreeSet<String> = (0..steps.len())
        .filter(|i| !moved.contains(i))
        .filter_map(|i| {
            steps[i]
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    for &i in &moved {
        if let Some(r) = step_refs(&steps[i]).intersection(&kept_ids).next() {
            return Err(format!(
                "step {} reads `steps.{r}`, the outputs of a step that stays in the build: a job cannot read another job's steps",
                i + 1
            ));
        }
    }
    Ok(moved)
}

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

/// The least permissions the moved steps need: `contents: read`, `write` where they publish a
/// release; `id-token: write` for OIDC (keyless signing, a cloud login), `attestations: write`
/// for attestations, `packages: write` for a container registry push.
pub(crate) fn permissions(steps: &[&Value]) -> Vec<(&'static str, &'static str)> {
    let text: String = steps
        .iter()
        .flat_map(|s| all_strings(s))
        .collect::<Vec<_>>()
        .join("\n")
        .to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    let release = steps.iter().any(|s| {
        let uses = s.get("uses").and_then(Value::as_str).unwrap_or_default();
        publishes(s) && !uses.starts_with("actions/upload-artifact")
    }) || has(&["goreleaser", "git push", "git tag ", "gh release"]);
    let mut out = vec![("contents", if release { "write" } else { "read" })];
    // Keyless signing (cosign without a key, Sigstore) and cloud logins use the run's OIDC token.
    let keyless = text.contains("cosign sign") && !text.contains("--key");
    if keyless
        || has(&[
            "sigstore/",
            "actions/attest",
            "configure-aws-credentials",
            "azure/login",
            "google-github-actions/auth",
        ])
    {
        out.push(("id-token", "write"));
    }
    if has(&["actions/attest"]) {
        out.push(("attestations", "write"));
    }
    if has(&["docker push", "build-push-action", "ghcr.io"]) {
        out.push(("packages", "write"));
    }
    out
}
