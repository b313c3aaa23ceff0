//! `release-signed-outside-pipeline`: a published release's signature names a workflow run that
//! GitHub's records contradict, or names none where `keys/policy.toml` requires one.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::verdict::release::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-signed-outside-pipeline",
    severity: Severity::High,
    description: "A counted signature of a release was not made by the release workflow run it names (or names none where the policy requires one)",
    explanation: "the `run:` a counted signature of a release's `SHA256SUMS` binds (the first, or a co-signature) does not match GitHub's records: no such run, another workflow file, another commit, a fork, not a tag push or dispatch on the release tag, a signature time outside the run, or no deployment of the run to the environment; or the signature binds no run while `keys/policy.toml` sets `require_run`, `workflow` or `environment`. A key used outside the pipeline (a stolen one) signs exactly like this",
});

/// A counted signature of release `tag` was not made by the pipeline: the run it names is
/// contradicted by GitHub's records, or it names none where the policy requires one (`p`).
pub(crate) fn finding(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::of_release(RULE, (at, tag), p, "Treat the release as signed outside the pipeline: find who holds the key (`warden keys revoke` if it leaked), and re-sign the release in the release workflow.")
}
