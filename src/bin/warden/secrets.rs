//! Secret key material from where the user says it is: a named environment variable, a file,
//! stdin, or the terminal. Nothing read here is ever printed.

use std::io;

use anyhow::{anyhow, bail};
use release_warden::files::{read_capped, read_small_file, CappedReadError, SMALL_FILE_CAP};
use release_warden::minisign::{Password, SecretKeyText};

/// The password in environment variable `var` (`--password-env VAR`): set, UTF-8, not empty.
pub(crate) fn password_from_env(var: &str) -> anyhow::Result<Password> {
    let value = std::env::var(var).map_err(|_| {
        anyhow!("environment variable {var} (--password-env) is not set or not UTF-8")
    })?;
    let password = Password::new(value);
    if password.is_empty() {
        bail!("environment variable {var} (--password-env) is empty");
    }
    Ok(password)
}

/// A password typed at the terminal, without echo.
pub(crate) fn prompt_password(prompt: &str) -> anyhow::Result<Password> {
    Ok(Password::new(rpassword::prompt_password(prompt)?))
}

/// Where a secret key comes from.
pub(crate) enum KeySource<'a> {
    Env(&'a str),
    File(&'a std::path::Path),
    Stdin,
}

impl<'a> KeySource<'a> {
    /// Where `--secret-key-env VAR` / `--secret-key FILE` / `--secret-key-stdin` say (clap makes
    /// them exclusive and one of them required).
    pub(crate) fn from_flags(env: Option<&'a str>, file: Option<&'a std::path::Path>) -> Self {
        match (env, file) {
            (Some(var), _) => KeySource::Env(var),
            (None, Some(path)) => KeySource::File(path),
            (None, None) => KeySource::Stdin,
        }
    }
}

/// The secret key's text and a name for it in messages (`$VAR`, the path, `<stdin>`).
pub(crate) fn read_secret_key(source: KeySource) -> anyhow::Result<(SecretKeyText, String)> {
    const WHAT: &str = "a minisign secret key";
    match source {
        KeySource::Env(var) => {
            let value = std::env::var(var).map_err(|_| {
                anyhow!("environment variable {var} (--secret-key-env) is not set or not UTF-8")
            })?;
            Ok((SecretKeyText::new(value), format!("${var}")))
        }
        KeySource::File(path) => {
            let value = read_small_file(path, SMALL_FILE_CAP, WHAT)?;
            Ok((SecretKeyText::new(value), path.display().to_string()))
        }
        KeySource::Stdin => {
            let value =
                read_capped(io::stdin(), "<stdin>", SMALL_FILE_CAP, WHAT).map_err(|e| match e {
                    CappedReadError::Io(e) => {
                        anyhow::Error::new(e).context("reading the secret key from stdin")
                    }
                    CappedReadError::Input(e) => e.into(),
                })?;
            Ok((SecretKeyText::new(value), "<stdin>".into()))
        }
    }
}

/// The secret key from `source`, decrypted with the password from `password_env`, else the
/// terminal (never when the key itself came from stdin, or without a terminal).
pub(crate) fn load_secret_key(
    source: KeySource,
    password_env: Option<&str>,
    interactive: bool,
) -> anyhow::Result<release_warden::minisign::SecretKey> {
    use release_warden::minisign::{secret_key_protection, SecretKey, SecretKeyProtection};
    let from_stdin = matches!(source, KeySource::Stdin);
    let (text, origin) = read_secret_key(source)?;
    let protection = secret_key_protection(&text).map_err(|e| e.in_origin(origin.clone()))?;
    let password = match (password_env, protection) {
        (_, SecretKeyProtection::Unencrypted) => None,
        (Some(var), SecretKeyProtection::Encrypted) => Some(password_from_env(var)?),
        (None, SecretKeyProtection::Encrypted) if interactive && !from_stdin => {
            Some(prompt_password("Password for the secret key: ")?)
        }
        (None, SecretKeyProtection::Encrypted) => {
            bail!("{origin}: the secret key is encrypted: pass --password-env VAR (no prompt without a terminal)")
        }
    };
    match SecretKey::load(&text, password.as_ref()) {
        Ok(key) => Ok(key),
        Err(e) => {
            // A password stored with a trailing line break: the likely cause, tried and said.
            let trimmed = password.as_ref().and_then(|p| p.without_line_break());
            if let Some(key) = trimmed.and_then(|p| SecretKey::load(&text, Some(&p)).ok()) {
                eprintln!("warden: warning: the password ends with a line break; it worked without it (store the secret without one)");
                return Ok(key);
            }
            let hint = if password
                .as_ref()
                .is_some_and(|p| p.without_line_break().is_some())
            {
                " (the password ends with a line break: was it stored with one?)"
            } else {
                ""
            };
            Err(anyhow!("{}{hint}", e.in_origin(origin)))
        }
    }
}
