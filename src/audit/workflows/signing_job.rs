//! A job that holds a signing key: what the settings audit needs of it ([`SigningJob`]), and the
//! view of it every workflow rule reads ([`JobView`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use github_actions_models::workflow::job::{DeploymentEnvironment, NormalJob};
use github_actions_models::workflow::Workflow;
use yaml_serde::Value;
use yamlpath::route;

use super::flow::{job_secrets, JobSecrets, KeyUse, Spot};
use super::source::Source;
use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::Rule;
use crate::audit::secrets::SigningSecrets;

/// A job that uses a signing secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigningJob {
    pub workflow: PathBuf,
    pub job: String,
    pub environment: Option<String>,
    pub secrets: BTreeSet<String>,
    pub line: usize,
}

/// What a job's `environment:` protects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Environment {
    /// No environment, an empty name, or an expression that can be empty.
    None,
    Named(String),
    /// An expression: which environment (if any) is decided at run time.
    Expression(String),
}

/// A signing job as the rules see it.
pub(crate) struct JobView<'a> {
    pub(crate) src: &'a Source,
    pub(crate) workflow: &'a Workflow,
    pub(crate) wf_value: &'a Value,
    pub(crate) id: &'a str,
    pub(crate) job: &'a NormalJob,
    /// Position of `jobs.<id>`.
    pub(crate) key: (usize, usize),
    pub(crate) secrets: JobSecrets,
    pub(crate) environment: Environment,
}

/// What the job's `environment:` protects.
pub(crate) fn environment(job: &NormalJob) -> Environment {
    let name = match job.environment.as_ref() {
        None => return Environment::None,
        Some(DeploymentEnvironment::Name(n)) => n,
        Some(DeploymentEnvironment::NameURL { name, .. }) => name,
    };
    let name = name.trim();
    if name.is_empty() {
        Environment::None
    } else if name.contains("${{") {
        // Decided at run time, possibly empty (`cond && 'release' || ''`): not checkable offline,
        // and not "no environment" either.
        Environment::Expression(super::expr::one_line(name))
    } else {
        Environment::Named(name.to_string())
    }
}

impl<'a> JobView<'a> {
    /// The secrets of `jobs.<id>` (what it holds, and what was read to judge it).
    pub(crate) fn secrets_of(
        wf_value: &Value,
        id: &str,
        root: &Path,
        given: &SigningSecrets,
    ) -> JobSecrets {
        match wf_value.get("jobs").and_then(|j| j.get(id)) {
            Some(job_value) => job_secrets(wf_value, job_value, root, given),
            None => JobSecrets::default(),
        }
    }

    /// The view of `jobs.<id>`, whose secrets are known.
    pub(crate) fn new(
        src: &'a Source,
        (workflow, wf_value): (&'a Workflow, &'a Value),
        (id, job): (&'a str, &'a NormalJob),
        secrets: JobSecrets,
    ) -> Self {
        JobView {
            src,
            workflow,
            wf_value,
            id,
            job,
            key: src.key(&route!("jobs", id)),
            secrets,
            environment: environment(job),
        }
    }

    /// The signing keys' secret names, sorted (not a whole-context read: it names no secret).
    pub(crate) fn names(&self) -> BTreeSet<String> {
        self.secrets
            .keys
            .iter()
            .filter(|k| !matches!(k.why, super::flow::Why::Context { .. }))
            .map(|k| k.name.clone())
            .collect()
    }

    /// The key to name in a remediation: the first by use that is not a passphrase.
    pub(crate) fn first(&self) -> Option<&KeyUse> {
        let pass = |k: &&KeyUse| {
            let n = crate::audit::catalogue::Catalogue::normal(&k.name);
            n.contains("PASSWORD") || n.contains("PASSPHRASE")
        };
        self.secrets
            .keys
            .iter()
            .find(|k| !pass(k))
            .or(self.secrets.keys.first())
    }

