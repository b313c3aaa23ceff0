//! Registry types and their strict TOML form (`deny_unknown_fields` everywhere; every error
//! names file, line and column).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::diagnostic::Diagnostic;

/// File name of the registry-wide settings inside the registry folder.
pub(crate) const SETTINGS_FILE: &str = "registry.toml";
/// The registry folder, relative to the repository root, when none is named.
pub const DEFAULT_DIR: &str = "known_issues";

/// One registry file is a few KiB; 1 MiB is refused unread.
const ENTRY_CAP: u64 = 1 << 20;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Settings {
    /// Clients an exclusion applies to when it names none, e.g. `["ethrex"]`.
    #[serde(default)]
    pub(crate) clients: Vec<String>,
    /// The hive suites the project runs, e.g. `["rpc-compat", "engine-cancun"]`, besides those an
    /// entry excludes tests of: a `--suite` names one of them (a typo is an error, not an empty
    /// list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) suites: Vec<String>,
    /// Where `known-issues render` writes, relative to the repository root.
    #[serde(default = "default_doc")]
    pub(crate) doc: String,
    /// Pinned upstream refs printed in reports, e.g. `hive = "a74a5a70"`.
    #[serde(default)]
    pub(crate) upstream: BTreeMap<String, String>,
}

fn default_doc() -> String {
    "docs/known_issues.md".into()
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            clients: Vec::new(),
            suites: Vec::new(),
            doc: default_doc(),
            upstream: BTreeMap::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum IssueStatus {
    #[default]
    Open,
    /// Not temporary: the entry documents a deliberate, lasting difference.
    Permanent,
    /// Written by `known-issues init`, `import` or `update` (its `drafted_by`): `why` and
    /// `removal` are still to be written. Lint refuses it unless `--allow-draft`; summaries
    /// leave it out.
    Draft,
    /// `known-issues update` removed its last exclusion because the tests pass: close the issue
    /// and delete the entry, or keep it as documentation with another status.
    Fixed,
}

impl IssueStatus {
    /// The status as written in the registry (`status = "draft"`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            IssueStatus::Open => "open",
            IssueStatus::Permanent => "permanent",
            IssueStatus::Draft => "draft",
            IssueStatus::Fixed => "fixed",
        }
    }
}

/// The command that wrote a draft (`drafted_by = "update"`), which lint names.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum DraftedBy {
    Init,
    Import,
    Update,
}

impl DraftedBy {
    pub(crate) fn command(self) -> &'static str {
        match self {
            DraftedBy::Init => "warden known-issues init",
            DraftedBy::Import => "warden known-issues import",
            DraftedBy::Update => "warden known-issues update",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MatchKind {
    #[default]
    Exact,
    Prefix,
    Glob,
}

impl MatchKind {
    /// The name as written in the registry (`match = "prefix"`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Prefix => "prefix",
            MatchKind::Glob => "glob",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// The test must fail (strict): a pass is `fixed` (the entry should go).
    #[default]
    Fail,
    /// May pass or fail; reported every run.
    Flaky,
    /// Not run at all (kept out of `--sim.limit`).
    Skip,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Location {
    pub(crate) path: Spanned<String>,
    pub(crate) symbol: Option<Spanned<String>>,
    pub(crate) note: Option<String>,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Coverage {
    pub(crate) path: Spanned<String>,
    pub(crate) test: Spanned<String>,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Exclusion {
    pub(crate) suite: String,
    pub(crate) test: Spanned<String>,
    #[serde(rename = "match", default)]
    pub(crate) match_kind: MatchKind,
    pub(crate) clients: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) expect: Expect,
    pub(crate) signature: Option<Spanned<String>>,
}

/// One known issue as written in its TOML file.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntryFile {
    pub(crate) title: String,
    #[serde(default)]
    pub(crate) status: IssueStatus,
    /// What wrote a draft: `init`, `import` or `update`.
    pub(crate) drafted_by: Option<DraftedBy>,
    pub(crate) why: String,
    pub(crate) removal: String,
    #[serde(rename = "where", default)]
    pub(crate) locations: Vec<Location>,
    #[serde(default)]
    pub(crate) coverage: Vec<Coverage>,
    #[serde(default)]
    pub(crate) links: Vec<String>,
    pub(crate) added: Option<toml::value::Datetime>,
    pub(crate) review_by: Option<Spanned<toml::value::Datetime>>,
    #[serde(default)]
    pub(crate) exclude: Vec<Exclusion>,
}

/// A loaded entry: its id (the file stem), its file and its text (for line numbers).
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    pub(crate) source: String,
    pub(crate) data: EntryFile,
}

impl Entry {
    /// 1-based line and column of a byte offset in this entry's file.
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        line_col(&self.source, offset)
    }

    /// The clients an exclusion applies to.
    pub(crate) fn clients<'a>(&'a self, ex: &'a Exclusion, settings: &'a Settings) -> &'a [String] {
        ex.clients.as_deref().unwrap_or(&settings.clients)
    }

    /// The first paragraph of `why`, for summaries.
    pub(crate) fn why_first_paragraph(&self) -> &str {
        self.data
            .why
            .trim()
            .split("\n\n")
            .next()
            .unwrap_or_default()
            .trim()
    }
}

pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[derive(Clone, Debug, Default)]
pub struct Registry {
    pub(crate) dir: PathBuf,
    pub(crate) settings: Settings,
    /// Sorted by id.
    pub(crate) entries: Vec<Entry>,
}

fn toml_diagnostic(path: &Path, text: &str, err: &toml::de::Error) -> Diagnostic {
    let (line, col) = err.span().map_or((1, 1), |s| line_col(text, s.start));
    Diagnostic::new(path, line, col, err.message().trim().to_string())
}

/// Is `id` kebab-case: lower-case ASCII letters and digits in words joined by single hyphens.
pub(crate) fn is_kebab_case(id: &str) -> bool {
    !id.is_empty()
        && id.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Why the registry folder `dir` may not be read, when it is a link (a pull request can commit
/// `known_issues -> ../../elsewhere`) whose target lies outside the folder that holds the link:
/// then lint, summary and check would read outside the checkout, and `update --write` write
/// there. A folder named directly, wherever it is, is the caller's choice.
fn linked_outside(dir: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(dir).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    let parent = crate::files::paths::parent_dir(dir);
    let (Ok(real), Ok(holder)) = (fs::canonicalize(dir), fs::canonicalize(parent)) else {
        return Some("the registry folder is a link to nothing".into());
    };
    (!real.starts_with(&holder)).then(|| {
        format!(
            "the registry folder is a link to {}, outside {}: refusing to read or write there",
            real.display(),
            holder.display()
        )
    })
}

impl Registry {
    /// Loads every `*.toml` in `dir`. Returns what loaded plus one diagnostic per problem; the
    /// registry is usable only when the list is empty.
    pub fn load(dir: &Path) -> (Registry, Vec<Diagnostic>) {
        let mut registry = Registry {
            dir: dir.to_path_buf(),
            ..Registry::default()
        };
        let mut problems = Vec::new();
        if let Some(why) = linked_outside(dir) {
            problems.push(Diagnostic::new(dir, 0, 0, why));
            return (registry, problems);
        }
        let read_dir = match fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) => {
                let why = if e.kind() == std::io::ErrorKind::NotFound {
                    "no known-issues registry here: pass --registry DIR (or --root DIR), or start one with `warden known-issues init --client NAME`".to_string()
                } else {
                    format!("cannot read the registry folder: {e}")
                };
                problems.push(Diagnostic::new(dir, 0, 0, why));
                return (registry, problems);
            }
        };
        let mut files: Vec<PathBuf> = read_dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for path in files {
            // Entries come from pull requests: no link out of the folder, no FIFO.
            let text = match crate::files::guarded::read_text_inside(dir, &path, ENTRY_CAP) {
                Ok(t) => t,
                Err(e) => {
                    problems.push(Diagnostic::new(&path, 0, 0, format!("cannot read: {e}")));
                    continue;
                }
            };
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            if path.file_name().is_some_and(|n| n == SETTINGS_FILE) {
                match toml::from_str::<Settings>(&text) {
                    // The doc is written by `render` and read by `check`: a pull request may
                    // only name a plain path inside the repository.
                    Ok(s) if !crate::files::paths::is_repo_relative(&s.doc) => {
                        problems.push(Diagnostic::new(
                            &path,
                            line_col(&text, text.find("doc").unwrap_or(0)).0,
                            1,
                            format!(
                                "doc {:?} must be a relative path inside the repository (no `..`, no `.git`, not absolute)",
                                s.doc
                            ),
                        ));
                    }
                    Ok(s) => registry.settings = s,
                    Err(e) => problems.push(toml_diagnostic(&path, &text, &e)),
                }
                continue;
            }
            if !is_kebab_case(&stem) {
                problems.push(Diagnostic::new(
                    &path,
                    1,
                    1,
                    format!("the file name {stem:?} is the entry id and must be kebab-case (e.g. rpc-compat-log-fields)"),
                ));
            }
            match toml::from_str::<EntryFile>(&text) {
                Ok(data) if one_line_fields(&data).is_some() => {
                    let (field, at) = one_line_fields(&data).unwrap_or_default();
                    let (line, column) = line_col(&text, at);
                    problems.push(Diagnostic::new(
                        &path,
                        line,
                        column,
                        format!("{field} holds a line break or control character: names and titles are one line"),
                    ));
                }
                Ok(data) => registry.entries.push(Entry {
                    id: stem,
                    path,
                    source: text,
                    data,
                }),
                Err(e) => problems.push(toml_diagnostic(&path, &text, &e)),
            }
        }
        registry.entries.sort_by(|a, b| a.id.cmp(&b.id));
        (registry, problems)
    }
}

