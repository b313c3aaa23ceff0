//! `warden`: parse arguments, call the library, render, map errors to exit codes.

mod cli;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use clap::Parser;
use release_warden::audit::settings::{audit_settings, SettingsInput};
use release_warden::audit::workflows::audit_workflows;
use release_warden::audit::{fix_plan, AuditReport, Finding, Severity, SigningSecrets};
use release_warden::github::snapshot::{Recorder, SnapshotSource};
use release_warden::github::{api_url, ApiSource, LiveApi, RetryPolicy};
use release_warden::hive::check::{check as hive_check, CheckOptions};
use release_warden::known_issues::{self, exclusions, render, summary, Expect, Registry};
use release_warden::release::comment::ReleaseMeta;
use release_warden::release::hash::Progress;
use release_warden::release::keygen::{keygen, KeygenOptions};
use release_warden::release::keys::{
    secret_key_protection, Password, SecretKey, SecretKeyProtection, SecretKeyText,
};
use release_warden::release::sign::{sign, ChecksumsTarget, SignOptions};
use release_warden::release::verify::{read_public_key, verify, TrustedKeys, VerifyOptions};
use release_warden::report::findings::{self, FindingsFormat};
use release_warden::report::hive::HiveFormat;
use release_warden::report::{self, Format};

use cli::{Cli, Command, OutputFormat};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // --quiet: render into a buffer and show it only when the command fails.
    let quiet = cli.quiet;
    let mut buffer: Vec<u8> = Vec::new();
    let result = if quiet {
        run(cli, &mut buffer)
    } else {
        run(cli, &mut io::stdout().lock())
    };
    if quiet && !matches!(result, Ok(0)) {
        let _ = io::stdout().write_all(&buffer);
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if err.chain().any(|e| {
                e.downcast_ref::<io::Error>()
                    .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("warden: {}", error_chain(&err));
            ExitCode::from(2)
        }
    }
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

fn format(f: OutputFormat) -> Format {
    match f {
        OutputFormat::Text => Format::Text,
        OutputFormat::Json => Format::Json,
    }
}

fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut out = out;
    let show_progress = !cli.quiet && io::stderr().is_terminal();
    match cli.command {
        Command::Keygen(args) => {
            let secret_key = match args.secret_key {
                Some(p) => p,
                None => default_secret_key_path()?,
            };
            let password = if args.unencrypted {
                None
            } else if let Some(var) = &args.password_env {
                Some(password_from_env(var)?)
            } else if io::stdin().is_terminal() {
                let first = Password::new(rpassword::prompt_password(
                    "Password for the new secret key: ",
                )?);
                let second = Password::new(rpassword::prompt_password("Password (again): ")?);
                if !first.matches(&second) {
                    bail!("the passwords do not match");
                }
                Some(first)
            } else {
                bail!("no password given and stdin is not a terminal: pass --password-env VAR, or --unencrypted for a key without password");
            };
            let report = keygen(&KeygenOptions {
                public_key: args.public_key,
                secret_key,
                password,
                force: args.force,
            })?;
            let sk = report.secret_key.display();
            writeln!(out, "key id      {}", report.key_id)?;
            writeln!(
                out,
                "public key  {}  (commit this file)",
                report.public_key.display()
            )?;
            writeln!(
                out,
                "secret key  {sk}  ({}, mode 0600; never commit it)",
                if report.encrypted {
                    "encrypted"
                } else {
                    "unencrypted"
                }
            )?;
            writeln!(out, "\nStore the secret key in the GitHub environment that signs releases (e.g. \"release\"):")?;
            writeln!(
                out,
                "  gh secret set MINISIGN_SECRET_KEY --env release < {sk}"
            )?;
            if report.encrypted {
                writeln!(out, "  gh secret set MINISIGN_PASSWORD --env release")?;
            }
            writeln!(
                out,
                "then remove the local copy once it is backed up offline."
            )?;
            Ok(0)
        }
        Command::Sign(args) => {
            let (text, origin) = read_secret_key(&args)?;
            let protection =
                secret_key_protection(&text).map_err(|e| e.in_origin(origin.clone()))?;
            let password = match (&args.password_env, protection) {
                (_, SecretKeyProtection::Unencrypted) => None,
                (Some(var), SecretKeyProtection::Encrypted) => Some(password_from_env(var)?),
                (None, SecretKeyProtection::Encrypted)
                    if io::stdin().is_terminal() && !args.secret_key_stdin =>
                {
                    Some(Password::new(rpassword::prompt_password(
                        "Password for the secret key: ",
                    )?))
                }
                (None, SecretKeyProtection::Encrypted) => {
                    bail!("{origin}: the secret key is encrypted: pass --password-env VAR (no prompt without a terminal)")
                }
            };
            let key = SecretKey::load(&text, password.as_ref()).map_err(|e| e.in_origin(origin))?;
            drop(text);
            let expected = match &args.public_key {
                Some(p) => Some((read_public_key(p)?, p.clone())),
                None => None,
            };
            let opts = SignOptions {
                inputs: args.paths,
                recursive: args.recursive,
                checksums: match (args.no_checksums, args.checksums) {
                    (true, _) => ChecksumsTarget::Skip,
                    (false, Some(p)) => ChecksumsTarget::Path(p),
                    (false, None) => ChecksumsTarget::Default,
                },
                force: args.force,
                meta: ReleaseMeta {
                    tag: args.tag,
                    commit: args.commit,
                    repo: args.repo,
                    dry_run: args.dry_run,
                },
                timestamp: signing_timestamp()?,
                progress: Some(Progress::default()),
            };
            let bar = ProgressDisplay::start(opts.progress.clone(), show_progress, "signing");
            let report = sign(
                &opts,
                &key,
                expected.as_ref().map(|(k, p)| (k, p.as_path())),
            )?;
            drop(bar);
            for (path, why) in &report.skipped {
                eprintln!("warden: warning: skipped {}: {why}", path.display());
            }
            report::sign(&mut out, &report, format(args.format))?;
            Ok(0)
        }
        Command::Verify(args) => {
            let keys = if args.public_key.is_empty() {
                TrustedKeys::load_dir(&args.keys_dir).with_context(|| {
                    "loading trusted keys (pass --public-key FILE or --keys-dir DIR)"
                })?
            } else {
                TrustedKeys::load_files(&args.public_key)?
            };
            let opts = VerifyOptions {
                inputs: args.paths,
                expect_tag: args.expect_tag,
                allow_legacy: args.allow_legacy,
                allow_dry_run: args.allow_dry_run,
                checksums_name: args.checksums,
                progress: Some(Progress::default()),
            };
            let bar = ProgressDisplay::start(opts.progress.clone(), show_progress, "verifying");
            let report = verify(&opts, &keys)?;
            drop(bar);
            for w in &report.warnings {
                eprintln!("warden: warning: {w}");
            }
            report::verify(&mut out, &report, format(args.format))?;
            if args.step_summary {
                let mut md = Vec::new();
                report::verify_markdown(&mut md, &report)?;
                append_step_summary(&String::from_utf8_lossy(&md))?;
            }
            Ok(report.exit_code())
        }
        Command::KnownIssues(cmd) => known_issues_command(cmd, &mut out),
        Command::Hive(cli::HiveCommand::Check(args)) => {
            let registry = load_registry(&args.registry)?;
            let expected_tests = match &args.expected_tests {
                Some(p) => exclusions::parse_test_list(
                    &std::fs::read_to_string(p)
                        .with_context(|| format!("reading {}", p.display()))?,
                ),
                None => Vec::new(),
            };
            let format = match args.format {
                cli::HiveFormatArg::Text => HiveFormat::Text,
                cli::HiveFormatArg::Json => HiveFormat::Json,
                cli::HiveFormatArg::Junit => HiveFormat::Junit,
                cli::HiveFormatArg::Markdown => HiveFormat::Markdown,
            };
            let opts = CheckOptions {
                client: args.client,
                expected_tests,
                expected_suite: args.expected_suite,
                allow_missing: args.allow_missing,
                keep_passes: format == HiveFormat::Junit,
            };
            let report = hive_check(&args.dir, &registry, &opts)?;
            report::hive::render(&mut out, &report, format)?;
            if args.step_summary {
                let mut md = Vec::new();
                report::hive::render(&mut md, &report, HiveFormat::Markdown)?;
                append_step_summary(&String::from_utf8_lossy(&md))?;
            }
            Ok(report.exit_code())
        }
        Command::Audit(args) => audit_command(args, &mut out),
        Command::Completions(args) => {
            clap_complete::generate(
                args.shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "warden",
                &mut out,
            );
            Ok(0)
        }
        Command::Man(_) => {
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut out)?;
            Ok(0)
        }
        Command::Check(args) => {
            let lines = release_warden::check::run(&args.root);
            report::check(&mut out, &lines, format(args.format))?;
            if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
                && args.format == cli::OutputFormat::Text
            {
                report::check_annotations(&mut out, &lines, &args.root)?;
            }
            if args.step_summary {
                let mut md = Vec::new();
                report::check_markdown(&mut md, &lines)?;
                append_step_summary(&String::from_utf8_lossy(&md))?;
            }
            Ok(if lines.iter().all(|l| l.passed) { 0 } else { 1 })
        }
    }
}

