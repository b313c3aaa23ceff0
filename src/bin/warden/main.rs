//! `warden`: parse the flags, read the environment once, run one command, map the outcome to an
//! exit code. Each command is a file under `cmd/`.

mod cli;
mod cmd;
mod context;
mod progress;
mod secrets;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use context::Context;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ctx = Context::from_env(cli.quiet, cli.color);
    // --quiet: render into a buffer and show it only when the command fails. --output: render
    // into a buffer and write it to the file once there is a report (exit 0 or 1).
    let mut buffer: Vec<u8> = Vec::new();
    let result = if ctx.quiet || cli.output.is_some() {
        run(cli.command, &ctx, &mut buffer)
    } else {
        run(cli.command, &ctx, &mut io::stdout().lock())
    };
    let result = match (&cli.output, result) {
        (Some(file), Ok(code)) => release_warden::files::write_atomic(file, &buffer, 0o644, true)
            .map(|()| code)
            .map_err(|e| anyhow::anyhow!("--output: {e}")),
        (None, result) => {
            if ctx.quiet && !matches!(result, Ok(0)) {
                let _ = io::stdout().write_all(&buffer);
            }
            result
        }
        (Some(_), Err(e)) => Err(e),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // `warden audit | head`: a closed stdout is not an error.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "warden: {}",
                release_warden::markup::text_lines(&error_chain(&err))
            );
            ExitCode::from(2)
        }
    }
}

fn run(command: Command, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    match command {
        Command::Keygen(args) => cmd::keygen::run(args, ctx, out),
        Command::Keys(cmd) => cmd::keys::run(cmd, ctx, out),
        Command::Sign(args) => cmd::sign::run(args, ctx, out),
        Command::Verify(args) => cmd::verify::run(*args, ctx, out),
        Command::Check(args) => cmd::check::run(args, ctx, out),
        Command::KnownIssues(cmd) => cmd::known_issues::run(cmd, ctx, out),
        Command::Hive(cli::HiveCommand::Check(args)) => cmd::hive::run(args, ctx, out),
        Command::Hive(cli::HiveCommand::Diff(args)) => cmd::hive::diff(args, ctx, out),
        Command::Hive(cli::HiveCommand::History(args)) => cmd::hive::history(args, ctx, out),
        Command::Hive(cli::HiveCommand::Bisect(args)) => cmd::hive::bisect(*args, ctx, out),
        Command::Audit(args) => cmd::audit::run(*args, ctx, out),
        Command::Log(cmd) => cmd::log::run(cmd, ctx, out),
        Command::Completions(args) => cmd::completions::run(args, out),
        Command::Man(_) => cmd::completions::man(out),
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes, `: `-separated. A cause whose text the message above it already
/// ends with (an I/O error quoted by `Error::Io`) is not repeated.
fn error_chain(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
