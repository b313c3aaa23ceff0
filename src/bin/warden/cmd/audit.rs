//! `warden audit` and `warden audit snapshot`: choose where the settings come from, run the one
//! audit pipeline, report; then the fix plan, and `--apply` after a `[y/N]` confirmation.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use release_warden::audit::plan;
use release_warden::audit::Baseline;
use release_warden::audit::{self, AuditRequest, SettingsSource};
use release_warden::audit::{apply, requests};
use release_warden::audit::{run_org, OrgProgress, OrgRequest, OrgSource, Resume};
use release_warden::audit::{AuditReport, Severity};
use release_warden::github::repository_name;
use release_warden::github::Session;
use release_warden::known_issues::read_test_list;
use release_warden::report::Format;
use release_warden::report::Report as _;
use release_warden::report::{write_applied, write_fix_plan, write_workflow_fixes};

use crate::cli::{AuditArgs, AuditCommand, AuditTarget, OrgFilter, SnapshotArgs};
use crate::context::Context;
use crate::progress::{ProgressDisplay, Unit};

/// What `--fix` leaves for the report: its words, or (with `--format patch`) the exit status.
enum FixOutcome {
    Words(Vec<u8>),
    Patch(u8),
}

/// `--fix`: the files fixed (or, with `--dry-run`, the diff), in words for the report; with
/// `--format patch`, the patch alone on stdout and the words on stderr.
fn fix(args: &AuditArgs, out: &mut dyn Write) -> anyhow::Result<FixOutcome> {
    let mut text = Vec::new();
    let patch = matches!(args.format, release_warden::report::AuditFormat::Patch);
    if patch && !(args.fix && args.dry_run) {
        return Err(release_warden::Error::Usage(
            "--format patch: the patch of --fix --dry-run (add both)".into(),
        )
        .into());
    }
    if !args.fix {
        return Ok(FixOutcome::Words(text));
    }
    let fixes = audit::fix_workflows(
        &args.target.root,
        &args.target.signing_secrets(),
        &args.fix_environment,
        args.fix_mode.map(Into::into),
    )?;
    if patch {
        release_warden::report::write_patch(out, &fixes)?;
        release_warden::report::write_workflow_fix_words(
            &mut io::stderr().lock(),
            &fixes,
            true,
            &[],
        )?;
        return Ok(FixOutcome::Patch(u8::from(!fixes.not_fixed.is_empty())));
    }
    let written = if args.dry_run {
        Vec::new()
    } else {
        fixes.write(&args.target.root)
    };
    write_workflow_fixes(&mut text, &fixes, args.dry_run, &written)?;
    let failed = written.iter().filter(|(_, r)| r.is_err()).count();
    if failed > 0 {
        io::stderr().write_all(&text)?;
        return Err(release_warden::Error::Usage(format!(
            "--fix: {failed} file(s) not written (see above)"
        ))
        .into());
    }
    Ok(FixOutcome::Words(text))
}

