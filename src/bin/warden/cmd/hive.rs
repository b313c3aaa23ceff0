//! `warden hive check`: classify a hive run against the registry, report.

use std::io::Write;

use release_warden::hive::{classify_run, ClassifyOptions};
use release_warden::known_issues::{read_test_list, Registry};
use release_warden::report::{rerun_regex, Format};

use crate::cli::{HiveCheckArgs, HiveDiffArgs, HiveHistoryArgs};
use crate::context::Context;

/// `warden hive diff OLD NEW`.
pub(crate) fn diff(args: HiveDiffArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let report = release_warden::hive::diff(&args.old, &args.new)?;
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}

/// `warden hive history DIR…`.
pub(crate) fn history(
    args: HiveHistoryArgs,
    ctx: &Context,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let registry = Registry::load_valid(&args.registry)?;
    let mut report = release_warden::hive::history(&args.dirs, &registry, &args.runs.options())?;
    report.require_pins = args.require_pins;
    report.all = args.all;
    if args.rerun_regex {
        out.write_all(rerun_regex(&report).as_bytes())?;
        return Ok(0);
    }
    if args.plan {
        out.write_all(release_warden::report::rerun_plan(&report).as_bytes())?;
        return Ok(0);
    }
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}

pub(crate) fn run(args: HiveCheckArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let registry = Registry::load_valid(&args.registry)?;
    let expected_tests = match &args.expected_tests {
        Some(p) => read_test_list(p)?,
        None => Vec::new(),
    };
    let format = Format::from(args.format);
    let opts = ClassifyOptions {
        client: args.client,
        expected_tests,
        expected_suite: args.expected_suite,
        allow_missing: args.allow_missing,
        keep_passes: format == Format::Junit,
        require_pins: args.require_pins,
    };
    let mut report = classify_run(&args.dir, &registry, &opts)?;
    report.verbose = args.verbose;
    ctx.emit(out, &report, format, args.step_summary)
}
