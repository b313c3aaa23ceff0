//! `warden hive check`: classify a hive run against the registry, report.

use std::io::Write;

use release_warden::hive::{classify_run, ClassifyOptions};
use release_warden::known_issues::{read_test_list, Registry};
use release_warden::markup::text_value;
use release_warden::report::{rerun_regex, Format};

use crate::cli::{HiveBisectArgs, HiveCheckArgs, HiveDiffArgs, HiveHistoryArgs};
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

/// `warden hive bisect`.
pub(crate) fn bisect(
    args: HiveBisectArgs,
    ctx: &Context,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    use release_warden::hive::{BisectOptions, Subject};
    let repo = match args.repo.or_else(|| ctx.actions.repository.clone()) {
        Some(r) if r.split('/').count() == 2 => r,
        Some(r) => anyhow::bail!(
            "--repo {:?}: give the repository as OWNER/NAME",
            text_value(&r)
        ),
        None => anyhow::bail!("hive bisect: pass --repo OWNER/NAME (GITHUB_REPOSITORY is not set)"),
    };
    // A dry run only reads (a public repository needs no token); dispatching needs one.
    let token = ctx.token.as_ref();
    if token.is_none() && !args.dry_run {
        anyhow::bail!(
            "hive bisect: no GH_TOKEN or GITHUB_TOKEN (dispatching needs `actions: write`)"
        );
    }
    let opts = BisectOptions {
        commits_repo: args.commits_repo.unwrap_or_else(|| repo.clone()),
        repo,
        workflow: args.workflow,
        git_ref: args.git_ref,
        good: args.good,
        bad: args.bad,
        test: args.test,
        suite: args.suite,
        subject: match args.client {
            Some(c) if !args.hive_commits => Subject::Client(c),
            _ => Subject::Hive,
        },
        inputs: args.input,
        artifact: args.artifact,
        max_dispatches: args.max_dispatches as usize,
        parallel: args.parallel as usize,
        run_timeout: std::time::Duration::from_secs_f64(args.run_timeout * 60.0),
        poll: std::time::Duration::from_secs_f64(args.poll),
        artifact_cap: args.artifact_cap << 20,
        state: args.state,
        dry_run: args.dry_run,
    };
    let session = ctx.connect(args.api_url.as_deref(), token)?;
    let quiet = ctx.quiet;
    let notice = |line: &str| {
        if !quiet {
            eprintln!("warden: {}", text_value(line));
        }
    };
    let report = release_warden::hive::bisect(&session, &opts, &notice)?;
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}
