//! `warden known-issues update --from-results DIR…`: registry edits proposed from hive runs
//! (here, beside the history it reads, so the registry does not depend on hive).
//!
//! From a [`History`] of the runs: exclusions whose tests pass are removed as fixed (an entry
//! left without one is marked `status = "fixed"` for review, never deleted: its `why`, `where`
//! and `coverage` are human knowledge); a `fail` exclusion whose test both passed and failed
//! becomes `flaky`; exclusions that matched nothing are reported (and removed with
//! `--prune-missing`); the last run's unlisted failures become draft entries, one file per suite
//! and distinct failure text; and a pin the run does not match moves when nothing is left unexcused.
//!
//! Files are edited with `toml_edit`, so comments, key order and formatting outside the edited
//! lines stay byte for byte; a file with no edit is not rewritten.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item, Value};

use super::classify::split_client;
use super::history::{History, Mark, TestClass, TestHistory};
use super::pins::PinStatus;
use crate::error::{Error, Result};
use crate::known_issues::matcher::{Matcher, Rule};
use crate::known_issues::schema::{Entry, Expect, IssueStatus, MatchKind, Registry, SETTINGS_FILE};

#[derive(Clone, Debug, Default)]
pub struct UpdateOptions {
    /// Remove exclusions that matched no test of any run.
    pub prune_missing: bool,
    /// The full upstream list of `expected_suite` (names without the client suffix): a listed
    /// test in it is not missing, only not run.
    pub expected_tests: Option<Vec<String>>,
    pub expected_suite: String,
    /// `YYYY-MM-DD`, for the `added` date of drafts.
    pub today: String,
    /// Where a test's failure began, as `hive bisect` found it: the `why` of its draft says so.
    pub bisect: Option<super::bisect_run::BisectFinding>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ChangeKind {
    /// An exclusion removed: its tests pass.
    Fixed,
    /// An exclusion moved from `fail` to `flaky`.
    Flaky,
    /// An entry left without exclusions, marked `status = "fixed"`.
    Review,
    /// An exclusion that matched no test (removed with `--prune-missing`).
    Missing,
    /// A draft entry for new failures.
    Draft,
    /// An `[upstream]` pin moved to the run's value.
    Pin,
    /// Needs a person; not edited.
    Note,
}

impl ChangeKind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            // The verdict words of the one vocabulary.
            ChangeKind::Fixed => TestClass::Fixed.label(),
            ChangeKind::Flaky => TestClass::Flaky.label(),
            ChangeKind::Review => "review",
            ChangeKind::Missing => "missing",
            ChangeKind::Draft => "draft",
            ChangeKind::Pin => "pin",
            ChangeKind::Note => "note",
        }
    }
}

/// One proposed edit or observation, explained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Change {
    pub(crate) kind: ChangeKind,
    pub(crate) file: PathBuf,
    pub(crate) message: String,
    /// Whether the registry files change for it (a note, or a missing test without
    /// `--prune-missing`, does not).
    pub(crate) edits: bool,
}

/// A registry file as it is and as it would be.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FileEdit {
    pub(crate) path: PathBuf,
    /// `None` for a new file.
    #[serde(skip)]
    pub(crate) old: Option<String>,
    #[serde(skip)]
    pub(crate) new: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Update {
    pub(crate) changes: Vec<Change>,
    pub(crate) files: Vec<FileEdit>,
    /// `--write`: the files were written.
    pub(crate) written: bool,
}

/// What to do to one exclusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edit {
    Remove,
    MakeFlaky,
}

/// The tests of the history by the rule that lists them: one pass over the tests, not one per
/// rule.
fn rows_by_rule(history: &History) -> HashMap<usize, Vec<&TestHistory>> {
    let mut rows: HashMap<usize, Vec<&TestHistory>> = HashMap::new();
    for t in &history.tests {
        if let Some(i) = t.rule {
            rows.entry(i).or_default().push(t);
        }
    }
    rows
}

/// The most draft entries one update writes: past it, the groups left are named in one note
/// (a broken run with thousands of failures is triaged, not drafted file by file).
pub(crate) const MAX_DRAFTS: usize = 100;

