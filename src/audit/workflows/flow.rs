//! Which secrets of a job are signing keys, judged by what they do: a secret that flows into a
//! signing command or action is a key; so is one with a curated signing name, unless it only
//! flows into verification. Read from the workflow as YAML values (escapes and aliases resolved
//! as GitHub resolves them), with secret references parsed from the expression language.

use crate::error::Reason;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use regex::Regex;
use yaml_serde::Value;

use super::expr::{secrets_in_value, SecretRef};
use crate::audit::catalogue::{Catalogue, NameClass};
use crate::audit::secrets::SigningSecrets;

/// Where in a job a key was seen first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Spot {
    Step(usize),
    JobEnv,
    WorkflowEnv,
    Job,
}

/// Why warden judged a secret a signing key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// It flows into a signing command or action (`op`), possibly inside a local action.
    FlowsInto { op: String, within: Option<String> },
    /// It is written out in a job that signs with `op` (key-shaped name, a later step reads it).
    Beside { op: String },
    /// Its name is a curated signing-key name.
    Name,
    /// Named with `--secret` / `--only-secret`.
    Given,
    /// A reusable workflow's secret that receives a caller's key ("GPG_PRIVATE_KEY from …").
    Passed { from: String },
    /// The whole secrets context (`toJSON(secrets)`, `secrets[format(…)]`), read in a job that
    /// signs with `op`: whatever its key is called, the job holds it. The use's name is the
    /// expression, not a secret's.
    Context { op: String },
    /// It is handed to an environment variable a build or signing tool reads its key from by
    /// convention (`CSC_LINK` for electron-builder).
    Convention { tool: String, var: String },
    /// It is written to a file a build tool signs with (`release.jks`, `key.properties`).
    KeyFile { file: String },
    /// It is handed to a variable or an input the workflow named as a signing key
    /// (`LINUX_SIGNING_KEY: ${{ secrets.BLOB }}`, `with: { p12-file-base64: … }`): the author's
    /// name for what the secret holds, read by a tool warden does not know.
    NamedAs { var: String },
    /// Another job of the repository showed it to be a key.
    KeyElsewhere,
    /// Read from a secret store outside GitHub (`aws secretsmanager get-secret-value`) in a job
    /// that signs with `op`: the use's name is the store and the secret's name there.
    Fetched { op: String },
    /// Another job of the workflow hands it over (`via`: "artifact `signing` of job `build`",
    /// "output `key` of job `prepare`").
    Travelled { via: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyUse {
    pub(crate) name: String,
    pub(crate) why: Why,
    pub(crate) spot: Spot,
}

/// What a job does with secrets.
#[derive(Clone, Debug, Default)]
pub(crate) struct JobSecrets {
    /// The signing keys, in order of first use.
    pub(crate) keys: Vec<KeyUse>,
    /// The job receives every secret (`toJSON(secrets)`, `secrets[matrix.x]`): the expression.
    pub(crate) every: Option<(String, Spot)>,
    /// The signing operation the job runs, if any: label and step.
    pub(crate) signs: Option<(String, usize)>,
    /// The repository's scripts and local actions read to judge its steps.
    pub(crate) followed: BTreeSet<String>,
    /// Every named secret the job reads (not the known non-keys), and where first: a secret
    /// shown to be a key in another job is a key here too.
    pub(crate) reads: Vec<(String, Spot)>,
    /// Secrets handed to a local action that could not be read: what it is (and why it could
    /// not be read), the secrets, and the step.
    pub(crate) unread: Vec<(String, Vec<String>, Spot)>,
    /// Keys the job writes to a file it uploads as an artifact: the artifact's name, the key,
    /// and the upload step.
    pub(crate) uploads: Vec<(String, String, usize)>,
}

impl JobSecrets {
    /// Every secret, read in a job that signs: the key is among them, whatever it is called.
    fn add_context(&mut self) {
        if let (Some((op, _)), Some((expr, spot))) = (&self.signs, &self.every) {
            if self.keys.is_empty() {
                self.keys.push(KeyUse {
                    name: expr.clone(),
                    why: Why::Context { op: op.clone() },
                    spot: spot.clone(),
                });
            }
        }
    }

    /// Records `name` as a key (once), unless its name keeps it out: `definite` when it is handed
    /// straight to where a tool takes its key (a key input, a conventional variable), and then
    /// only a name that identifies rather than holds (`…_KEY_ID`) keeps it out.
    fn add(&mut self, given: &SigningSecrets, name: &str, why: Why, spot: Spot, definite: bool) {
        let cat = Catalogue::get();
        let excluded = if definite {
            cat.never_key(name)
        } else {
            cat.classify(name) == NameClass::NotKey
        };
        if (excluded || given.only_given()) && !given.names(name) {
            return;
        }
        let why = match given.passed_from(name) {
            _ if given.names(name) => Why::Given,
            Some(from) if why == Why::Name => Why::Passed {
                from: from.to_string(),
            },
            _ => why,
        };
        if !self.keys.iter().any(|k| k.name.eq_ignore_ascii_case(name)) {
            self.keys.push(KeyUse {
                name: name.to_string(),
                why,
                spot,
            });
        }
    }

    /// No secret of GitHub's is the key of a job that signs, but it reads one from a store of
    /// its own (`aws secretsmanager get-secret-value`): that is the key.
    fn add_fetched(&mut self, steps: &[Value]) {
        let (true, Some((op, _))) = (self.keys.is_empty(), &self.signs) else {
            return;
        };
        let cat = Catalogue::get();
        let read = steps.iter().enumerate().find_map(|(i, step)| {
            let store = match (step.get("run").and_then(scalar), step.get("uses")) {
                (Some(run), _) => cat.store_read(&run),
                (None, Some(uses)) => cat.store_action(uses.as_str()?).map(str::to_string),
                _ => None,
            };
            store.map(|s| (s, i))
        });
        if let Some((name, i)) = read {
            let why = Why::Fetched { op: op.clone() };
            self.keys.push(KeyUse {
                name,
                why,
                spot: Spot::Step(i),
            });
        }
    }

    /// Adds the secrets it reads that other jobs showed to be keys (`known`, normalised).
    pub(crate) fn add_known(&mut self, known: &BTreeSet<String>) {
        for (name, spot) in std::mem::take(&mut self.reads) {
            let n = Catalogue::normal(&name);
            if known.contains(&n) && !self.keys.iter().any(|k| Catalogue::normal(&k.name) == n) {
                self.keys.push(KeyUse {
                    name,
                    why: Why::KeyElsewhere,
                    spot,
                });
            }
        }
    }
}

/// `env:` of a mapping: variable name → the secrets its value reads.
pub(super) fn env_secrets(map: &Value) -> BTreeMap<String, Vec<SecretRef>> {
    let mut out = BTreeMap::new();
    if let Some(Value::Mapping(env)) = map.get("env") {
        for (k, v) in env {
            if let (Some(k), Some(v)) = (k.as_str(), scalar(v)) {
                out.insert(k.to_string(), secrets_in_value(&v, false));
            }
        }
    }
    out
}

/// `env:` of a mapping: variable name → the names of the secrets its value reads.
pub(crate) fn env_secret_names(map: &Value) -> BTreeMap<String, Vec<String>> {
    env_secrets(map)
        .into_iter()
        .map(|(var, refs)| {
            let named = names(&refs).map(str::to_string).collect();
            (var, named)
        })
        .collect()
}

/// A scalar as text (numbers and booleans as YAML writes them).
pub(crate) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Every string in a value, for the secrets it reads anywhere.
fn all_refs(v: &Value, out: &mut Vec<SecretRef>) {
    match v {
        Value::String(s) => out.extend(secrets_in_value(s, false)),
        Value::Sequence(items) => items.iter().for_each(|i| all_refs(i, out)),
        Value::Mapping(m) => {
            for (k, v) in m {
                if k.as_str() == Some("if") {
                    if let Some(s) = scalar(v) {
                        out.extend(secrets_in_value(&s, true));
                        continue;
                    }
                }
                all_refs(v, out);
            }
        }
        Value::Tagged(t) => all_refs(&t.value, out),
        _ => {}
    }
}

pub(super) fn names(refs: &[SecretRef]) -> impl Iterator<Item = &str> {
    refs.iter().filter_map(|r| match r {
        SecretRef::Named(n) => Some(n.as_str()),
        SecretRef::Every(_) => None,
    })
}

/// Environment variables a script reads: `$X`, `${X}`, `$env:X`, `%X%`, `env.X`.
fn script_vars() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)|\$env:([A-Za-z_][A-Za-z0-9_]*)|%([A-Za-z_][A-Za-z0-9_]*)%|\benv\.([A-Za-z_][A-Za-z0-9_-]*)")
            .expect("static regex")
    })
}

