//! `warden known-issues lint`: everything that can be wrong with a registry, each problem with
//! file, line and column.

use crate::util::today;
use std::path::Path;

use serde::Serialize;

use super::diagnostic::Diagnostic;
use super::matcher::Matcher;
use super::schema::{Entry, IssueStatus, MatchKind, Registry, SETTINGS_FILE};
use crate::files::guarded::read_text_inside;
use crate::files::paths::is_repo_relative;
use crate::files::tracked::Tracked;

/// A source file a `where` or `coverage` path names is searched whole: 16 MiB is far past any
/// hand-written source file.
const SOURCE_CAP: u64 = 16 << 20;

fn outside_message(field: &str, rel: &str) -> String {
    format!("{field} {rel:?} must be a relative path inside the repository (no `..`, no `.git`, not absolute)")
}

/// Why a source file a registry entry names was not read.
enum Unread {
    /// Not a plain path inside the repository (the message says which rule).
    Outside(String),
    Missing,
    Unreadable(String),
}

/// The text of `rel` under `root`, read only if the pull request may make CI read it: a plain
/// relative path without `.git`, resolving (through links) to a file that is also such a path,
/// and tracked by git in a work tree. Lint prints what it does not find in the file, so any other
/// file would be a read oracle.
fn read_source(root: &Path, rel: &str, field: &str, tracked: &Tracked) -> Result<String, Unread> {
    if !is_repo_relative(rel) {
        return Err(Unread::Outside(outside_message(field, rel)));
    }
    let file = root.join(rel);
    if std::fs::symlink_metadata(&file).is_err() {
        return Err(Unread::Missing);
    }
    let real_rel = std::fs::canonicalize(&file)
        .ok()
        .zip(std::fs::canonicalize(root).ok())
        .and_then(|(real, root)| real.strip_prefix(root).ok().map(Path::to_path_buf));
    let Some(real_rel) = real_rel.filter(|r| r.to_str().is_some_and(is_repo_relative)) else {
        return Err(Unread::Outside(format!(
            "{field} {rel:?} resolves outside the repository or into .git"
        )));
    };
    for path in [Path::new(rel), real_rel.as_path()] {
        tracked
            .check(path)
            .map_err(|why| Unread::Outside(format!("{field} {rel:?} {why}: not read")))?;
    }
    read_text_inside(root, &file, SOURCE_CAP).map_err(|e| Unread::Unreadable(e.to_string()))
}

/// What `warden known-issues lint` found: how many entries loaded, and every problem.
#[derive(Clone, Debug, Serialize)]
pub struct LintReport {
    pub(crate) entries: usize,
    pub(crate) problems: Vec<Diagnostic>,
}

/// Loads the registry in `dir` and lints it against the repository at `root`. `allow_draft`
/// accepts entries `known-issues update` drafted (on a branch, before they are written up).
pub fn lint_registry(dir: &Path, root: &Path, allow_draft: bool) -> LintReport {
    let (registry, problems) = Registry::load(dir);
    LintReport {
        entries: registry.entries.len(),
        problems: lint(&registry, root, problems, allow_draft),
    }
}

/// Lints a loaded registry against the repository at `root` (paths in `where` and `coverage` are
/// relative to it). `load_problems` are the schema errors from loading.
pub fn lint(
    registry: &Registry,
    root: &Path,
    load_problems: Vec<Diagnostic>,
    allow_draft: bool,
) -> Vec<Diagnostic> {
    let mut out = load_problems;
    let today = today();
    let tracked = Tracked::of(root);
    // Ids are file stems, so they are unique per folder; catch case-only clashes.
    for pair in registry.entries.windows(2) {
        if pair[0].id.eq_ignore_ascii_case(&pair[1].id) {
            out.push(Diagnostic::new(
                &pair[1].path,
                1,
                1,
                format!(
                    "duplicate id {:?} (also {})",
                    pair[1].id,
                    pair[0].path.display()
                ),
            ));
        }
    }
    for entry in &registry.entries {
        let mut at = |offset: usize, msg: String| {
            let (l, c) = entry.line_col(offset);
            out.push(Diagnostic::new(&entry.path, l, c, msg));
        };
        if entry.data.status == IssueStatus::Draft && !allow_draft {
            let at_status = entry
                .source
                .match_indices("status")
                .map(|(i, _)| i)
                .find(|&i| i == 0 || entry.source[..i].ends_with('\n'))
                .unwrap_or(0);
            let by = match entry.data.drafted_by {
                Some(by) => format!("a draft written by `{}`", by.command()),
                None => "a draft".to_string(),
            };
            at(at_status, format!("{by}: fill in title, why and removal, then set status = \"open\" (or lint with --allow-draft on a work branch)"));
        }
        lint_where(entry, root, &tracked, &mut at);
        lint_coverage(entry, root, &tracked, &mut at);
        if let Some(review) = &entry.data.review_by {
            if let Some(d) = review.get_ref().date {
                if (i64::from(d.year), d.month, d.day) < today {
                    at(review.span().start, format!("review_by {d} is in the past: review the entry and move the date (or remove the entry)"));
                }
            }
        }
        lint_exclusions(entry, registry, &mut at);
    }
    lint_rules(registry, &mut out);
    out.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    out.dedup();
    out
}

/// Where a problem of an entry is reported: a byte offset in its file, and the message.
type Report<'a> = dyn FnMut(usize, String) + 'a;

