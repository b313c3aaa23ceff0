//! `release-signed-by-revoked-key`: a key revoked in `keys/revoked/` still signs, in a
//! published release or in a workflow that names it.

use std::path::Path;

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::minisign::keys::KeyId;
use crate::verdict::release::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-signed-by-revoked-key",
    severity: Severity::High,
    description: "A published release carries a signature by a revoked key, or a signing workflow still names a revoked key",
    explanation: "one of the latest `--releases N` published releases carries a signature by a key revoked in `keys/revoked/`, first or co-signature (a release made after the key leaked, or never re-signed: a revoked key's signature fails the release whatever signs beside it), or a workflow that signs names a revoked key's public key file or its base64 (the CI secret was not rotated with `keys/`)",
});

/// A signature of release `tag` is by a revoked key (`p` names it).
pub(crate) fn release(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::of_release(RULE, (at, tag), p, "Treat the release as untrusted until it is re-signed with a key of keys/, as the runbook does (docs/release.md, \"The key leaked\"): `gh release download TAG --dir TAG`, `warden sign TAG --force --secret-key NEW.key --tag TAG --commit SHA --repo OWNER/NAME`, `gh release upload TAG TAG/SHA256SUMS TAG/*.minisig --clobber`; or withdraw it, and find out who signed it.")
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
        replace_key(id, named),
    )
}

/// The runbook's commands (docs/release.md, "The key leaked") for the key the workflow names:
/// the new key takes the revoked key's file, so the workflow needs no edit; a key written inline
/// is replaced in the workflow.
fn replace_key(id: KeyId, named: &str) -> String {
    let keygen = "warden keygen --secret-key ~/.minisign/release-2.key";
    let store = "`gh secret set MINISIGN_SECRET_KEY --env release < ~/.minisign/release-2.key`";
    if crate::minisign::keys::is_public_key_file(named) {
        format!("Replace the key as the runbook does (docs/release.md, \"The key leaked\"): `git mv keys/{named} keys/{id}.pub`, `{keygen} --public-key keys/{named}`, then {store}.")
    } else {
        format!("Replace the key as the runbook does (docs/release.md, \"The key leaked\"): `{keygen} --public-key keys/minisign.pub`, put the new key in the workflow in place of this one, then {store}.")
    }
}
