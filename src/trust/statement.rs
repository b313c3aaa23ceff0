//! Signed statements in the keys folder (revocations, rotations): small TOML files, each with
//! prehashed minisign signatures beside it. Reading, signing and checking them, and listing a
//! folder of them, the same way for every kind.

use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::minisign::comment::TrustedComment;
use crate::minisign::hash::hash_bytes;
use crate::minisign::keys::{KeyId, PublicKey, SecretKey};
use crate::minisign::signature::SignatureFile;

/// A statement is a few lines; larger files are refused unread.
const STATEMENT_CAP: u64 = 16 << 10;

/// The text of `file` (inside its folder, a regular file, at most 16 KiB).
pub(crate) fn read(file: &Path) -> Result<String> {
    crate::files::guarded::read_text_inside(
        crate::files::paths::parent_dir(file),
        file,
        STATEMENT_CAP,
    )
    .map_err(|e| Error::io("reading", file, e))
}

/// `text` (read from `file`) as a statement of type `T`; an error names the file, the line and
/// `what` it should have been.
pub(crate) fn parse<T: DeserializeOwned>(file: &Path, text: &str, what: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        Error::input(
            file.display().to_string(),
            line,
            format!("not a {what} statement: {}", e.message()),
        )
    })
}

/// `text` signed with `key` (prehashed, trusted comment `comment`), as a `.minisig` file's text.
pub(crate) fn sign(text: &str, key: &SecretKey, comment: &str) -> Result<String> {
    let comment = TrustedComment::parse(comment).map_err(|e| Error::Usage(e.into()))?;
    let prehash = hash_bytes(text.as_bytes()).blake2b512;
    Ok(SignatureFile::sign_prehashed(key, &prehash, comment).to_string())
}

/// Checks the signature in `sig_file` of `text`: prehashed, by one of `signers`, verifying. An
/// unknown signer's message is `unknown(key id)`. Returns the key that signed.
pub(crate) fn check_signature<'k>(
    sig_file: &Path,
    text: &str,
    signers: &[&'k PublicKey],
    unknown: impl FnOnce(KeyId) -> String,
) -> Result<&'k PublicKey> {
    let bad = |why: String| Error::input(sig_file.display().to_string(), None, why);
    let sig = SignatureFile::parse(&read(sig_file)?).map_err(|e| bad(e.to_string()))?;
    if !sig.is_prehashed() {
        return Err(bad("a legacy (non-prehashed) signature: refused".into()));
    }
    let signer = signers
        .iter()
        .copied()
        .find(|k| k.key_id == sig.key_id)
        .ok_or_else(|| bad(unknown(sig.key_id)))?;
    let prehash = hash_bytes(text.as_bytes()).blake2b512;
    sig.verify_comment(signer)
        .and_then(|()| sig.verify_data(signer, &prehash))
        .map_err(|e| bad(format!("does not verify: {e}")))?;
    Ok(signer)
}

/// The `*.toml` statements of `dir`, sorted; none when the folder does not exist.
pub(crate) fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("reading", dir, e)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}
