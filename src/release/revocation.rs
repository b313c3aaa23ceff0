//! Key revocation (issue 25, first part): `keys/revoked/<KEYID>.toml`, a short statement signed
//! (`<KEYID>.toml.minisig`, prehashed, as `minisign -S` makes it) by the revoked key itself or by
//! another key of the folder. A key can always revoke itself: whoever holds it can at worst stop
//! it working. `minisign -Vm <KEYID>.toml -P <public_key>` checks a self-revocation.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::keys::{KeyId, PublicKey, SecretKey};
use super::statement;
use crate::error::{Error, Result};

/// The folder of revocation statements, inside the keys folder.
pub const REVOKED_DIR: &str = "revoked";

/// A key that must not be trusted any more, and who said so.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Revocation {
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub key_id: KeyId,
    /// As written in the statement (RFC 3339, UTC).
    pub revoked_at: String,
    pub reason: String,
    /// The key whose signature makes the statement valid (the revoked key itself, or another).
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub signed_by: KeyId,
    pub file: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Statement {
    key_id: String,
    public_key: String,
    revoked_at: String,
    reason: String,
}

/// The statement revoking `key`: TOML, one line per field, the public key included so that the
/// statement verifies on its own.
pub fn statement_text(key: &PublicKey, revoked_at: &str, reason: &str) -> String {
    let quote = |s: &str| toml::Value::from(s).to_string();
    format!(
        "# A warden key revocation: signatures by this key are not trusted any more.\nkey_id = {}\npublic_key = {}\nrevoked_at = {}\nreason = {}\n",
        quote(&key.key_id.to_string()),
        quote(&key.to_base64()),
        quote(revoked_at),
        quote(reason)
    )
}

/// `text` signed with `key` (prehashed), as a `.minisig` file's text.
pub fn sign_statement(text: &str, key: &SecretKey) -> Result<String> {
    let comment = format!(
        "warden revocation of {}",
        statement_key_id(text).unwrap_or_default()
    );
    statement::sign(text, key, &comment)
}

fn statement_key_id(text: &str) -> Option<String> {
    toml::from_str::<Statement>(text).ok().map(|s| s.key_id)
}

/// Checks one statement (`file`, its signature beside it) against the keys of the folder
/// (`others`): its key id, its public key, and a signature by that key or by one of `others`.
pub fn check_statement(file: &Path, others: &[PublicKey]) -> Result<Revocation> {
    let bad =
        |line: Option<usize>, why: String| Error::input(file.display().to_string(), line, why);
    let text = statement::read(file)?;
    let statement: Statement = statement::parse(file, &text, "revocation")?;
    let public = PublicKey::from_base64(&statement.public_key)
        .map_err(|e| bad(None, format!("public_key: {e}")))?;
    if public.key_id.to_string() != statement.key_id.to_ascii_uppercase() {
        return Err(bad(
            None,
            format!(
                "key_id {} is not the id of its public_key ({})",
                statement.key_id, public.key_id
            ),
        ));
    }
    let sig_file = PathBuf::from(format!("{}.minisig", file.display()));
    let signers: Vec<&PublicKey> = std::iter::once(&public).chain(others).collect();
    let signer = statement::check_signature(&sig_file, &text, &signers, |id| {
        format!("signed by key {id}, neither the revoked key nor a key of the folder")
    })?;
    Ok(Revocation {
        key_id: public.key_id,
        revoked_at: statement.revoked_at,
        reason: statement.reason,
        signed_by: signer.key_id,
        file: file.to_path_buf(),
    })
}

/// Every statement of `keys_dir/revoked/` (none when the folder is absent), each checked against
/// `others` (the folder's keys). A statement that does not verify is an error: a revocation that
/// cannot be trusted is not silently ignored.
pub fn load(keys_dir: &Path, others: &[PublicKey]) -> Result<Vec<Revocation>> {
    load_statements(&keys_dir.join(REVOKED_DIR), others)
}

/// Every statement of the folder `dir` itself (`keys/revoked/`, or `--revocations DIR`).
pub fn load_statements(dir: &Path, others: &[PublicKey]) -> Result<Vec<Revocation>> {
    let files = statement::files(dir)?;
    files
        .iter()
        .map(|f| {
            let r = check_statement(f, others)?;
            if f.file_stem().and_then(|s| s.to_str()) != Some(r.key_id.to_string().as_str()) {
                return Err(Error::input(
                    f.display().to_string(),
                    None,
                    format!(
                        "a statement revoking {} must be named {}.toml",
                        r.key_id, r.key_id
                    ),
                ));
            }
            Ok(r)
        })
        .collect()
}