/// `where` paths exist inside the repository and hold their `symbol`.
fn lint_where(entry: &Entry, root: &Path, tracked: &Tracked, at: &mut Report) {
    for loc in &entry.data.locations {
        let rel = loc.path.get_ref();
        // Registry paths come from pull requests: only tracked files inside the repository are
        // read, so an entry cannot make CI read (or probe) a file elsewhere.
        match read_source(root, rel, "where.path", tracked) {
            Err(Unread::Outside(why)) => at(loc.path.span().start, why),
            Err(Unread::Missing) => at(
                loc.path.span().start,
                format!("where.path {rel:?} does not exist in the repository"),
            ),
            Err(Unread::Unreadable(why)) => {
                if let Some(sym) = &loc.symbol {
                    at(
                        sym.span().start,
                        format!(
                            "where.symbol {:?}: {rel:?} is not a readable text file ({why})",
                            sym.get_ref()
                        ),
                    );
                }
            }
            Ok(text) => {
                if let Some(sym) = &loc.symbol {
                    if !text.contains(sym.get_ref().as_str()) {
                        at(
                            sym.span().start,
                            format!("where.symbol {:?} does not occur in {rel}", sym.get_ref()),
                        );
                    }
                }
            }
        }
    }
}

/// `coverage` paths exist inside the repository and define `fn <test>`.
fn lint_coverage(entry: &Entry, root: &Path, tracked: &Tracked, at: &mut Report) {
    for cov in &entry.data.coverage {
        let rel = cov.path.get_ref();
        match read_source(root, rel, "coverage.path", tracked) {
            Err(Unread::Outside(why)) => at(cov.path.span().start, why),
            Err(Unread::Missing) => at(
                cov.path.span().start,
                format!("coverage.path {rel:?} does not exist in the repository"),
            ),
            Err(Unread::Unreadable(why)) => at(
                cov.path.span().start,
                format!("coverage.path {rel:?} is not a readable text file ({why})"),
            ),
            Ok(text) => {
                let name = cov.test.get_ref();
                let defined = regex::Regex::new(&format!(r"\bfn\s+{}\s*[<(]", regex::escape(name)))
                    .is_ok_and(|re| re.is_match(&text));
                if !defined {
                    at(
                        cov.test.span().start,
                        format!("coverage.test {name:?}: no `fn {name}` in {rel}"),
                    );
                }
            }
        }
    }
}

/// Each exclusion names a suite, a test without the client suffix, and some client.
fn lint_exclusions(entry: &Entry, registry: &Registry, at: &mut Report) {
    for (i, ex) in entry.data.exclude.iter().enumerate() {
        let test = ex.test.get_ref();
        if ex.suite.trim().is_empty() || test.trim().is_empty() {
            at(
                ex.test.span().start,
                format!("exclude[{i}]: suite and test must not be empty"),
            );
        }
        // ` (client)` at the end, naming one of its clients (reth's names carry other
        // parenthesised parts: `Re-Org Out (Cancun)`).
        let suffix = test
            .strip_suffix(')')
            .and_then(|t| t.rsplit_once(" ("))
            .map(|(_, c)| c);
        let clients = entry.clients(ex, &registry.settings);
        if suffix.is_some_and(|c| clients.iter().any(|k| k == c)) {
            at(ex.test.span().start, format!("exclude[{i}]: write the test name without the client suffix; list clients in `clients`"));
        }
        if entry.clients(ex, &registry.settings).is_empty() {
            at(
                ex.test.span().start,
                format!(
                    "exclude[{i}]: no clients: set `clients` here or default `clients` in {SETTINGS_FILE}"
                ),
            );
        }
    }
}

/// Globs and signatures compile, and no test is excluded twice.
fn lint_rules(registry: &Registry, out: &mut Vec<Diagnostic>) {
    let (matcher, errors) = Matcher::compile(registry);
    for (entry, i, msg) in errors {
        let ex = &entry.data.exclude[i];
        let offset = ex
            .signature
            .as_ref()
            .map_or(ex.test.span().start, |s| s.span().start);
        let (l, c) = entry.line_col(offset);
        out.push(Diagnostic::new(
            &entry.path,
            l,
            c,
            format!("exclude[{i}]: {msg}"),
        ));
    }
    // The same test excluded twice: exact names against every other rule.
    for (i, a) in matcher.rules.iter().enumerate() {
        if a.exclusion.match_kind != MatchKind::Exact {
            continue;
        }
        for (j, b) in matcher.rules.iter().enumerate() {
            // Each exact/exact pair once; pattern rules against every exact name.
            if i == j || (b.exclusion.match_kind == MatchKind::Exact && j < i) {
                continue;
            }
            let shared_client = a.clients.is_empty()
                || b.clients.is_empty()
                || a.clients.iter().any(|c| b.clients.contains(c));
            if shared_client
                && a.exclusion.suite == b.exclusion.suite
                && b.matches_name(a.pattern())
            {
                let (l, c) = b.entry.line_col(b.exclusion.test.span().start);
                out.push(Diagnostic::new(
                    &b.entry.path,
                    l,
                    c,
                    format!(
                        "{}/{} is also excluded by {} ({})",
                        a.exclusion.suite,
                        a.pattern(),
                        a.entry.id,
                        a.entry.path.display()
                    ),
                ));
            }
        }
    }
}
