//! `warden check`: every check of a repository, one line each: its public keys, no committed
//! secret key, the known-issues registry and its doc, and the audit (workflows always; settings
//! when the request has a session). Renderers live in `crate::report::check`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::audit::findings::{AuditReport, Finding, Location, Severity};
use crate::audit::secrets::SigningSecrets;
use crate::audit::{self, AuditRequest, SettingsSource};
use crate::error::Result;
use crate::files::paths::under_root;
use crate::github::session::Session;
use crate::known_issues::doc;
use crate::known_issues::lint::lint;
use crate::known_issues::schema::{Registry, DEFAULT_DIR};
use crate::minisign::keys::public_key_files;
use crate::minisign::keys::{PublicKey, SecretKeyProtection};
use crate::release::key_scan::find_secret_key_in;
use crate::trust::keys::TrustedKeys;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    /// The check's id, e.g. `keys`.
    pub(crate) check: &'static str,
    /// What was checked: a file or a setting.
    pub(crate) subject: String,
    pub(crate) passed: bool,
    pub(crate) detail: String,
}

impl CheckLine {
    fn new(
        check: &'static str,
        subject: impl Into<String>,
        passed: bool,
        detail: impl Into<String>,
    ) -> Self {
        CheckLine {
            check,
            subject: subject.into(),
            passed,
            detail: detail.into(),
        }
    }
}

/// Every line of `warden check`, and the root they are about (annotations name files under it).
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    #[serde(rename = "checks")]
    pub(crate) lines: Vec<CheckLine>,
    #[serde(skip)]
    pub(crate) root: PathBuf,
}

impl CheckReport {
    pub(crate) fn failed(&self) -> usize {
        self.lines.iter().filter(|l| !l.passed).count()
    }
}

/// The online part of `warden check`: a session, and the repository when it is known.
#[derive(Debug)]
pub struct Online<'a> {
    pub session: &'a Session,
    pub repository: Option<String>,
}

/// All checks of the repository at `root`. With `online`, the audit reads the settings too.
pub fn run(root: &Path, online: Option<Online>) -> Result<CheckReport> {
    let mut lines = check_keys(root);
    lines.extend(check_no_secret_keys(root));
    lines.extend(check_binstall(root));
    lines.extend(check_known_issues(root));
    let (settings, repository) = match &online {
        Some(Online {
            session,
            repository: Some(repo),
        }) => (SettingsSource::Live(session), Some(repo.clone())),
        _ => (SettingsSource::Offline, None),
    };
    let report = audit::run(&AuditRequest {
        root: root.to_path_buf(),
        secrets: SigningSecrets::default(),
        fallback_tag_patterns: vec!["v*".into()],
        repository,
        repository_from: None,
        settings,
        releases: 0,
        deep: false,
        fail_on: Severity::Medium,
    })?;
    lines.extend(workflow_lines(&report));
    if let Some(online) = &online {
        lines.extend(settings_lines(&report, online.repository.as_deref()));
    }
    Ok(CheckReport {
        lines,
        root: root.to_path_buf(),
    })
}

/// The audit's findings at `fail_on` or above, of one kind of location.
fn failing(report: &AuditReport, api: bool) -> Vec<&Finding> {
    report
        .findings
        .iter()
        .filter(|f| f.severity >= report.fail_on)
        .filter(|f| matches!(f.location, Location::Api { .. }) == api)
        // The keys section says this already, in more detail.
        .filter(|f| f.rule != crate::audit::rules::keys_folder_inconsistent::RULE)
        .collect()
}

fn finding_line(check: &'static str, f: &Finding) -> CheckLine {
    CheckLine::new(
        check,
        f.location.to_string(),
        false,
        format!("{}: {}", f.rule, f.message),
    )
}

/// The workflow audit: a finding at medium or above fails the check.
fn workflow_lines(report: &AuditReport) -> Vec<CheckLine> {
    let failing = failing(report, false);
    if !failing.is_empty() {
        return failing
            .iter()
            .map(|f| finding_line("workflows", f))
            .collect();
    }
    let detail = match report.workflows.len() {
        0 => "no workflows in .github/workflows".to_string(),
        n => format!(
            "{n} workflow{} audited, no finding at medium or above",
            if n == 1 { "" } else { "s" }
        ),
    };
    vec![CheckLine::new(
        "workflows",
        ".github/workflows/",
        true,
        detail,
    )]
}

/// The settings audit: a finding at medium or above, unverifiable ones included, fails the check.
fn settings_lines(report: &AuditReport, repo: Option<&str>) -> Vec<CheckLine> {
    let Some(repo) = repo else {
        return vec![CheckLine::new("settings", "GitHub settings", false, "a token is set but the repository is unknown: set GITHUB_REPOSITORY or an origin remote on github.com")];
    };
    let failing = failing(report, true);
    if failing.is_empty() {
        return vec![CheckLine::new(
            "settings",
            repo,
            true,
            "tag ruleset, signing environments and secrets: no finding at medium or above",
        )];
    }
    failing
        .iter()
        .map(|f| finding_line("settings", f))
        .collect()
}