pub(super) fn vars_read(script: &str) -> BTreeSet<String> {
    script_vars()
        .captures_iter(script)
        .filter_map(|c| {
            (1..=4)
                .find_map(|i| c.get(i))
                .map(|m| m.as_str().to_string())
        })
        .collect()
}

/// One step's view: the signing (or verifying) operation it runs, and the secrets that flow into
/// that operation.
struct StepOp {
    op: Option<(String, Option<String>)>,
    verifies: bool,
    flowing: Vec<String>,
    /// Of `flowing`, those handed straight to an input that carries the key (`gpg_private_key:`):
    /// a key whatever the secret is called.
    definite: Vec<String>,
    /// The caller's secrets a local action's steps write to a key file (`inputs.keystore` into
    /// `release.jks`).
    key_files: Vec<(String, Why)>,
    /// Secrets the step's own script or inputs read (written out, passed on).
    touched: Vec<String>,
    /// The repository's scripts and local actions read to judge the step.
    followed: Vec<String>,
    /// A local action the step hands secrets to could not be read: what and why. Not a key
    /// (nothing shows it signs), and not safe either: the job is `unverifiable`.
    unread: Option<String>,
}

/// What a local action (`uses: ./dir`) is, read from `dir/action.yml` under `root`: the steps of
/// a composite action, `Ok(None)` for another kind (JavaScript, Docker), or why it could not be
/// read. Read and parsed once per run, however many steps use it.
type LocalAction = Result<Option<std::sync::Arc<Vec<Value>>>, Reason>;

fn composite_steps(root: &Path, uses: &str) -> LocalAction {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Cache = Mutex<HashMap<std::path::PathBuf, LocalAction>>;
    static SEEN: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let rel = uses.trim_start_matches("./");
    if !crate::files::paths::is_repo_relative(rel) {
        return Err("not a path inside the repository".into());
    }
    let dir = root.join(rel);
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    seen.entry(dir.clone())
        .or_insert_with(|| {
            let mut why = String::from("no action.yml");
            let text = ["action.yml", "action.yaml"].iter().find_map(|f| {
                let file = dir.join(f);
                if std::fs::symlink_metadata(&file).is_err() {
                    return None;
                }
                crate::files::guarded::read_text_inside(root, &file, 1 << 20)
                    .map_err(|e| why = format!("{f}: {e}"))
                    .ok()
            });
            let text = text.ok_or(why)?;
            let doc: Value = crate::yaml::parse(&text).map_err(|(_, e)| e)?;
            Ok(match doc.get("runs").and_then(|r| r.get("steps")) {
                Some(Value::Sequence(steps)) => Some(Arc::new(steps.clone())),
                _ => None,
            })
        })
        .clone()
}

/// The caller's secrets a text reads through `inputs.X` (inside a composite action).
fn from_inputs(text: &str, inputs: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    if inputs.is_empty() {
        return Vec::new();
    }
    super::expr::expressions(text)
        .flat_map(|(_, e)| super::expr::inputs_read(e))
        .filter_map(|name| inputs.get(&name))
        .flatten()
        .cloned()
        .collect()
}

/// The secrets an `env:` variable of the step reads, directly or through `inputs.*`.
fn env_value_secrets(
    step: &Value,
    var: &str,
    refs: &[SecretRef],
    inputs: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let mut out: Vec<String> = names(refs).map(str::to_string).collect();
    if let Some(v) = step.get("env").and_then(|e| e.get(var)).and_then(scalar) {
        out.extend(from_inputs(&v, inputs));
    }
    out
}

fn no_op() -> StepOp {
    StepOp {
        op: None,
        verifies: false,
        flowing: Vec::new(),
        definite: Vec::new(),
        key_files: Vec::new(),
        touched: Vec::new(),
        followed: Vec::new(),
        unread: None,
    }
}

/// The operation of one step (a workflow's or a composite action's) and what flows into it.
/// `visible` is the environment the step's process gets; `inputs` maps `inputs.X` (inside a
/// composite action) to the caller's secrets.
fn step_op(
    step: &Value,
    visible: &BTreeMap<String, Vec<SecretRef>>,
    inputs: &BTreeMap<String, Vec<String>>,
    (root, given): (&Path, &SigningSecrets),
    depth: usize,
) -> StepOp {
    if let Some(run) = step.get("run").and_then(scalar) {
        return run_op(step, &run, visible, inputs, root);
    }
    match step.get("uses").and_then(Value::as_str) {
        Some(uses) => uses_op(step, uses, visible, inputs, (root, given), depth),
        None => no_op(),
    }
}