/// The most bytes of one draft: well under what the registry loads of one file, so a written
/// draft always loads. The tests of a larger group past it are left out, and the draft says so.
pub(crate) const MAX_DRAFT_BYTES: usize = 256 << 10;

fn describe(rule: &Rule) -> String {
    let kind = match rule.exclusion.match_kind {
        MatchKind::Exact => String::new(),
        k => format!(" ({} match)", k.name()),
    };
    format!("{}/{}{kind}", rule.exclusion.suite, rule.pattern())
}

/// Whether `rule` names a test of the upstream list (so its absence is the run's, not upstream's).
fn in_expected(rule: &Rule, opts: &UpdateOptions) -> bool {
    opts.expected_tests.as_ref().is_some_and(|list| {
        rule.exclusion.suite == opts.expected_suite && list.iter().any(|t| rule.matches_name(t))
    })
}

/// The change to `rule`'s file, said in `message` (`edits`: whether it edits the file).
fn change_of(rule: &Rule, kind: ChangeKind, message: String, edits: bool) -> Change {
    Change {
        kind,
        file: rule.entry.path.clone(),
        message,
        edits,
    }
}

/// The edit for a listed test absent from every run: removed with `--prune-missing`, else said.
fn absent_edit(
    rule: &Rule,
    (history, opts): (&History, &UpdateOptions),
    what: &str,
) -> Option<(Edit, Change)> {
    let change = |kind, message: String, edits| change_of(rule, kind, message, edits);
    if in_expected(rule, opts) {
        return None;
    }
    let runs = history.runs.len();
    let message = format!(
        "{what} ({}): absent from {}; renamed or removed upstream?",
        rule.entry.id,
        if runs == 1 {
            "the run".to_string()
        } else {
            format!("all {runs} runs")
        }
    );
    if opts.prune_missing {
        Some((
            Edit::Remove,
            change(ChangeKind::Missing, format!("{message} removed"), true),
        ))
    } else {
        Some((
            Edit::Remove,
            change(
                ChangeKind::Missing,
                format!("{message} (--prune-missing removes it)"),
                false,
            ),
        ))
    }
}

/// The edit (if any) for rule `i`, with its explanation.
fn rule_edit(
    rule: &Rule,
    mine: &[&TestHistory],
    history: &History,
    opts: &UpdateOptions,
) -> Option<(Edit, Change)> {
    let change = |kind, message: String, edits| change_of(rule, kind, message, edits);
    let what = describe(rule);
    if mine.is_empty() || rule.expect() == Expect::Skip {
        return None;
    }
    let ran: Vec<&&TestHistory> = mine.iter().filter(|t| t.passed + t.failed > 0).collect();
    if ran.is_empty() {
        return absent_edit(rule, (history, opts), &what);
    }
    let fixed = |t: &TestHistory| match t.class {
        TestClass::Stale => t.passed > 0,
        // A flaky listing passes often: only a pass in every run retires it.
        TestClass::Fixed => rule.expect() == Expect::Fail,
        _ => false,
    };
    if ran.iter().all(|t| fixed(t)) {
        let how = if ran.iter().all(|t| t.failed == 0) {
            "passed in every run".to_string()
        } else {
            format!("passed in each of the last {} runs", history.fixed_after)
        };
        return Some((
            Edit::Remove,
            change(
                ChangeKind::Fixed,
                format!("{what} ({}): {how}; exclusion removed", rule.entry.id),
                true,
            ),
        ));
    }
    let flaky: Vec<&str> = ran
        .iter()
        .filter(|t| t.class == TestClass::Flaky)
        .map(|t| t.name.as_str())
        .collect();
    if rule.expect() == Expect::Fail && !flaky.is_empty() {
        if rule.exclusion.match_kind != MatchKind::Exact {
            return Some((
                Edit::MakeFlaky,
                change(
                    ChangeKind::Note,
                    format!(
                        "{what} ({}): {} passed in some runs and failed in others; not edited: marking the whole pattern flaky would loosen every test it covers (list the flaky ones on their own)",
                        rule.entry.id,
                        flaky.join(", ")
                    ),
                    false,
                ),
            ));
        }
        let t = ran.iter().find(|t| t.class == TestClass::Flaky)?;
        return Some((
            Edit::MakeFlaky,
            change(
                ChangeKind::Flaky,
                format!(
                    "{what} ({}): passed {} of {} runs, flaky under one client version and hive commit ({}); expect = \"fail\" becomes \"flaky\"",
                    rule.entry.id,
                    t.passed,
                    t.passed + t.failed,
                    t.verdict.as_ref().map_or("", |v| v.why.as_str())
                ),
                true,
            ),
        ));
    }
    if rule.expect() == Expect::Flaky && ran.iter().all(|t| t.passed == 0) {
        return Some((
            Edit::MakeFlaky,
            change(
                ChangeKind::Note,
                format!(
                    "{what} ({}): listed flaky but failed in every run; consider expect = \"fail\"",
                    rule.entry.id
                ),
                false,
            ),
        ));
    }
    None
}