/// Build output folders: skipped at the repository root, and elsewhere only where git ignores
/// them (a `deploy/target/` that git tracks is searched).
const BUILD_OUTPUT: &[&str] = &["target", "node_modules"];

/// Whether git ignores `dir` (a path under `root`); `false` outside a work tree.
fn git_ignores(root: &Path, dir: &Path) -> bool {
    let Ok(rel) = dir.strip_prefix(root) else {
        return false;
    };
    let Some(tree) = crate::files::paths::enclosing_git_work_tree(root) else {
        return false;
    };
    crate::files::tracked::git(&tree)
        .args(["check-ignore", "-q", "--"])
        .arg(rel)
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the secret-key search passes over this folder: git's store anywhere, build output at
/// the root or where git ignores it.
fn not_searched(root: &Path, entry: &walkdir::DirEntry) -> bool {
    if entry.depth() == 0 || !entry.file_type().is_dir() {
        return false;
    }
    let name = entry.file_name();
    if name == ".git" {
        return true;
    }
    BUILD_OUTPUT.iter().any(|b| name == *b)
        && (entry.depth() == 1 || git_ignores(root, entry.path()))
}

/// No minisign secret key anywhere in the repository, in any shape it could be pasted (see
/// `release::key_scan`). Every regular file is read as bytes, streamed. Tracked or not: an
/// ignored key file is one `git add -f` away.
pub(crate) fn check_no_secret_keys(root: &Path) -> Vec<CheckLine> {
    let rel = |p: &Path| -> String { p.strip_prefix(root).unwrap_or(p).display().to_string() };
    let mut out = Vec::new();
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !not_searched(root, e));
    for entry in walk {
        match entry {
            Ok(e) if e.file_type().is_file() => files.push(e.into_path()),
            Ok(_) => {}
            // Fail closed: a folder that could not be listed was not searched.
            Err(e) => out.push(CheckLine::new(
                "secret-keys",
                e.path().map_or("./".into(), &rel),
                false,
                format!("could not be searched for secret keys: {e}"),
            )),
        }
    }
    // Both cores: each file is streamed once, in 1 MiB chunks.
    let found = crate::util::parallel_map(&files, |path| {
        // Opened without blocking and checked on the handle: a FIFO is never read.
        crate::files::guarded::open_regular(path).and_then(find_secret_key_in)
    });
    let read = files.len();
    for (path, found) in files.iter().zip(found) {
        let line = match found {
            Ok(None) => continue,
            Ok(Some((line, protection))) => {
                let kind = match protection {
                    SecretKeyProtection::Encrypted => "an encrypted",
                    SecretKeyProtection::Unencrypted => "an unencrypted",
                };
                CheckLine::new(
                    "secret-keys",
                    format!("{}:{line}", rel(path)),
                    false,
                    format!("{kind} minisign secret key is in the repository: delete it, generate a new key pair (`warden keygen`), and remove the old key from git history"),
                )
            }
            // Fail closed: a file that could not be searched is not a pass.
            Err(e) => CheckLine::new(
                "secret-keys",
                rel(path),
                false,
                format!("could not be searched for secret keys: {e}"),
            ),
        };
        out.push(line);
    }
    if out.is_empty() {
        out.push(CheckLine::new(
            "secret-keys",
            "./",
            true,
            format!(
                "no minisign secret key in {}",
                crate::markup::count(read, "file read", "files read")
            ),
        ));
    }
    out
}

/// `cargo binstall` checks what it installs: a binstall section signs with a key of `keys/`.
pub(crate) fn check_binstall(root: &Path) -> Vec<CheckLine> {
    let Some(text) = crate::release::binstall::read_manifest(root) else {
        return Vec::new();
    };
    let dir = under_root(root, "keys");
    let keys = TrustedKeys::load_dir(&dir).ok();
    crate::release::binstall::judge(&text, "Cargo.toml", keys.as_ref())
        .into_iter()
        .map(|l| CheckLine::new("binstall", l.subject, l.passed, l.detail))
        .collect()
}