fn severity(s: cli::SeverityArg) -> Severity {
    match s {
        cli::SeverityArg::Info => Severity::Info,
        cli::SeverityArg::Low => Severity::Low,
        cli::SeverityArg::Medium => Severity::Medium,
        cli::SeverityArg::High => Severity::High,
    }
}

fn audit_command(args: cli::AuditArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    if let Some(cli::AuditCommand::Snapshot(snap)) = args.command {
        return audit_snapshot(snap, out);
    }
    let secrets = SigningSecrets {
        explicit: args.secrets.clone(),
    };
    let wf = audit_workflows(&args.root, &secrets);
    let patterns = if wf.tag_patterns.is_empty() {
        args.release_tag_pattern.clone()
    } else {
        wf.tag_patterns.clone()
    };
    let mut findings_list = wf.findings.clone();
    let mut repository = None;
    let mut live: Option<LiveApi> = None;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    if !args.offline {
        // octocrab's client spawns its worker onto the runtime it is built in: the same runtime
        // must outlive every request, including --apply's.
        let _entered = runtime.enter();
        let repo = release_warden::github::repository_name(args.repo.as_deref(), &args.root);
        let input = |repo: &'_ str| (repo.to_string(), wf.signing_jobs.clone());
        match (&args.snapshot, release_warden::github::token_from_env(), repo) {
            (Some(dir), _, repo) => {
                let repo = repo.ok_or_else(|| anyhow!("--snapshot: name the repository with --repo OWNER/NAME"))?;
                let source = SnapshotSource { dir: dir.clone() };
                let (name, jobs) = input(&repo);
                findings_list.extend(run_settings(&runtime, &source, &name, &jobs, &patterns, &secrets));
                repository = Some(repo);
            }
            (None, Some(token), Some(repo)) => {
                let api = LiveApi::new(&api_url(args.api_url.as_deref()), Some(&token), RetryPolicy::default()).map_err(|e| anyhow!(e))?;
                let (name, jobs) = input(&repo);
                findings_list.extend(run_settings(&runtime, &api, &name, &jobs, &patterns, &secrets));
                repository = Some(repo);
                live = Some(api);
            }
            (None, None, repo) => findings_list.push(Finding {
                id: "unverifiable",
                severity: Severity::Medium,
                confidence: release_warden::audit::Confidence::High,
                location: release_warden::audit::Location::Api { resource: format!("repos/{}", repo.as_deref().unwrap_or("OWNER/NAME")) },
                message: "the repository settings (tag rulesets, environments, secrets) were not audited: no GH_TOKEN or GITHUB_TOKEN".into(),
                remediation: "Set GH_TOKEN (or GITHUB_TOKEN) to a token that can read the repository settings, audit a snapshot with --snapshot DIR, or pass --offline to audit the workflows only.".into(),
            }),
            (None, Some(_), None) => bail!("cannot tell which repository to audit: pass --repo OWNER/NAME (or --offline)"),
        }
    }
    let mut report = AuditReport {
        findings: findings_list,
        fail_on: severity(args.fail_on),
        repository,
        release_tag_patterns: patterns,
    };
    report.sort();
    let format = match args.format {
        cli::AuditFormat::Text => FindingsFormat::Text,
        cli::AuditFormat::Json => FindingsFormat::Json,
        cli::AuditFormat::Sarif => FindingsFormat::Sarif,
        cli::AuditFormat::Markdown => FindingsFormat::Markdown,
    };
    let color = format == FindingsFormat::Text
        && io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    findings::render(&mut *out, &report, format, color)?;
    // Machine formats keep stdout parseable: the plan and apply progress go to stderr.
    let mut stderr = io::stderr().lock();
    let side: &mut dyn Write = if matches!(format, FindingsFormat::Json | FindingsFormat::Sarif) {
        &mut stderr
    } else {
        &mut *out
    };
    if args.fix_plan || args.apply {
        fix_plan::render(&mut *side, &report)?;
    }
    if args.apply {
        let api = live.as_ref().ok_or_else(|| {
            anyhow!("--apply needs the live API: set GH_TOKEN and name the repository with --repo")
        })?;
        let _entered = runtime.enter();
        apply_plan(&runtime, api, &report, args.yes, side)?;
    }
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") && format == FindingsFormat::Text
    {
        findings::github_annotations(&mut *out, &report)?;
    }
    if args.step_summary {
        let mut md = Vec::new();
        findings::render(&mut md, &report, FindingsFormat::Markdown, false)?;
        append_step_summary(&String::from_utf8_lossy(&md))?;
    }
    Ok(report.exit_code())
}

