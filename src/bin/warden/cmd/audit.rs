//! `warden audit` and `warden audit snapshot`: choose where the settings come from, run the one
//! audit pipeline, report; then the fix plan, and `--apply` after a `[y/N]` confirmation.

use std::io::{self, Write};

use anyhow::{anyhow, bail};
use release_warden::audit::apply::{apply, requests};
use release_warden::audit::baseline::Baseline;
use release_warden::audit::findings::{AuditReport, Severity};
use release_warden::audit::fix_plan::plan;
use release_warden::audit::org::{run_org, OrgRequest};
use release_warden::audit::secrets::SigningSecrets;
use release_warden::audit::{self, AuditRequest, SettingsSource};
use release_warden::github::repository::repository_name;
use release_warden::github::session::Session;
use release_warden::known_issues::exclusions::read_test_list;
use release_warden::report::audit::{write_applied, write_fix_plan};
use release_warden::report::Format;

use crate::cli::{AuditArgs, AuditCommand, AuditTarget, SnapshotArgs};
use crate::context::Context;

pub fn run(args: AuditArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    if let Some(AuditCommand::Snapshot(snap)) = args.command {
        return snapshot(snap, ctx, out);
    }
    let baseline = args.baseline.as_deref().map(Baseline::load).transpose()?;
    if let Some(org) = &args.org {
        return organisation(org, &args, baseline.as_ref(), ctx, out);
    }
    let session = match (&ctx.token, args.offline || args.snapshot.is_some()) {
        (Some(token), false) => Some(ctx.connect_cached(
            args.target.api_url.as_deref(),
            Some(token),
            args.cache.clone(),
        )?),
        _ => None,
    };
    let settings = match (&args.snapshot, &session) {
        _ if args.offline => SettingsSource::Offline,
        (Some(dir), _) => SettingsSource::Snapshot(dir.clone()),
        (None, Some(session)) => SettingsSource::Live(session),
        (None, None) => SettingsSource::NoToken,
    };
    let mut report = audit::run(&request(&args.target, ctx, settings, args.fail_on.into()))?;
    if let Some(b) = &baseline {
        b.apply(&mut report);
    }
    let format = Format::from(args.format);
    let code = ctx.emit(out, &report, format, args.step_summary)?;
    // Machine formats keep stdout parseable: the plan and apply progress go to stderr.
    let mut stderr = io::stderr().lock();
    let side: &mut dyn Write = match format {
        Format::Json | Format::Sarif => &mut stderr,
        _ => out,
    };
    if args.fix_plan || args.apply {
        write_fix_plan(side, &report)?;
    }
    if args.apply {
        let session = session.as_ref().ok_or_else(|| {
            anyhow!("--apply needs the live API: set GH_TOKEN and name the repository with --repo")
        })?;
        apply_plan(session, &report, args.yes, ctx, side)?;
    }
    Ok(code)
}

/// `warden audit --org ORG`.
fn organisation(
    org: &str,
    args: &AuditArgs,
    baseline: Option<&Baseline>,
    ctx: &Context,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let token = ctx
        .token
        .as_ref()
        .ok_or_else(|| anyhow!("--org reads the organisation through the API: set GH_TOKEN"))?;
    let session = ctx.connect_cached(
        args.target.api_url.as_deref(),
        Some(token),
        args.cache.clone(),
    )?;
    let only = match &args.repos_from {
        Some(file) => Some(read_test_list(file)?),
        None => None,
    };
    let target = &args.target;
    let req = OrgRequest {
        org: org.to_string(),
        include_archived: args.include_archived,
        include_forks: args.include_forks,
        matching: args.matching.clone(),
        only,
        jobs: args.jobs as usize,
        secrets: SigningSecrets {
            extra: target.secrets.clone(),
            only: target.only_secrets.clone(),
            ..SigningSecrets::default()
        },
        fallback_tag_patterns: target.release_tag_pattern.clone(),
        fail_on: args.fail_on.into(),
        releases: target.releases,
        deep: target.deep,
        reserve: ORG_RESERVE,
    };
    let report = run_org(&session, &req, baseline)?;
    ctx.emit(out, &report, Format::from(args.format), args.step_summary)
}

/// Requests kept back from the rate limit: below this, no further repository starts (one
/// repository's audit takes about 20).
const ORG_RESERVE: u64 = 100;

fn snapshot(args: SnapshotArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let session = ctx.connect(args.target.api_url.as_deref(), ctx.token.as_ref())?;
    let settings = SettingsSource::Record(&session, args.out.clone());
    let report = audit::run(&request(&args.target, ctx, settings, Severity::Medium))?;
    if let (Some(repo), Some((dir, n))) = (&report.repository, &report.snapshot) {
        writeln!(
            out,
            "saved {n} responses for {repo} under {}",
            dir.display()
        )?;
    }
    Ok(0)
}

fn request<'a>(
    target: &AuditTarget,
    ctx: &Context,
    settings: SettingsSource<'a>,
    fail_on: Severity,
) -> AuditRequest<'a> {
    AuditRequest {
        root: target.root.clone(),
        secrets: SigningSecrets {
            extra: target.secrets.clone(),
            only: target.only_secrets.clone(),
            ..SigningSecrets::default()
        },
        fallback_tag_patterns: target.release_tag_pattern.clone(),
        repository: repository_name(ctx.repository(target.repo.as_deref()), &target.root),
        settings,
        fail_on,
        releases: target.releases,
        deep: target.deep,
    }
}

/// Sends the plan's API changes once the user says yes (or `--yes`).
fn apply_plan(
    session: &Session,
    report: &AuditReport,
    yes: bool,
    ctx: &Context,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let steps = requests(plan(report));
    if steps.is_empty() {
        writeln!(out, "\napply: nothing warden can change")?;
        return Ok(());
    }
    let repo = report.repository.as_deref().unwrap_or_default();
    if !yes {
        if !ctx.interactive {
            bail!("--apply needs a confirmation: run it on a terminal, or pass --yes");
        }
        write!(
            out,
            "\nApply {} change{} to {repo}? [y/N] ",
            steps.len(),
            if steps.len() == 1 { "" } else { "s" }
        )?;
        out.flush()?;
        let mut answer = String::new();
        io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            writeln!(out, "not applied")?;
            return Ok(());
        }
    }
    let applied = apply(session, repo, &steps);
    write_applied(out, &applied)?;
    let failed = applied.iter().filter(|a| !a.succeeded()).count();
    if failed > 0 {
        bail!("{failed} change(s) could not be applied");
    }
    Ok(())
}
