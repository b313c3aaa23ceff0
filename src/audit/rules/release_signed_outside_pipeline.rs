//! `release-signed-outside-pipeline`: a published release's signature names a workflow run that
//! GitHub's records contradict, or names none where `keys/policy.toml` requires one.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-signed-outside-pipeline",
    severity: Severity::High,
    description: "A release's signature was not made by the release workflow run it names (or names none where the policy requires one)",
    explanation: "the `run:` a release's `SHA256SUMS.minisig` binds does not match GitHub's records: no such run, another workflow file, another commit, a fork, not a tag push or dispatch on the release tag, a signature time outside the run, or no deployment of the run to the environment; or the signature binds no run while `keys/policy.toml` sets `require_run`, `workflow` or `environment`. A key used outside the pipeline (a stolen one) signs exactly like this",
});

/// Release `tag`'s signature, naming `run`, does not match GitHub's records: `problems`.
pub(crate) fn finding(at: &Location, tag: &str, run: &str, problems: &[String]) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!(
            "release {tag} is signed by {run}, which GitHub's records contradict: {}",
            problems.join("; ")
        ),
        "Treat the release as signed outside the pipeline: find who holds the key (`warden keys revoke` if it leaked), and re-sign the release in the release workflow.",
    )
}

/// Release `tag`'s signature binds no run, and the policy requires one.
pub(crate) fn unbound(at: &Location, tag: &str) -> Finding {
    Finding::new(
        RULE,
        at.clone(),
        format!("release {tag} is signed without a workflow run binding, and keys/policy.toml requires one"),
        "Sign in the release workflow with `warden sign` (it binds the run in GitHub Actions), or find out who signed this release.",
    )
}
