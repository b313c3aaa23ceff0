//! `warden hive check`: classify a hive run against the registry, report.

use std::io::Write;

use anyhow::Context as _;
use release_warden::hive::classify::{classify_run, ClassifyOptions};
use release_warden::known_issues::exclusions::parse_test_list;
use release_warden::known_issues::schema::Registry;
use release_warden::report::Format;

use crate::cli::HiveCheckArgs;
use crate::context::Context;

pub fn run(args: HiveCheckArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let registry = Registry::load_valid(&args.registry)?;
    let expected_tests = match &args.expected_tests {
        Some(p) => parse_test_list(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        ),
        None => Vec::new(),
    };
    let format = Format::from(args.format);
    let opts = ClassifyOptions {
        client: args.client,
        expected_tests,
        expected_suite: args.expected_suite,
        allow_missing: args.allow_missing,
        keep_passes: format == Format::Junit,
    };
    let report = classify_run(&args.dir, &registry, &opts)?;
    ctx.emit(out, &report, format, args.step_summary)
}