/// Sends the plan's API changes after a confirmation; environment updates keep the reviewers and
/// wait timer the environment already has.
fn apply_plan(
    runtime: &tokio::runtime::Runtime,
    api: &LiveApi,
    report: &AuditReport,
    yes: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let steps: Vec<_> = fix_plan::plan(report)
        .into_iter()
        .filter(|s| s.request.is_some())
        .collect();
    if steps.is_empty() {
        writeln!(out, "\napply: nothing warden can change")?;
        return Ok(());
    }
    let repo = report.repository.as_deref().unwrap_or_default();
    if !yes {
        if !io::stdin().is_terminal() {
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
    // One block_on for every request: octocrab's client lives on this runtime's tasks.
    let results = runtime.block_on(async {
        let mut results = Vec::new();
        for step in steps {
            let Some((method, route, mut body)) = step.request.clone() else {
                continue;
            };
            if let Some(env) = &step.environment {
                let route = format!(
                    "repos/{repo}/environments/{}",
                    release_warden::audit::settings::encode_segment(env)
                );
                if let release_warden::github::Fetched::Ok(current) =
                    api.get(&route, release_warden::github::Shape::Object).await
                {
                    keep_environment_settings(&current, &mut body);
                }
            }
            let sent = api
                .send(method.as_str(), &route, &body)
                .await
                .map(|(status, _, text)| (status, text));
            results.push((step.title, method, route, sent));
        }
        results
    });
    let mut failed = 0;
    for (title, method, route, sent) in results {
        match sent {
            Ok((status, _)) if (200..300).contains(&status) => writeln!(
                out,
                "applied  {} {route} ({status}): {title}",
                method.as_str()
            )?,
            Ok((status, text)) => {
                failed += 1;
                let msg = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|v| v["message"].as_str().map(str::to_string))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "FAILED   {} {route} ({status} {msg}): {title}",
                    method.as_str()
                )?;
            }
            Err(e) => {
                failed += 1;
                writeln!(out, "FAILED   {} {route} ({e}): {title}", method.as_str())?;
            }
        }
    }
    writeln!(out, "run `warden audit` again to confirm the changes")?;
    if failed > 0 {
        bail!("{failed} change(s) could not be applied");
    }
    Ok(())
}

