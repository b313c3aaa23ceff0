//! `warden known-issues lint | render | exclusions | summary`.

use std::io::Write;

use anyhow::{anyhow, Context as _};
use release_warden::github::{post, Posted, Upsert};
use release_warden::hive::{
    classify_run, history, plan_update, ClassifyOptions, HistoryOptions, UpdateOptions,
};
use release_warden::known_issues::{
    doc_path, lint_registry, read_test_list, render_doc_file, render_exclusions, Query, Registry,
};
use release_warden::report::{Format, Summary, MARKER};
use release_warden::util::today;

use crate::cli::{ExclusionsArgs, KnownIssuesCommand, RenderArgs, SummaryArgs, UpdateArgs};
use crate::context::Context;

pub(crate) fn run(
    cmd: KnownIssuesCommand,
    ctx: &Context,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    match cmd {
        KnownIssuesCommand::Init(args) => {
            let dir = args.registry.registry_dir();
            let written = release_warden::known_issues::init(&dir, &args.client)?;
            for f in &written {
                writeln!(out, "wrote {}", f.display())?;
            }
            writeln!(
                out,
                "Next: edit {}, then `warden known-issues lint`.",
                dir.join("example.toml").display()
            )?;
            Ok(0)
        }
        KnownIssuesCommand::Import(args) => {
            let text =
                release_warden::files::read_small_file(&args.file, 16 << 20, "a list of tests")?;
            let expect = args.expect.into();
            let origin = release_warden::known_issues::origin_name(
                &args.file,
                std::env::current_dir().ok().as_deref(),
            );
            let report = release_warden::known_issues::import(
                &args.registry.registry_dir(),
                (&text, &origin),
                args.format,
                (&args.client, args.suite.as_deref(), expect),
            )?;
            ctx.emit(out, &report, Format::Text, false)
        }
        KnownIssuesCommand::Lint(args) => {
            let report = lint_registry(
                &args.registry.registry_dir(),
                args.registry.root(),
                args.allow_draft,
            );
            ctx.emit(out, &report, Format::Text, false)
        }
        KnownIssuesCommand::Render(args) => render(args, ctx, out),
        KnownIssuesCommand::Exclusions(args) => exclusions(args, out),
        KnownIssuesCommand::Summary(args) => summary(args, ctx, out),
        KnownIssuesCommand::Update(args) => update(args, ctx, out),
    }
}

/// `warden known-issues update --from-results DIR…`.
fn update(args: UpdateArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let registry = Registry::load_valid(&args.registry.registry_dir())?;
    let history = history(&args.from_results, &registry, &args.runs.options())?;
    let (y, m, d) = today();
    let opts = UpdateOptions {
        prune_missing: args.prune_missing,
        expected_tests: args
            .expected_tests
            .as_deref()
            .map(read_test_list)
            .transpose()?,
        expected_suite: args.expected_suite,
        today: format!("{y:04}-{m:02}-{d:02}"),
        bisect: args
            .bisect
            .as_deref()
            .map(release_warden::hive::BisectFinding::read)
            .transpose()?,
    };
    let mut update = plan_update(&registry, &history, &opts)?;
    if args.write {
        update.write()?;
    }
    ctx.emit(out, &update, args.format.into(), false)
}

fn render(args: RenderArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let registry = Registry::load_valid(&args.registry.registry_dir())?;
    let root = args.registry.root();
    // A path from the registry stays inside the repository; one given on the command line is
    // the user's own.
    let (path, confine) = match args.out {
        Some(p) => (p, None),
        None => (doc_path(&registry, root), Some(root)),
    };
    let outcome = render_doc_file(&registry, path, confine, args.check)?;
    ctx.emit(out, &outcome, Format::Text, false)
}

fn exclusions(args: ExclusionsArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let registry = Registry::load_valid(&args.registry.registry_dir())?;
    let tests_from = match &args.tests_from {
        Some(p) => Some(read_test_list(p)?),
        None => None,
    };
    let query = Query {
        suite: args.suite,
        client: args.client,
        expect: args.expect.into_iter().map(Into::into).collect(),
        tests_from,
    };
    let (text, warnings) =
        render_exclusions(&registry, args.format, &query).map_err(|e| anyhow!(e))?;
    for w in warnings {
        eprintln!(
            "warden: warning: {}",
            release_warden::markup::text_value(&w)
        );
    }
    out.write_all(text.as_bytes())?;
    Ok(0)
}

