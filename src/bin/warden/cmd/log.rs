//! `warden log …`: a transparency log of release signatures.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use release_warden::files::{read_small_file, SMALL_FILE_CAP};
use release_warden::release::log_ops::{self as tlog, LogKey, WitnessKey};
use release_warden::trust::TrustedKeys;
use release_warden::trust::{LogRequirement, LogTrust, VerifierKeyArg};

use crate::cli::{
    LogAppendArgs, LogCommand, LogCosignArgs, LogVerifyArgs, LogWitnessArgs, RequireLogArgs,
};
use crate::context::Context;

pub(crate) fn run(cmd: LogCommand, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    match cmd {
        LogCommand::Init(args) => {
            let report = tlog::init(&args.dir, &args.origin, &args.log_key, args.vkey.as_deref())?;
            ctx.emit(out, &report, args.format.into(), false)
        }
        LogCommand::Append(args) => append(&args, ctx, out),
        LogCommand::Verify(args) => verify(&args, ctx, out),
        LogCommand::Witness(args) => witness(&args, ctx, out),
        LogCommand::Cosign(args) => cosign(&args, ctx, out),
        LogCommand::Monitor(args) => {
            let req = release_warden::log_monitor::MonitorRequest {
                log: args.dir.clone(),
                trust: trust(&args.log_vkey, &args.witnesses, args.witness_threshold)?,
                repo: args.repo.clone(),
                state: args.state.clone(),
                keys: monitor_keys(args.keys_dir.as_deref())?,
            };
            use release_warden::github::ReleaseSource;
            let session;
            let from = match (&args.snapshot, &args.record) {
                (Some(dir), _) => ReleaseSource::Snapshot(dir.clone()),
                (None, record) => {
                    session = ctx.connect(args.api_url.as_deref(), ctx.token.as_ref())?;
                    match record {
                        Some(dir) => ReleaseSource::Record(&session, dir.clone()),
                        None => ReleaseSource::Live(&session),
                    }
                }
            };
            let report = release_warden::log_monitor::monitor(&from, &req)?;
            ctx.emit(out, &report, args.format.into(), false)
        }
        LogCommand::WitnessKey(args) => {
            let report = tlog::witness_key(&args.file, &args.name)?;
            ctx.emit(out, &report, args.format.into(), false)
        }
    }
}

/// The keys of the monitored repository: `--keys-dir`, else `keys/` when it is here (a
/// monitor run from another checkout judges entries by their repository alone).
fn monitor_keys(dir: Option<&Path>) -> anyhow::Result<Vec<release_warden::minisign::PublicKey>> {
    let default = Path::new(super::DEFAULT_KEYS_DIR);
    let dir = match dir {
        Some(dir) => dir,
        None if default.is_dir() => default,
        None => return Ok(Vec::new()),
    };
    let keys = TrustedKeys::load_dir(dir).with_context(|| {
        format!(
            "loading the repository's keys (--keys-dir {})",
            dir.display()
        )
    })?;
    Ok(keys.all_keys())
}

/// The log key from `--log-key FILE` or `--log-key-env VAR`.
pub(crate) fn log_key(file: Option<&Path>, env: Option<&str>) -> anyhow::Result<LogKey> {
    match (file, env) {
        (_, Some(var)) => {
            let value = zeroize::Zeroizing::new(std::env::var(var).map_err(|_| {
                anyhow::anyhow!(
                    "environment variable {var} (--log-key-env) is not set or not UTF-8"
                )
            })?);
            Ok(LogKey::parse(&value, &format!("${var}"))?)
        }
        (Some(path), None) => {
            let value =
                zeroize::Zeroizing::new(read_small_file(path, SMALL_FILE_CAP, "a log secret key")?);
            Ok(LogKey::parse(&value, &path.display().to_string())?)
        }
        (None, None) => anyhow::bail!("no log key: pass --log-key FILE or --log-key-env VAR"),
    }
}