/// Copies the reviewers and wait timer an environment already has into the PUT body, so applying
/// the plan never removes protection.
fn keep_environment_settings(current: &serde_json::Value, body: &mut serde_json::Value) {
    for rule in current["protection_rules"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        match rule["type"].as_str() {
            Some("required_reviewers") => {
                let reviewers: Vec<serde_json::Value> = rule["reviewers"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|r| Some(serde_json::json!({"type": r["type"].as_str()?, "id": r["reviewer"]["id"].as_u64()?})))
                    .collect();
                body["reviewers"] = serde_json::json!(reviewers);
            }
            Some("wait_timer") => body["wait_timer"] = rule["wait_timer"].clone(),
            _ => {}
        }
    }
}

fn run_settings<S: ApiSource>(
    runtime: &tokio::runtime::Runtime,
    source: &S,
    repo: &str,
    jobs: &[release_warden::audit::workflows::SigningJob],
    patterns: &[String],
    secrets: &SigningSecrets,
) -> Vec<Finding> {
    let input = SettingsInput {
        repo,
        signing_jobs: jobs,
        tag_patterns: patterns,
        secrets,
    };
    runtime.block_on(audit_settings(source, &input))
}

fn audit_snapshot(args: cli::SnapshotArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let secrets = SigningSecrets {
        explicit: args.secrets.clone(),
    };
    let wf = audit_workflows(&args.root, &secrets);
    let patterns = if wf.tag_patterns.is_empty() {
        vec!["v*".to_string()]
    } else {
        wf.tag_patterns.clone()
    };
    let repo = release_warden::github::repository_name(args.repo.as_deref(), &args.root)
        .ok_or_else(|| anyhow!("pass --repo OWNER/NAME"))?;
    let token = release_warden::github::token_from_env();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let _entered = runtime.enter();
    let api = LiveApi::new(
        &api_url(args.api_url.as_deref()),
        token.as_ref(),
        RetryPolicy::default(),
    )
    .map_err(|e| anyhow!(e))?;
    let recorder = Recorder::new(&api);
    run_settings(
        &runtime,
        &recorder,
        &repo,
        &wf.signing_jobs,
        &patterns,
        &secrets,
    );
    let n = recorder.save(&args.out)?;
    writeln!(
        out,
        "saved {n} responses for {repo} under {}",
        args.out.display()
    )?;
    Ok(0)
}