    /// The line of a spot in this job.
    pub(crate) fn line(&self, spot: &Spot) -> usize {
        let at = match spot {
            Spot::Step(i) => self.src.at(&route!("jobs", self.id, "steps", *i)),
            Spot::JobEnv => self.src.key(&route!("jobs", self.id, "env")),
            Spot::WorkflowEnv => self.src.key(&route!("env")),
            Spot::Job => self.key,
        };
        at.0
    }

    /// Why each key is one, for messages: "GPG_PRIVATE_KEY (flows into `gpg --import` at line 9)".
    pub(crate) fn reasons(&self) -> String {
        self.secrets
            .keys
            .iter()
            .map(|k| match k.why {
                super::flow::Why::Context { .. } => {
                    format!("`{}` ({})", k.name, k.why.describe(self.line(&k.spot)))
                }
                _ => format!("{} ({})", k.name, k.why.describe(self.line(&k.spot))),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(crate) fn signing_job(&self) -> SigningJob {
        SigningJob {
            workflow: self.src.rel.clone(),
            job: self.id.to_string(),
            environment: match &self.environment {
                Environment::Named(n) => Some(n.clone()),
                _ => None,
            },
            secrets: self.names(),
            line: self.key.0,
        }
    }

    /// Whether the job holds a signing key (not only every secret through an expression).
    /// The evidence for each of `secrets` the job holds as a key (its first use).
    pub(crate) fn evidence(&self, secrets: &[String]) -> Vec<crate::audit::findings::Evidence> {
        use crate::audit::findings::{Evidence, Strength};
        self.secrets
            .keys
            .iter()
            .filter(|k| secrets.iter().any(|s| s.eq_ignore_ascii_case(&k.name)))
            .map(|k| {
                let line = self.line(&k.spot);
                Evidence {
                    secret: k.name.clone(),
                    kind: k.why.kind().to_string(),
                    line,
                    detail: k.why.describe(line),
                    strength: if k.why.propagates() {
                        Strength::Strong
                    } else {
                        Strength::Weak
                    },
                }
            })
            .collect()
    }

    pub(crate) fn holds_key(&self) -> bool {
        !self.secrets.keys.is_empty()
    }

    /// The job's steps, as YAML values.
    pub(crate) fn steps(&self) -> Vec<&'a Value> {
        match self
            .wf_value
            .get("jobs")
            .and_then(|j| j.get(self.id))
            .and_then(|j| j.get("steps"))
        {
            Some(Value::Sequence(s)) => s.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Where step `i` begins.
    pub(crate) fn step_at(&self, i: usize) -> (usize, usize) {
        self.src.at(&route!("jobs", self.id, "steps", i))
    }

    /// Whether the workflow is a Gitea or Forgejo one (`.gitea/workflows`, `.forgejo/workflows`):
    /// no environments with reviewers, no `permissions:` for the token, no GitHub attestations.
    pub(crate) fn on_forge(&self) -> bool {
        self.src.rel.starts_with(".gitea") || self.src.rel.starts_with(".forgejo")
    }

    /// The key names, for messages: `GPG_KEY, MINISIGN_KEY`; a whole-context read as "every
    /// secret (`toJSON(secrets)`)".
    pub(crate) fn key_list(&self) -> String {
        let mut list: Vec<String> = self.names().into_iter().collect();
        list.extend(self.secrets.keys.iter().filter_map(|k| match k.why {
            super::flow::Why::Context { .. } => Some(format!("every secret (`{}`)", k.name)),
            _ => None,
        }));
        if list.is_empty() {
            if let Some((expr, _)) = &self.secrets.every {
                list.push(format!("every secret (`{expr}`)"));
            }
        }
        list.join(", ")
    }

    /// A finding of `rule` at `at` in this job, about its keys.
    pub(crate) fn finding(
        &self,
        rule: Rule,
        at: (usize, usize),
        message: String,
        fix: &str,
    ) -> Finding {
        Finding::new(rule, self.src.loc(at, Some(self.id)), message, fix)
            .about(Subject::secrets(self.names()))
    }
}

/// A step's string value at `key` (`uses`, `run`).
pub(crate) fn step_text<'v>(step: &'v Value, key: &str) -> Option<&'v str> {
    step.get(key).and_then(Value::as_str)
}
