//! `key-id-collision` (key inventory): two different keys are committed under one key id. A
//! minisign key id is a label the key file carries, not derived from the key: anyone can make a
//! key with the id of the project's, and whatever finds keys by id (a suppression, a user's
//! `minisign -P`, a keys folder) can then take one for the other.

use crate::audit::findings::{Finding, Location};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "key-id-collision",
    severity: Severity::High,
    description: "Two different keys are committed under one key id",
    explanation: "`audit --org --inventory`: the organisation commits two keys (different bytes) that carry the same key id. An id is a label in the key file, not derived from the key, so one can be made to match another's: whatever picks a key by its id can take the wrong one",
});

/// `key` is the id; `where_` each key's fingerprint with where it is committed.
pub(crate) fn finding(key: &str, where_: &[String]) -> Finding {
    Finding::new(
        RULE,
        Location::key(key),
        format!(
            "key id {key} is carried by {} different keys: {}",
            where_.len(),
            where_.join("; ")
        ),
        "Keep one key per id: find out which key is yours (compare the bytes with the one your releases verify under), remove the other, and rotate if the other was ever trusted (`warden keys rotate`).",
    )
    .detail(where_.join(","))
}
