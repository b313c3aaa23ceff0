//! `warden check`: every offline check of a repository, one line each. Later checks (known-issues
//! registry, generated docs, workflow audit) register here too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::audit::workflows::audit_workflows;
use crate::audit::{Severity, SigningSecrets};
use crate::known_issues::{self, render, Registry};
use crate::release::verify::{public_key_files, read_public_key};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    /// The check's id, e.g. `keys`.
    pub check: &'static str,
    /// What was checked: a file or a setting.
    pub subject: String,
    pub passed: bool,
    pub detail: String,
}

/// All checks of the repository at `root`.
pub fn run(root: &Path) -> Vec<CheckLine> {
    let mut lines = check_keys(root);
    lines.extend(check_no_secret_keys(root));
    lines.extend(check_known_issues(root));
    lines.extend(check_workflows(root));
    lines.extend(check_settings(root));
    lines
}

/// With a token (GH_TOKEN, else GITHUB_TOKEN): the online settings audit. A finding at medium or
/// above, unverifiable ones included, fails the check. Without a token this check is not run: it
/// is the one check that needs the network.
pub fn check_settings(root: &Path) -> Vec<CheckLine> {
    use crate::github::{api_url, repository_name, token_from_env, LiveApi, RetryPolicy};
    let Some(token) = token_from_env() else {
        return Vec::new();
    };
    let line = |subject: String, passed: bool, detail: String| CheckLine {
        check: "settings",
        subject,
        passed,
        detail,
    };
    let Some(repo) = repository_name(None, root) else {
        return vec![line("GitHub settings".into(), false, "a token is set but the repository is unknown: set GITHUB_REPOSITORY or an origin remote on github.com".into())];
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return vec![line(
                repo,
                false,
                format!("cannot start the async runtime: {e}"),
            )]
        }
    };
    let _entered = runtime.enter();
    let api = match LiveApi::new(&api_url(None), Some(&token), RetryPolicy::default()) {
        Ok(a) => a,
        Err(e) => return vec![line(repo, false, e)],
    };
    let secrets = SigningSecrets::default();
    let wf = audit_workflows(root, &secrets);
    let patterns = if wf.tag_patterns.is_empty() {
        vec!["v*".to_string()]
    } else {
        wf.tag_patterns.clone()
    };
    let input = crate::audit::settings::SettingsInput {
        repo: &repo,
        signing_jobs: &wf.signing_jobs,
        tag_patterns: &patterns,
        secrets: &secrets,
    };
    let findings = runtime.block_on(crate::audit::settings::audit_settings(&api, &input));
    let failing: Vec<_> = findings
        .iter()
        .filter(|f| f.severity >= Severity::Medium)
        .collect();
    if failing.is_empty() {
        return vec![line(
            repo,
            true,
            "tag ruleset, signing environments and secrets: no finding at medium or above".into(),
        )];
    }
    failing
        .iter()
        .map(|f| {
            line(
                f.location.to_string(),
                false,
                format!("{}: {}", f.id, f.message),
            )
        })
        .collect()
}

/// Directories never searched for secret keys: git's store and build output.
const NOT_SEARCHED: &[&str] = &[".git", "target", "node_modules"];

/// No minisign secret key anywhere in the repository (files of at most 64 KiB are read; a key is
/// a few hundred bytes). Tracked or not: an ignored key file is one `git add -f` away.
pub fn check_no_secret_keys(root: &Path) -> Vec<CheckLine> {
    use crate::release::keys::{find_secret_key, SecretKeyProtection};
    let rel = |p: &Path| -> String { p.strip_prefix(root).unwrap_or(p).display().to_string() };
    let mut read = 0usize;
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_dir()
                    && NOT_SEARCHED.contains(&e.file_name().to_string_lossy().as_ref()))
        });
    for entry in walk.filter_map(|e| e.ok()) {
        let small = entry
            .metadata()
            .is_ok_and(|m| m.is_file() && m.len() <= crate::fsutil::SMALL_FILE_CAP);
        if !small {
            continue;
        }
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        read += 1;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Some((line, protection)) = find_secret_key(text) {
            let kind = match protection {
                SecretKeyProtection::Encrypted => "an encrypted",
                SecretKeyProtection::Unencrypted => "an unencrypted",
            };
            out.push(CheckLine {
                check: "secret-keys",
                subject: format!("{}:{line}", rel(entry.path())),
                passed: false,
                detail: format!("{kind} minisign secret key is in the repository: delete it, generate a new key pair (`warden keygen`), and remove the old key from git history"),
            });
        }
    }
    if out.is_empty() {
        out.push(CheckLine {
            check: "secret-keys",
            subject: "./".into(),
            passed: true,
            detail: format!("no minisign secret key in {read} files read"),
        });
    }
    out
}

/// The offline workflow audit: a finding at medium or above fails the check.
pub fn check_workflows(root: &Path) -> Vec<CheckLine> {
    let audit = audit_workflows(root, &SigningSecrets::default());
    let failing: Vec<_> = audit
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Medium)
        .collect();
    if failing.is_empty() {
        let detail = match audit.workflows.len() {
            0 => "no workflows in .github/workflows".to_string(),
            n => format!(
                "{n} workflow{} audited, no finding at medium or above",
                if n == 1 { "" } else { "s" }
            ),
        };
        return vec![CheckLine {
            check: "workflows",
            subject: ".github/workflows/".into(),
            passed: true,
            detail,
        }];
    }
    failing
        .iter()
        .map(|f| CheckLine {
            check: "workflows",
            subject: f.location.to_string(),
            passed: false,
            detail: format!("{}: {}", f.id, f.message),
        })
        .collect()
}

/// The registry lints clean and the generated doc matches it.
pub fn check_known_issues(root: &Path) -> Vec<CheckLine> {
    let dir = root.join(known_issues::DEFAULT_DIR);
    let line = |check: &'static str, subject: String, passed: bool, detail: String| CheckLine {
        check,
        subject,
        passed,
        detail,
    };
    if !dir.is_dir() {
        return vec![line(
            "known-issues",
            "known_issues/".into(),
            true,
            "no registry in this repository (nothing to check)".into(),
        )];
    }
    let (registry, problems) = Registry::load(&dir);
    let problems = known_issues::lint(&registry, root, problems);
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let mut out = Vec::new();
    if problems.is_empty() {
        out.push(line(
            "known-issues",
            "known_issues/".into(),
            true,
            format!("{} entries lint clean", registry.entries.len()),
        ));
    } else {
        for p in &problems {
            let at = if p.line > 0 {
                format!(":{}:{}", p.line, p.column)
            } else {
                String::new()
            };
            out.push(line(
                "known-issues",
                format!("{}{at}", rel(&p.path)),
                false,
                p.message.clone(),
            ));
        }
        return out;
    }
    let doc = root.join(&registry.settings.doc);
    let fresh = render::render_doc(&registry);
    let in_sync = std::fs::read_to_string(&doc).is_ok_and(|d| d == fresh);
    out.push(line(
        "docs",
        registry.settings.doc.clone(),
        in_sync,
        if in_sync {
            "in sync with the registry".into()
        } else {
            "out of date: run `warden known-issues render`".into()
        },
    ));
    out
}

/// Every `keys/*.pub` parses as a minisign public key, and no two share a key id.
pub fn check_keys(root: &Path) -> Vec<CheckLine> {
    let dir = root.join("keys");
    let line = |subject: String, passed: bool, detail: String| CheckLine {
        check: "keys",
        subject,
        passed,
        detail,
    };
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
        match read_public_key(file) {
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
    out
}