/// The statement files of a revocation made ahead of time (`keygen` writes one beside the secret
/// key): `<secret key>.revoke.toml` and its signature.
pub fn ahead_of_time_paths(secret_key: &Path) -> (PathBuf, PathBuf) {
    let statement = PathBuf::from(format!("{}.revoke.toml", secret_key.display()));
    let signature = PathBuf::from(format!("{}.revoke.toml.minisig", secret_key.display()));
    (statement, signature)
}

/// Installs a statement made ahead of time (`statement`, its `.minisig` beside it) into
/// `keys_dir/revoked/`, after checking it revokes `key_id` and verifies.
pub fn install(keys_dir: &Path, key_id: &str, statement: &Path) -> Result<RevokeReport> {
    let mut others = Vec::new();
    for entry in fs::read_dir(keys_dir).map_err(|e| Error::io("reading", keys_dir, e))? {
        let path = entry.map_err(|e| Error::io("reading", keys_dir, e))?.path();
        if path.extension().is_some_and(|x| x == "pub") && path.is_file() {
            others.push(PublicKey::from_file(&path)?);
        }
    }
    let r = check_statement(statement, &others)?;
    if !key_id.eq_ignore_ascii_case(&r.key_id.to_string()) {
        return Err(Error::Usage(format!(
            "{} revokes key {}, not {}: nothing installed",
            statement.display(),
            r.key_id,
            crate::markup::text_value(key_id)
        )));
    }
    let dir = keys_dir.join(REVOKED_DIR);
    let target = dir.join(format!("{}.toml", r.key_id));
    let target_sig = dir.join(format!("{}.toml.minisig", r.key_id));
    if target.exists() || target_sig.exists() {
        return Err(Error::Usage(format!(
            "{}: key {} is revoked already",
            target.display(),
            r.key_id
        )));
    }
    let text = statement::read(statement)?;
    let sig = statement::read(&PathBuf::from(format!("{}.minisig", statement.display())))?;
    fs::create_dir_all(&dir).map_err(|e| Error::io("creating", &dir, e))?;
    crate::files::atomic::write_atomic(&target, text.as_bytes(), 0o644, false)?;
    crate::files::atomic::write_atomic(&target_sig, sig.as_bytes(), 0o644, false)?;
    Ok(RevokeReport {
        key_id: r.key_id,
        statement: target,
        signature: target_sig,
    })
}

/// What `warden keys revoke` needs.
#[derive(Debug)]
pub struct RevokeOptions {
    pub keys_dir: PathBuf,
    /// The key id as given (checked against the secret key's).
    pub key_id: String,
    pub reason: String,
    /// RFC 3339, UTC.
    pub revoked_at: String,
}

/// Where the statement went.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RevokeReport {
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub key_id: KeyId,
    pub statement: PathBuf,
    pub signature: PathBuf,
}

/// Writes the revocation of `key` (its own signature on it) into `keys_dir/revoked/`. Refused
/// when the id given is not the key's, when the reason is not one line, or when the key is
/// revoked already; nothing is written then.
pub fn revoke(opts: &RevokeOptions, key: &SecretKey) -> Result<RevokeReport> {
    let public = key.public_key();
    if !opts.key_id.eq_ignore_ascii_case(&public.key_id.to_string()) {
        return Err(Error::Usage(format!(
            "the secret key is key {}, not {}: nothing revoked",
            public.key_id,
            crate::markup::text_value(&opts.key_id)
        )));
    }
    if opts.reason.trim().is_empty() || opts.reason.chars().any(char::is_control) {
        return Err(Error::Usage(
            "--reason must be one line of text (why the key is revoked)".into(),
        ));
    }
    let dir = opts.keys_dir.join(REVOKED_DIR);
    let statement = dir.join(format!("{}.toml", public.key_id));
    let signature = dir.join(format!("{}.toml.minisig", public.key_id));
    if statement.exists() || signature.exists() {
        return Err(Error::Usage(format!(
            "{}: key {} is revoked already",
            statement.display(),
            public.key_id
        )));
    }
    let text = statement_text(&public, &opts.revoked_at, opts.reason.trim());
    let sig = sign_statement(&text, key)?;
    fs::create_dir_all(&dir).map_err(|e| Error::io("creating", &dir, e))?;
    crate::files::atomic::write_atomic(&statement, text.as_bytes(), 0o644, false)?;
    crate::files::atomic::write_atomic(&signature, sig.as_bytes(), 0o644, false)?;
    Ok(RevokeReport {
        key_id: public.key_id,
        statement,
        signature,
    })
}