/// A progress bar on stderr while hashing, shown only on a terminal and only once the work has
/// taken more than a second; cleared when dropped.
struct ProgressDisplay {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProgressDisplay {
    fn start(counter: Option<Progress>, enabled: bool, what: &'static str) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let thread = match (counter, enabled) {
            (Some(counter), true) => {
                let done = done.clone();
                Some(std::thread::spawn(move || {
                    let tick = std::time::Duration::from_millis(100);
                    let start = std::time::Instant::now();
                    while start.elapsed() < std::time::Duration::from_secs(1) {
                        if done.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep(tick);
                    }
                    let bar = indicatif::ProgressBar::new_spinner();
                    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg}") {
                        bar.set_style(style);
                    }
                    // Bytes and rate since the work started (indicatif would measure from the
                    // moment the bar appears).
                    while !done.load(Ordering::Relaxed) {
                        let bytes = counter.load(Ordering::Relaxed);
                        let rate = bytes as f64 / start.elapsed().as_secs_f64().max(0.001) / 1e6;
                        bar.set_message(format!(
                            "{what}: {} hashed ({rate:.0} MB/s)",
                            indicatif::HumanBytes(bytes)
                        ));
                        bar.tick();
                        std::thread::sleep(tick);
                    }
                    bar.finish_and_clear();
                }))
            }
            _ => None,
        };
        ProgressDisplay { done, thread }
    }
}

