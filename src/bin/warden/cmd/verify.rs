//! `warden verify`: load the trusted keys, verify, report.

use std::io::Write;

use anyhow::Context as _;
use release_warden::release::hash::Progress;
use release_warden::release::trusted_keys::TrustedKeys;
use release_warden::release::verify::{verify, VerifyOptions};

use crate::cli::VerifyArgs;
use crate::context::Context;
use crate::progress::ProgressDisplay;

pub fn run(args: VerifyArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let keys = if args.public_key.is_empty() {
        TrustedKeys::load_dir(&args.keys_dir)
            .context("loading trusted keys (pass --public-key FILE or --keys-dir DIR)")?
    } else {
        TrustedKeys::load_files(&args.public_key)?
    };
    let opts = VerifyOptions {
        inputs: args.paths,
        expect_tag: args.expect_tag,
        expect_repo: args.expect_repo,
        expect_commit: args.expect_commit,
        allow_legacy: args.allow_legacy,
        allow_dry_run: args.allow_dry_run,
        allow_unlisted: args.allow_unlisted,
        allow_no_checksums: args.allow_no_checksums,
        allow_unbound: args.allow_unbound,
        checksums_name: args.checksums,
        progress: Some(Progress::default()),
    };
    let bar = ProgressDisplay::start(opts.progress.clone(), ctx.progress, "verifying");
    let report = verify(&opts, &keys)?;
    drop(bar);
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}
