//! `warden sign`: load the key (asking for its password where one is needed), sign, report.

use std::io::Write;

use anyhow::Context as _;

use release_warden::minisign::Progress;
use release_warden::minisign::ReleaseMeta;
use release_warden::minisign::RunBinding;
use release_warden::minisign::{PublicKey, SecretKey};
use release_warden::release::cosign;
use release_warden::release::{sign, ChecksumsTarget, SignOptions};
use release_warden::trust::TrustedKeys;
use release_warden::verdict::VerifyOptions;

use release_warden::report::{Format, TextOrJson};

use crate::cli::SignArgs;
use crate::context::Context;
use crate::progress::ProgressDisplay;
use crate::secrets::{load_secret_key, KeySource};

pub(crate) fn run(args: SignArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let key = load_key(&args, ctx)?;
    // The log is checked before anything is signed: a wrong key or folder loses nothing.
    let log = match &args.log {
        Some(dir) => {
            let key = super::log::log_key(args.log_key.as_deref(), args.log_key_env.as_deref())?;
            release_warden::release::log_ops::check_log_key(dir, &key)?;
            Some((dir.clone(), key))
        }
        None => None,
    };
    if let Some(dir) = &args.cosign {
        return cosign_run(dir.clone(), &args, (&key, log), ctx, out);
    }
    let expected = match &args.public_key {
        Some(p) => Some((PublicKey::from_file(p)?, p.clone())),
        None => None,
    };
    let run = run_binding(&args, ctx)?;
    let opts = SignOptions {
        inputs: args.paths.iter().chain(&args.file).cloned().collect(),
        recursive: args.recursive,
        checksums: match (args.no_checksums, args.checksums) {
            (true, _) => ChecksumsTarget::Skip,
            (false, Some(p)) => ChecksumsTarget::Path(p),
            // `-m FILE` alone is minisign's `-Sm FILE`: only FILE.minisig.
            (false, None) if args.paths.is_empty() => ChecksumsTarget::Skip,
            (false, None) => ChecksumsTarget::Default,
        },
        force: args.force,
        meta: ReleaseMeta {
            tag: args.tag,
            commit: args.commit,
            repo: args.repo,
            dry_run: args.dry_run,
            run,
        },
        timestamp: ctx.timestamp()?,
        progress: Some(Progress::default()),
        total: Some(Progress::default()),
    };
    let bar = ProgressDisplay::start_with_total(
        opts.progress.clone(),
        opts.total.clone(),
        ctx.progress,
        "signing",
    );
    let report = sign(
        &opts,
        &key,
        expected.as_ref().map(|(k, p)| (k, p.as_path())),
    )?;
    drop(bar);
    let Some((dir, log_key)) = log else {
        return ctx.emit(out, &report, args.format.into(), false);
    };
    let sums = report.checksums_path().ok_or_else(|| {
        anyhow::anyhow!("--log logs the checksum list's signature: this run wrote no checksum list")
    })?;
    // The log takes what a verification would count: judged with the keys folder (its
    // revocations and run policy), or this key alone where there is none.
    let keys = if args.keys_dir.is_dir() {
        TrustedKeys::load_dir(&args.keys_dir)?
    } else {
        TrustedKeys::only(key.public_key())
    };
    let logged = release_warden::release::log_ops::append_release(&dir, &log_key, sums, &keys)?;
    emit_both(ctx, out, args.format, (&report, &logged))
}

/// The secret key, decrypted with the password from `--password-env` or the terminal. Without
/// a flag, the key `warden keygen` writes by default (`~/.minisign/minisign.key`), as minisign.
fn load_key(args: &SignArgs, ctx: &Context) -> anyhow::Result<SecretKey> {
    let default;
    let file = match (
        &args.secret_key,
        &args.secret_key_env,
        args.secret_key_stdin,
    ) {
        (None, None, false) => {
            default = ctx.home.as_ref().map(|h| h.join(".minisign/minisign.key"));
            match default.as_deref().filter(|p| p.exists()) {
                Some(p) => Some(p),
                None => anyhow::bail!(
                    "no secret key: pass --secret-key FILE (-s), --secret-key-env VAR or --secret-key-stdin (~/.minisign/minisign.key, where `warden keygen` writes one, does not exist)"
                ),
            }
        }
        (file, _, _) => file.as_deref(),
    };
    let source = KeySource::from_flags(args.secret_key_env.as_deref(), file);
    load_secret_key(source, args.password_env.as_deref(), ctx.interactive)
}

/// `sign --cosign DIR`: this key's signature added to a release the keys folder trusts.
fn cosign_run(
    dir: std::path::PathBuf,
    args: &SignArgs,
    (key, log): (
        &SecretKey,
        Option<(std::path::PathBuf, release_warden::release::log_ops::LogKey)>,
    ),
    ctx: &Context,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let keys = TrustedKeys::load_dir(&args.keys_dir)
        .context("loading the keys folder (pass --keys-dir DIR)")?;
    let checksums_name = match &args.checksums {
        Some(p) => p
            .file_name()
            .and_then(|n| n.to_str())
            .context("--checksums: a file name")?
            .to_string(),
        None => "SHA256SUMS".to_string(),
    };
    let opts = VerifyOptions {
        inputs: vec![dir],
        checksums_name: Some(checksums_name.clone()),
        progress: Some(Progress::default()),
        ..VerifyOptions::default()
    };
    let bar = ProgressDisplay::start(opts.progress.clone(), ctx.progress, "verifying");
    let run = run_binding(args, ctx)?;
    let report = cosign(&opts, key, &keys, (ctx.timestamp()?, run))?;
    drop(bar);
    // The co-signature joins the log (and the first signature's proof is renewed).
    let Some((log_dir, log_key)) = log else {
        return ctx.emit(out, &report, args.format.into(), false);
    };
    let sums = opts.inputs[0].join(&checksums_name);
    let logged =
        release_warden::release::log_ops::append_release(&log_dir, &log_key, &sums, &keys)?;
    emit_both(ctx, out, args.format, (&report, &logged))
}

/// What was signed and where it went in the log: one JSON document, or both reports as text.
fn emit_both<S: release_warden::report::Report>(
    ctx: &Context,
    out: &mut dyn Write,
    format: TextOrJson,
    (signed, logged): (&S, &release_warden::release::log_ops::AppendReport),
) -> anyhow::Result<u8> {
    match format {
        TextOrJson::Json => {
            let both = serde_json::json!({ "signed": signed, "logged": logged });
            writeln!(out, "{}", serde_json::to_string_pretty(&both)?)?;
            Ok(0)
        }
        TextOrJson::Text => {
            ctx.emit(out, signed, Format::Text, false)?;
            ctx.emit(out, logged, Format::Text, false)
        }
    }
}

/// The run to bind: inside GitHub Actions (unless `--no-run-binding`), from the runner's
/// variables; elsewhere none, and `--environment` is refused (there is no run to bind it to).
fn run_binding(args: &SignArgs, ctx: &Context) -> anyhow::Result<Option<RunBinding>> {
    if !ctx.actions.enabled {
        if args.environment.is_some() {
            anyhow::bail!(
                "--environment binds the workflow run's environment: only inside GitHub Actions (GITHUB_ACTIONS=true)"
            );
        }
        return Ok(None);
    }
    if args.no_run_binding {
        return Ok(None);
    }
    let a = &ctx.actions;
    RunBinding::from_runner(
        a.run_id.as_deref(),
        a.run_attempt.as_deref(),
        a.workflow_ref.as_deref(),
        args.environment.as_deref(),
    )
    .map(Some)
    .map_err(|e| release_warden::Error::Usage(e.to_string()).into())
}
