//! `warden audit`: is the release-signing key behind an enforced boundary?
//!
//! One pipeline, [`run`], serves `warden audit`, `warden audit snapshot` and `warden check`: the
//! workflow audit (`workflows`, offline), the release tag patterns it finds, then the settings
//! audit (`settings`) from the source the request names. Findings (`findings`) carry their rule
//! (`rule`) and what they are about; `fix_plan` and `apply` close them; renderers live in
//! `crate::report::audit`. Audits fail closed: a setting that cannot be read is an
//! `unverifiable` finding naming the permission it needed.

pub(crate) mod apply;
pub(crate) mod baseline;
pub(crate) mod catalogue;
pub(crate) mod config;
pub(crate) mod findings;
pub(crate) mod fix;
pub(crate) mod fix_plan;
pub(crate) mod inventory;
pub(crate) mod keys;
pub(crate) mod org;
pub(crate) mod releases;
pub(crate) mod rule;
pub(crate) mod rules;
pub(crate) mod secrets;
pub(crate) mod settings;
pub(crate) mod severity;
pub(crate) mod tags;
pub(crate) mod workflows;

pub use apply::{apply, requests};
pub use baseline::Baseline;
pub use findings::{AuditReport, Finding, Location, Severity, Subject};
pub use fix::{check_environment_name, fix_workflows, FixMode, FixedFile, NotFixed, WorkflowFixes};
pub use fix_plan::plan;
pub use inventory::{inventory, Inventory};
pub use org::{run_org, OrgProgress, OrgReport, OrgRequest, OrgSource, Resume};
pub use rule::Rule;
pub use rules::{settings_checks, workflow_checks, ALL as RULES};
pub use secrets::SigningSecrets;
pub use settings::{audit as audit_settings, SettingsInput};
pub use workflows::{audit_workflows, SigningJob};

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::github::session::Session;
use crate::github::snapshot::{Recorder, SnapshotSource};

/// Where the repository settings come from.
#[derive(Debug)]
pub enum SettingsSource<'a> {
    /// Not audited, on purpose (`--offline`): no finding about them.
    Offline,
    /// Not audited for want of a token, none being asked for (no `--repo`): the report says so.
    NoToken,
    /// A snapshot folder (`--snapshot DIR`).
    Snapshot(PathBuf),
    /// The API.
    Live(&'a Session),
    /// The API, with every answer saved under the folder (`warden audit snapshot`).
    Record(&'a Session, PathBuf),
}

/// What to audit, and how.
#[derive(Debug)]
pub struct AuditRequest<'a> {
    /// The repository checkout (its `.github/workflows`).
    pub root: PathBuf,
    pub secrets: SigningSecrets,
    /// Release tag patterns to use when no signing workflow has `on.push.tags`.
    pub fallback_tag_patterns: Vec<String>,
    /// `OWNER/NAME`, needed by every source but `Offline` and `NoToken`.
    pub repository: Option<String>,
    /// Where `repository` came from (`--repo`, `GITHUB_REPOSITORY`, the origin remote), for errors.
    pub repository_from: Option<&'static str>,
    pub settings: SettingsSource<'a>,
    pub fail_on: Severity,
    /// How many of the latest published releases to check online (`--releases N`).
    pub releases: usize,
    /// `--deep`: check every asset of those releases against their signed list.
    pub deep: bool,
}

/// The offline half of an audit, done: the workflows of a checkout audited, with what the
/// settings audit needs from them.
pub(crate) struct Prepared {
    /// The checkout: paths inside it are said relative to it (an organisation's is a temporary
    /// folder, gone once the command ends).
    root: PathBuf,
    config: config::AuditConfig,
    secrets: SigningSecrets,
    wf: workflows::WorkflowAudit,
    keys: Option<crate::trust::keys::TrustedKeys>,
    report: AuditReport,
}

