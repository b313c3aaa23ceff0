//! What `keys/policy.toml` asks of the run that signs (`require_run`, `workflow`,
//! `environment`), checked offline against a signature's binding: part of whether a signature
//! counts.

use crate::minisign::run::RunBinding;

/// What `keys/policy.toml` asks of the run that signs (`require_run`, `workflow`, `environment`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct RunPolicy {
    pub(crate) require_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) workflow: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<String>,
}

impl RunPolicy {
    /// Whether the policy asks anything of runs.
    pub(crate) fn is_set(&self) -> bool {
        self.require_run || self.workflow.is_some() || self.environment.is_some()
    }

    /// What the first signature's binding (`None`: it binds no run) breaks of the policy, checked
    /// offline: a binding is there when required, and its workflow and environment are the
    /// policy's. `origin` names the policy file.
    pub(crate) fn offline_problem(
        &self,
        binding: Option<&RunBinding>,
        origin: &str,
    ) -> Option<String> {
        let Some(b) = binding else {
            return (self.require_run || self.workflow.is_some() || self.environment.is_some())
                .then(|| {
                    format!("the signature binds no workflow run, and {origin} requires one (made outside the release pipeline?)")
                });
        };
        if let Some(w) = self.workflow.as_deref().filter(|w| *w != b.workflow_path()) {
            return Some(format!("signed by {b}, but {origin} requires workflow {w}"));
        }
        if let Some(e) = self
            .environment
            .as_deref()
            .filter(|e| b.environment.as_deref() != Some(*e))
        {
            return Some(format!(
                "signed by {b}, but {origin} requires environment {e}"
            ));
        }
        None
    }
}