/// A `run:` step: a signing (or verifying) command in its script or in a repository script it
/// runs; what flows in is what the script reads and the step's own `env:`.
fn run_op(
    step: &Value,
    run: &str,
    visible: &BTreeMap<String, Vec<SecretRef>>,
    inputs: &BTreeMap<String, Vec<String>>,
    root: &Path,
) -> StepOp {
    let mut op = no_op();
    let mut flowing: Vec<String> = names(&secrets_in_value(run, false))
        .map(str::to_string)
        .collect();
    flowing.extend(from_inputs(run, inputs));
    for var in vars_read(run) {
        if let Some(refs) = visible.get(&var) {
            flowing.extend(names(refs).map(str::to_string));
        }
    }
    for (var, refs) in &env_secrets(step) {
        flowing.extend(env_value_secrets(step, var, refs, inputs));
    }
    op.touched = flowing.clone();
    // A script of the repository the step runs is part of what it does.
    let scripts = local_scripts(root, run);
    op.followed = scripts.iter().filter_map(|(p, _)| p.clone()).collect();
    let (signs, verifies) = std::iter::once(classify(run))
        .chain(scripts.into_iter().map(|(_, class)| class))
        .fold((None, false), |(s, v), (s2, v2)| (s.or(s2), v || v2));
    if let Some(label) = signs {
        op.op = Some((label, None));
        op.flowing = flowing;
    } else if let Some((label, within, read)) = build_signing(run, visible, root) {
        op.followed.push(within.clone());
        op.op = Some((label, Some(within)));
        // What the run names itself, and the variables the build reads.
        op.flowing = names(&secrets_in_value(run, false))
            .map(str::to_string)
            .chain(read)
            .collect();
    } else if verifies {
        op.verifies = true;
        op.flowing = flowing;
    }
    op
}

/// The signing a build the step starts does (a Gradle file's signing config, a make target's
/// recipe or a script it runs): its label, the build file, and the secrets in the variables the
/// build reads.
fn build_signing(
    run: &str,
    visible: &BTreeMap<String, Vec<SecretRef>>,
    root: &Path,
) -> Option<(String, String, Vec<String>)> {
    // `visible` holds the step's own `env:` already (its callers merge it in).
    super::build_files::builds(root, run)
        .into_iter()
        .find_map(|b| {
            // Signed in the build file itself: what it reads; in a script it runs: what the step
            // hands on (the script reads the environment it inherits).
            let (label, in_file) = if b.gradle_signs {
                ("Gradle signing".to_string(), true)
            } else if let Some(label) = classify(&b.text).0 {
                (label, true)
            } else {
                let label = local_scripts(root, &b.text)
                    .into_iter()
                    .find_map(|(_, c)| c.0)?;
                (label, false)
            };
            let read: Vec<String> = visible
                .iter()
                .filter(|(var, _)| !in_file || super::build_files::reads_var(&b.text, var))
                .flat_map(|(_, refs)| names(refs).map(str::to_string))
                .collect();
            Some((label, b.path, read))
        })
}

/// A `uses:` step: a signing action (catalogue or `.github/warden.toml`), whose key inputs carry
/// the key, or a local composite action, followed into its steps.
fn uses_op(
    step: &Value,
    uses: &str,
    visible: &BTreeMap<String, Vec<SecretRef>>,
    inputs: &BTreeMap<String, Vec<String>>,
    (root, given): (&Path, &SigningSecrets),
    depth: usize,
) -> StepOp {
    let mut op = no_op();
    let own_env = env_secrets(step);
    let handed = handed_over(step, &own_env, inputs);
    op.touched = handed.iter().flat_map(|(_, s)| s.clone()).collect();
    if let Some((label, key_inputs)) = signing_action(uses, given) {
        op.op = Some((label, None));
        op.flowing = handed
            .iter()
            .filter(|(k, _)| key_inputs.as_ref().is_none_or(|i| i.contains(k)))
            .flat_map(|(_, s)| s.clone())
            .collect();
        // An action reads its key variables from the job's (or workflow's) env too.
        if let Some(key_inputs) = &key_inputs {
            for (var, refs) in visible {
                if key_inputs.contains(&var.to_ascii_lowercase()) {
                    op.flowing.extend(names(refs).map(str::to_string));
                }
            }
            op.definite = op.flowing.clone();
        }
        return op;
    }
    if !uses.starts_with("./") || depth >= 3 {
        return op;
    }
    let steps = match composite_steps(root, uses) {
        Ok(Some(steps)) => {
            op.followed.push(uses.trim_start_matches("./").to_string());
            steps
        }
        Ok(None) => return op,
        // Not followed is not safe, and not evidence either: the job is `unverifiable` (what
        // could not be read, and the secrets it was handed), and no secret becomes a key by it.
        Err(why) => {
            if !op.touched.is_empty() {
                op.unread = Some(format!("{uses}, which could not be read ({why})"));
            }
            return op;
        }
    };
    let inner_inputs: BTreeMap<String, Vec<String>> = handed
        .iter()
        .filter(|(_, s)| !s.is_empty())
        .cloned()
        .collect();
    // The step's env reaches the action's steps too.
    let mut inner_visible = visible.clone();
    inner_visible.extend(own_env);
    follow_composite(
        &steps,
        (uses, depth),
        (&inner_visible, &inner_inputs),
        (root, given),
        &mut op,
    );
    op
}

/// The steps of a local composite action `uses` (called from a step that handed it
/// `inner_inputs`, with `inner_visible` in its env), followed into `op`: the key files they
/// write, and what their signing commands and actions take.
fn follow_composite(
    steps: &[Value],
    (uses, depth): (&str, usize),
    (inner_visible, inner_inputs): (&Visible, &Inputs),
    (root, given): (&Path, &SigningSecrets),
    op: &mut StepOp,
) {
    let action_text: String = steps
        .iter()
        .filter_map(|s| s.get("run").and_then(scalar))
        .collect::<Vec<_>>()
        .join("\n");
    for inner in steps.iter() {
        let mut v = inner_visible.clone();
        v.extend(env_secrets(inner));
        if let Some(run) = inner.get("run").and_then(scalar) {
            // An `env:` variable of the action's step set from `inputs.X` carries the caller's
            // secret to the line that writes the file.
            let mut env = v.clone();
            for (k, refs) in env_secrets(inner) {
                let read = env_value_secrets(inner, &k, &refs, inner_inputs);
                env.insert(k, read.into_iter().map(SecretRef::Named).collect());
            }
            op.key_files
                .extend(written_keys(&run, &env, inner_inputs, &action_text));
        }
        let inner_op = step_op(inner, &v, inner_inputs, (root, given), depth + 1);
        op.followed.extend(inner_op.followed.iter().cloned());
        if op.unread.is_none() && !op.touched.is_empty() {
            op.unread = inner_op.unread.clone();
        }
        op.key_files.extend(inner_op.key_files.iter().cloned());
        if let Some((label, _)) = inner_op.op {
            op.op = Some((label, Some(uses.to_string())));
            op.flowing.extend(inner_op.flowing);
            op.definite.extend(inner_op.definite);
        } else if inner_op.verifies && op.op.is_none() {
            op.verifies = true;
            op.flowing.extend(inner_op.flowing);
        }
    }
}

/// The secrets a step sees, by environment variable.
type Visible = BTreeMap<String, Vec<SecretRef>>;
/// The secrets a composite action's caller handed each input, by input name.
type Inputs = BTreeMap<String, Vec<String>>;