impl Prepared {
    /// Audits the workflows under `root` (with its `.github/warden.toml`).
    pub(crate) fn new(
        root: &std::path::Path,
        secrets: &SigningSecrets,
        fallback_tag_patterns: &[String],
        fail_on: Severity,
    ) -> Result<Prepared> {
        // `.github/warden.toml`: more key names and signing actions, and suppressions.
        let config = config::AuditConfig::load(root)?;
        let mut secrets = secrets.clone();
        secrets.extra.extend(config.secrets.iter().cloned());
        secrets.only.extend(config.only_secrets.iter().cloned());
        secrets.actions.extend(config.actions.iter().cloned());
        let mut wf = workflows::audit_workflows(root, &secrets, &rules::workflow_checks())?;
        // The settings audit judges stored secrets with the keys the workflows showed.
        secrets.found.extend(wf.keys.iter().cloned());
        let patterns = if wf.tag_patterns.is_empty() {
            fallback_tag_patterns.to_vec()
        } else {
            wf.tag_patterns.clone()
        };
        // The repository's own keys/ verify its published releases; a folder that does not
        // load, or a signing workflow naming a revoked key, is a finding of its own.
        let keys_stage = keys::audit_keys(root, &wf);
        wf.findings.extend(keys_stage.findings);
        let keys = keys_stage.keys;
        let report = AuditReport {
            findings: std::mem::take(&mut wf.findings),
            fail_on,
            repository: None,
            release_tag_patterns: patterns,
            workflows: wf.workflows.clone(),
            snapshot: None,
            suppressed: Vec::new(),
            baseline: None,
            coverage: std::mem::take(&mut wf.coverage),
            sources: None,
        };
        Ok(Prepared {
            root: root.to_path_buf(),
            config,
            secrets,
            wf,
            keys,
            report,
        })
    }

    /// Whether the repository holds no signing key: no job holds one, it commits none (`keys/`,
    /// `.github/*.pub`, a `.pub` at its root), and no release read was signed.
    fn holds_no_key(&self, settings: &[Finding]) -> bool {
        let signed_release = settings.iter().any(|f| {
            let id = f.rule.id();
            id.starts_with("release-") && !matches!(id, "release-unsigned" | "release-mutable")
        });
        self.wf.signing_jobs.is_empty()
            && !signed_release
            && inventory::facts::committed_keys(&self.root, self.keys.as_ref(), &[]).is_empty()
    }

    /// What the settings audit of `repo` needs.
    pub(crate) fn settings_input<'a>(
        &'a self,
        repo: &'a str,
        releases: usize,
        deep: bool,
    ) -> SettingsInput<'a> {
        SettingsInput {
            keys: self.keys.as_ref(),
            releases,
            deep,
            repo,
            signing_jobs: &self.wf.signing_jobs,
            tag_patterns: &self.report.release_tag_patterns,
            secrets: &self.secrets,
            checks: rules::settings_checks(),
        }
    }

    /// The report: the workflow findings, `settings` (the settings audit's, of `repository`),
    /// suppressions applied, sorted.
    pub(crate) fn finish(
        self,
        repository: Option<&str>,
        mut settings: Vec<Finding>,
    ) -> AuditReport {
        // Severity means reach: settings that protect no key are `info`, said once.
        let no_key = repository.is_some() && self.holds_no_key(&settings);
        let mut report = self.report;
        if no_key {
            report.coverage.holds_no_key = true;
            for f in settings.iter_mut().filter(|f| rules::is_settings(f.rule)) {
                f.severity = Severity::Info;
            }
        }
        report.findings.extend(settings);
        let inside = format!("{}/", self.root.display());
        if inside != "./" && inside != "/" {
            for f in &mut report.findings {
                f.message = f.message.replace(&inside, "");
                if let Some(d) = f.subject.detail.as_mut() {
                    *d = d.replace(&inside, "");
                }
            }
        }
        report.repository = repository.map(str::to_string);
        let (y, m, d) = crate::util::today();
        let (active, suppressed) = self.config.apply(
            std::mem::take(&mut report.findings),
            &format!("{y:04}-{m:02}-{d:02}"),
        );
        report.findings = active;
        report.suppressed = suppressed;
        report.sort();
        report
    }
}

/// Audits the workflows, then the settings from the request's source; findings sorted.
pub fn run(req: &AuditRequest) -> Result<AuditReport> {
    let repo = match (&req.settings, &req.repository) {
        (SettingsSource::Offline | SettingsSource::NoToken, _) => None,
        (_, Some(repo)) => Some(repo.as_str()),
        (source, None) => return Err(Error::Usage(needs_repository(source).into())),
    };
    let Some(repo) = repo else {
        let prepared = Prepared::new(
            &req.root,
            &req.secrets,
            &req.fallback_tag_patterns,
            req.fail_on,
        )?;
        let settings = match req.settings {
            SettingsSource::NoToken => "settings not audited: no GH_TOKEN or GITHUB_TOKEN (set one to audit them through the API)",
            _ => "settings not audited (--offline)",
        };
        let mut report = prepared.finish(None, Vec::new());
        report.sources = Some(format!("{}; {settings}", checkout_words(&req.root)));
        return Ok(report);
    };
    let mut snapshot = None;
    let (found, sources) = match &req.settings {
        SettingsSource::Snapshot(dir) => {
            let prepared = Prepared::new(
                &req.root,
                &req.secrets,
                &req.fallback_tag_patterns,
                req.fail_on,
            )?;
            let input = prepared.settings_input(repo, req.releases, req.deep);
            let found = futures::executor::block_on(settings::audit(
                &SnapshotSource { dir: dir.clone() },
                &input,
            ));
            let sources = format!(
                "{}; settings of {repo} from the snapshot {}",
                checkout_words(&req.root),
                dir.display()
            );
            (prepared.finish(Some(repo), found), sources)
        }
        SettingsSource::Live(session) => {
            let (report, sources) = live(req, repo, session, session.api())?;
            (report, sources)
        }
        SettingsSource::Record(session, out) => {
            let recorder = Recorder::new(session.api());
            let (report, sources) = live(req, repo, session, &recorder)?;
            snapshot = Some((out.clone(), recorder.save(out)?));
            (report, sources)
        }
        SettingsSource::Offline | SettingsSource::NoToken => unreachable!("handled above"),
    };
    let mut report = found;
    report.snapshot = snapshot;
    report.sources = Some(sources);
    Ok(report)
}

