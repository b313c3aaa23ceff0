//! `keys-folder-inconsistent`: the repository's `keys/` does not load as it is, so nobody can
//! verify its releases with it (and the audit cannot either).

use std::path::Path;

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "keys-folder-inconsistent",
    severity: Severity::High,
    description: "The keys/ folder does not load: a revocation, rotation or policy that does not verify or contradicts the keys",
    explanation: "`keys/` is inconsistent as `warden keys list` judges it: a revocation or rotation statement that does not verify (or lacks the co-signatures the threshold asks for), two successors for one key, a `policy.toml` that does not parse, names a key the folder does not hold, or asks for more signatures than there are usable keys. `warden verify` refuses such a folder, so every user's verification fails",
});

/// The keys folder `rel` (relative to the repository) is inconsistent, for `why`.
pub(crate) fn finding(rel: &Path, why: &str) -> Finding {
    Finding::new(
        RULE,
        Location::Workflow {
            path: rel.to_path_buf(),
            line: 1,
            column: 1,
            job: None,
        },
        format!("keys/ does not load: {why}"),
        "Run `warden keys list` and fix what it names: complete or remove the statement, correct policy.toml.",
    )
}