/// What a step hands over to its action: `with:` inputs and its own `env:`, by (lower-case)
/// name, with the secrets each carries.
fn handed_over(
    step: &Value,
    own_env: &BTreeMap<String, Vec<SecretRef>>,
    inputs: &BTreeMap<String, Vec<String>>,
) -> Vec<(String, Vec<String>)> {
    let mut handed: Vec<(String, Vec<String>)> = Vec::new();
    if let Some(Value::Mapping(with)) = step.get("with") {
        for (k, v) in with {
            if let (Some(k), Some(v)) = (k.as_str(), scalar(v)) {
                let mut s: Vec<String> = names(&secrets_in_value(&v, false))
                    .map(str::to_string)
                    .collect();
                s.extend(from_inputs(&v, inputs));
                handed.push((k.to_ascii_lowercase(), s));
            }
        }
    }
    for (k, refs) in own_env {
        handed.push((
            k.to_ascii_lowercase(),
            env_value_secrets(step, k, refs, inputs),
        ));
    }
    handed
}

/// The signing action a `uses:` names (the catalogue's, or one from `.github/warden.toml`): its
/// name for findings (`tauri-apps/tauri-action`, what the user sees in the YAML) and the inputs
/// that carry the key (`None`: all of them).
fn signing_action(uses: &str, given: &SigningSecrets) -> Option<(String, Option<Vec<String>>)> {
    let repo = crate::audit::catalogue::action_repo(uses);
    if let Some(a) = Catalogue::get().signing_action(uses) {
        // Named as the workflow names it: a fork (`nop33/action-electron-builder`) is not the
        // catalogue's original.
        let named = if repo == a.uses || repo.starts_with(&format!("{}/", a.uses)) {
            a.uses.clone()
        } else {
            repo.split('/').take(2).collect::<Vec<_>>().join("/")
        };
        return Some((named, a.inputs.clone()));
    }
    let a = given
        .actions
        .iter()
        .find(|a| a.uses.to_ascii_lowercase() == repo)?;
    Some((
        repo,
        a.inputs
            .as_ref()
            .map(|i| i.iter().map(|s| s.to_ascii_lowercase()).collect()),
    ))
}

/// What a script does: the signing command it runs (label), and whether it verifies.
type ScriptClass = (Option<String>, bool);

fn classify(script: &str) -> ScriptClass {
    let cat = Catalogue::get();
    (
        cat.signing_tool(script).map(|t| t.label.clone()),
        cat.verifies(script),
    )
}

/// What the repository's scripts a `run:` names do (`.github/scripts/sign.sh`, `./release.sh`):
/// plain paths inside the repository only, 1 MiB each, at most 8 per step. Each script is read
/// and classified once per run, however many steps name it. With each, its path when it was
/// read.
fn local_scripts(root: &Path, run: &str) -> Vec<(Option<String>, ScriptClass)> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    type Seen = Mutex<HashMap<std::path::PathBuf, (bool, ScriptClass)>>;
    static SEEN: std::sync::OnceLock<Seen> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?:^|[\s;&|(])(?:\./)?([A-Za-z0-9_.][A-Za-z0-9_./-]*\.(?:sh|bash|ps1|py|rb|js|mjs|cjs|pl))\b")
            .expect("static regex")
    });
    let seen = SEEN.get_or_init(Default::default);
    re.captures_iter(run)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .filter(|p| crate::files::paths::is_repo_relative(p))
        .take(8)
        .map(|p| {
            let path = root.join(p);
            let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            let (read, class) = seen
                .entry(path.clone())
                .or_insert_with(|| {
                    crate::files::guarded::read_text_inside(root, &path, 1 << 20)
                        .map_or((false, (None, false)), |text| (true, classify(&text)))
                })
                .clone();
            (read.then(|| p.trim_start_matches("./").to_string()), class)
        })
        .collect()
}

/// Environment variables → the secrets their values read.
type Env = BTreeMap<String, Vec<SecretRef>>;

/// What a job's steps run, for a convention's `runs`: scripts, `uses:`, step names, and the
/// literal values of `with:` and `env:` (a tool is often named only there: `DLIB_PATH:
/// …\Azure.CodeSigning.Dlib.dll`).
fn job_text(steps: &[Value]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for s in steps {
        for k in ["run", "uses", "name"] {
            parts.extend(s.get(k).and_then(scalar));
        }
        for k in ["with", "env"] {
            if let Some(Value::Mapping(m)) = s.get(k) {
                // The literal text: expressions (`${{ secrets.X }}`) say nothing of the tool.
                parts.extend(m.values().filter_map(scalar).map(|v| {
                    super::expr::expressions(&v)
                        .fold(v.clone(), |text, (_, e)| text.replace(e, " "))
                }));
            }
        }
    }
    parts.join("\n")
}

/// The secrets a job reads that are named after a tool's key variable (`MYAPP_AZURE_CLIENT_SECRET`
/// in a job that signs with Azure's signing service, `MAS_CSC_LINK` for electron-builder): keys,
/// whatever variable they are mapped into.
fn named_after_convention(steps: &[Value], seen: &[(String, Spot)]) -> Vec<(String, Why, Spot)> {
    let cat = Catalogue::get();
    let text = job_text(steps);
    seen.iter()
        .filter_map(|(name, spot)| {
            let c = cat.convention_named(name).filter(|c| c.applies(&text))?;
            let why = Why::Convention {
                tool: c.tool.clone(),
                var: name.clone(),
            };
            Some((name.clone(), why, spot.clone()))
        })
        .collect()
}

