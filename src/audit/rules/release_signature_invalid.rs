//! `release-signature-invalid`: a published release's signature does not verify, or its assets do not match the signed list.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::verdict::release::Problem;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "release-signature-invalid",
    severity: Severity::High,
    description: "A published release's signed SHA256SUMS, or a file it lists, does not verify against the repository's keys/",
    explanation: "its `SHA256SUMS` and signatures do not verify against the repository's `keys/` as `verify --release` judges them (a first signature by an untrusted key, a bad signature, `file:` not `SHA256SUMS`, fewer distinct keys than `threshold`), an asset is not listed, or a listed file is not an asset; with `--deep`, an asset or an artifact's own signature does not match (each asset is hashed as it streams; the snapshot keeps only its digests)",
});

/// A file or signature of release `tag` does not verify against `keys/` (`p` says why).
pub(crate) fn finding(at: &Location, tag: &str, p: &Problem) -> Finding {
    Finding::of_release(RULE, (at, tag), p, "Re-sign the release with the key in keys/, and find out how this signature or file got there.")
}
