//! Reusable-workflow calls: where the key goes when a job calls another workflow. A local callee
//! is judged with what its callers hand it (the key under its new name, their tag triggers); a
//! remote callee takes the key out of the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use yaml_serde::Value;
use yamlpath::route;

use super::expr::{secrets_in_value, SecretRef};
use super::rules;
use super::source::{Parsed, Source};
use crate::audit::catalogue::Catalogue;
use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::Rule;
use crate::audit::secrets::SigningSecrets;

/// What the callers of a local reusable workflow give it.
#[derive(Clone, Debug, Default)]
pub struct Caller {
    pub tag_patterns: Vec<String>,
    pub tag_trigger: bool,
    /// The callers' events that carry outside code or input (`pull_request_target`, …).
    pub risky: Vec<String>,
    /// The callee's secret name (normalised) → the caller's key it receives, and from where.
    pub passed: BTreeMap<String, String>,
}

impl Caller {
    /// The signing secrets to judge the callee with: the caller's keys under their new names.
    pub fn secrets_for_callee(&self, base: &SigningSecrets) -> SigningSecrets {
        let mut s = base.clone();
        s.passed.extend(self.passed.clone());
        s
    }
}

/// The call jobs of a workflow: (job id, `uses`, the job's value).
fn call_jobs(value: &Value) -> Vec<(String, String, &Value)> {
    let Some(Value::Mapping(jobs)) = value.get("jobs") else {
        return Vec::new();
    };
    jobs.iter()
        .filter_map(|(id, job)| {
            let uses = job.get("uses")?.as_str()?;
            Some((id.as_str()?.to_string(), uses.to_string(), job))
        })
        .collect()
}

/// The explicit `secrets:` of a call: callee name → the caller's secret names it reads.
fn explicit(job: &Value) -> Vec<(String, Vec<String>)> {
    let Some(Value::Mapping(map)) = job.get("secrets") else {
        return Vec::new();
    };
    map.iter()
        .filter_map(|(k, v)| {
            let names = secrets_in_value(v.as_str()?, false)
                .into_iter()
                .filter_map(|r| match r {
                    SecretRef::Named(n) => Some(n),
                    SecretRef::Every(_) => None,
                })
                .collect();
            Some((k.as_str()?.to_string(), names))
        })
        .collect()
}

fn inherits(job: &Value) -> bool {
    job.get("secrets").and_then(Value::as_str) == Some("inherit")
}

/// The local callee a `uses:` names, as a path relative to the repository.
fn local(uses: &str) -> Option<PathBuf> {
    uses.strip_prefix("./").map(PathBuf::from)
}

/// Who calls each local reusable workflow, and with what.
pub fn callers(parsed: &[Parsed], secrets: &SigningSecrets) -> BTreeMap<PathBuf, Caller> {
    let mut out: BTreeMap<PathBuf, Caller> = BTreeMap::new();
    for (rel, _, wf, value) in parsed {
        for (_, uses, job) in call_jobs(value) {
            let Some(callee) = local(&uses) else { continue };
            let c = out.entry(callee).or_default();
            c.tag_patterns.extend(rules::release_tag_patterns(wf));
            c.tag_trigger |= rules::has_tag_trigger(wf);
            for e in rules::risky_events(wf) {
                if !c.risky.contains(&e) {
                    c.risky.push(e);
                }
            }
            for (to, from) in explicit(job) {
                if let Some(key) = from.iter().find(|n| secrets.is_signing(n)) {
                    c.passed.insert(
                        Catalogue::normal(&to),
                        format!("{key} from {}", rel.display()),
                    );
                }
            }
        }
    }
    out
}

/// Findings on the call jobs of one workflow: `secrets: inherit` into a callee that exposes a
/// key, and a key handed to a workflow in another repository.
/// `exposed` maps a workflow to its jobs that hold a key without an environment ("job `sign`
/// holds KEY").
pub fn call_findings(
    src: &Source,
    value: &Value,
    known: &BTreeSet<String>,
    exposed: &BTreeMap<PathBuf, Vec<String>>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (id, uses, job) in call_jobs(value) {
        let at = src.loc(src.key(&route!("jobs", id.as_str())), Some(&id));
        if inherits(job) {
            let exposed: Vec<String> = match local(&uses) {
                Some(callee) => exposed.get(&callee).cloned().unwrap_or_default(),
                None if !known.is_empty() => {
                    vec!["it is in another repository, out of this audit's sight".to_string()]
                }
                None => Vec::new(),
            };
            if exposed.is_empty() {
                continue;
            }
            out.push(
                Finding::new(
                    Rule::SigningSecretsInherit,
                    at.clone(),
                    format!(
                        "job `{id}` calls {uses} with `secrets: inherit`, and there {}: every secret, the signing key included, reaches it without an environment",
                        exposed.join("; ")
                    ),
                    "Pass only the secrets the called workflow needs (`secrets: { NAME: ... }`), and keep the signing key in an environment of the job that signs.",
                )
                .about(Subject::secrets(known)),
            );
        } else if local(&uses).is_none() {
            let keys: Vec<String> = explicit(job)
                .into_iter()
                .flat_map(|(_, from)| from)
                .filter(|n| {
                    known.contains(n)
                        || Catalogue::get().classify(n) == crate::audit::catalogue::NameClass::Key
                })
                .collect();
            if keys.is_empty() {
                continue;
            }
            out.push(
                Finding::new(
                    Rule::SigningSecretToRemoteWorkflow,
                    at,
                    format!(
                        "job `{id}` passes {} to {uses}, a workflow in another repository: whoever controls that workflow and ref controls the key, and no environment of this repository protects it",
                        keys.join(", ")
                    ),
                    "Sign in a job of this repository that runs in an environment with required reviewers; if the reusable workflow must sign, pin it to a full commit SHA and review it.",
                )
                .about(Subject::secrets(&keys)),
            );
        }
    }
    out
}
