//! `warden known-issues lint`: everything that can be wrong with a registry, each problem with
//! file, line and column.

use std::path::Path;

use serde::Serialize;

use super::diagnostic::Diagnostic;
use super::matcher::Matcher;
use super::schema::{Entry, MatchKind, Registry, SETTINGS_FILE};
use crate::files::guarded::read_text_inside;
use crate::files::paths::is_plain_relative;

fn outside_message(field: &str, rel: &str) -> String {
    format!("{field} {rel:?} must be a relative path inside the repository (no `..`, not absolute)")
}

/// Today's date as (year, month, day), UTC.
pub fn today() -> (i64, u8, u8) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    civil_from_days(secs.div_euclid(86_400))
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u8, u8) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// What `warden known-issues lint` found: how many entries loaded, and every problem.
#[derive(Clone, Debug, Serialize)]
pub struct LintReport {
    pub entries: usize,
    pub problems: Vec<Diagnostic>,
}

/// Loads the registry in `dir` and lints it against the repository at `root`.
pub fn lint_registry(dir: &Path, root: &Path) -> LintReport {
    let (registry, problems) = Registry::load(dir);
    LintReport {
        entries: registry.entries.len(),
        problems: lint(&registry, root, problems),
    }
}

/// Lints a loaded registry against the repository at `root` (paths in `where` and `coverage` are
/// relative to it). `load_problems` are the schema errors from loading.
pub fn lint(registry: &Registry, root: &Path, load_problems: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out = load_problems;
    let today = today();
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
        lint_where(entry, root, &mut at);
        lint_coverage(entry, root, &mut at);
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
fn lint_where(entry: &Entry, root: &Path, at: &mut Report) {
    for loc in &entry.data.locations {
        let rel = loc.path.get_ref();
        // Registry paths come from pull requests: only plain relative paths inside the
        // repository are read, so an entry cannot make CI read (or probe) a file elsewhere.
        if !is_plain_relative(rel) {
            at(loc.path.span().start, outside_message("where.path", rel));
            continue;
        }
        let file = root.join(rel);
        match read_text_inside(root, &file) {
            Err(_) if !file.exists() => at(
                loc.path.span().start,
                format!("where.path {rel:?} does not exist in the repository"),
            ),
            Err(_) => {
                if let Some(sym) = &loc.symbol {
                    at(
                        sym.span().start,
                        format!(
                            "where.symbol {:?}: {rel:?} is not a readable text file",
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
fn lint_coverage(entry: &Entry, root: &Path, at: &mut Report) {
    for cov in &entry.data.coverage {
        let rel = cov.path.get_ref();
        if !is_plain_relative(rel) {
            at(cov.path.span().start, outside_message("coverage.path", rel));
            continue;
        }
        match read_text_inside(root, &root.join(rel)) {
            Err(_) => at(
                cov.path.span().start,
                format!("coverage.path {rel:?} does not exist in the repository"),
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
        if test.ends_with(')') && test.contains(" (") {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_422), (2025, 11, 30));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
