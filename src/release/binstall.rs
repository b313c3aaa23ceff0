//! cargo-binstall's signing section (`[package.metadata.binstall.signing]`, and the same under
//! `overrides.<target>`), judged against the keys folder: `cargo binstall` checks a binary only
//! when the crate names a key, only against that key, and only at the signature URL it is told.
//! A crate with binstall metadata and no signing section installs unchecked binaries; a key that
//! is revoked here, or is not a key of `keys/`, makes binstall accept what `warden verify` refuses.
//!
//! Facts from cargo-binstall's SIGNING.md and its fetcher: `algorithm` is `minisign` (the only
//! one), `pubkey` the key's base64 line, `file` the signature URL's template (default
//! `{ url }.sig`), and a package that fails its signature falls back to the next strategy
//! (`quick-install`: third-party binaries nobody here signed) unless `disabled-strategies` says no.

use std::path::Path;

use toml::Value;

use crate::minisign::keys::PublicKey;
use crate::trust::keys::TrustedKeys;

/// One judgement of a binstall section: where (`Cargo.toml` and the table), and what is wrong,
/// or what the section checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BinstallLine {
    pub(crate) subject: String,
    pub(crate) passed: bool,
    pub(crate) detail: String,
}

const SIGNING: &str = "package.metadata.binstall.signing";

/// The lines for the manifest `manifest` (named `shown` in messages), judged against `keys`
/// (the keys folder's trust, revocations applied). None when the manifest has no binstall
/// metadata: there is nothing that installs.
pub(crate) fn judge(text: &str, shown: &str, keys: Option<&TrustedKeys>) -> Vec<BinstallLine> {
    let Ok(manifest) = text.parse::<toml::Table>() else {
        return Vec::new(); // Cargo says what is wrong with a manifest that does not parse.
    };
    let Some(binstall) = manifest
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("binstall"))
    else {
        return Vec::new();
    };
    let line = |table: &str, passed: bool, detail: String| BinstallLine {
        subject: format!("{shown} [{table}]"),
        passed,
        detail,
    };
    let mut out = Vec::new();
    let overrides = binstall.get("overrides").and_then(Value::as_table);
    let mut sections: Vec<(String, &Value)> = Vec::new();
    if let Some(signing) = binstall.get("signing") {
        sections.push((SIGNING.into(), signing));
    }
    for (target, o) in overrides.into_iter().flatten() {
        if let Some(signing) = o.get("signing") {
            sections.push((
                format!("package.metadata.binstall.overrides.{target}.signing"),
                signing,
            ));
        }
    }
    if binstall.get("signing").is_none() {
        out.push(line(
            "package.metadata.binstall",
            false,
            format!("`cargo binstall` installs this crate's binaries unchecked: add [{SIGNING}] with algorithm = \"minisign\", pubkey = the key of keys/ (its second line) and file = \"{{ url }}.minisig\""),
        ));
    }
    for (table, signing) in sections {
        let (passed, detail) = judge_signing(signing, keys);
        out.push(line(&table, passed, detail));
    }
    if binstall.get("signing").is_some() {
        let disabled: Vec<&str> = binstall
            .get("disabled-strategies")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !disabled.contains(&"quick-install") {
            out.push(line(
                "package.metadata.binstall",
                false,
                "a binary that fails its signature is not the end: binstall then installs a third-party build (quick-install) that no key here signed; add disabled-strategies = [\"quick-install\", \"compile\"]".into(),
            ));
        }
    }
    out
}

/// One signing table: (passed, what it checks or what is wrong).
fn judge_signing(signing: &Value, keys: Option<&TrustedKeys>) -> (bool, String) {
    let field = |k: &str| signing.get(k).and_then(Value::as_str);
    match field("algorithm") {
        Some("minisign") => {}
        Some(other) => {
            return (
                false,
                format!(
                "algorithm = {other:?}: binstall knows only \"minisign\", which warden signs with"
            ),
            )
        }
        None => return (false, "no algorithm: set algorithm = \"minisign\"".into()),
    }
    let Some(text) = field("pubkey") else {
        return (
            false,
            "no pubkey: set pubkey to the key of keys/ (its second line)".into(),
        );
    };
    // binstall tolerates the untrusted comment line; the key is the last line.
    let encoded = text.lines().map(str::trim).rfind(|l| !l.is_empty());
    let key = match encoded.map(PublicKey::from_base64) {
        Some(Ok(key)) => key,
        Some(Err(e)) => return (false, format!("pubkey: {e}")),
        None => return (false, "pubkey is empty".into()),
    };
    let file = field("file").unwrap_or("{ url }.sig");
    if !file.ends_with(".minisig") {
        return (
            false,
            format!("file = {file:?}: binstall would fetch that, and warden writes FILE.minisig: set file = \"{{ url }}.minisig\""),
        );
    }
    let Some(keys) = keys else {
        return (
            false,
            format!(
                "pubkey is key {}, and there is no keys/ folder to say it is this project's",
                key.key_id
            ),
        );
    };
    if let Some(r) = keys.revoked_key(&key) {
        return (
            false,
            format!(
                "pubkey is key {}, revoked by {}: binstall would accept binaries signed with it; put the current key",
                key.key_id,
                r.file.display()
            ),
        );
    }
    match keys.trusted().find(|(k, _)| **k == key) {
        Some((_, path)) => (
            true,
            format!(
                "binstall checks each binary's {file} against {} (key {})",
                path.display(),
                key.key_id
            ),
        ),
        None => {
            let look_alike = keys.trusted().any(|(k, _)| k.key_id == key.key_id);
            (
                false,
                format!(
                    "pubkey is key {}, which is not a key of keys/{}",
                    key.key_id,
                    if look_alike {
                        " (a key there has its id, and other bytes)"
                    } else {
                        ""
                    }
                ),
            )
        }
    }
}

/// The manifest at `root`, when there is one to read (a regular file: never a FIFO or a link
/// out of the repository).
pub(crate) fn read_manifest(root: &Path) -> Option<String> {
    let path = root.join("Cargo.toml");
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > 4 << 20 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}