/// Sets `key` to a string, keeping the old value's surrounding spaces and comment.
fn set_string(item: Option<&mut Item>, text: &str) -> bool {
    match item.and_then(Item::as_value_mut) {
        Some(v) => {
            let decor = v.decor().clone();
            *v = Value::from(text);
            *v.decor_mut() = decor;
            true
        }
        None => false,
    }
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut> {
    text.parse::<DocumentMut>()
        .map_err(|e| Error::input(path.display().to_string(), None, e.to_string()))
}

fn prefix_text(decor: &toml_edit::Decor) -> String {
    decor
        .prefix()
        .and_then(|p| p.as_str())
        .unwrap_or_default()
        .to_string()
}

/// The lead-in of the element after a removed one. toml_edit stores what lies between two
/// elements as the second one's prefix: up to the first line break it is the removed element's
/// trailing comment (`{ … }, # why`), after it the successor's own comment lines. The removed
/// element's prefix begins with its predecessor's line end. So the successor keeps that line
/// end and its own comment lines; the removed element takes its comments with it.
fn successor_lead(removed: &str, next: &str) -> String {
    let line_end = |s: &str| s.find('\n').map_or(s.len(), |i| i + 1);
    let before = &removed[..line_end(removed)];
    let own = next.find('\n').map_or("", |i| &next[i + 1..]);
    format!("{before}{own}")
}

/// Applies the edits of one entry's exclusions; returns the new text and whether it has none left.
fn edit_entry(entry: &Entry, edits: &BTreeMap<usize, Edit>) -> Result<(String, bool)> {
    let mut doc = parse(&entry.path, &entry.source)?;
    let total = entry.data.exclude.len();
    let removed = edits.values().filter(|e| **e == Edit::Remove).count();
    match doc.get_mut("exclude") {
        Some(Item::ArrayOfTables(tables)) => {
            for (&i, edit) in edits.iter().rev() {
                match edit {
                    Edit::Remove if i < tables.len() => {
                        tables.remove(i);
                    }
                    Edit::Remove => {}
                    Edit::MakeFlaky => {
                        if let Some(t) = tables.get_mut(i) {
                            if !set_string(t.get_mut("expect"), "flaky") {
                                t.insert("expect", toml_edit::value("flaky"));
                            }
                        }
                    }
                }
            }
        }
        Some(Item::Value(Value::Array(array))) => {
            for (&i, edit) in edits.iter().rev() {
                match edit {
                    Edit::Remove if i < array.len() => {
                        let removed = array.get(i).map(|v| prefix_text(v.decor()));
                        array.remove(i);
                        if let (Some(removed), Some(next)) = (removed, array.get_mut(i)) {
                            let lead = successor_lead(&removed, &prefix_text(next.decor()));
                            next.decor_mut().set_prefix(lead);
                        }
                    }
                    Edit::Remove => {}
                    Edit::MakeFlaky => {
                        if let Some(t) = array.get_mut(i).and_then(Value::as_inline_table_mut) {
                            match t.get_mut("expect") {
                                Some(v) => {
                                    let decor = v.decor().clone();
                                    *v = Value::from("flaky");
                                    *v.decor_mut() = decor;
                                }
                                None => {
                                    t.insert("expect", Value::from("flaky"));
                                }
                            }
                        }
                    }
                }
            }
        }
        _ => {
            return Err(Error::input(
                entry.path.display().to_string(),
                None,
                "`exclude` is neither [[exclude]] tables nor an array of inline tables: edit it by hand",
            ))
        }
    }
    let emptied = total > 0 && removed == total;
    if emptied {
        doc.remove("exclude");
        if !set_string(doc.get_mut("status"), IssueStatus::Fixed.name()) {
            doc.insert("status", toml_edit::value(IssueStatus::Fixed.name()));
        }
    }
    Ok((doc.to_string(), emptied))
}

/// A failure's (label, grouping key): tests whose failure texts are the same but for numbers
/// and hashes fail the same way and share one draft; different texts are different failures,
/// even when they begin alike (hive's rpc suite starts every failure with the request it sent,
/// `>> {…}`, so a first line alone would put unrelated failures together). The label is the
/// first line that is not such a request or response (all the text's lines are when every one
/// is).
fn failure(text: Option<&str>) -> (String, String) {
    static NUMBERS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let numbers = NUMBERS.get_or_init(|| {
        regex::Regex::new(r"0[xX][0-9a-fA-F]+|\b[0-9a-fA-F]{8,}\b|[0-9]+(?:\.[0-9]+)?")
            .expect("a valid regex")
    });
    let lines: Vec<&str> = text
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let transcript = |l: &&str| l.starts_with(">>") || l.starts_with("<<");
    let mut message: Vec<&str> = lines.iter().copied().filter(|l| !transcript(l)).collect();
    if message.is_empty() {
        message = lines;
    }
    let label: String = message
        .first()
        .copied()
        .unwrap_or("no failure text")
        .chars()
        .take(200)
        .collect();
    let key = numbers.replace_all(&message.join("\n"), "N").into_owned();
    (numbers.replace_all(&label, "N").into_owned(), key)
}

/// `rpc-compat` → `rpc-compat`; `eels/consume-engine` → `eels-consume-engine` (kebab-case ids).
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    out.trim_end_matches('-').to_string()
}

