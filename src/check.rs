//! `warden check`: every offline check of a repository, one line each. Later checks (known-issues
//! registry, generated docs, workflow audit) register here too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::release::verify::{public_key_files, read_public_key};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    /// The check's id, e.g. `keys`.
    pub check: &'static str,
    /// What was checked: a file or a setting.
    pub subject: String,
    pub passed: bool,
    pub detail: String,
}

/// All checks of the repository at `root`.
pub fn run(root: &Path) -> Vec<CheckLine> {
    check_keys(root)
}

/// Every `keys/*.pub` parses as a minisign public key, and no two share a key id.
pub fn check_keys(root: &Path) -> Vec<CheckLine> {
    let dir = root.join("keys");
    let line = |subject: String, passed: bool, detail: String| CheckLine {
        check: "keys",
        subject,
        passed,
        detail,
    };
    let files = match public_key_files(&dir) {
        Ok(files) if files.is_empty() => {
            return vec![line(
                "keys/".into(),
                false,
                "no *.pub file: generate one with `warden keygen`".into(),
            )]
        }
        Ok(files) => files,
        Err(e) => return vec![line("keys/".into(), false, e.to_string())],
    };
    let rel = |p: &Path| -> String { p.strip_prefix(root).unwrap_or(p).display().to_string() };
    let mut by_id: BTreeMap<_, Vec<PathBuf>> = BTreeMap::new();
    let mut out = Vec::new();
    for file in &files {
        match read_public_key(file) {
            Ok(pk) => {
                by_id.entry(pk.key_id).or_default().push(file.clone());
                out.push(line(
                    rel(file),
                    true,
                    format!("minisign public key {}", pk.key_id),
                ));
            }
            Err(e) => {
                let msg = e.to_string();
                let shown = msg
                    .strip_prefix(&format!("{}: ", file.display()))
                    .unwrap_or(&msg)
                    .to_string();
                out.push(line(rel(file), false, shown));
            }
        }
    }
    for (id, paths) in by_id.into_iter().filter(|(_, p)| p.len() > 1) {
        let names: Vec<String> = paths.iter().map(|p| rel(p)).collect();
        out.push(line(
            "keys/".into(),
            false,
            format!("key id {id} appears in {}", names.join(", ")),
        ));
    }
    out
}