fn summary(args: SummaryArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let registry = Registry::load_valid(&args.registry.registry_dir())?;
    let results = match &args.results {
        Some(dir) => Some(classify_run(
            dir,
            &registry,
            &ClassifyOptions {
                client: args.client.clone(),
                allow_missing: true,
                ..ClassifyOptions::default()
            },
        )?),
        None => None,
    };
    let history = match &args.results {
        Some(dir) if !args.history.is_empty() => {
            let mut dirs = args.history.clone();
            dirs.push(dir.clone());
            Some(history(
                &dirs,
                &registry,
                &HistoryOptions {
                    client: args.client.clone(),
                    fixed_after: 2,
                },
            )?)
        }
        _ => None,
    };
    // Where to post is settled before the summary is printed: a missing repository or token
    // fails at once, not after the whole body.
    let target = if args.post {
        Some(post_target(&args, ctx)?)
    } else {
        None
    };
    let mut summary = Summary::new(&registry, results.as_ref(), history.as_ref());
    if let Some(url) = &args.report_url {
        summary.link_report(url).map_err(anyhow::Error::msg)?;
    }
    // Posted first: a post that fails prints its error, not a body that went nowhere.
    if let Some(target) = target {
        post_comment(&args, ctx, &target, &summary.markdown)?;
    }
    ctx.emit(out, &summary, args.format.into(), args.step_summary)
}

/// Where `--post` writes: the repository, the pull request and the token.
struct PostTarget<'a> {
    repo: &'a str,
    pr: u64,
    token: &'a release_warden::github::Token,
}

fn post_target<'a>(args: &'a SummaryArgs, ctx: &'a Context) -> anyhow::Result<PostTarget<'a>> {
    let repo = ctx
        .repository(args.repo.as_deref())
        .ok_or_else(|| anyhow!("--post: pass --repo OWNER/NAME (GITHUB_REPOSITORY is not set)"))?;
    if !repo.contains('/') {
        anyhow::bail!("--repo {repo:?}: give the repository as OWNER/NAME");
    }
    let pr = match args.pr {
        Some(n) => n,
        None => ctx.actions.pull_request()?,
    };
    let token = ctx
        .token
        .as_ref()
        .ok_or_else(|| anyhow!("--post: no GH_TOKEN or GITHUB_TOKEN"))?;
    Ok(PostTarget { repo, pr, token })
}

/// The sticky PR comment; on a 403 (a fork's read-only token) the summary goes to the step
/// summary instead, unless it is already there.
fn post_comment(
    args: &SummaryArgs,
    ctx: &Context,
    target: &PostTarget<'_>,
    body: &str,
) -> anyhow::Result<()> {
    let (repo, pr, token) = (target.repo, target.pr, target.token);
    let session = ctx.connect(args.api_url.as_deref(), Some(token))?;
    match post(&session, repo, pr, body, MARKER)? {
        Posted::Written(Upsert::Created) => {
            eprintln!("warden: posted the known-issues comment on {repo}#{pr}")
        }
        Posted::Written(Upsert::Updated(id)) => {
            eprintln!("warden: updated the known-issues comment {id} on {repo}#{pr}")
        }
        Posted::Written(Upsert::Unchanged(id)) => eprintln!(
            "warden: the known-issues comment {id} on {repo}#{pr} is up to date; nothing written"
        ),
        Posted::ReadOnly(e) => {
            eprintln!("warden: warning: cannot comment on {repo}#{pr}: {e}; the token is read-only (a pull request from a fork?)");
            if !args.step_summary {
                ctx.actions
                    .append_step_summary(body)
                    .context("falling back to the step summary")?;
            }
            eprintln!("warden: the summary is in the job's step summary instead");
        }
    }
    Ok(())
}