/// One line of input as a TOML comment or title: no line break, control or invisible character
/// survives (such a line is quoted and escaped).
fn comment_line(s: &str) -> String {
    crate::markup::text_value(s).into_owned()
}

fn toml_string(s: &str) -> String {
    Value::from(s).to_string().trim().to_string()
}

/// The start of a draft's `why`: the commit `hive bisect` found the failure began at, and where
/// the runs say it began and what changed there.
fn draft_why(suite: &str, tests: &[&TestHistory], opts: &UpdateOptions) -> String {
    let onset = tests.iter().find_map(|t| {
        let v = t.verdict.as_ref()?;
        v.onset.as_ref().filter(|o| !o.changes.is_empty())?;
        Some(v.why.trim_start_matches("new: ").to_string())
    });
    let bisected = opts
        .bisect
        .as_ref()
        .filter(|f| {
            tests
                .iter()
                .any(|t| f.covers(suite, split_client(&t.name).0))
        })
        .map(|f| f.why());
    let why = [bisected, onset]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    comment_line(&why).chars().take(700).collect()
}

/// The draft entry for one group of new failures: (suite, signature) → tests; and how many of
/// its tests were left out to keep it under [`MAX_DRAFT_BYTES`].
fn draft_text(
    suite: &str,
    sig: &str,
    tests: &[&TestHistory],
    registry: &Registry,
    opts: &UpdateOptions,
    runs: usize,
) -> (String, usize) {
    let mut out = String::new();
    out.push_str("# Draft written by `warden known-issues update` from hive results: fill in title, why and\n");
    out.push_str("# removal, then set status = \"open\". `warden known-issues lint` refuses a draft unless\n");
    out.push_str("# --allow-draft.\n#\n");
    if let Some(t) = tests.first() {
        out.push_str(&format!(
            "# First lines of the failure of {}:\n",
            comment_line(&t.name)
        ));
        for line in t
            .text
            .as_deref()
            .unwrap_or("(no failure text)")
            .lines()
            .take(20)
        {
            let line: String = comment_line(line).chars().take(200).collect();
            out.push_str(&format!("#   {line}\n"));
        }
    }
    let title = format!(
        "{suite}: {} new failure{} ({})",
        tests.len(),
        if tests.len() == 1 { "" } else { "s" },
        sig
    );
    out.push_str(&format!("title = {}\n", toml_string(&comment_line(&title))));
    out.push_str("status = \"draft\"\ndrafted_by = \"update\"\n");
    out.push_str(&format!("added = {}\n", opts.today));
    // Where the failures began and what changed there, when the runs say: the start of a why.
    let why = draft_why(suite, tests, opts);
    out.push_str(&format!("why = {}\nremoval = \"\"\n", toml_string(&why)));
    // One exclusion per test name, listing the clients it failed for.
    let mut by_test: BTreeMap<&str, (BTreeSet<&str>, bool)> = BTreeMap::new();
    for t in tests {
        let (name, client) = split_client(&t.name);
        let e = by_test.entry(name).or_default();
        e.0.extend(client);
        e.1 |= t.class == TestClass::Flaky;
    }
    let defaults: BTreeSet<&str> = registry
        .settings
        .clients
        .iter()
        .map(String::as_str)
        .collect();
    let count = by_test.len();
    let mut listed = 0;
    for (name, (clients, flaky)) in by_test {
        let mut exclusion = format!(
            "\n[[exclude]]\nsuite = {}\ntest = {}\n",
            toml_string(suite),
            toml_string(name)
        );
        if !clients.is_empty() && clients != defaults {
            let list: Vec<String> = clients.iter().map(|c| toml_string(c)).collect();
            exclusion.push_str(&format!("clients = [{}]\n", list.join(", ")));
        }
        if flaky {
            exclusion.push_str(&format!(
                "expect = \"flaky\"  # passed in some of the {runs} runs\n"
            ));
        }
        if out.len() + exclusion.len() > MAX_DRAFT_BYTES - 256 {
            break;
        }
        out.push_str(&exclusion);
        listed += 1;
    }
    if listed < count {
        out.push_str(&format!(
            "\n# {} more tests of this group are not listed (a draft holds at most {} KiB): list\n# them once these are triaged (`warden known-issues update` drafts them again).\n",
            count - listed,
            MAX_DRAFT_BYTES >> 10
        ));
    }
    (out, count - listed)
}