pub(crate) fn run(args: AuditArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    if let Some(persona) = &args.persona {
        anyhow::bail!(
            "--persona {}: warden has no personas (that is zizmor's flag): every finding is reported, with its severity and confidence; --fail-on SEVERITY sets which fail the run",
            release_warden::markup::text_value(persona)
        );
    }
    if let Some(AuditCommand::Snapshot(snap)) = args.command {
        return snapshot(snap, ctx, out);
    }
    let baseline = args.baseline.as_deref().map(Baseline::load).transpose()?;
    if let Some(org) = &args.org_filter.org {
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
        (None, None) => match &args.target.repo {
            // Asked for by name: the settings cannot be read, which is not a finding.
            Some(repo) => {
                return Err(release_warden::Error::Usage(format!(
                    "--repo {}: a repository's settings (and, without its checkout, its workflows) are read through the API, with a token: set GH_TOKEN (or GITHUB_TOKEN), or drop --repo to audit the checkout's workflows alone",
                    release_warden::markup::text_value(repo)
                ))
                .into())
            }
            None => SettingsSource::NoToken,
        },
    };
    // The fix first: the audit judges the files as they are after it.
    let fix_text = match fix(&args, out)? {
        FixOutcome::Patch(code) => return Ok(code),
        FixOutcome::Words(text) => text,
    };
    let mut report = audit::run(&request(&args.target, ctx, settings, args.fail_on))?;
    if report.workflows.is_empty() && !args.allow_empty {
        return Err(release_warden::Error::Usage(format!(
            "no workflow file in {}: nothing to audit (is --root the repository? --allow-empty audits the settings alone)",
            args.target.root.join(".github/workflows").display()
        ))
        .into());
    }
    if let Some(b) = &baseline {
        b.apply(&mut report);
    }
    let format = Format::from(args.format);
    // Machine formats keep stdout parseable: the fix, the plan and apply progress go to stderr.
    let machine = matches!(format, Format::Json | Format::Sarif);
    if machine {
        io::stderr().write_all(&fix_text)?;
    } else if !fix_text.is_empty() {
        out.write_all(&fix_text)?;
        writeln!(out)?;
    }
    let code = ctx.emit(out, &report, format, args.step_summary)?;
    let mut stderr = io::stderr().lock();
    let side: &mut dyn Write = if machine { &mut stderr } else { out };
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
    let session;
    let source = match &args.snapshot {
        Some(dir) => OrgSource::Snapshot(dir.clone()),
        None => {
            let token = ctx.token.as_ref().ok_or_else(|| {
                anyhow!("--org reads the organisation through the API: set GH_TOKEN (or replay a snapshot with --snapshot DIR)")
            })?;
            session = ctx.connect_cached(
                args.target.api_url.as_deref(),
                Some(token),
                args.cache.clone(),
            )?;
            OrgSource::Live(&session)
        }
    };
    let mut req = org_request(org, args)?;
    if args.inventory {
        if matches!(args.format, release_warden::report::AuditFormat::Sarif) {
            bail!("--inventory: --format text, json or markdown (an inventory is not code scanning's)");
        }
        req.inventory = true;
        req.releases = args.target.releases.unwrap_or(INVENTORY_RELEASES);
    }
    if let Some(file) = &args.org_filter.resume {
        req.resume = Some(Resume::load(file, org)?);
    }
    // An inventory's baseline is an earlier inventory: it applies to the inventory's findings.
    let (baseline, inventory_baseline) = match args.inventory {
        true => (None, baseline),
        false => (baseline, None),
    };
    let progress = OrgProgress::default();
    req.progress = Some(progress.clone());
    let bar = ProgressDisplay::counting(
        Some(progress.done),
        Some(progress.total),
        Unit::Repositories,
        ctx.progress,
        format!("auditing {}", release_warden::markup::text_value(org)),
    );
    let report = run_org(&source, &req, baseline)?;
    drop(bar);
    if !report.not_started.is_empty() {
        let file = resume_file(org, args.cache.as_deref());
        let mut json = Vec::new();
        report.json(&mut json)?;
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        release_warden::files::write_atomic(&file, &json, 0o644, true)?;
        if let Some(line) = &report.stopped {
            // The API cannot be used any more: not a finding about the organisation (exit 2).
            return Err(release_warden::Error::Usage(format!(
                "{line}\nstopped before {} repositories; the {} audited are saved: run the same command with --resume {}",
                report.not_started.len(),
                report.reports.len() + report.unreadable.len(),
                file.display()
            ))
            .into());
        }
        eprintln!(
            "warden: stopped before {} repositories to keep the rate limit: after the reset, run the same command with --resume {}",
            report.not_started.len(),
            file.display()
        );
    }
    if let Some(line) = &report.stopped {
        return Err(release_warden::Error::Usage(line.clone()).into());
    }
    if args.inventory {
        // Validity is judged by the clock, never SOURCE_DATE_EPOCH (which a reproducible build
        // sets to a past date: a key expired today would pass as valid).
        let now = release_warden::util::unix_now();
        let mut inventory = audit::inventory(&report, req.releases, now, &args.target.root)?;
        if let Some(b) = inventory_baseline {
            inventory.apply_baseline(b);
        }
        return ctx.emit(
            out,
            &inventory,
            Format::from(args.format),
            args.step_summary,
        );
    }
    ctx.emit(out, &report, Format::from(args.format), args.step_summary)
}

