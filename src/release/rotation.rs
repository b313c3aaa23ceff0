//! Key rotation (issue 25): `keys/rotations/<OLD>-<NEW>.toml`, signed by the old key
//! (`<OLD>-<NEW>.toml.<OLD>.minisig`) and by the new one (`….<NEW>.minisig`), says the new key
//! succeeds the old. A downstream user who pinned the old public key follows the chain with
//! `verify --follow-rotations`; a key with two successors is a fork, and fails closed.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::keys::{KeyId, PublicKey, SecretKey};
use super::signature::SignatureError;
use super::statement;
use crate::error::{Error, Result};

/// The folder of rotation statements, inside the keys folder.
pub(crate) const ROTATIONS_DIR: &str = "rotations";

/// One checked rotation: `new` succeeds `old`.
#[derive(Clone, Debug)]
pub(crate) struct Rotation {
    pub(crate) old: PublicKey,
    pub(crate) new: PublicKey,
    pub(crate) rotated_at: String,
    pub(crate) file: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Statement {
    old_key_id: String,
    old_public_key: String,
    new_key_id: String,
    new_public_key: String,
    rotated_at: String,
}

/// The statement that `new` succeeds `old`.
pub(crate) fn statement_text(old: &PublicKey, new: &PublicKey, rotated_at: &str) -> String {
    let quote = |s: &str| toml::Value::from(s).to_string();
    format!(
        "# A warden key rotation: the new key succeeds the old one.\nold_key_id = {}\nold_public_key = {}\nnew_key_id = {}\nnew_public_key = {}\nrotated_at = {}\n",
        quote(&old.key_id.to_string()),
        quote(&old.to_base64()),
        quote(&new.key_id.to_string()),
        quote(&new.to_base64()),
        quote(rotated_at)
    )
}

/// The two signature files of a statement: by the old key, by the new key.
pub(crate) fn signature_paths(statement: &Path, old: KeyId, new: KeyId) -> (PathBuf, PathBuf) {
    let with = |id: KeyId| PathBuf::from(format!("{}.{id}.minisig", statement.display()));
    (with(old), with(new))
}

/// Checks one statement and its two signatures.
pub(crate) fn check_statement(file: &Path) -> Result<Rotation> {
    let text = statement::read(file)?;
    let bad =
        |line: Option<usize>, why: String| Error::input(file.display().to_string(), line, why);
    let s: Statement = statement::parse(file, &text, "rotation")?;
    let key = |b64: &str, id: &str, field: &str| -> Result<PublicKey> {
        let k = PublicKey::from_base64(b64).map_err(|e| bad(None, format!("{field}: {e}")))?;
        if !k.key_id.to_string().eq_ignore_ascii_case(id) {
            return Err(bad(None, format!("{field} is key {}, not {id}", k.key_id)));
        }
        Ok(k)
    };
    let old = key(&s.old_public_key, &s.old_key_id, "old_public_key")?;
    let new = key(&s.new_public_key, &s.new_key_id, "new_public_key")?;
    if old.key_id == new.key_id {
        return Err(bad(None, "a key cannot succeed itself".into()));
    }
    let expected = format!("{}-{}", old.key_id, new.key_id);
    if file.file_stem().and_then(|n| n.to_str()) != Some(expected.as_str()) {
        return Err(bad(
            None,
            format!(
                "a rotation from {} to {} must be named {expected}.toml",
                old.key_id, new.key_id
            ),
        ));
    }
    let (by_old, by_new) = signature_paths(file, old.key_id, new.key_id);
    // Each signature by its own key: another key's is a mismatch, as minisign says it.
    for (sig_file, key) in [(&by_old, &old), (&by_new, &new)] {
        statement::check_signature(sig_file, &text, &[key], |signed| {
            let e = SignatureError::KeyMismatch {
                signed,
                trusted: key.key_id,
            };
            format!("does not verify: {e}")
        })?;
    }
    Ok(Rotation {
        old,
        new,
        rotated_at: s.rotated_at,
        file: file.to_path_buf(),
    })
}

/// Every rotation of `keys_dir/rotations/` (none when absent), each checked.
pub(crate) fn load(keys_dir: &Path) -> Result<Vec<Rotation>> {
    let files = statement::files(&keys_dir.join(ROTATIONS_DIR))?;
    files.iter().map(|f| check_statement(f)).collect()
}

/// Why trust stops at a key of a chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ChainEnd {
    Revoked,
    /// Past its `valid_until` (as written).
    Expired(String),
}