/// The last run's failures that no entry lists, by (suite, failure key): (label, tests). Those
/// that cannot be drafted (timeouts, names that cannot be listed) are noted.
type FailureGroups<'a> = BTreeMap<(String, String), (String, Vec<&'a TestHistory>)>;

fn new_failures<'a>(
    registry: &Registry,
    history: &'a History,
    changes: &mut Vec<Change>,
) -> FailureGroups<'a> {
    let mut groups: FailureGroups<'a> = BTreeMap::new();
    for t in &history.tests {
        if t.rule.is_some() || t.marks.last() != Some(&Mark::Fail) {
            continue;
        }
        let note = |message: String| Change {
            kind: ChangeKind::Note,
            file: registry.dir.clone(),
            message,
            edits: false,
        };
        if t.timeout {
            changes.push(note(format!(
                "{}/{}: timed out in the last run (infrastructure): not drafted",
                t.suite, t.name
            )));
            continue;
        }
        let (name, client) = split_client(&t.name);
        if [t.suite.as_str(), name, client.unwrap_or_default()]
            .iter()
            .any(|s| s.chars().any(char::is_control) || s.trim().is_empty())
        {
            changes.push(note(format!(
                "{}/{}: a name with control characters (or empty) cannot be listed: not drafted",
                t.suite, t.name
            )));
            continue;
        }
        // Failures that began at one recorded change are one draft (one change, many
        // failures); the others are grouped by their failure text.
        let onset = t
            .verdict
            .as_ref()
            .and_then(|v| v.onset.as_ref())
            .filter(|o| !o.changes.is_empty() && o.last_pass.is_some());
        let (label, key) = match onset {
            Some(o) => (
                format!(
                    "since {}: {}",
                    o.changes.join("; "),
                    failure(t.text.as_deref()).0
                ),
                format!("\0onset {:?} {} {:?}", o.last_pass, o.first_fail, o.changes),
            ),
            None => failure(t.text.as_deref()),
        };
        groups
            .entry((t.suite.clone(), key))
            .or_insert_with(|| (label, Vec::new()))
            .1
            .push(t);
    }
    groups
}

