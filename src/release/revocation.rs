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
/// (`others`): its key id, its public key, and a signature by that key, or signatures by
/// `threshold` distinct other keys of the folder (`<file>.minisig` and co-signatures
/// `<file>.<KEYID>.minisig`).
pub fn check_statement(file: &Path, others: &[PublicKey], threshold: usize) -> Result<Revocation> {
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
    let mut by: Vec<KeyId> = vec![signer.key_id];
    for key in &signers {
        let cosig = super::names::cosignature_path(file, key.key_id);
        if by.contains(&key.key_id) || std::fs::symlink_metadata(&cosig).is_err() {
            continue;
        }
        statement::check_signature(&cosig, &text, &[key], |id| {
            format!("named for key {} but signed by key {id}", key.key_id)
        })?;
        by.push(key.key_id);
    }
    let others_signed = by.iter().filter(|k| **k != public.key_id).count();
    if !by.contains(&public.key_id) && others_signed < threshold {
        return Err(bad(
            None,
            format!(
                "signed by {others_signed} other key{}, and the policy asks for {threshold}: another key holder adds a co-signature with `warden keys revoke {} --secret-key THEIR_KEY`",
                if others_signed == 1 { "" } else { "s" },
                public.key_id
            ),
        ));
    }
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
pub fn load(keys_dir: &Path, others: &[PublicKey], threshold: usize) -> Result<Vec<Revocation>> {
    load_statements(&keys_dir.join(REVOKED_DIR), others, threshold)
}

/// Every statement of the folder `dir` itself (`keys/revoked/`, or `--revocations DIR`).
pub fn load_statements(
    dir: &Path,
    others: &[PublicKey],
    threshold: usize,
) -> Result<Vec<Revocation>> {
    let files = statement::files(dir)?;
    files
        .iter()
        .map(|f| {
            let r = check_statement(f, others, threshold)?;
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
    let threshold = super::policy::Policy::load(keys_dir)?.threshold;
    let r = check_statement(statement, &others, threshold)?;
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
        pending: None,
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
    /// Why the revocation is not valid yet (more co-signatures needed); `None` when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
}

impl RevokeReport {
    fn checked(mut self, folder_keys: &[PublicKey]) -> Result<Self> {
        let keys_dir =
            crate::files::paths::parent_dir(crate::files::paths::parent_dir(&self.statement));
        let threshold = super::policy::Policy::load(keys_dir)?.threshold;
        self.pending = check_statement(&self.statement, folder_keys, threshold)
            .err()
            .map(|e| e.to_string());
        Ok(self)
    }
}

/// Writes the revocation of `opts.key_id` into `keys_dir/revoked/`, signed by `key`: the key
/// itself (a self-revocation, valid alone), or another key of the folder. A revocation by other
/// keys needs the policy's threshold of them: the first writes the statement, each further one
/// adds its co-signature `<KEYID>.toml.<SIGNER>.minisig`. Refused, with nothing written, when
/// the reason is not one line, the key is revoked already, or the signer is not in the folder.
pub fn revoke(opts: &RevokeOptions, key: &SecretKey) -> Result<RevokeReport> {
    let signer = key.public_key();
    if opts.reason.trim().is_empty() || opts.reason.chars().any(char::is_control) {
        return Err(Error::Usage(
            "--reason must be one line of text (why the key is revoked)".into(),
        ));
    }
    let folder_keys = folder_keys(&opts.keys_dir)?;
    let revoked = if opts.key_id.eq_ignore_ascii_case(&signer.key_id.to_string()) {
        signer.clone()
    } else {
        if !folder_keys.contains(&signer) {
            return Err(Error::Usage(format!(
                "the secret key is key {}, neither {} nor a key of {}: nothing revoked",
                signer.key_id,
                crate::markup::text_value(&opts.key_id),
                opts.keys_dir.display()
            )));
        }
        folder_keys
            .iter()
            .find(|k| opts.key_id.eq_ignore_ascii_case(&k.key_id.to_string()))
            .cloned()
            .ok_or_else(|| {
                Error::Usage(format!(
                    "the secret key is key {}, not {}, and {} has no .pub file for it (a revocation by another key names a key of the folder): nothing revoked",
                    signer.key_id,
                    crate::markup::text_value(&opts.key_id),
                    opts.keys_dir.display()
                ))
            })?
    };
    let dir = opts.keys_dir.join(REVOKED_DIR);
    let statement = dir.join(format!("{}.toml", revoked.key_id));
    let signature = dir.join(format!("{}.toml.minisig", revoked.key_id));
    if statement.exists() || signature.exists() {
        return cosign_revocation(&statement, &revoked, key, &folder_keys);
    }
    let text = statement_text(&revoked, &opts.revoked_at, opts.reason.trim());
    let sig = sign_statement(&text, key)?;
    fs::create_dir_all(&dir).map_err(|e| Error::io("creating", &dir, e))?;
    crate::files::atomic::write_atomic(&statement, text.as_bytes(), 0o644, false)?;
    crate::files::atomic::write_atomic(&signature, sig.as_bytes(), 0o644, false)?;
    RevokeReport {
        key_id: revoked.key_id,
        statement,
        signature,
        pending: None,
    }
    .checked(&folder_keys)
}

/// A revocation by other keys that is already in the folder: `key` adds its co-signature, when
/// the statement is not valid yet and `key` has not signed it.
fn cosign_revocation(
    statement: &Path,
    revoked: &PublicKey,
    key: &SecretKey,
    folder_keys: &[PublicKey],
) -> Result<RevokeReport> {
    let threshold = super::policy::Policy::load(crate::files::paths::parent_dir(
        crate::files::paths::parent_dir(statement),
    ))?
    .threshold;
    let signer = key.public_key();
    let already = || {
        Error::Usage(format!(
            "{}: key {} is revoked already",
            statement.display(),
            revoked.key_id
        ))
    };
    if check_statement(statement, folder_keys, threshold).is_ok() || signer == *revoked {
        return Err(already());
    }
    let cosig = super::names::cosignature_path(statement, signer.key_id);
    let main = PathBuf::from(format!("{}.minisig", statement.display()));
    let text = statement::read(statement)?;
    let first = statement::check_signature(&main, &text, &[&signer], |_| String::new());
    if first.is_ok() || cosig.exists() {
        return Err(Error::Usage(format!(
            "{}: key {} signed this revocation already; another key holder must co-sign it",
            statement.display(),
            signer.key_id
        )));
    }
    let sig = sign_statement(&text, key)?;
    crate::files::atomic::write_atomic(&cosig, sig.as_bytes(), 0o644, false)?;
    RevokeReport {
        key_id: revoked.key_id,
        statement: statement.to_path_buf(),
        signature: cosig,
        pending: None,
    }
    .checked(folder_keys)
}

/// The public keys of the folder (its `*.pub`).
fn folder_keys(keys_dir: &Path) -> Result<Vec<PublicKey>> {
    super::keys::public_key_files(keys_dir)?
        .iter()
        .map(|p| PublicKey::from_file(p))
        .collect()
}