/// The first one-line field (title, suite, test, client) holding a control character, and where:
/// these reach exclusion lists, CI logs and the PR comment line by line.
fn one_line_fields(data: &EntryFile) -> Option<(&'static str, usize)> {
    let bad = |s: &str| s.chars().any(char::is_control);
    if bad(&data.title) {
        return Some(("title", 0));
    }
    for ex in &data.exclude {
        let at = ex.test.span().start;
        if bad(&ex.suite) {
            return Some(("exclude.suite", at));
        }
        if bad(ex.test.get_ref()) {
            return Some(("exclude.test", at));
        }
        if ex.clients.iter().flatten().any(|c| bad(c)) {
            return Some(("exclude.clients", at));
        }
    }
    None
}

/// What to do when `dir` holds no registry: point at the flag and at `init`.
pub(crate) fn no_registry(dir: &Path) -> String {
    format!(
        "{}: no known-issues registry here: pass --registry DIR (or --root DIR), or start one with `warden known-issues init --client NAME`",
        dir.display()
    )
}

impl Registry {
    /// Loads a registry for commands that need a valid one: any schema problem is bad input,
    /// named with its file and line (the first one, and how many more).
    pub fn load_valid(dir: &Path) -> crate::error::Result<Registry> {
        if !dir.exists() {
            return Err(crate::error::Error::Usage(no_registry(dir)));
        }
        let (registry, problems) = Registry::load(dir);
        match problems.first() {
            None => Ok(registry),
            Some(first) => Err(crate::error::Error::Usage(format!(
                "{first}{} (run `warden known-issues lint`)",
                match problems.len() {
                    1 => String::new(),
                    n => format!(" and {} more problems", n - 1),
                }
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kebab_case_ids() {
        assert!(is_kebab_case("rpc-compat-log-fields"));
        assert!(is_kebab_case("a1"));
        for bad in ["", "Rpc", "a--b", "-a", "a_b", "a b"] {
            assert!(!is_kebab_case(bad), "{bad}");
        }
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