/// The secrets a job hands to a build tool's key by convention: an environment variable the tool
/// reads (`CSC_LINK`, in the workflow's, the job's or a step's `env:`), a key file a script
/// writes, or a variable set through `$GITHUB_ENV`.
fn conventional_keys(
    steps: &[Value],
    (wf_env, job_env): (&Env, &Env),
    visible: &Env,
) -> Vec<(String, Why, Spot)> {
    let cat = Catalogue::get();
    let mut found = Vec::new();
    let job_text = job_text(steps);
    let mut conventional = |env: &BTreeMap<String, Vec<SecretRef>>, spot: Spot| {
        for (var, refs) in env {
            let Some(c) = cat.convention(var).filter(|c| c.applies(&job_text)) else {
                if cat.classify(var) == NameClass::Key {
                    // A secret named as a key already is one by its own name.
                    for name in names(refs).filter(|n| cat.classify(n) != NameClass::Key) {
                        let why = Why::NamedAs { var: var.clone() };
                        found.push((name.to_string(), why, spot.clone()));
                    }
                }
                continue;
            };
            for r in refs {
                // A dynamic index (`secrets[format(…)]`) hands the tool some secret: the
                // expression stands for the key, as it does for a signing step.
                let name = match r {
                    SecretRef::Named(n) => n.clone(),
                    SecretRef::Every(e) => e.clone(),
                };
                let why = Why::Convention {
                    tool: c.tool.clone(),
                    var: var.clone(),
                };
                found.push((name, why, spot.clone()));
            }
        }
    };
    conventional(wf_env, Spot::WorkflowEnv);
    conventional(job_env, Spot::JobEnv);
    let mut written = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let step_env = env_secrets(step);
        conventional(&step_env, Spot::Step(i));
        if let Some(Value::Mapping(with)) = step.get("with") {
            let inputs: Vec<(&str, String, Vec<SecretRef>)> = with
                .iter()
                .filter_map(|(k, v)| {
                    let v = scalar(v)?;
                    let refs = secrets_in_value(&v, false);
                    Some((k.as_str()?, v, refs))
                })
                .collect();
            // An action that writes a secret to a file a build tool signs with (`fileName:
            // release.jks` beside `encodedString: ${{ secrets.X }}`, as base64-to-file actions
            // do).
            let file = inputs
                .iter()
                .map(|(_, v, _)| v.trim())
                .find(|v| !v.contains("${{") && cat.key_file(v));
            for (k, _, refs) in &inputs {
                for name in names(refs) {
                    if let Some(file) = file {
                        let why = Why::KeyFile {
                            file: file.to_string(),
                        };
                        written.push((name.to_string(), why, Spot::Step(i)));
                    }
                    // An input named as a key (`p12-file-base64`, `signing-key`).
                    if cat.classify(k) == NameClass::Key && cat.classify(name) != NameClass::Key {
                        let why = Why::NamedAs { var: k.to_string() };
                        written.push((name.to_string(), why, Spot::Step(i)));
                    }
                }
            }
        }
        let Some(run) = step.get("run").and_then(scalar) else {
            continue;
        };
        let mut env = visible.clone();
        env.extend(step_env);
        for (name, why) in written_keys(&run, &env, &BTreeMap::new(), &job_text) {
            written.push((name, why, Spot::Step(i)));
        }
    }
    found.extend(written);
    found
}

/// Where a line of a script writes (`> file`, `tee file`, `-o file`, `Out-File file`): the
/// path, as group 1.
pub(super) fn write_target() -> &'static Regex {
    static TARGET: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    TARGET.get_or_init(|| {
        Regex::new(r#"(?:>>?|\btee\s+(?:-a\s+)?|\s-out\s+|\s-o\s*|--output[= ]|\bof=|(?i:\bOut-File\s+(?:-FilePath\s+)?|\bSet-Content\s+(?:-Path\s+)?|-OutFile\s+|\bWriteAll(?:Bytes|Text)\(\s*))\s*["']?([^\s"'|;&<>(),]+)"#)
            .expect("static regex")
    })
}

/// The secrets a `run:` script writes where a build tool takes its key: into a key file
/// (`echo "$KEYSTORE" | base64 -d > release.jks`, a heredoc into `key.properties`), or into a
/// conventional variable through `$GITHUB_ENV` (`echo "CSC_LINK=$CERT" >> $GITHUB_ENV`).
fn written_keys(
    run: &str,
    env: &BTreeMap<String, Vec<SecretRef>>,
    inputs: &BTreeMap<String, Vec<String>>,
    job_text: &str,
) -> Vec<(String, Why)> {
    let target = write_target();
    let cat = Catalogue::get();
    let lines: Vec<&str> = run.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        // What the line writes: itself, and a heredoc's body.
        let mut text = line.to_string();
        if let Some(delimiter) = line
            .split("<<")
            .nth(1)
            .map(|d| {
                d.trim()
                    .trim_start_matches('-')
                    .trim_matches(['\'', '"', ' '])
            })
            .and_then(|d| d.split_whitespace().next())
        {
            for body in lines.iter().skip(i + 1).take(50) {
                if body.trim() == delimiter {
                    break;
                }
                text.push('\n');
                text.push_str(body);
            }
        }
        let secrets_here = || -> Vec<String> {
            let mut found: Vec<String> = names(&secrets_in_value(&text, false))
                .map(str::to_string)
                .collect();
            found.extend(from_inputs(&text, inputs));
            for var in vars_read(&text) {
                if let Some(refs) = env.get(&var) {
                    found.extend(names(refs).map(str::to_string));
                }
            }
            found
        };
        for m in target.captures_iter(line).filter_map(|c| c.get(1)) {
            let file = m.as_str();
            if cat.key_file(file) {
                for name in secrets_here() {
                    out.push((
                        name,
                        Why::KeyFile {
                            file: file.to_string(),
                        },
                    ));
                }
            } else if file.contains("GITHUB_ENV") {
                // `VAR=value >> $GITHUB_ENV`: the variable a later step's tool reads.
                let var = line
                    .split(['"', '\'', ' '])
                    .find_map(|w| w.split_once('=').map(|(v, _)| v))
                    .unwrap_or_default();
                if let Some(c) = cat.convention(var).filter(|c| c.applies(job_text)) {
                    for name in secrets_here() {
                        let why = Why::Convention {
                            tool: c.tool.clone(),
                            var: var.to_string(),
                        };
                        out.push((name, why));
                    }
                }
            }
        }
    }
    out
}

/// Key-shaped names: what is written to disk in a job that signs, for a later step to load.
fn key_shaped(name: &str) -> bool {
    let n = Catalogue::normal(name);
    [
        "KEY",
        "CERT",
        "P12",
        "PFX",
        "KEYSTORE",
        "STORE",
        "PASSPHRASE",
        "PASSWORD",
        "GPG",
        "PGP",
    ]
    .iter()
    .any(|t| n.split('_').any(|w| w == *t) || n.ends_with(t))
}