/// The registry lints clean and the generated doc matches it.
pub(crate) fn check_known_issues(root: &Path) -> Vec<CheckLine> {
    let dir = under_root(root, DEFAULT_DIR);
    if !dir.is_dir() {
        return vec![CheckLine::new(
            "known-issues",
            "known_issues/",
            true,
            "no registry in this repository (nothing to check)",
        )];
    }
    let (registry, problems) = Registry::load(&dir);
    let problems = lint(&registry, root, problems, false);
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    if !problems.is_empty() {
        return problems
            .iter()
            .map(|p| {
                let at = if p.line > 0 {
                    format!(":{}:{}", p.line, p.column)
                } else {
                    String::new()
                };
                CheckLine::new(
                    "known-issues",
                    format!("{}{at}", rel(&p.path)),
                    false,
                    p.message.clone(),
                )
            })
            .collect();
    }
    let in_sync = doc::is_current(&registry, root, &doc::doc_path(&registry, root));
    vec![
        CheckLine::new(
            "known-issues",
            "known_issues/",
            true,
            format!("{} entries lint clean", registry.entries.len()),
        ),
        CheckLine::new(
            "docs",
            registry.settings.doc.clone(),
            in_sync,
            if in_sync {
                "in sync with the registry"
            } else {
                "out of date: run `warden known-issues render`"
            },
        ),
    ]
}

/// Every `keys/*.pub` parses as a minisign public key, and no two share a key id.
/// The lines of the keys folder's statements and policy (as `keys list` judges them): every
/// problem, or what each statement and the policy say.
fn statement_lines(root: &Path, dir: &Path) -> Vec<CheckLine> {
    let line = |subject: String, passed: bool, detail: String| {
        CheckLine::new("keys", subject, passed, detail)
    };
    let rel = |p: &Path| -> String { p.strip_prefix(root).unwrap_or(p).display().to_string() };
    let mut out = Vec::new();
    let listed = crate::trust::keys::list(dir);
    if !listed.problems.is_empty() {
        let inside = format!("{}/", dir.display());
        for problem in &listed.problems {
            let shown = problem.replace(&inside, "keys/");
            out.push(line("keys/".into(), false, shown));
        }
        return out;
    }
    if let Some(policy) = &listed.policy {
        out.push(line(
            rel(policy),
            true,
            format!(
                "a release needs {} of the {} usable signers",
                listed.threshold, listed.usable_signers
            ),
        ));
    }
    for r in &listed.revoked {
        out.push(line(
            rel(&r.file),
            true,
            format!("key {} revoked at {}: {}", r.key_id, r.revoked_at, r.reason),
        ));
    }
    for r in &listed.rotations {
        out.push(line(
            rel(&r.file),
            true,
            format!("key {} succeeds {}, signed by both", r.new, r.old),
        ));
    }
    if listed.trusted.is_empty() && !listed.revoked.is_empty() {
        out.push(line(
            "keys/".into(),
            false,
            "every key is revoked: nothing can verify a new release (make one with `warden keygen`)".into(),
        ));
    }
    out
}

pub(crate) fn check_keys(root: &Path) -> Vec<CheckLine> {
    let dir = under_root(root, "keys");
    let line = |subject: String, passed: bool, detail: String| {
        CheckLine::new("keys", subject, passed, detail)
    };
    if !dir.is_dir() {
        return vec![line(
            "keys/".into(),
            false,
            "no keys/ folder: the project's public keys go in keys/ (make a key pair with `warden keygen`)".into(),
        )];
    }
    let files = match public_key_files(&dir) {
        Ok(files) if files.is_empty() => {
            return vec![line(
                "keys/".into(),
                false,
                "no *.pub file: generate one with `warden keygen`".into(),
            )]
        }
        Ok(files) => files,
        Err(e) => return vec![line("keys/".into(), false, e.to_string())],
    };
    let rel = |p: &Path| -> String { p.strip_prefix(root).unwrap_or(p).display().to_string() };
    let mut by_id: BTreeMap<_, Vec<PathBuf>> = BTreeMap::new();
    let mut out = Vec::new();
    for file in &files {
        match PublicKey::from_file(file) {
            Ok(pk) => {
                by_id.entry(pk.key_id).or_default().push(file.clone());
                out.push(line(
                    rel(file),
                    true,
                    format!("minisign public key {}", pk.key_id),
                ));
            }
            Err(e) => {
                let msg = e.to_string();
                let shown = msg
                    .strip_prefix(&format!("{}: ", file.display()))
                    .unwrap_or(&msg)
                    .to_string();
                out.push(line(rel(file), false, shown));
            }
        }
    }
    for (id, paths) in by_id.into_iter().filter(|(_, p)| p.len() > 1) {
        let names: Vec<String> = paths.iter().map(|p| rel(p)).collect();
        out.push(line(
            "keys/".into(),
            false,
            format!("key id {id} appears in {}", names.join(", ")),
        ));
    }
    // Revocations and rotations: each statement must verify, and a key must be left to trust
    // (once the keys themselves are sound: a broken key is said once, above).
    if out.iter().any(|l| !l.passed) {
        return out;
    }
    out.extend(statement_lines(root, &dir));
    out
}
