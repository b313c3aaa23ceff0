//! `release-signed-by-revoked-key`: a key revoked in `keys/revoked/` still signs, in a
//! published release or in a workflow that names it.

use std::path::Path;

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::release::keys::KeyId;
use crate::release::verdict::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-signed-by-revoked-key",
    severity: Severity::High,
    description: "A published release carries a signature by a revoked key, or a signing workflow still names a revoked key",
    explanation: "one of the latest `--releases N` published releases carries a signature by a key revoked in `keys/revoked/`, first or co-signature (a release made after the key leaked, or never re-signed: a revoked key's signature fails the release whatever signs beside it), or a workflow that signs names a revoked key's public key file or its base64 (the CI secret was not rotated with `keys/`)",
});

/// A signature of release `tag` is by a revoked key (`p` names it).
pub(crate) fn release(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::of_release(RULE, (at, tag), p, "Treat the release as untrusted until it is checked: re-sign it with a key of keys/ (`warden sign --cosign` adds a signature), or withdraw it; find out who signed it.")
}

/// The signing workflow `rel` names the revoked key `id` (its file or its base64) at `line`.
pub(crate) fn workflow(rel: &Path, line: usize, id: KeyId, named: &str) -> Finding {
    Finding::new(
        RULE,
        Location::Workflow {
            path: rel.to_path_buf(),
            line,
            column: 1,
            job: None,
        },
        format!("this signing workflow names {named}, the public key of key {id}, which is revoked"),
        "Rotate the CI secret to the new key (`warden keys rotate`), and point the workflow at the new public key.",
    )
}