/// The job with each `secrets[matrix.X]` written as the secrets the matrix names
/// (`(secrets.A || secrets.B)`): a matrix written in the workflow says which secrets its
/// entries read. Left as it is when `X` is not a list of plain names (`fromJSON(…)`).
fn with_matrix_secrets(job: &Value) -> std::borrow::Cow<'_, Value> {
    use std::borrow::Cow;
    static INDEX: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| {
        Regex::new(r"(?i)\bsecrets\s*\[\s*matrix\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_-]*)|\[\s*'([^']*)'\s*\])\s*\]")
            .expect("static regex")
    });
    fn any(v: &Value, f: &dyn Fn(&str) -> bool) -> bool {
        match v {
            Value::String(s) => f(s),
            Value::Sequence(items) => items.iter().any(|i| any(i, f)),
            Value::Mapping(m) => m.values().any(|i| any(i, f)),
            Value::Tagged(t) => any(&t.value, f),
            _ => false,
        }
    }
    let Some(Value::Mapping(matrix)) = job.get("strategy").and_then(|s| s.get("matrix")) else {
        return Cow::Borrowed(job);
    };
    // Most matrix jobs index no secret: nothing more to do, no copy.
    if !any(job, &|s| s.contains("secrets") && index.is_match(s)) {
        return Cow::Borrowed(job);
    }
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut add = |k: &Value, v: &Value| {
        if let (Some(k), Some(v)) = (k.as_str(), scalar(v)) {
            values.entry(k.to_ascii_lowercase()).or_default().push(v);
        }
    };
    for (k, v) in matrix {
        match (k.as_str(), v) {
            (Some("include"), Value::Sequence(entries)) => {
                for entry in entries {
                    if let Value::Mapping(e) = entry {
                        e.iter().for_each(|(k, v)| add(k, v));
                    }
                }
            }
            (Some("exclude"), _) => {}
            (_, Value::Sequence(items)) => items.iter().for_each(|v| add(k, v)),
            _ => {}
        }
    }
    static PLAIN: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let plain =
        PLAIN.get_or_init(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_-]*$").expect("static regex"));
    fn rewrite(v: &mut Value, f: &dyn Fn(&str) -> Option<String>) {
        match v {
            Value::String(s) => {
                if let Some(new) = f(s) {
                    *s = new;
                }
            }
            Value::Sequence(items) => items.iter_mut().for_each(|i| rewrite(i, f)),
            Value::Mapping(m) => m.values_mut().for_each(|i| rewrite(i, f)),
            Value::Tagged(t) => rewrite(&mut t.value, f),
            _ => {}
        }
    }
    let expand = |text: &str| -> Option<String> {
        if !index.is_match(text) {
            return None;
        }
        let out = index.replace_all(text, |c: &regex::Captures<'_>| {
            let key = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
            match values.get(&key.to_ascii_lowercase()) {
                Some(names) if names.iter().all(|n| plain.is_match(n)) => {
                    let mut names = names.clone();
                    names.sort();
                    names.dedup();
                    let refs: Vec<String> = names.iter().map(|n| format!("secrets.{n}")).collect();
                    format!("({})", refs.join(" || "))
                }
                _ => c[0].to_string(),
            }
        });
        Some(out.into_owned())
    };
    let mut job = job.clone();
    rewrite(&mut job, &expand);
    Cow::Owned(job)
}

/// The signing keys of one job (`job` is its YAML value, `wf` the workflow's).
/// What a job's steps do with the secrets: which only verify, which sign, and which are written
/// out (by step).
struct StepFlows {
    verify_only: BTreeSet<String>,
    signed_with: BTreeSet<String>,
    touched: Vec<(String, usize)>,
}

/// Each step of a job: the secrets it reads (into `seen`), the keys its signing command, action
/// or key file shows (into `out`), and what [`StepFlows`] gathers.
fn scan_steps(
    steps: &[Value],
    visible: &BTreeMap<String, Vec<SecretRef>>,
    (root, given): (&Path, &SigningSecrets),
    (out, seen): (&mut JobSecrets, &mut Vec<(String, Spot)>),
) -> StepFlows {
    let mut verify_only: BTreeSet<String> = BTreeSet::new();
    let mut signed_with: BTreeSet<String> = BTreeSet::new();
    let mut touched: Vec<(String, usize)> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let mut refs = Vec::new();
        all_refs(step, &mut refs);
        for r in refs {
            match r {
                SecretRef::Named(n) => seen.push((n, Spot::Step(i))),
                SecretRef::Every(e) => out.every = out.every.clone().or(Some((e, Spot::Step(i)))),
            }
        }
        let mut v = visible.clone();
        v.extend(env_secrets(step));
        let op = step_op(step, &v, &BTreeMap::new(), (root, given), 0);
        out.followed.extend(op.followed.iter().cloned());
        for (name, why) in &op.key_files {
            out.add(given, name, why.clone(), Spot::Step(i), false);
        }
        touched.extend(op.touched.iter().map(|n| (n.clone(), i)));
        if let Some(what) = &op.unread {
            out.unread
                .push((what.clone(), op.touched.clone(), Spot::Step(i)));
        }
        match op.op {
            Some((label, within)) => {
                if out.signs.is_none() {
                    out.signs = Some((label.clone(), i));
                }
                for name in op.flowing {
                    signed_with.insert(Catalogue::normal(&name));
                    let definite = op.definite.contains(&name);
                    out.add(
                        given,
                        &name,
                        Why::FlowsInto {
                            op: label.clone(),
                            within: within.clone(),
                        },
                        Spot::Step(i),
                        definite,
                    );
                }
            }
            None if op.verifies => {
                verify_only.extend(op.flowing.iter().map(|n| Catalogue::normal(n)));
            }
            None => {}
        }
    }
    StepFlows {
        verify_only,
        signed_with,
        touched,
    }
}

pub(crate) fn job_secrets(
    wf: &Value,
    job: &Value,
    root: &Path,
    given: &SigningSecrets,
) -> JobSecrets {
    let job = &*with_matrix_secrets(job);
    let cat = Catalogue::get();
    let wf_env = env_secrets(wf);
    let job_env = env_secrets(job);
    let mut out = JobSecrets::default();
    // Every secret the job reads, and where first.
    let mut seen: Vec<(String, Spot)> = Vec::new();
    for (refs, spot) in [
        (
            wf_env.values().flatten().cloned().collect::<Vec<_>>(),
            Spot::WorkflowEnv,
        ),
        (job_env.values().flatten().cloned().collect(), Spot::JobEnv),
    ] {
        for r in refs {
            match r {
                SecretRef::Named(n) => seen.push((n, spot.clone())),
                SecretRef::Every(e) => out.every = out.every.clone().or(Some((e, spot.clone()))),
            }
        }
    }
    let steps = match job.get("steps") {
        Some(Value::Sequence(s)) => s.clone(),
        _ => Vec::new(),
    };
    let mut job_refs = Vec::new();
    if let Value::Mapping(m) = job {
        for (k, v) in m {
            if k.as_str() != Some("steps") && k.as_str() != Some("env") {
                all_refs(v, &mut job_refs);
            }
        }
    }
    for r in job_refs {
        match r {
            SecretRef::Named(n) => seen.push((n, Spot::Job)),
            SecretRef::Every(e) => out.every = out.every.clone().or(Some((e, Spot::Job))),
        }
    }
    let mut visible = wf_env.clone();
    visible.extend(job_env.clone());
    let StepFlows {
        verify_only,
        signed_with,
        touched,
    } = scan_steps(&steps, &visible, (root, given), (&mut out, &mut seen));
    // Sinks by convention: an environment variable a build tool reads its key from, and a file
    // a build tool signs with.
    for (name, why, spot) in conventional_keys(&steps, (&wf_env, &job_env), &visible) {
        // A key file's name (`server.key`) may be TLS's: only a variable is definite.
        let definite = matches!(why, Why::Convention { .. });
        out.add(given, &name, why, spot, definite);
    }
    // By its name alone (not handed to the variable): a name of another service's credential
    // (`GH_APP_PRIVATE_KEY`) stays out.
    for (name, why, spot) in named_after_convention(&steps, &seen) {
        out.add(given, &name, why, spot, false);
    }
    if !given.only_given() {
        out.add_fetched(&steps);
    }
    out.add_context();
    // Written out in a job that signs: a key-shaped secret a later step loads from disk.
    if let Some((label, _)) = out.signs.clone() {
        for (name, i) in &touched {
            if key_shaped(name) {
                out.add(
                    given,
                    name,
                    Why::Beside { op: label.clone() },
                    Spot::Step(*i),
                    false,
                );
            }
        }
    }
    out.reads = seen
        .iter()
        .filter(|(name, _)| cat.classify(name) != NameClass::NotKey)
        .cloned()
        .collect();
    for (name, spot) in seen {
        let n = Catalogue::normal(&name);
        let named = cat.classify(&name) == NameClass::Key
            || given.names(&name)
            || given.passed_from(&name).is_some();
        let verify_only = verify_only.contains(&n) && !signed_with.contains(&n);
        if named && !verify_only {
            out.add(given, &name, Why::Name, spot, false);
        }
    }
    out
}

