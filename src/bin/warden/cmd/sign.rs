//! `warden sign`: load the key (asking for its password where one is needed), sign, report.

use std::io::Write;

use anyhow::{anyhow, bail};
use release_warden::release::comment::ReleaseMeta;
use release_warden::release::hash::Progress;
use release_warden::release::keys::{
    secret_key_protection, PublicKey, SecretKey, SecretKeyProtection,
};
use release_warden::release::sign::{sign, ChecksumsTarget, SignOptions};

use crate::cli::SignArgs;
use crate::context::Context;
use crate::progress::ProgressDisplay;
use crate::secrets::{password_from_env, prompt_password, read_secret_key, KeySource};

pub(crate) fn run(args: SignArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let key = load_key(&args, ctx)?;
    let expected = match &args.public_key {
        Some(p) => Some((PublicKey::from_file(p)?, p.clone())),
        None => None,
    };
    let opts = SignOptions {
        inputs: args.paths,
        recursive: args.recursive,
        checksums: match (args.no_checksums, args.checksums) {
            (true, _) => ChecksumsTarget::Skip,
            (false, Some(p)) => ChecksumsTarget::Path(p),
            (false, None) => ChecksumsTarget::Default,
        },
        force: args.force,
        meta: ReleaseMeta {
            tag: args.tag,
            commit: args.commit,
            repo: args.repo,
            dry_run: args.dry_run,
        },
        timestamp: signing_timestamp(ctx)?,
        progress: Some(Progress::default()),
    };
    let bar = ProgressDisplay::start(opts.progress.clone(), ctx.progress, "signing");
    let report = sign(
        &opts,
        &key,
        expected.as_ref().map(|(k, p)| (k, p.as_path())),
    )?;
    drop(bar);
    ctx.emit(out, &report, args.format.into(), false)
}

/// The secret key, decrypted with the password from `--password-env` or the terminal.
fn load_key(args: &SignArgs, ctx: &Context) -> anyhow::Result<SecretKey> {
    let source = match (&args.secret_key_env, &args.secret_key) {
        (Some(var), _) => KeySource::Env(var),
        (None, Some(path)) => KeySource::File(path),
        (None, None) => KeySource::Stdin,
    };
    let (text, origin) = read_secret_key(source)?;
    let protection = secret_key_protection(&text).map_err(|e| e.in_origin(origin.clone()))?;
    let password = match (&args.password_env, protection) {
        (_, SecretKeyProtection::Unencrypted) => None,
        (Some(var), SecretKeyProtection::Encrypted) => Some(password_from_env(var)?),
        (None, SecretKeyProtection::Encrypted) if ctx.interactive && !args.secret_key_stdin => {
            Some(prompt_password("Password for the secret key: ")?)
        }
        (None, SecretKeyProtection::Encrypted) => {
            bail!("{origin}: the secret key is encrypted: pass --password-env VAR (no prompt without a terminal)")
        }
    };
    Ok(SecretKey::load(&text, password.as_ref()).map_err(|e| e.in_origin(origin))?)
}

/// SOURCE_DATE_EPOCH makes signatures reproducible (Ed25519 is deterministic); else now.
fn signing_timestamp(ctx: &Context) -> anyhow::Result<u64> {
    if let Some(v) = &ctx.source_date_epoch {
        return v
            .trim()
            .parse()
            .map_err(|_| anyhow!("SOURCE_DATE_EPOCH={v:?} is not a unix timestamp"));
    }
    Ok(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs())
}
