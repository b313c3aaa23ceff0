//! `warden keys list` and `warden keys revoke`: the keys folder's lifecycle.

use std::io::Write;

use release_warden::trust::{install_revocation, revoke, RevokeOptions};

use crate::cli::{KeysCommand, KeysListArgs, KeysRevokeArgs, KeysRotateArgs};
use crate::context::Context;
use crate::secrets::{load_secret_key, KeySource};
use release_warden::trust::{rotate, RotateOptions};

pub(crate) fn run(cmd: KeysCommand, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    match cmd {
        KeysCommand::List(args) => list_keys(&args, ctx, out),
        KeysCommand::Revoke(args) => revoke_key(&args, ctx, out),
        KeysCommand::Rotate(args) => rotate_key(&args, ctx, out),
    }
}

fn rotate_key(args: &KeysRotateArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let old = load_secret_key(
        KeySource::File(&args.old_secret_key),
        args.old_password_env.as_deref(),
        ctx.interactive,
    )?;
    let new = load_secret_key(
        KeySource::File(&args.new_secret_key),
        args.new_password_env.as_deref(),
        ctx.interactive,
    )?;
    let at = release_warden::util::rfc3339(ctx.timestamp()?);
    let report = rotate(
        &RotateOptions {
            keys_dir: args.keys_dir.clone(),
            rotated_at: at.clone(),
        },
        &old,
        &new,
    )?;
    ctx.emit(out, &report, release_warden::report::Format::Text, false)?;
    if args.revoke_old {
        let revoked = revoke(
            &RevokeOptions {
                keys_dir: args.keys_dir.clone(),
                key_id: report.old.to_string(),
                reason: args.reason.clone().unwrap_or_default(),
                revoked_at: at,
            },
            &old,
        )?;
        ctx.emit(out, &revoked, release_warden::report::Format::Text, false)?;
    }
    Ok(0)
}

fn list_keys(args: &KeysListArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    ctx.emit(
        out,
        &release_warden::trust::list_keys(&args.keys_dir),
        args.format.into(),
        false,
    )
}

fn revoke_key(args: &KeysRevokeArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    if let Some(statement) = &args.statement {
        let report = install_revocation(&args.keys_dir, &args.key_id, statement)?;
        return ctx.emit(out, &report, release_warden::report::Format::Text, false);
    }
    let source = KeySource::from_flags(args.secret_key_env.as_deref(), args.secret_key.as_deref());
    let key = load_secret_key(source, args.password_env.as_deref(), ctx.interactive)?;
    let revoked_at = ctx.timestamp()?;
    let opts = RevokeOptions {
        keys_dir: args.keys_dir.clone(),
        key_id: args.key_id.clone(),
        reason: args.reason.clone().unwrap_or_default(),
        revoked_at: release_warden::util::rfc3339(revoked_at),
    };
    let report = revoke(&opts, &key)?;
    ctx.emit(out, &report, release_warden::report::Format::Text, false)
}
