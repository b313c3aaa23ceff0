//! `warden`: parse arguments, call the library, render, map errors to exit codes.

mod cli;

use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use clap::Parser;
use release_warden::release::comment::ReleaseMeta;
use release_warden::release::keygen::{keygen, KeygenOptions};
use release_warden::release::keys::{
    secret_key_protection, Password, SecretKey, SecretKeyProtection, SecretKeyText,
};
use release_warden::release::sign::{sign, ChecksumsTarget, SignOptions};
use release_warden::release::verify::{read_public_key, verify, TrustedKeys, VerifyOptions};
use release_warden::report::{self, Format};

use cli::{Cli, Command, OutputFormat};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if err.chain().any(|e| {
                e.downcast_ref::<io::Error>()
                    .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("warden: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn format(f: OutputFormat) -> Format {
    match f {
        OutputFormat::Text => Format::Text,
        OutputFormat::Json => Format::Json,
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    let mut out = io::stdout().lock();
    match cli.command {
        Command::Keygen(args) => {
            let secret_key = match args.secret_key {
                Some(p) => p,
                None => default_secret_key_path()?,
            };
            let password = if args.unencrypted {
                None
            } else if let Some(var) = &args.password_env {
                Some(password_from_env(var)?)
            } else if io::stdin().is_terminal() {
                let first = Password::new(rpassword::prompt_password(
                    "Password for the new secret key: ",
                )?);
                let second = Password::new(rpassword::prompt_password("Password (again): ")?);
                if !first.matches(&second) {
                    bail!("the passwords do not match");
                }
                Some(first)
            } else {
                bail!("no password given and stdin is not a terminal: pass --password-env VAR, or --unencrypted for a key without password");
            };
            let report = keygen(&KeygenOptions {
                public_key: args.public_key,
                secret_key,
                password,
                force: args.force,
            })?;
            let sk = report.secret_key.display();
            writeln!(out, "key id      {}", report.key_id)?;
            writeln!(
                out,
                "public key  {}  (commit this file)",
                report.public_key.display()
            )?;
            writeln!(
                out,
                "secret key  {sk}  ({}, mode 0600; never commit it)",
                if report.encrypted {
                    "encrypted"
                } else {
                    "unencrypted"
                }
            )?;
            writeln!(out, "\nStore the secret key in the GitHub environment that signs releases (e.g. \"release\"):")?;
            writeln!(
                out,
                "  gh secret set MINISIGN_SECRET_KEY --env release < {sk}"
            )?;
            if report.encrypted {
                writeln!(out, "  gh secret set MINISIGN_PASSWORD --env release")?;
            }
            writeln!(
                out,
                "then remove the local copy once it is backed up offline."
            )?;
            Ok(0)
        }
        Command::Sign(args) => {
            let (text, origin) = read_secret_key(&args)?;
            let protection =
                secret_key_protection(&text).map_err(|e| e.in_origin(origin.clone()))?;
            let password = match (&args.password_env, protection) {
                (_, SecretKeyProtection::Unencrypted) => None,
                (Some(var), SecretKeyProtection::Encrypted) => Some(password_from_env(var)?),
                (None, SecretKeyProtection::Encrypted)
                    if io::stdin().is_terminal() && !args.secret_key_stdin =>
                {
                    Some(Password::new(rpassword::prompt_password(
                        "Password for the secret key: ",
                    )?))
                }
                (None, SecretKeyProtection::Encrypted) => {
                    bail!("{origin}: the secret key is encrypted: pass --password-env VAR (no prompt without a terminal)")
                }
            };
            let key = SecretKey::load(&text, password.as_ref()).map_err(|e| e.in_origin(origin))?;
            drop(text);
            let expected = match &args.public_key {
                Some(p) => Some((read_public_key(p)?, p.clone())),
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
                timestamp: signing_timestamp()?,
            };
            let report = sign(
                &opts,
                &key,
                expected.as_ref().map(|(k, p)| (k, p.as_path())),
            )?;
            for (path, why) in &report.skipped {
                eprintln!("warden: warning: skipped {}: {why}", path.display());
            }
            report::sign(&mut out, &report, format(args.format))?;
            Ok(0)
        }
        Command::Verify(args) => {
            let keys = if args.public_key.is_empty() {
                TrustedKeys::load_dir(&args.keys_dir).with_context(|| {
                    "loading trusted keys (pass --public-key FILE or --keys-dir DIR)"
                })?
            } else {
                TrustedKeys::load_files(&args.public_key)?
            };
            let opts = VerifyOptions {
                inputs: args.paths,
                expect_tag: args.expect_tag,
                allow_legacy: args.allow_legacy,
                allow_dry_run: args.allow_dry_run,
                checksums_name: args.checksums,
            };
            let report = verify(&opts, &keys)?;
            for w in &report.warnings {
                eprintln!("warden: warning: {w}");
            }
            report::verify(&mut out, &report, format(args.format))?;
            Ok(report.exit_code())
        }
        Command::Check(args) => {
            let lines = release_warden::check::run(&args.root);
            report::check(&mut out, &lines, format(args.format))?;
            Ok(if lines.iter().all(|l| l.passed) { 0 } else { 1 })
        }
    }
}

fn default_secret_key_path() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .ok_or_else(|| anyhow!("HOME is not set: pass --secret-key FILE"))?;
    Ok(PathBuf::from(home).join(".minisign").join("minisign.key"))
}

fn password_from_env(var: &str) -> anyhow::Result<Password> {
    let value = std::env::var(var).map_err(|_| {
        anyhow!("environment variable {var} (--password-env) is not set or not UTF-8")
    })?;
    let password = Password::new(value);
    if password.is_empty() {
        bail!("environment variable {var} (--password-env) is empty");
    }
    Ok(password)
}

fn read_secret_key(args: &cli::SignArgs) -> anyhow::Result<(SecretKeyText, String)> {
    if let Some(var) = &args.secret_key_env {
        let value = std::env::var(var).map_err(|_| {
            anyhow!("environment variable {var} (--secret-key-env) is not set or not UTF-8")
        })?;
        return Ok((SecretKeyText::new(value), format!("${var}")));
    }
    if let Some(path) = &args.secret_key {
        let value =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        return Ok((SecretKeyText::new(value), path.display().to_string()));
    }
    let mut value = String::new();
    io::stdin()
        .read_to_string(&mut value)
        .context("reading the secret key from stdin")?;
    Ok((SecretKeyText::new(value), "<stdin>".into()))
}

/// SOURCE_DATE_EPOCH makes signatures reproducible (Ed25519 is deterministic); else now.
fn signing_timestamp() -> anyhow::Result<u64> {
    if let Ok(v) = std::env::var("SOURCE_DATE_EPOCH") {
        return v
            .trim()
            .parse()
            .map_err(|_| anyhow!("SOURCE_DATE_EPOCH={v:?} is not a unix timestamp"));
    }
    Ok(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs())
}
