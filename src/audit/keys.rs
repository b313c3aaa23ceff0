//! The keys stage of the audit, offline: is the repository's `keys/` usable as it is
//! (`keys-folder-inconsistent`), and does a workflow that signs still name a revoked key
//! (`release-signed-by-revoked-key`)? The keys it loads go on to judge the published releases.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::findings::Finding;
use super::rules::{keys_folder_inconsistent, release_signed_by_revoked_key};
use super::workflows::WorkflowAudit;
use crate::minisign::keys::{public_key_files, PublicKey};
use crate::trust::keys::{list, TrustedKeys};

/// A workflow is read whole here; the workflow audit refuses larger ones already.
const WORKFLOW_CAP: u64 = 1 << 20;

/// What the stage found, and the keys (none when the repository has no usable `keys/`).
pub(crate) struct KeysStage {
    pub(crate) keys: Option<TrustedKeys>,
    pub(crate) findings: Vec<Finding>,
}

/// Audits `root/keys` and the signing workflows `wf` found.
pub(crate) fn audit_keys(root: &Path, wf: &WorkflowAudit) -> KeysStage {
    let dir = crate::files::paths::under_root(root, "keys");
    let mut stage = KeysStage {
        keys: None,
        findings: Vec::new(),
    };
    if !dir.is_dir() {
        return stage;
    }
    let inside = format!("{}/", dir.display());
    for problem in list(&dir).problems {
        stage.findings.push(keys_folder_inconsistent::finding(
            Path::new("keys"),
            &problem.replace(&inside, "keys/"),
        ));
    }
    let Ok(keys) = TrustedKeys::load_dir(&dir) else {
        return stage;
    };
    let workflows: BTreeSet<&PathBuf> = wf.signing_jobs.iter().map(|j| &j.workflow).collect();
    for revoked in revoked_keys(&dir, &keys) {
        for rel in &workflows {
            if let Some(f) = names_key(root, rel, &revoked) {
                stage.findings.push(f);
            }
        }
    }
    if !keys.is_empty() || !keys.revocations().is_empty() {
        stage.keys = Some(keys);
    }
    stage
}

/// The public keys of the folder that are revoked, with the names a workflow would use for
/// them: the file's name (`old.pub`) and the base64 key (`RWQ…`).
fn revoked_keys(dir: &Path, keys: &TrustedKeys) -> Vec<(PublicKey, Vec<String>)> {
    let files = public_key_files(dir).unwrap_or_default();
    let mut out = Vec::new();
    for file in files {
        let Ok(key) = PublicKey::from_file(&file) else {
            continue;
        };
        if keys.revoked_key(&key).is_none() {
            continue;
        }
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let base64 = key.to_base64();
        out.push((key, vec![name, base64]));
    }
    out
}

/// The finding when the workflow `rel` names the revoked key (the first line that does).
fn names_key(
    root: &Path,
    rel: &Path,
    (key, needles): &(PublicKey, Vec<String>),
) -> Option<Finding> {
    let path = crate::files::paths::under_root(root, rel);
    let text = crate::files::guarded::read_text_inside(root, &path, WORKFLOW_CAP).ok()?;
    text.lines().enumerate().find_map(|(i, line)| {
        let named = needles.iter().find(|n| mentions(line, n))?;
        Some(release_signed_by_revoked_key::workflow(
            rel,
            i + 1,
            key.key_id,
            named,
        ))
    })
}

/// Whether `line` names `needle` as a whole word of a path or a value (`keys/old.pub`, not
/// `keys/bold.pub`).
pub(crate) fn mentions(line: &str, needle: &str) -> bool {
    line.match_indices(needle).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + needle.len()..].chars().next();
        let bound = |c: Option<char>| {
            c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        };
        bound(before) && bound(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_is_named_as_a_whole_word() {
        assert!(mentions(
            "run: warden sign dist --public-key keys/old.pub",
            "old.pub"
        ));
        assert!(mentions("  PUBLIC_KEY: old.pub", "old.pub"));
        assert!(!mentions(
            "run: warden sign --public-key keys/bold.pub",
            "old.pub"
        ));
        assert!(!mentions("run: cat old.pub.bak", "old.pub"));
    }
}
