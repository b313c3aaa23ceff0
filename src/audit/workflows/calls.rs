//! Reusable-workflow calls: where the key goes when a job calls another workflow. A local callee
//! is judged with what its callers hand it (the key under its new name, their tag triggers); the
//! rules `signing-secrets-inherit` and `signing-secret-to-remote-workflow` read the call jobs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use yaml_serde::Value;

use super::expr::{secrets_in_value, SecretRef};
use super::source::Parsed;
use super::triggers;
use crate::audit::catalogue::Catalogue;
use crate::audit::secrets::SigningSecrets;

/// What the callers of a local reusable workflow give it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Caller {
    pub(crate) tag_patterns: Vec<String>,
    pub(crate) tag_trigger: bool,
    /// The callers' events that carry outside code or input (`pull_request_target`, …).
    pub(crate) risky: Vec<String>,
    /// The callee's secret name (normalised) → the caller's key it receives, and from where.
    pub(crate) passed: BTreeMap<String, String>,
}

impl Caller {
    /// The signing secrets to judge the callee with: the caller's keys under their new names.
    pub(crate) fn secrets_for_callee(&self, base: &SigningSecrets) -> SigningSecrets {
        let mut s = base.clone();
        s.passed.extend(self.passed.clone());
        s
    }
}

/// The call jobs of a workflow: (job id, `uses`, the job's value).
pub(crate) fn call_jobs(value: &Value) -> Vec<(String, String, &Value)> {
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
pub(crate) fn explicit(job: &Value) -> Vec<(String, Vec<String>)> {
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

pub(crate) fn inherits(job: &Value) -> bool {
    job.get("secrets").and_then(Value::as_str) == Some("inherit")
}

/// The local callee a `uses:` names, as a path relative to the repository.
pub(crate) fn local(uses: &str) -> Option<PathBuf> {
    uses.strip_prefix("./").map(PathBuf::from)
}

/// Who calls each local reusable workflow, and with what.
pub(crate) fn callers(parsed: &[Parsed], secrets: &SigningSecrets) -> BTreeMap<PathBuf, Caller> {
    let mut out: BTreeMap<PathBuf, Caller> = BTreeMap::new();
    for (rel, _, wf, value) in parsed {
        for (_, uses, job) in call_jobs(value) {
            let Some(callee) = local(&uses) else { continue };
            let c = out.entry(callee).or_default();
            c.tag_patterns.extend(triggers::release_tag_patterns(wf));
            c.tag_trigger |= triggers::has_tag_trigger(wf);
            for e in triggers::risky_events(wf) {
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
