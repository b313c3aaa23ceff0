//! `warden check`: every check of a repository; the settings too when a token is set.

use std::io::Write;

use release_warden::github::repository_name;
use release_warden::repo_check::{self, Online};

use crate::cli::CheckArgs;
use crate::context::Context;

pub(crate) fn run(args: CheckArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    // The settings audit is the one check that needs the network: only with a token.
    let session = match &ctx.token {
        Some(token) => Some(ctx.connect(None, Some(token))?),
        None => None,
    };
    let online = session.as_ref().map(|session| Online {
        session,
        repository: repository_name(ctx.repository(None), &args.root),
    });
    let report = repo_check::run(&args.root, online)?;
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}