/// A verifier key given as its text or as a file holding it.
fn vkey_text(value: &str) -> anyhow::Result<String> {
    let path = Path::new(value);
    if !value.contains('+') && path.is_file() {
        return Ok(read_small_file(path, SMALL_FILE_CAP, "a verifier key")?
            .trim()
            .to_string());
    }
    Ok(value.to_string())
}

fn trust(
    log_vkey: &str,
    witnesses: &[String],
    threshold: Option<usize>,
) -> anyhow::Result<LogTrust> {
    let log = release_warden::trust::parse_vkey(&vkey_text(log_vkey)?, "--log-vkey")?;
    let witnesses = witnesses
        .iter()
        .map(|w| {
            Ok(release_warden::trust::parse_witness_vkey(
                &vkey_text(w)?,
                "--witness",
            )?)
        })
        .collect::<anyhow::Result<Vec<VerifierKeyArg>>>()?;
    let n = threshold.unwrap_or(witnesses.len());
    Ok(LogTrust::new(log, witnesses, n)?)
}

/// What `verify --require-log` asks, from its flags (`None` without --require-log).
pub(crate) fn requirement(args: &RequireLogArgs) -> anyhow::Result<Option<LogRequirement>> {
    if !args.require_log {
        return Ok(None);
    }
    let vkey = args.log_vkey.as_deref().unwrap_or_default();
    Ok(Some(LogRequirement {
        trust: trust(vkey, &args.witnesses, args.witness_threshold)?,
        log: args.log_dir.clone(),
        pinned: args.checkpoint.clone(),
    }))
}

fn append(args: &LogAppendArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let key = log_key(args.log_key.as_deref(), args.log_key_env.as_deref())?;
    let keys = TrustedKeys::load_dir(&args.keys_dir)?;
    let sums = args.release.join(&args.checksums);
    let report = tlog::append_release(&args.dir, &key, &sums, &keys)?;
    ctx.emit(out, &report, args.format.into(), false)
}

fn verify(args: &LogVerifyArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let trust = trust(&args.log_vkey, &args.witnesses, args.witness_threshold)?;
    let report = tlog::verify_log(&args.dir, &trust)?;
    ctx.emit(out, &report, args.format.into(), false)
}

fn witness(args: &LogWitnessArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut logs = Vec::new();
    for v in &args.log_vkey {
        logs.push(release_warden::trust::parse_vkey(
            &vkey_text(v)?,
            "--log-vkey",
        )?);
    }
    let text = zeroize::Zeroizing::new(read_small_file(
        &args.witness_key,
        SMALL_FILE_CAP,
        "a witness secret key",
    )?);
    let key = WitnessKey::parse(&text, &args.witness_key.display().to_string())?;
    if let Some(addr) = &args.serve {
        release_warden::release::witness_net::serve(
            addr,
            logs,
            key,
            &args.state,
            release_warden::util::unix_now,
            |bound| {
                // The one line a supervisor (or a test) waits for.
                println!("witness listening on {bound}");
                let _ = std::io::stdout().flush();
            },
        )?;
        return Ok(0);
    }
    let [log] = logs.as_slice() else {
        anyhow::bail!(release_warden::error::Error::Usage(
            "--log-vkey: one log, unless --serve".into()
        ));
    };
    let dir = args.dir.as_deref().unwrap_or_default();
    let report = tlog::witness(dir, log, key, &args.state, ctx.timestamp()?)?;
    ctx.emit(out, &report, args.format.into(), false)
}

fn cosign(args: &LogCosignArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let log = release_warden::trust::parse_vkey(&vkey_text(&args.log_vkey)?, "--log-vkey")?;
    let mut vkeys = Vec::new();
    for v in &args.witness_vkeys {
        vkeys.push(release_warden::trust::parse_witness_vkey(
            &vkey_text(v)?,
            "--witness-vkey",
        )?);
    }
    let report = release_warden::release::witness_net::cosign_with_witnesses(
        &args.dir,
        &log,
        &args.witnesses,
        &vkeys,
        args.threshold,
    )?;
    ctx.emit(out, &report, args.format.into(), false)
}