/// Draft entries for the last run's failures that no entry lists: one per distinct failure.
fn drafts(
    registry: &Registry,
    history: &History,
    opts: &UpdateOptions,
    changes: &mut Vec<Change>,
    files: &mut Vec<FileEdit>,
) {
    let groups = new_failures(registry, history, changes);
    let mut planned: HashSet<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let total = groups.len();
    for (n, ((suite, key), (sig, tests))) in groups.into_iter().enumerate() {
        if n == MAX_DRAFTS {
            changes.push(Change {
                kind: ChangeKind::Note,
                file: registry.dir.clone(),
                message: format!(
                    "{} more failure groups not drafted: at most {MAX_DRAFTS} drafts per update (triage these first, then run it again)",
                    total - MAX_DRAFTS
                ),
                edits: false,
            });
            break;
        }
        let hash = Sha256::digest(format!("{suite}\n{key}").as_bytes());
        let mut id = format!(
            "draft-{}-{:02x}{:02x}{:02x}{:02x}",
            slug(&suite),
            hash[0],
            hash[1],
            hash[2],
            hash[3]
        );
        id = id.replace("--", "-");
        let mut path = registry.dir.join(format!("{id}.toml"));
        let mut n = 2;
        while path.exists() || planned.contains(&path) {
            path = registry.dir.join(format!("{id}-{n}.toml"));
            n += 1;
        }
        planned.insert(path.clone());
        let (text, left_out) = draft_text(&suite, &sig, &tests, registry, opts, history.runs.len());
        let left_out = match left_out {
            0 => String::new(),
            k => format!(
                " ({k} left out: a draft holds at most {} KiB)",
                MAX_DRAFT_BYTES >> 10
            ),
        };
        changes.push(Change {
            kind: ChangeKind::Draft,
            file: path.clone(),
            message: format!(
                "{} new failure{} in {suite} ({sig}): drafted{left_out}; write why and removal",
                tests.len(),
                if tests.len() == 1 { "" } else { "s" }
            ),
            edits: true,
        });
        files.push(FileEdit {
            path,
            old: None,
            new: text,
        });
    }
}

/// Moves mismatched pins to the last run's values, when every failure of the run is excused.
fn move_pins(
    registry: &Registry,
    history: &History,
    blocked: usize,
    changes: &mut Vec<Change>,
    files: &mut Vec<FileEdit>,
) -> Result<()> {
    let mismatched: Vec<_> = history
        .pins
        .iter()
        .filter(|p| p.status == PinStatus::Mismatch)
        .collect();
    if mismatched.is_empty() {
        return Ok(());
    }
    let path = registry.dir.join(SETTINGS_FILE);
    if blocked > 0 {
        for p in mismatched {
            changes.push(Change {
                kind: ChangeKind::Note,
                file: path.clone(),
                message: format!(
                    "{}: the run used {}, the registry pins {}; not moved while {blocked} failure{} of the run need{} a reviewed entry",
                    p.name,
                    p.run.as_deref().unwrap_or_default(),
                    p.pinned,
                    if blocked == 1 { "" } else { "s" },
                    if blocked == 1 { "s" } else { "" }
                ),
                edits: false,
            });
        }
        return Ok(());
    }
    let old = crate::files::guarded::read_text_inside(&registry.dir, &path, 1 << 20)
        .map_err(|e| Error::io("reading", &path, e))?;
    let mut doc = parse(&path, &old)?;
    for p in mismatched {
        let run = p.run.clone().unwrap_or_default();
        let moved = doc
            .get_mut("upstream")
            .and_then(|u| u.as_table_like_mut())
            .and_then(|u| u.get_mut(&p.name))
            .map(|item| set_string(Some(item), &run))
            .unwrap_or(false);
        if moved {
            changes.push(Change {
                kind: ChangeKind::Pin,
                file: path.clone(),
                message: format!(
                    "{}: pin moved from {} to {}, the run's (every failure of it is listed)",
                    p.name, p.pinned, run
                ),
                edits: true,
            });
        }
    }
    let new = doc.to_string();
    if new != old {
        files.push(FileEdit {
            path,
            old: Some(old),
            new,
        });
    }
    Ok(())
}

