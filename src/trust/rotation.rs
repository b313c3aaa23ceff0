//! `warden keys rotate`: the new public key added to the folder and the statement that it
//! succeeds the old one (`keys/rotations/<OLD>-<NEW>.toml`, signed by both keys), refused out of
//! a key whose trust has ended. How statements are read and what they mean is `lineage`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::minisign::keys::{KeyId, PublicKey, SecretKey};
use crate::trust::lineage::{load, signature_paths, statement_text, Lineages, ROTATIONS_DIR};
use crate::trust::statement;

/// A rotation out of `old` is refused when the folder revokes it (trust does not pass through a
/// revoked key), when its policy's `valid_until` for it is past (trust does not pass on from a
/// key past its date), or when the folder holds another key under its id (`old` is a look-alike
/// of that key).
fn refuse_old_key(keys_dir: &Path, old: &PublicKey) -> Result<()> {
    let mut folder = Vec::new();
    for path in crate::minisign::keys::public_key_files(keys_dir).unwrap_or_default() {
        let key = PublicKey::from_file(&path)?;
        if key.key_id == old.key_id && key != *old {
            return Err(Error::Usage(format!(
                "the old secret key carries the id {} but is another key than the one {} holds under that id (a look-alike): nothing rotated",
                old.key_id,
                path.display()
            )));
        }
        folder.push(key);
    }
    let policy = crate::trust::policy::Policy::load(keys_dir)?;
    if let Some(p) = policy.expired(old.key_id, crate::util::unix_now()) {
        return Err(Error::Usage(format!(
            "key {} was trusted until {} ({}): trust does not pass on from a key past its date, so it cannot rotate to a successor",
            old.key_id,
            p.valid_until.as_deref().unwrap_or_default(),
            policy.origin()
        )));
    }
    let mut lineages = Lineages::default();
    lineages.extend(&load(keys_dir)?);
    let (revoked, _) =
        crate::trust::revocation::load(keys_dir, &folder, policy.threshold, &lineages)?;
    if let Some(r) = revoked.iter().find(|r| r.public_key == *old) {
        return Err(Error::Usage(format!(
            "key {} is revoked ({}; {}): trust does not pass through a revoked key, so it cannot rotate to a successor",
            old.key_id,
            crate::markup::text_value(&r.reason),
            r.file.display()
        )));
    }
    Ok(())
}

/// What `warden keys rotate` needs.
#[derive(Debug)]
pub struct RotateOptions {
    pub keys_dir: PathBuf,
    /// RFC 3339, UTC.
    pub rotated_at: String,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct RotateReport {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub old: KeyId,
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) new: KeyId,
    pub(crate) public_key: PathBuf,
    pub(crate) statement: PathBuf,
}

/// Adds the new public key to the folder and the statement, signed by both keys. Refused when
/// the old key already has a successor (that would fork the chain) or the two keys are one.
pub fn rotate(opts: &RotateOptions, old: &SecretKey, new: &SecretKey) -> Result<RotateReport> {
    let (old_pk, new_pk) = (old.public_key(), new.public_key());
    if old_pk.key_id == new_pk.key_id {
        return Err(Error::Usage(
            "the old and the new secret keys are the same key".into(),
        ));
    }
    refuse_old_key(&opts.keys_dir, &old_pk)?;
    let existing = load(&opts.keys_dir)?;
    if let Some(r) = existing.iter().find(|r| r.old == old_pk) {
        return Err(Error::Usage(format!(
            "key {} already has a successor, {} ({}): a second one would fork the chain",
            old_pk.key_id,
            r.new.key_id,
            r.file.display()
        )));
    }
    let dir = opts.keys_dir.join(ROTATIONS_DIR);
    let statement = dir.join(format!("{}-{}.toml", old_pk.key_id, new_pk.key_id));
    let (by_old, by_new) = signature_paths(&statement, old_pk.key_id, new_pk.key_id);
    let text = statement_text(&old_pk, &new_pk, &opts.rotated_at);
    let what = format!(
        "warden rotation from {} to {}",
        old_pk.key_id, new_pk.key_id
    );
    let (sig_old, sig_new) = (
        statement::sign(&text, old, &what)?,
        statement::sign(&text, new, &what)?,
    );
    let public_key = opts.keys_dir.join(format!("{}.pub", new_pk.key_id));
    fs::create_dir_all(&dir).map_err(|e| Error::io("creating", &dir, e))?;
    if !public_key.exists() {
        crate::files::atomic::write_atomic(
            &public_key,
            new_pk.to_string().as_bytes(),
            0o644,
            false,
        )?;
    }
    crate::files::atomic::write_atomic(&statement, text.as_bytes(), 0o644, false)?;
    crate::files::atomic::write_atomic(&by_old, sig_old.as_bytes(), 0o644, false)?;
    crate::files::atomic::write_atomic(&by_new, sig_new.as_bytes(), 0o644, false)?;
    Ok(RotateReport {
        old: old_pk.key_id,
        new: new_pk.key_id,
        public_key,
        statement,
    })
}
