//! `warden keygen`: a minisign key pair, the public half for `keys/`, the secret half outside
//! any git work tree with mode 0600.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::files::{atomic, paths};
use crate::minisign::keys::{self, KeyId, Password};

#[derive(Debug)]
pub struct KeygenOptions {
    pub public_key: PathBuf,
    pub secret_key: PathBuf,
    /// `None` writes an unencrypted key (for a CI secret).
    pub password: Option<Password>,
    pub force: bool,
    /// When the revocation statement made now would take effect, if installed (RFC 3339).
    pub revoked_at: String,
    /// The variable the password came from (`--password-env`), for the hint that stores it.
    pub password_env: Option<String>,
    /// The home folder, to suggest only a place for the secret key that is not refused.
    pub home: Option<PathBuf>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct KeygenReport {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: KeyId,
    pub(crate) public_key: PathBuf,
    pub(crate) secret_key: PathBuf,
    pub(crate) encrypted: bool,
    /// The revocation statement made now, beside the secret key: installed later with
    /// `warden keys revoke KEYID --statement FILE` if the key is lost or stolen.
    pub(crate) revocation: PathBuf,
    /// The variable the password came from, when it came from one.
    #[serde(skip)]
    pub(crate) password_env: Option<String>,
}

fn create_dir(dir: &Path, mode: u32) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    builder
        .create(dir)
        .map_err(|e| Error::io("creating", dir, e))
}

/// Where a file would be written: its folder resolved when it exists, else the absolute path.
fn landing(path: &Path) -> PathBuf {
    paths::with_resolved_folder(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The refusal of a secret key inside the work tree `tree`, suggesting only a place that is not
/// refused in turn: the home folder's `.minisign/` unless the home folder is in the tree too.
fn outside_work_tree(tree: &Path, home: Option<&Path>) -> String {
    let home_inside = home.and_then(paths::enclosing_git_work_tree).is_some();
    let hint = if home_inside {
        format!(
            "choose a path outside it (the home folder {} is inside a git work tree too, so ~/.minisign/ will not do)",
            home.unwrap_or(Path::new("~")).display()
        )
    } else {
        "choose a path outside it, e.g. --secret-key ~/.minisign/minisign.key".to_string()
    };
    format!(
        "refusing to write the secret key inside the git work tree {}: {hint}",
        tree.display()
    )
}

pub fn keygen(opts: &KeygenOptions) -> Result<KeygenReport> {
    if opts.password.as_ref().is_some_and(Password::is_empty) {
        return Err(Error::Usage(
            "the password is empty: use --unencrypted for a key without a password".into(),
        ));
    }
    // One file cannot be both: with --force the public key would replace the secret key.
    if landing(&opts.secret_key) == landing(&opts.public_key) {
        return Err(Error::Usage(format!(
            "--secret-key and --public-key are the same file ({}): refusing before anything is written",
            opts.secret_key.display()
        )));
    }
    let secret_dir = paths::parent_dir(&opts.secret_key);
    // Judged on the folder that exists: nothing is created inside a work tree before refusing.
    let existing = secret_dir
        .ancestors()
        .find(|d| d.is_dir())
        .unwrap_or(Path::new("."));
    if let Some(tree) = paths::enclosing_git_work_tree(existing) {
        return Err(Error::Refused(outside_work_tree(
            &tree,
            opts.home.as_deref(),
        )));
    }
    create_dir(secret_dir, 0o700)?;
    if !opts.force {
        for p in [&opts.public_key, &opts.secret_key] {
            if p.exists() {
                return Err(Error::Refused(format!(
                    "{} already exists (use --force to replace it)",
                    p.display()
                )));
            }
        }
    }
    create_dir(paths::parent_dir(&opts.public_key), 0o755)?;
    let pair = keys::generate(opts.password.as_ref()).map_err(|e| Error::Refused(e.message))?;
    // A revocation made now, while the key is at hand: a lost key can still be revoked.
    let key = keys::SecretKey::load(
        &keys::SecretKeyText::new(pair.secret_box.to_string()),
        opts.password.as_ref(),
    )
    .map_err(|e| Error::Refused(e.message))?;
    let text = crate::trust::revocation::statement_text(
        &pair.public,
        &opts.revoked_at,
        "revoked with the statement made when the key was generated (the key was lost or stolen)",
    );
    let sig = crate::trust::revocation::sign_statement(&text, &key)?;
    let (statement_path, signature_path) =
        crate::trust::revocation::ahead_of_time_paths(&opts.secret_key);
    let secret = atomic::stage(&opts.secret_key, pair.secret_box.as_bytes(), 0o600)?;
    let public = atomic::stage(&opts.public_key, pair.public.to_string().as_bytes(), 0o644)?;
    let statement = atomic::stage(&statement_path, text.as_bytes(), 0o600)?;
    let signature = atomic::stage(&signature_path, sig.as_bytes(), 0o600)?;
    secret.commit(opts.force)?;
    public.commit(opts.force)?;
    statement.commit(true)?;
    signature.commit(true)?;
    Ok(KeygenReport {
        key_id: pair.public.key_id,
        public_key: opts.public_key.clone(),
        secret_key: opts.secret_key.clone(),
        encrypted: opts.password.is_some(),
        revocation: statement_path,
        password_env: opts.password_env.clone(),
    })
}