/// The keys that succeed `pinned`, in order, following `rotations`: each rotation's old key must
/// be the current key by its bytes (a key carrying its id is another key), and the chain stops
/// at a key `ends` says trust ends at (revoked, or past its `valid_until`): trust never passes
/// through one, whatever the rotations out of it say (its holder, or its thief, may have written
/// them, and may have dated them as they liked). A key with two successors is a fork: an error
/// naming both, never a guess.
pub(crate) fn successors(
    pinned: &PublicKey,
    rotations: &[Rotation],
    ends: impl Fn(&PublicKey) -> Option<ChainEnd>,
) -> Result<Vec<Rotation>> {
    let mut chain: Vec<Rotation> = Vec::new();
    let mut current = pinned.clone();
    loop {
        if ends(&current).is_some() {
            return Ok(chain);
        }
        let next: Vec<&Rotation> = rotations.iter().filter(|r| r.old == current).collect();
        match next.as_slice() {
            [] => return Ok(chain),
            [one] => {
                if one.new == *pinned || chain.iter().any(|r| r.new == one.new) {
                    return Err(Error::input(
                        one.file.display().to_string(),
                        None,
                        "the rotations go round in a circle: refused",
                    ));
                }
                if ends(&one.new) == Some(ChainEnd::Revoked) {
                    return Ok(chain);
                }
                chain.push((*one).clone());
                current = one.new.clone();
            }
            [a, b, ..] => {
                return Err(Error::input(
                    a.file.display().to_string(),
                    None,
                    format!(
                        "key {} has two successors ({} in {}, {} in {}): a forked chain is not followed",
                        current.key_id,
                        a.new.key_id,
                        a.file.display(),
                        b.new.key_id,
                        b.file.display()
                    ),
                ))
            }
        }
    }
}

/// What is wrong with `rotations` against the keys of their folder (`folder`), its revocations
/// and its policy, as `keys list` says it: a rotation whose old key carries the id of a key of
/// the folder but is another key (a look-alike: not followed), and one out of a key trust has
/// ended at (revoked, or past its date: trust does not pass on from it).
pub(crate) fn problems(
    rotations: &[Rotation],
    folder: &[PublicKey],
    ends: impl Fn(&PublicKey) -> Option<ChainEnd>,
) -> Vec<String> {
    let mut out = Vec::new();
    for r in rotations {
        if folder
            .iter()
            .any(|k| k.key_id == r.old.key_id && *k != r.old)
        {
            out.push(format!(
                "{}: its old key carries the id {} but is not the folder's key under that id (a look-alike): not followed",
                r.file.display(),
                r.old.key_id
            ));
        }
        match ends(&r.old) {
            Some(ChainEnd::Revoked) => out.push(format!(
                "{}: a rotation out of revoked key {}: trust does not pass through a revoked key, so it is not followed",
                r.file.display(),
                r.old.key_id
            )),
            Some(ChainEnd::Expired(until)) => out.push(format!(
                "{}: a rotation out of key {}, trusted until {}: trust does not pass on from a key past its date, so it is not followed",
                r.file.display(),
                r.old.key_id,
                crate::markup::text_value(&until)
            )),
            None => {}
        }
    }
    out
}

/// A rotation out of `old` is refused when the folder revokes it (trust does not pass through a
/// revoked key), when its policy's `valid_until` for it is past (trust does not pass on from a
/// key past its date), or when the folder holds another key under its id (`old` is a look-alike
/// of that key).
fn refuse_old_key(keys_dir: &Path, old: &PublicKey) -> Result<()> {
    let mut folder = Vec::new();
    for path in super::keys::public_key_files(keys_dir).unwrap_or_default() {
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
    let policy = super::policy::Policy::load(keys_dir)?;
    if let Some(p) = policy.expired(old.key_id, crate::util::unix_now()) {
        return Err(Error::Usage(format!(
            "key {} was trusted until {} ({}): trust does not pass on from a key past its date, so it cannot rotate to a successor",
            old.key_id,
            p.valid_until.as_deref().unwrap_or_default(),
            policy.origin()
        )));
    }
    let mut lineages = super::lineage::Lineages::default();
    lineages.extend(&load(keys_dir)?);
    let (revoked, _) = super::revocation::load(keys_dir, &folder, policy.threshold, &lineages)?;
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
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub old: KeyId,
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
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