/// Plans the registry edits the runs of `history` call for.
pub fn plan(registry: &Registry, history: &History, opts: &UpdateOptions) -> Result<Update> {
    let matcher = Matcher::valid(registry)?;
    let rows = rows_by_rule(history);
    let mut changes = Vec::new();
    let mut files = Vec::new();
    // Entry (by file) → exclusion index → edit.
    let mut per_entry: BTreeMap<PathBuf, (&Entry, BTreeMap<usize, Edit>)> = BTreeMap::new();
    for (i, rule) in matcher.rules.iter().enumerate() {
        let mine = rows.get(&i).map_or(&[][..], Vec::as_slice);
        let Some((edit, change)) = rule_edit(rule, mine, history, opts) else {
            continue;
        };
        if change.edits {
            let Some(index) = rule
                .entry
                .data
                .exclude
                .iter()
                .position(|e| std::ptr::eq(e, rule.exclusion))
            else {
                continue;
            };
            per_entry
                .entry(rule.entry.path.clone())
                .or_insert_with(|| (rule.entry, BTreeMap::new()))
                .1
                .insert(index, edit);
        }
        changes.push(change);
    }
    for (path, (entry, edits)) in per_entry {
        let (new, emptied) = edit_entry(entry, &edits)?;
        if emptied {
            changes.push(Change {
                kind: ChangeKind::Review,
                file: path.clone(),
                message: format!(
                    "{}: no exclusion left; marked status = \"fixed\": close its issue and delete the file, or keep it as documentation",
                    entry.id
                ),
                edits: true,
            });
        }
        if new != entry.source {
            files.push(FileEdit {
                path,
                old: Some(entry.source.clone()),
                new,
            });
        }
    }
    // Failures of the last run no reviewed entry lists (drafts are not reviewed yet).
    let blocked = history
        .tests
        .iter()
        .filter(|t| t.marks.last() == Some(&Mark::Fail))
        .filter(|t| {
            t.rule
                .is_none_or(|r| matcher.rules[r].entry.data.status == IssueStatus::Draft)
        })
        .count();
    drafts(registry, history, opts, &mut changes, &mut files);
    move_pins(registry, history, blocked, &mut changes, &mut files)?;
    Ok(Update {
        changes,
        files,
        written: false,
    })
}

impl Update {
    /// Writes every changed file (temp file in the same folder, then rename).
    pub fn write(&mut self) -> Result<()> {
        for f in &self.files {
            crate::files::atomic::write_atomic(&f.path, f.new.as_bytes(), 0o644, f.old.is_some())?;
        }
        self.written = true;
        Ok(())
    }