impl Drop for ProgressDisplay {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Loads a registry for commands that need a valid one; schema problems are a usage error.
fn load_registry(dir: &std::path::Path) -> anyhow::Result<Registry> {
    let (registry, problems) = Registry::load(dir);
    if let Some(first) = problems.first() {
        bail!(
            "{first}{} (run `warden known-issues lint`)",
            if problems.len() > 1 {
                format!(" and {} more problems", problems.len() - 1)
            } else {
                String::new()
            }
        );
    }
    Ok(registry)
}

fn known_issues_command(cmd: cli::KnownIssuesCommand, out: &mut impl Write) -> anyhow::Result<u8> {
    use cli::KnownIssuesCommand as K;
    match cmd {
        K::Lint(args) => {
            let (registry, problems) = Registry::load(&args.registry.registry);
            let problems = known_issues::lint(&registry, &args.registry.root, problems);
            let annotate = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
            for p in &problems {
                writeln!(out, "{p}")?;
                if annotate {
                    writeln!(out, "{}", p.github_annotation())?;
                }
            }
            writeln!(
                out,
                "known-issues lint: {} entr{}, {} problem{}",
                registry.entries.len(),
                if registry.entries.len() == 1 {
                    "y"
                } else {
                    "ies"
                },
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            )?;
            Ok(u8::from(!problems.is_empty()))
        }
        K::Render(args) => {
            let registry = load_registry(&args.registry.registry)?;
            let path = args.out.unwrap_or_else(|| {
                if args.registry.root == std::path::Path::new(".") {
                    PathBuf::from(&registry.settings.doc)
                } else {
                    args.registry.root.join(&registry.settings.doc)
                }
            });
            let doc = render::render_doc(&registry);
            if args.check {
                let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
                if on_disk == doc {
                    writeln!(out, "{} is up to date", path.display())?;
                    return Ok(0);
                }
                writeln!(
                    out,
                    "{} is out of date: run `warden known-issues render`",
                    path.display()
                )?;
                return Ok(1);
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            release_warden::fsutil::write_atomic(&path, doc.as_bytes(), 0o644, true)?;
            writeln!(
                out,
                "wrote {} ({} entries)",
                path.display(),
                registry.entries.len()
            )?;
            Ok(0)
        }
        K::Exclusions(args) => {
            let registry = load_registry(&args.registry.registry)?;
            let tests_from = match &args.tests_from {
                Some(p) => Some(exclusions::parse_test_list(
                    &std::fs::read_to_string(p)
                        .with_context(|| format!("reading {}", p.display()))?,
                )),
                None => None,
            };
            let format = match args.format {
                cli::ExclusionsFormat::Bash => exclusions::ExclusionFormat::Bash,
                cli::ExclusionsFormat::Lines => exclusions::ExclusionFormat::Lines,
                cli::ExclusionsFormat::Json => exclusions::ExclusionFormat::Json,
                cli::ExclusionsFormat::RethYaml => exclusions::ExclusionFormat::RethYaml,
                cli::ExclusionsFormat::SimLimit => exclusions::ExclusionFormat::SimLimit,
            };
            let query = exclusions::Query {
                suite: args.suite,
                client: args.client,
                expect: args
                    .expect
                    .iter()
                    .map(|e| match e {
                        cli::ExpectArg::Fail => Expect::Fail,
                        cli::ExpectArg::Flaky => Expect::Flaky,
                        cli::ExpectArg::Skip => Expect::Skip,
                    })
                    .collect(),
                tests_from,
            };
            let (text, warnings) =
                exclusions::render(&registry, format, &query).map_err(|e| anyhow!(e))?;
            for w in warnings {
                eprintln!("warden: warning: {w}");
            }
            out.write_all(text.as_bytes())?;
            Ok(0)
        }
        K::Summary(args) => {
            let registry = load_registry(&args.registry.registry)?;
            let results = match &args.results {
                Some(dir) => Some(hive_check(
                    dir,
                    &registry,
                    &CheckOptions {
                        client: args.client.clone(),
                        allow_missing: true,
                        ..CheckOptions::default()
                    },
                )?),
                None => None,
            };
            let markdown = args.format == cli::SummaryFormat::Markdown;
            let text = summary::render(&registry, results.as_ref(), markdown);
            out.write_all(text.as_bytes())?;
            let markdown_body = summary::render(&registry, results.as_ref(), true);
            if args.step_summary {
                append_step_summary(&markdown_body)?;
            }
            if args.post {
                post_comment(
                    &markdown_body,
                    args.pr,
                    args.api_url.as_deref(),
                    args.step_summary,
                )?;
            }
            Ok(0)
        }
    }
}

/// The sticky PR comment; on a 403 (a fork's read-only token) the summary goes to the step
/// summary instead, unless it is already there.
fn post_comment(
    body: &str,
    pr: Option<u64>,
    api: Option<&str>,
    already_in_step_summary: bool,
) -> anyhow::Result<()> {
    use release_warden::github::comments::{pr_from_event, upsert, Upsert};
    let repo = std::env::var("GITHUB_REPOSITORY")
        .ok()
        .filter(|r| r.contains('/'))
        .ok_or_else(|| anyhow!("--post: GITHUB_REPOSITORY is not set (OWNER/NAME)"))?;
    let pr = match pr {
        Some(n) => n,
        None => {
            let path = std::env::var_os("GITHUB_EVENT_PATH").ok_or_else(|| {
                anyhow!("--post: no pull request: pass --pr N (GITHUB_EVENT_PATH is not set)")
            })?;
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", PathBuf::from(&path).display()))?;
            let payload: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: not JSON", PathBuf::from(&path).display()))?;
            pr_from_event(&payload).ok_or_else(|| {
                anyhow!("--post: the event at GITHUB_EVENT_PATH is not a pull request: pass --pr N")
            })?
        }
    };
    let token = release_warden::github::token_from_env()
        .ok_or_else(|| anyhow!("--post: no GH_TOKEN or GITHUB_TOKEN"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let _entered = runtime.enter();
    let client = LiveApi::new(&api_url(api), Some(&token), RetryPolicy::default())
        .map_err(|e| anyhow!(e))?;
    match runtime.block_on(upsert(&client, &repo, pr, body, summary::MARKER)) {
        Ok(Upsert::Created) => eprintln!("warden: posted the known-issues comment on {repo}#{pr}"),
        Ok(Upsert::Updated(id)) => {
            eprintln!("warden: updated the known-issues comment {id} on {repo}#{pr}")
        }
        Ok(Upsert::Unchanged(id)) => eprintln!(
            "warden: the known-issues comment {id} on {repo}#{pr} is up to date; nothing written"
        ),
        Err(e) if e.status == 403 => {
            eprintln!("warden: warning: cannot comment on {repo}#{pr}: {e}; the token is read-only (a pull request from a fork?)");
            if !already_in_step_summary {
                append_step_summary(body).context("falling back to the step summary")?;
            }
            eprintln!("warden: the summary is in the job's step summary instead");
        }
        Err(e) => bail!("--post: commenting on {repo}#{pr} failed: {e}"),
    }
    Ok(())
}

/// Appends to the file GitHub Actions names in $GITHUB_STEP_SUMMARY.
fn append_step_summary(text: &str) -> anyhow::Result<()> {
    let path = std::env::var_os("GITHUB_STEP_SUMMARY").ok_or_else(|| {
        anyhow!("--step-summary: GITHUB_STEP_SUMMARY is not set (not running in GitHub Actions?)")
    })?;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .with_context(|| format!("opening {}", PathBuf::from(&path).display()))?;
    writeln!(f, "{text}")?;
    Ok(())
}

fn default_secret_key_path() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .ok_or_else(|| anyhow!("HOME is not set: pass --secret-key FILE"))?;
    Ok(PathBuf::from(home).join(".minisign").join("minisign.key"))
}

fn password_from_env(var: &str) -> anyhow::Result<Password> {
    let value = std::env::var(var).map_err(|_| {
        anyhow!("environment variable {var} (--password-env) is not set or not UTF-8")
    })?;
    let password = Password::new(value);
    if password.is_empty() {
        bail!("environment variable {var} (--password-env) is empty");
    }
    Ok(password)
}

fn read_secret_key(args: &cli::SignArgs) -> anyhow::Result<(SecretKeyText, String)> {
    if let Some(var) = &args.secret_key_env {
        let value = std::env::var(var).map_err(|_| {
            anyhow!("environment variable {var} (--secret-key-env) is not set or not UTF-8")
        })?;
        return Ok((SecretKeyText::new(value), format!("${var}")));
    }
    if let Some(path) = &args.secret_key {
        let value = release_warden::fsutil::read_small_file(
            path,
            release_warden::fsutil::SMALL_FILE_CAP,
            "a minisign secret key",
        )?;
        return Ok((SecretKeyText::new(value), path.display().to_string()));
    }
    let value = release_warden::fsutil::read_capped(
        io::stdin(),
        "<stdin>",
        release_warden::fsutil::SMALL_FILE_CAP,
        "a minisign secret key",
    )
    .map_err(|e| match e {
        release_warden::fsutil::CappedReadError::Io(e) => {
            anyhow::Error::new(e).context("reading the secret key from stdin")
        }
        release_warden::fsutil::CappedReadError::Input(e) => e.into(),
    })?;
    Ok((SecretKeyText::new(value), "<stdin>".into()))
}

/// SOURCE_DATE_EPOCH makes signatures reproducible (Ed25519 is deterministic); else now.
fn signing_timestamp() -> anyhow::Result<u64> {
    if let Ok(v) = std::env::var("SOURCE_DATE_EPOCH") {
        return v
            .trim()
            .parse()
            .map_err(|_| anyhow!("SOURCE_DATE_EPOCH={v:?} is not a unix timestamp"));
    }
    Ok(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs())
}
