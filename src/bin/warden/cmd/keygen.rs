//! `warden keygen`: a key pair, and how to store the secret half in GitHub.

use std::io::Write;

use anyhow::{anyhow, bail};
use release_warden::release::{keygen, KeygenOptions};
use release_warden::report::Format;

use crate::cli::KeygenArgs;
use crate::context::Context;
use crate::secrets::{password_from_env, prompt_password};

pub(crate) fn run(args: KeygenArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let secret_key = match args.secret_key {
        Some(p) => p,
        None => ctx
            .home
            .as_ref()
            .ok_or_else(|| anyhow!("HOME is not set: pass --secret-key FILE"))?
            .join(".minisign/minisign.key"),
    };
    let password = if args.unencrypted {
        None
    } else if let Some(var) = &args.password_env {
        Some(password_from_env(var)?)
    } else if ctx.interactive {
        let first = prompt_password("Password for the new secret key: ")?;
        let second = prompt_password("Password (again): ")?;
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
        revoked_at: release_warden::util::rfc3339(ctx.timestamp()?),
        password_env: args.password_env.filter(|_| !args.unencrypted),
        home: ctx.home.clone(),
    })?;
    ctx.emit(out, &report, Format::Text, false)
}
