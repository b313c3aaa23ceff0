//! `signing-key-in-artifact`: a job writes its signing key to a file and uploads it as an artifact.

use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::signing_job::JobView;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "signing-key-in-artifact",
    severity: Severity::High,
    description: "A job uploads its signing key in a workflow artifact",
    explanation: "a key written to a file that `actions/upload-artifact` uploads: whoever can read the repository's Actions artifacts (anyone, for a public repository) can download it while the artifact is kept (90 days by default), and every job that downloads the artifact holds the key",
});

/// The check (the job hook): each artifact the job uploads with a key in it.
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    v.secrets
        .uploads
        .iter()
        .map(|(artifact, key, step)| {
            let kept = v
                .steps()
                .get(*step)
                .and_then(|s| s.get("with"))
                .and_then(|w| w.get("retention-days"))
                .and_then(crate::audit::workflows::flow::scalar)
                .map_or("90 days by default".to_string(), |d| {
                    format!("{d} day{}", if d.trim() == "1" { "" } else { "s" })
                });
            Finding::new(
                RULE,
                v.src.loc(v.step_at(*step), Some(v.id)),
                format!(
                    "job `{}` writes {key} to a file and uploads it in artifact `{artifact}`: whoever can read the repository's Actions artifacts can download the key for {kept}",
                    v.id
                ),
                format!("Sign in the job that holds {key} and upload only what it signed; never write the key under an uploaded path. If the artifact was public, delete it and revoke the key."),
            )
            .about(Subject::secrets([key]))
            .detail(artifact.clone())
        })
        .collect()
}