/// "workflows from the checkout (DIR)".
fn checkout_words(root: &std::path::Path) -> String {
    format!("workflows from the checkout ({})", root.display())
}

/// The audit of `repo` through `api`: the repository must exist for the token; its workflows
/// come from the checkout when the checkout is of `repo`, else from its default branch.
fn live<S: crate::github::ApiSource>(
    req: &AuditRequest,
    repo: &str,
    session: &Session,
    api: &S,
) -> Result<(AuditReport, String)> {
    let seen = session.block_on(crate::github::repository::read_repository(api, repo));
    session.check_api()?;
    let default_branch = match seen {
        Ok(r) => r.default_branch,
        Err(e) if e.status == 404 => {
            return Err(Error::Usage(format!(
                "no repository {repo}, or the token cannot see it: check the name{}, or the token's repository access",
                req.repository_from
                    .map(|from| format!(" (from {from})"))
                    .unwrap_or_default()
            )))
        }
        // Anything else is for the settings reads to report, each with what it needs.
        Err(_) => None,
    };
    let fetched;
    let (root, workflows_words, oversized) = match checkout_of(&req.root, repo) {
        Ok(()) => (req.root.clone(), checkout_words(&req.root), Vec::new()),
        Err(why) => {
            fetched = tempfile::Builder::new()
                .prefix(".warden-repo-")
                .tempdir()
                .map_err(|e| Error::Usage(format!("a temporary folder: {e}")))?;
            let files = session.block_on(crate::github::org::fetch_audit_files(
                api,
                repo,
                fetched.path(),
                None,
            ));
            session.check_api()?;
            let files =
                files.map_err(|e| Error::Usage(format!("reading the workflows of {repo}: {e}")))?;
            let branch = default_branch.unwrap_or_else(|| "HEAD".into());
            (
                fetched.path().to_path_buf(),
                format!("workflows of {repo}'s default branch ({branch}) through the API, {why}"),
                files.oversized,
            )
        }
    };
    let prepared = Prepared::new(&root, &req.secrets, &req.fallback_tag_patterns, req.fail_on)?;
    let input = prepared.settings_input(repo, req.releases, req.deep);
    let mut found = session.block_on(settings::audit(api, &input));
    session.check_api()?;
    found.extend(
        oversized
            .iter()
            .map(|(path, size)| rules::unverifiable::oversized(path, *size)),
    );
    let sources = format!("{workflows_words}; settings of {repo} through the API");
    Ok((prepared.finish(Some(repo), found), sources))
}

/// Whether `root` is a checkout of `repo` (it has `.git`, `.github/` or `keys/`, and its origin
/// remote, if it says, names `repo`), else why not.
fn checkout_of(root: &std::path::Path, repo: &str) -> std::result::Result<(), String> {
    if ![".git", ".github", "keys"]
        .iter()
        .any(|d| root.join(d).exists())
    {
        return Err(format!(
            "as {} is not a checkout (no .git, .github or keys)",
            root.display()
        ));
    }
    match crate::github::repository_name(None, root) {
        Some(origin) if !origin.eq_ignore_ascii_case(repo) => {
            Err(format!("as the checkout {} is of {origin}", root.display()))
        }
        _ => Ok(()),
    }
}

fn needs_repository(source: &SettingsSource) -> &'static str {
    match source {
        SettingsSource::Snapshot(_) => "--snapshot: name the repository with --repo OWNER/NAME",
        SettingsSource::Record(..) => "pass --repo OWNER/NAME",
        _ => "cannot tell which repository to audit: pass --repo OWNER/NAME (or --offline)",
    }
}
