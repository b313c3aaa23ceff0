//! Key revocation (issue 25, first part): `keys/revoked/<KEYID>.toml`, a short statement signed
//! (`<KEYID>.toml.minisig`, prehashed, as `minisign -S` makes it) by the revoked key itself or by
//! another key of the folder. A key can always revoke itself: whoever holds it can at worst stop
//! it working. `minisign -Vm <KEYID>.toml -P <public_key>` checks a self-revocation.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::minisign::keys::{KeyId, PublicKey, SecretKey};
use crate::trust::lineage::{Lineages, Tally};
use crate::trust::statement;

/// The folder of revocation statements, inside the keys folder.
pub(crate) const REVOKED_DIR: &str = "revoked";

/// A key that must not be trusted any more, and who said so.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Revocation {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: KeyId,
    /// The key revoked, by its bytes: a signature is by a revoked key only when it verifies
    /// under these.
    #[serde(skip)]
    pub(crate) public_key: PublicKey,
    /// As written in the statement (RFC 3339, UTC).
    pub(crate) revoked_at: String,
    pub(crate) reason: String,
    /// The key whose signature makes the statement valid (the revoked key itself, or another).
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) signed_by: KeyId,
    pub(crate) file: PathBuf,
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
pub(crate) fn statement_text(key: &PublicKey, revoked_at: &str, reason: &str) -> String {
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
pub(crate) fn sign_statement(text: &str, key: &SecretKey) -> Result<String> {
    let comment = format!(
        "warden revocation of {}",
        statement_key_id(text).unwrap_or_default()
    );
    statement::sign(text, key, &comment)
}

fn statement_key_id(text: &str) -> Option<String> {
    toml::from_str::<Statement>(text).ok().map(|s| s.key_id)
}

/// What a statement does to the keys trusted here.
#[derive(Clone, Debug)]
pub(crate) enum Checked {
    /// It revokes a key: one trusted here, or one trusted nowhere here that signed it itself.
    Revokes(Box<Revocation>),
    /// It is about a key not trusted here and cannot be checked with the keys here (say, a
    /// repository's statement signed by keys of its own): noted, and ignored.
    NotHere(String),
}

/// Which key a statement is about, judged by bytes against the keys trusted here.
enum Subject<'k> {
    /// A trusted key: the statement's public key is that key.
    Trusted(&'k PublicKey),
    /// A trusted key's id on another key: the statement is about the trusted key, made by
    /// another (the look-alike cannot speak for the key it imitates).
    LookAlike(&'k PublicKey),
    /// A key not trusted here at all.
    Elsewhere,
}

/// Checks one statement (`file`, its signature beside it) against the keys trusted here
/// (`trusted`): its key id and public key, and a signature by the key it revokes, or
/// signatures by `threshold` distinct other trusted keys (`<file>.minisig` and co-signatures
/// `<file>.<KEYID>.minisig`). A statement about a trusted key that does not verify is an error;
/// one about a key trusted nowhere here that does not verify is [`Checked::NotHere`].
pub(crate) fn check_statement(
    file: &Path,
    trusted: &[PublicKey],
    (threshold, lineages): (usize, &Lineages),
) -> Result<Checked> {
    let bad = |why: String| Error::input(file.display().to_string(), None, why);
    let text = statement::read(file)?;
    let statement: Statement = statement::parse(file, &text, "revocation")?;
    let public = PublicKey::from_base64(&statement.public_key)
        .map_err(|e| bad(format!("public_key: {e}")))?;
    if public.key_id.to_string() != statement.key_id.to_ascii_uppercase() {
        return Err(bad(format!(
            "key_id {} is not the id of its public_key ({})",
            statement.key_id, public.key_id
        )));
    }
    let subject = match (
        trusted.iter().find(|k| **k == public),
        trusted.iter().find(|k| k.key_id == public.key_id),
    ) {
        (Some(k), _) => Subject::Trusted(k),
        (None, Some(k)) => Subject::LookAlike(k),
        (None, None) => Subject::Elsewhere,
    };
    let revoked = match subject {
        Subject::Trusted(k) | Subject::LookAlike(k) => k,
        Subject::Elsewhere => &public,
    };
    let others: Vec<&PublicKey> = trusted.iter().filter(|k| *k != revoked).collect();
    let mut signers: Vec<&PublicKey> = others.clone();
    if !matches!(subject, Subject::LookAlike(_)) {
        signers.insert(0, revoked);
    }
    let checked = signed_by(file, &text, &signers, revoked, (threshold, lineages));
    match (checked, subject) {
        (Ok(signer), _) => Ok(Checked::Revokes(Box::new(Revocation {
            key_id: revoked.key_id,
            public_key: revoked.clone(),
            revoked_at: statement.revoked_at,
            reason: statement.reason,
            signed_by: signer,
            file: file.to_path_buf(),
        }))),
        (Err(e), Subject::LookAlike(k)) => Err(bad(format!(
            "its public_key carries the id {} but is another key than the one trusted under that id (a look-alike): as a statement about {} by another key, {e}",
            k.key_id, k.key_id
        ))),
        (Err(e), Subject::Trusted(_)) => Err(e),
        (Err(e), Subject::Elsewhere) => Ok(Checked::NotHere(format!(
            "{} revokes key {}, which is not trusted here, and cannot be checked with the keys here ({e}): ignored",
            file.display(),
            public.key_id
        ))),
    }
}

/// The key whose signature makes the statement in `file` (its `text`) valid: `revoked` itself
/// when it is among `signers`, or `threshold` distinct others of them (a key and its successors
/// are one signer); why not, otherwise.
fn signed_by(
    file: &Path,
    text: &str,
    signers: &[&PublicKey],
    revoked: &PublicKey,
    (threshold, lineages): (usize, &Lineages),
) -> Result<KeyId> {
    let sig_file = PathBuf::from(format!("{}.minisig", file.display()));
    let first = statement::check_signature(&sig_file, text, signers, |id| {
        format!("signed by key {id}, neither the revoked key nor a key trusted here")
    })?;
    let mut by: Vec<&PublicKey> = vec![first];
    for key in signers {
        let cosig = crate::minisign::names::cosignature_path(file, key.key_id);
        if by.contains(key) || std::fs::symlink_metadata(&cosig).is_err() {
            continue;
        }
        statement::check_signature(&cosig, text, &[key], |id| {
            format!("named for key {} but signed by key {id}", key.key_id)
        })?;
        by.push(key);
    }
    let self_signed = by.contains(&revoked) && signers.contains(&revoked);
    let mut others = Tally::new(lineages);
    for k in by.iter().filter(|k| **k != revoked) {
        let _one_signer_already = others.count(k);
    }
    let others_signed = others.len();
    if !self_signed && others_signed < threshold {
        return Err(Error::input(
            file.display().to_string(),
            None,
            format!(
                "signed by {others_signed} other key{}, and the policy asks for {threshold}: another key holder adds a co-signature with `warden keys revoke {} --secret-key THEIR_KEY`",
                if others_signed == 1 { "" } else { "s" },
                revoked.key_id
            ),
        ));
    }
    Ok(first.key_id)
}

/// Every statement of `keys_dir/revoked/` (none when the folder is absent), each checked against
/// the keys trusted here (`trusted`): the revocations, and the notes on statements about keys
/// not trusted here. A statement about a trusted key that does not verify is an error: a
/// revocation that cannot be trusted is not silently ignored.
pub(crate) fn load(
    keys_dir: &Path,
    trusted: &[PublicKey],
    threshold: usize,
    lineages: &Lineages,
) -> Result<(Vec<Revocation>, Vec<String>)> {
    load_statements(&keys_dir.join(REVOKED_DIR), trusted, threshold, lineages)
}

/// Every statement of the folder `dir` itself (`keys/revoked/`, or `--revocations DIR`).
pub(crate) fn load_statements(
    dir: &Path,
    trusted: &[PublicKey],
    threshold: usize,
    lineages: &Lineages,
) -> Result<(Vec<Revocation>, Vec<String>)> {
    let (mut revoked, mut notes) = (Vec::new(), Vec::new());
    for f in statement::files(dir)? {
        match check_statement(&f, trusted, (threshold, lineages))? {
            Checked::Revokes(r) => {
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
                revoked.push(*r);
            }
            Checked::NotHere(note) => notes.push(note),
        }
    }
    Ok((revoked, notes))
}

/// The statement files of a revocation made ahead of time (`keygen` writes one beside the secret
/// key): `<secret key>.revoke.toml` and its signature.
pub(crate) fn ahead_of_time_paths(secret_key: &Path) -> (PathBuf, PathBuf) {
    let statement = PathBuf::from(format!("{}.revoke.toml", secret_key.display()));
    let signature = PathBuf::from(format!("{}.revoke.toml.minisig", secret_key.display()));
    (statement, signature)
}

/// Installs a statement made ahead of time (`statement`, its `.minisig` beside it) into
/// `keys_dir/revoked/`, after checking it revokes `key_id` and verifies.
pub fn install(keys_dir: &Path, key_id: &str, statement: &Path) -> Result<RevokeReport> {
    let others = folder_keys(keys_dir)?;
    let threshold = crate::trust::policy::Policy::load(keys_dir)?.threshold;
    let lineages = folder_lineages(keys_dir)?;
    let r = match check_statement(statement, &others, (threshold, &lineages))? {
        Checked::Revokes(r) => r,
        Checked::NotHere(why) => return Err(Error::Refused(format!("{why}; nothing installed"))),
    };
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
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: KeyId,
    pub(crate) statement: PathBuf,
    pub(crate) signature: PathBuf,
    /// Why the revocation is not valid yet (more co-signatures needed); `None` when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pending: Option<String>,
}

impl RevokeReport {
    fn checked(mut self, folder_keys: &[PublicKey]) -> Result<Self> {
        let keys_dir =
            crate::files::paths::parent_dir(crate::files::paths::parent_dir(&self.statement));
        let threshold = crate::trust::policy::Policy::load(keys_dir)?.threshold;
        let lineages = folder_lineages(keys_dir)?;
        self.pending = match check_statement(&self.statement, folder_keys, (threshold, &lineages)) {
            Ok(Checked::Revokes(_)) => None,
            Ok(Checked::NotHere(why)) => Some(why),
            Err(e) => Some(e.to_string()),
        };
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
        // The id is a label: a key that carries it but is not the folder's key under it cannot
        // revoke that key.
        if folder_keys
            .iter()
            .any(|k| k.key_id == signer.key_id && *k != signer)
        {
            return Err(Error::Refused(format!(
                "the secret key carries the id {} but is not the key {} holds under that id (a look-alike): nothing revoked",
                signer.key_id,
                opts.keys_dir.display()
            )));
        }
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
    let keys_dir = crate::files::paths::parent_dir(crate::files::paths::parent_dir(statement));
    let threshold = crate::trust::policy::Policy::load(keys_dir)?.threshold;
    let lineages = folder_lineages(keys_dir)?;
    let signer = key.public_key();
    let already = || {
        Error::Usage(format!(
            "{}: key {} is revoked already",
            statement.display(),
            revoked.key_id
        ))
    };
    let valid = matches!(
        check_statement(statement, folder_keys, (threshold, &lineages)),
        Ok(Checked::Revokes(_))
    );
    if valid || signer == *revoked {
        return Err(already());
    }
    let cosig = crate::minisign::names::cosignature_path(statement, signer.key_id);
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

/// Which keys of the folder are one signer (its rotations).
fn folder_lineages(keys_dir: &Path) -> Result<Lineages> {
    let mut lineages = Lineages::default();
    lineages.extend(&crate::trust::lineage::load(keys_dir)?);
    Ok(lineages)
}

/// The public keys of the folder (its `*.pub`).
fn folder_keys(keys_dir: &Path) -> Result<Vec<PublicKey>> {
    crate::minisign::keys::public_key_files(keys_dir)?
        .iter()
        .map(|p| PublicKey::from_file(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minisign::keys::{generate, SecretKeyText};

    fn key_pair() -> (PublicKey, SecretKey) {
        let pair = generate(None).unwrap();
        let secret =
            SecretKey::load(&SecretKeyText::new(pair.secret_box.to_string()), None).unwrap();
        (pair.public, secret)
    }

    /// A revocation by other keys needs the threshold of other signers: a key and its successor
    /// are one, so one holder of both cannot revoke a co-maintainer's key alone.
    #[test]
    fn a_key_and_its_successor_are_one_revoker() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("keys");
        std::fs::create_dir_all(&dir).unwrap();
        let ((a, a_sk), (_s, s_sk), (c, _), (d, d_sk)) =
            (key_pair(), key_pair(), key_pair(), key_pair());
        for k in [&a, &c, &d] {
            std::fs::write(dir.join(format!("{}.pub", k.key_id)), k.to_string()).unwrap();
        }
        std::fs::write(dir.join("policy.toml"), "threshold = 2\n").unwrap();
        let rotate = crate::trust::rotation::RotateOptions {
            keys_dir: dir.clone(),
            rotated_at: "2026-01-01T00:00:00Z".into(),
        };
        crate::trust::rotation::rotate(&rotate, &a_sk, &s_sk).unwrap();
        let opts = RevokeOptions {
            keys_dir: dir.clone(),
            key_id: c.key_id.to_string(),
            reason: "left".into(),
            revoked_at: "2026-02-01T00:00:00Z".into(),
        };
        let first = revoke(&opts, &a_sk).unwrap();
        assert!(first.pending.is_some());
        let second = revoke(&opts, &s_sk).unwrap();
        assert_eq!(
            second
                .pending
                .as_deref()
                .map(|p| p.contains("signed by 1 other key")),
            Some(true),
            "{second:?}"
        );
        let third = revoke(&opts, &d_sk).unwrap();
        assert_eq!(third.pending, None);
        let keys = crate::trust::TrustedKeys::load_dir(&dir).unwrap();
        assert!(keys.revoked_key(&c).is_some());
    }
}
