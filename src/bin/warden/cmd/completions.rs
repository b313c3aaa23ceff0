//! `warden completions SHELL` and `warden man`: generated from the flag definitions.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

pub(crate) fn run(args: CompletionsArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    clap_complete::generate(args.shell, &mut Cli::command(), "warden", out);
    Ok(0)
}

pub(crate) fn man(out: &mut dyn Write) -> anyhow::Result<u8> {
    clap_mangen::Man::new(Cli::command()).render(out)?;
    Ok(0)
}