    /// A unified diff of every changed file.
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            let path = f.path.display().to_string();
            let (a, b) = match &f.old {
                Some(_) => (format!("a/{path}"), format!("b/{path}")),
                None => ("/dev/null".to_string(), format!("b/{path}")),
            };
            let old = f.old.as_deref().unwrap_or_default();
            let diff = similar::TextDiff::from_lines(old, &f.new);
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&a, &b)
                    .to_string(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry parsed from `text`, as the registry loads it.
    fn entry(text: &str) -> Entry {
        Entry {
            id: "e".into(),
            path: PathBuf::from("known_issues/e.toml"),
            source: text.to_string(),
            data: toml::from_str(text).unwrap(),
        }
    }

    const TABLES: &str = r#"title = "Logs"
why = "Why."
removal = "When."

# The first one.
[[exclude]]
suite = "rpc-compat"
test = "a"

[[exclude]]
suite = "rpc-compat"   # kept
test = "b"
expect = "fail"        # strict
"#;

    #[test]
    fn removing_one_table_keeps_the_rest_byte_for_byte() {
        let edits = BTreeMap::from([(0, Edit::Remove)]);
        let (text, emptied) = edit_entry(&entry(TABLES), &edits).unwrap();
        assert!(!emptied);
        assert_eq!(
            text,
            r#"title = "Logs"
why = "Why."
removal = "When."

[[exclude]]
suite = "rpc-compat"   # kept
test = "b"
expect = "fail"        # strict
"#
        );
    }

    #[test]
    fn a_flaky_edit_keeps_the_value_s_comment_and_an_emptied_entry_is_marked_fixed() {
        let edits = BTreeMap::from([(1, Edit::MakeFlaky)]);
        let (text, _) = edit_entry(&entry(TABLES), &edits).unwrap();
        assert!(
            text.ends_with("expect = \"flaky\"        # strict\n"),
            "{text}"
        );
        let all = BTreeMap::from([(0, Edit::Remove), (1, Edit::Remove)]);
        let (text, emptied) = edit_entry(&entry(TABLES), &all).unwrap();
        assert!(emptied);
        assert_eq!(
            text,
            "title = \"Logs\"\nwhy = \"Why.\"\nremoval = \"When.\"\nstatus = \"fixed\"\n"
        );
    }

    #[test]
    fn an_inline_array_element_takes_its_comment_with_it() {
        let text = r#"title = "T"
why = "W."
removal = "R."
exclude = [
  # a is flaky upstream
  { suite = "s", test = "a" },
  # b stays
  { suite = "s", test = "b" },
]
"#;
        let edits = BTreeMap::from([(0, Edit::Remove)]);
        let (out, _) = edit_entry(&entry(text), &edits).unwrap();
        assert_eq!(
            out,
            r#"title = "T"
why = "W."
removal = "R."
exclude = [
  # b stays
  { suite = "s", test = "b" },
]
"#
        );
    }

    #[test]
    fn a_removed_element_takes_its_own_comments_and_leaves_its_neighbours() {
        // Comments above each element.
        assert_eq!(
            successor_lead("\n  # a is flaky upstream\n  ", "\n  # b stays\n  "),
            "\n  # b stays\n  "
        );
        // A comment after the removed element, on its line.
        assert_eq!(successor_lead("\n  ", " # a flaky\n  "), "\n  ");
        // One line: `[ {a}, {b} ]`.
        assert_eq!(successor_lead(" ", " "), " ");
    }

    #[test]
    fn failure_signatures_blur_numbers_and_hashes_and_slugs_are_kebab_case() {
        assert_eq!(
            failure(Some(
                "\n  block 0x1f2e at height 12 hash deadbeefcafe\nmore"
            )),
            (
                "block N at height N hash N".to_string(),
                "block N at height N hash N\nmore".to_string()
            )
        );
        assert_eq!(failure(None).0, "no failure text");
        // hive's rpc suite: the request first, the failure after it. The same failure of two
        // requests is one group; two failures after the same request are two.
        let rpc = |request: &str, message: &str| {
            failure(Some(&format!(
                ">>  {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"{request}\"}}\n<<  {{\"result\":\"0x\"}}\n{message}"
            )))
        };
        let funding = rpc(
            "eth_sendRawTransaction",
            "unable to send funding transaction: nonce 7",
        );
        assert_eq!(funding.0, "unable to send funding transaction: nonce N");
        assert_eq!(
            funding.1,
            rpc("eth_call", "unable to send funding transaction: nonce 12").1
        );
        assert_ne!(
            rpc("eth_call", "no contract code at given address").1,
            rpc("eth_call", "unexpected code, want 0x6001").1
        );
        // Only a transcript: its lines are the failure.
        assert_eq!(
            failure(Some(">>  {\"method\":\"eth_chainId\"}")).0,
            ">>  {\"method\":\"eth_chainId\"}"
        );
        assert_eq!(slug("eels/consume-engine"), "eels-consume-engine");
        assert_eq!(slug("RPC Compat!!"), "rpc-compat");
        for text in ["a \"b\"\n", "it's", "tab\there", "\u{202e}x"] {
            let doc: toml::Table = toml::from_str(&format!("k = {}", toml_string(text))).unwrap();
            assert_eq!(doc["k"].as_str(), Some(text));
        }
        assert_eq!(comment_line("x\ny"), "\"x\\ny\"");
    }
}