impl Why {
    /// Whether this is evidence enough to call the secret a key in every other job that reads
    /// it: it reaches a signing sink (a signing command or action, a key file a build tool signs
    /// with, a tool's key variable), or a person or a caller said so. A guess (read beside a
    /// signing step, named like a key, every secret, a store's secret) holds in its own job only.
    pub(crate) fn propagates(&self) -> bool {
        match self {
            Why::FlowsInto { .. }
            | Why::Convention { .. }
            | Why::KeyFile { .. }
            | Why::NamedAs { .. }
            | Why::Given
            | Why::Passed { .. }
            | Why::Travelled { .. }
            | Why::Name => true,
            Why::Beside { .. } | Why::Context { .. } | Why::KeyElsewhere | Why::Fetched { .. } => {
                false
            }
        }
    }

    /// The kind of evidence, as the JSON finding names it.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Why::FlowsInto { .. } => "flows-into",
            Why::Beside { .. } => "beside",
            Why::Name => "name",
            Why::Given => "given",
            Why::Passed { .. } => "passed",
            Why::Context { .. } => "every-secret",
            Why::Convention { .. } => "convention",
            Why::KeyFile { .. } => "key-file",
            Why::NamedAs { .. } => "named-as",
            Why::KeyElsewhere => "elsewhere",
            Why::Fetched { .. } => "fetched",
            Why::Travelled { .. } => "travelled",
        }
    }

    /// Why the secret is a key, for a finding: "flows into `gpg --import` at line 157".
    pub(crate) fn describe(&self, line: usize) -> String {
        match self {
            Why::FlowsInto { op, within: None } => format!("flows into `{op}` at line {line}"),
            Why::FlowsInto {
                op,
                within: Some(action),
            } => format!("flows into `{op}` in {action} at line {line}"),
            Why::Beside { op } => {
                format!("is read at line {line}, named like a key, in a job that runs `{op}`")
            }
            Why::Name => format!("a signing key's name, line {line}"),
            Why::Given => format!("named as a key (--secret or .github/warden.toml), line {line}"),
            Why::Passed { from } => format!("receives {from}, line {line}"),
            Why::Context { op } => {
                format!("every secret, read at line {line} in a job that runs `{op}`")
            }
            Why::Convention { tool, var } => {
                format!("{tool} reads its signing key from `{var}`, line {line}")
            }
            Why::KeyFile { file } => {
                format!("written to `{file}` at line {line}, a file a build tool signs with")
            }
            Why::KeyElsewhere => format!("a signing key in another job, read here at line {line}"),
            Why::NamedAs { var } => format!("handed to `{var}`, a signing key's name, line {line}"),
            Why::Fetched { op } => {
                format!(
                    "read at line {line} in a job that runs `{op}`, with the job's own credentials"
                )
            }
            Why::Travelled { via } => format!("handed over through {via}, line {line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys `jobs.<id>` of `yaml` holds: (name, why, spot).
    fn keys_of(yaml: &str, id: &str) -> Vec<(String, Why, Spot)> {
        secrets_of(yaml, id, &SigningSecrets::default())
            .keys
            .into_iter()
            .map(|k| (k.name, k.why, k.spot))
            .collect()
    }

    fn secrets_of(yaml: &str, id: &str, given: &SigningSecrets) -> JobSecrets {
        let wf: Value = yaml_serde::from_str(yaml).unwrap();
        let job = wf["jobs"][id].clone();
        job_secrets(&wf, &job, Path::new("/nonexistent"), given)
    }

    fn flows(op: &str) -> Why {
        Why::FlowsInto {
            op: op.into(),
            within: None,
        }
    }

    #[test]
    fn a_secret_is_a_key_by_what_it_flows_into_whatever_its_name() {
        let yaml = r#"
jobs:
  release:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "$BLOB" | gpg --batch --import
        env:
          BLOB: ${{ secrets.RELEASE_MATERIAL }}
      - run: minisign -S -s /dev/stdin -m dist/app <<< "$M"
        env:
          M: ${{ secrets.TOOLING_THING }}
"#;
        assert_eq!(
            keys_of(yaml, "release"),
            [
                (
                    "RELEASE_MATERIAL".into(),
                    flows("gpg --import"),
                    Spot::Step(1)
                ),
                ("TOOLING_THING".into(), flows("minisign -S"), Spot::Step(2)),
            ]
        );
    }

    #[test]
    fn a_key_name_that_only_verifies_is_not_a_key_and_credentials_never_are() {
        let yaml = r#"
jobs:
  check:
    runs-on: ubuntu-latest
    env:
      AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}
    steps:
      - run: minisign -Vm app -P "$PUB"
        env:
          PUB: ${{ secrets.MINISIGN_KEY }}
      - run: aws s3 cp app s3://bucket/
"#;
        assert_eq!(keys_of(yaml, "check"), []);
    }

    /// Handed straight to where a tool takes its key, another service's prefix does not hide a
    /// key (`CF_` is Cloudflare's, `MAVEN_CENTRAL_` a registry's); a name that identifies a key
    /// (`…_ID`) is never one, and a secret only beside a signing command keeps its name's verdict.
    #[test]
    fn a_key_handed_to_a_key_input_is_one_whatever_its_prefix() {
        let yaml = r#"
jobs:
  deb:
    runs-on: ubuntu-latest
    steps:
      - uses: crazy-max/ghaction-import-gpg@v6
        with:
          gpg_private_key: ${{ secrets.CF_PROD_PGP_KEY }}
      - uses: azure/trusted-signing-action@v0
        with:
          azure-client-id: ${{ secrets.AZURE_CLIENT_ID }}
      - run: echo "$K" | gpg --import && qshell upload
        env:
          K: ${{ secrets.RELEASE_THING }}
          QINIU: ${{ secrets.QINIU_SECRET_KEY }}
  maven:
    runs-on: ubuntu-latest
    steps:
      - run: ./gradlew publishToSonatype
        env:
          ORG_GRADLE_PROJECT_signingKey: ${{ secrets.MAVEN_CENTRAL_PUBLISHING_PRIVATE_KEY }}
"#;
        let names = |job: &str| -> Vec<String> {
            keys_of(yaml, job).into_iter().map(|(n, _, _)| n).collect()
        };
        assert_eq!(names("deb"), ["CF_PROD_PGP_KEY", "RELEASE_THING"]);
        assert_eq!(names("maven"), ["MAVEN_CENTRAL_PUBLISHING_PRIVATE_KEY"]);
    }

    /// `secrets[matrix.x]` reads the secrets the matrix written in the workflow names; one the
    /// workflow cannot show stays the whole context.
    #[test]
    fn a_matrix_index_reads_the_secrets_the_matrix_names() {
        let yaml = r#"
jobs:
  desktop:
    strategy:
      matrix:
        os: [ubuntu-latest]
        include:
          - os: macos-latest
            cert: MAC_DEVELOPER_CERT
          - os: windows-latest
            cert: WIN_CERT_BLOB
    runs-on: ${{ matrix.os }}
    env:
      CSC_LINK: ${{ secrets[matrix.cert] }}
    steps:
      - run: npm run dist
  dynamic:
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    runs-on: ubuntu-latest
    env:
      CSC_LINK: ${{ secrets[matrix.cert] }}
    steps:
      - run: npm run dist
"#;
        let conv = Why::Convention {
            tool: "electron-builder".into(),
            var: "CSC_LINK".into(),
        };
        assert_eq!(
            keys_of(yaml, "desktop"),
            [
                ("MAC_DEVELOPER_CERT".into(), conv.clone(), Spot::JobEnv),
                ("WIN_CERT_BLOB".into(), conv.clone(), Spot::JobEnv),
            ]
        );
        assert_eq!(
            keys_of(yaml, "dynamic"),
            [("secrets[matrix.cert]".into(), conv, Spot::JobEnv)]
        );
    }

    /// PowerShell writes a key file too (so does `openssl … -out`), and a fork of a catalogue
    /// action is named as the workflow names it.
    #[test]
    fn powershell_key_files_and_forked_actions() {
        let yaml = r#"
jobs:
  win:
    runs-on: windows-latest
    steps:
      - run: |
          [IO.File]::WriteAllBytes("apps/desktop/sign.p12", [Convert]::FromBase64String("${{ secrets.DESKTOP_KEYS_SECRET }}"))
      - run: npm run build
  decode:
    runs-on: ubuntu-latest
    steps:
      - uses: timheuer/base64-to-file@v1
        with:
          fileName: upload.jks
          encodedString: ${{ secrets.STORE_BLOB }}
      - uses: some/uploader@v1
        with:
          file: notes.txt
          data: ${{ secrets.OTHER_BLOB }}
  decrypt:
    runs-on: ubuntu-latest
    steps:
      - run: openssl aes-256-cbc -K ${{ secrets.BLOB_K }} -iv ${{ secrets.BLOB_IV }} -in ci/release.asc.enc -out ci/release.asc -d
  mac:
    runs-on: macos-latest
    steps:
      - uses: nop33/action-electron-builder@v1
        with:
          mac_certs: ${{ secrets.MAC_BLOB }}
"#;
        assert_eq!(
            keys_of(yaml, "win"),
            [(
                "DESKTOP_KEYS_SECRET".into(),
                Why::KeyFile {
                    file: "apps/desktop/sign.p12".into()
                },
                Spot::Step(0)
            )]
        );
        let names: Vec<String> = keys_of(yaml, "decrypt")
            .into_iter()
            .map(|(n, _, _)| n)
            .collect();
        assert_eq!(names, ["BLOB_K", "BLOB_IV"]);
        assert_eq!(
            keys_of(yaml, "decode"),
            [(
                "STORE_BLOB".into(),
                Why::KeyFile {
                    file: "upload.jks".into()
                },
                Spot::Step(0)
            )]
        );
        assert_eq!(
            keys_of(yaml, "mac"),
            [(
                "MAC_BLOB".into(),
                flows("nop33/action-electron-builder"),
                Spot::Step(0)
            )]
        );
    }

    /// A job that signs with a key it reads from a store of its own holds it; a job that reads
    /// the same store but does not sign, or signs with a GitHub secret, is judged as before.
    #[test]
    fn a_key_read_from_a_store_outside_github_is_held() {
        let yaml = r#"
jobs:
  deb:
    runs-on: ubuntu-latest
    steps:
      - run: gcloud secrets versions access latest --secret=release-gpg | gpg --import
  upload:
    runs-on: ubuntu-latest
    steps:
      - run: gcloud secrets versions access latest --secret=upload-token > token
  both:
    runs-on: ubuntu-latest
    steps:
      - run: aws secretsmanager get-secret-value --secret-id x
      - run: echo "$K" | gpg --import
        env:
          K: ${{ secrets.GPG_PRIVATE_KEY }}
"#;
        assert_eq!(
            keys_of(yaml, "deb"),
            [(
                "Google Secret Manager `release-gpg`".into(),
                Why::Fetched {
                    op: "gpg --import".into()
                },
                Spot::Step(0)
            )]
        );
        assert_eq!(keys_of(yaml, "upload"), []);
        assert_eq!(
            keys_of(yaml, "both"),
            [(
                "GPG_PRIVATE_KEY".into(),
                flows("gpg --import"),
                Spot::Step(1)
            )]
        );
    }

    #[test]
    fn a_key_shaped_secret_written_out_in_a_job_that_signs_is_a_key() {
        let yaml = r#"
jobs:
  android:
    runs-on: ubuntu-latest
    steps:
      - run: echo "$KS" | base64 -d > app/release.keystore
        env:
          KS: ${{ secrets.ANDROID_KEYSTORE }}
      - run: jarsigner -keystore app/release.keystore app.apk release
"#;
        assert_eq!(
            keys_of(yaml, "android"),
            [(
                "ANDROID_KEYSTORE".into(),
                Why::KeyFile {
                    file: "app/release.keystore".into()
                },
                Spot::Step(0)
            )]
        );
    }

    #[test]
    fn every_secret_handed_to_a_job_is_recorded_with_its_expression() {
        let yaml = r#"
jobs:
  all:
    runs-on: ubuntu-latest
    steps:
      - run: ./release.sh
        env:
          ALL: ${{ toJSON(secrets) }}
"#;
        let s = secrets_of(yaml, "all", &SigningSecrets::default());
        assert!(s.keys.is_empty());
        assert_eq!(
            s.every,
            Some(("toJSON(secrets)".to_string(), Spot::Step(0)))
        );
    }

    #[test]
    fn reasons_read_as_a_sentence() {
        assert_eq!(
            flows("gpg --import").describe(9),
            "flows into `gpg --import` at line 9"
        );
        assert_eq!(
            Why::Beside {
                op: "jarsigner".into()
            }
            .describe(3),
            "is read at line 3, named like a key, in a job that runs `jarsigner`"
        );
    }
}