/// `warden audit snapshot --org ORG --out DIR`.
fn snapshot_org(
    org: &str,
    args: &SnapshotArgs,
    ctx: &Context,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let session = ctx.connect(args.target.api_url.as_deref(), ctx.token.as_ref())?;
    let mut req = OrgRequest {
        org: org.to_string(),
        ..org_request_of(&args.target, &args.org_filter, Severity::Medium)?
    };
    if args.inventory {
        req.inventory = true;
        req.releases = args.target.releases.unwrap_or(INVENTORY_RELEASES);
    }
    let report = run_org(&OrgSource::Record(&session, args.out.clone()), &req, None)?;
    if let Some((dir, n)) = &report.snapshot {
        writeln!(
            out,
            "saved {n} responses for {} repositories of {org} under {}",
            report.reports.len() + report.unreadable.len(),
            dir.display()
        )?;
    }
    Ok(0)
}

fn org_request(org: &str, args: &AuditArgs) -> anyhow::Result<OrgRequest> {
    Ok(OrgRequest {
        org: org.to_string(),
        ..org_request_of(&args.target, &args.org_filter, args.fail_on)?
    })
}

/// The organisation request of the flags shared by `audit --org` and `audit snapshot --org`.
fn org_request_of(
    target: &AuditTarget,
    filter: &OrgFilter,
    fail_on: Severity,
) -> anyhow::Result<OrgRequest> {
    let only = match &filter.repos_from {
        Some(file) => Some(read_test_list(file)?),
        None => None,
    };
    Ok(OrgRequest {
        org: String::new(),
        include_archived: filter.include_archived,
        include_forks: filter.include_forks,
        matching: filter.matching.clone(),
        only,
        jobs: filter.jobs as usize,
        secrets: target.signing_secrets(),
        fallback_tag_patterns: target.release_tag_pattern.clone(),
        fail_on,
        releases: target.releases.unwrap_or(DEFAULT_RELEASES),
        deep: target.deep,
        reserve: ORG_RESERVE,
        resume: None,
        progress: None,
        inventory: false,
    })
}

/// Where an interrupted `--org` run saves its state: the cache folder, else the working one.
fn resume_file(org: &str, cache: Option<&Path>) -> PathBuf {
    let safe: String = org
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("warden-audit-{safe}.resume.json");
    match cache {
        Some(dir) => dir.join(name),
        None => PathBuf::from(name),
    }
}

/// Releases the audit checks by default; the inventory reads more (`--releases` overrides both).
const DEFAULT_RELEASES: usize = 3;
const INVENTORY_RELEASES: usize = 5;

/// Requests kept back from the rate limit: below this, no further repository starts (one
/// repository's audit takes about 20).
const ORG_RESERVE: u64 = 100;

fn snapshot(args: SnapshotArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    if let Some(org) = &args.org_filter.org {
        return snapshot_org(org, &args, ctx, out);
    }
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
        secrets: target.signing_secrets(),
        fallback_tag_patterns: target.release_tag_pattern.clone(),
        repository: repository_name(ctx.repository(target.repo.as_deref()), &target.root),
        repository_from: Some(match (&target.repo, ctx.repository(None)) {
            (Some(_), _) => "--repo",
            (None, Some(_)) => "GITHUB_REPOSITORY",
            (None, None) => "the checkout's origin remote",
        }),
        settings,
        fail_on,
        releases: target.releases.unwrap_or(DEFAULT_RELEASES),
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
