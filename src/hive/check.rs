//! `warden hive check`: classify every (suite, test) of a hive run against the known-issues
//! registry, strictly.
//!
//! Passing cases are only counted, so memory stays flat in the number of cases; failures (few by
//! design) are kept with their text. Failure text in `testDetailsLog` is read only for failures.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::{self, File};
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::Serialize;

use super::suite::{read_suite, HiveCase, SuiteError, SuiteVisitor};
use crate::error::{Error, Result};
use crate::known_issues::matcher::{Matcher, Rule};
use crate::known_issues::{Expect, Registry};

/// Files in a results directory that are not suite files (hiveview skips the same).
const NOT_SUITES: [&str; 3] = ["hive.json", "errorReport.json", "containerErrorReport.json"];
/// Failure text shown per real failure.
const TEXT_LINES: usize = 8;
const TEXT_BYTES: u64 = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Not listed, failed.
    Regression,
    /// Listed `fail` with a signature, failed for another reason.
    WrongFailure,
    /// Listed `fail`, passed: the entry should go.
    UnexpectedPass,
    /// Listed (or expected), absent from the run.
    Missing,
    /// `client launch` failed, a `multiTestContext` case failed, or a timeout.
    Infra,
    /// A suite with no real cases, or no suite file at all.
    EmptyRun,
    /// Listed `fail`, failed as expected.
    ExpectedFail,
    /// Listed `flaky`.
    Flaky,
    /// Listed `skip` but run anyway.
    SkippedRan,
    Pass,
}

impl Outcome {
    pub fn is_error(self, allow_missing: bool) -> bool {
        match self {
            Outcome::Regression
            | Outcome::WrongFailure
            | Outcome::UnexpectedPass
            | Outcome::Infra
            | Outcome::EmptyRun => true,
            Outcome::Missing => !allow_missing,
            _ => false,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Regression => "regression",
            Outcome::WrongFailure => "wrong failure",
            Outcome::UnexpectedPass => "unexpected pass",
            Outcome::Missing => "missing",
            Outcome::Infra => "infra",
            Outcome::EmptyRun => "empty run",
            Outcome::ExpectedFail => "expected fail",
            Outcome::Flaky => "flaky",
            Outcome::SkippedRan => "skipped but ran",
            Outcome::Pass => "pass",
        }
    }
}

/// A case worth reporting (everything but an unlisted pass).
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub suite: String,
    pub name: String,
    pub outcome: Outcome,
    /// The registry entry involved, and its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_file: Option<PathBuf>,
    /// Whether the case passed in this run (for listed cases).
    pub passed: bool,
    pub message: String,
    /// First lines of the failure text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SuiteSummary {
    pub file: PathBuf,
    pub name: String,
    pub clients: BTreeSet<String>,
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct HiveReport {
    pub dir: PathBuf,
    pub suites: Vec<SuiteSummary>,
    /// Every non-pass outcome, in suite-file order then name order.
    pub results: Vec<CaseResult>,
    /// Names of passing cases (kept only when asked, e.g. for JUnit).
    #[serde(skip)]
    pub passes: Vec<(String, String)>,
    pub counts: BTreeMap<Outcome, usize>,
    pub allow_missing: bool,
    pub upstream: BTreeMap<String, String>,
}

impl HiveReport {
    pub fn failed(&self) -> bool {
        self.results
            .iter()
            .any(|r| r.outcome.is_error(self.allow_missing))
    }

    pub fn exit_code(&self) -> u8 {
        u8::from(self.failed())
    }
}

#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    pub client: Option<String>,
    /// Tests that must be in the run (names without client suffix), for `expected_suite`.
    pub expected_tests: Vec<String>,
    pub expected_suite: String,
    pub allow_missing: bool,
    /// Keep passing case names (JUnit needs them; costs memory per case).
    pub keep_passes: bool,
}

/// Splits `name (client)` into the test and the client.
pub fn split_client(name: &str) -> (&str, Option<&str>) {
    if let Some(open) = name.rfind(" (") {
        if name.ends_with(')') && !name[open + 2..name.len() - 1].contains('(') {
            return (&name[..open], Some(&name[open + 2..name.len() - 1]));
        }
    }
    (name, None)
}

fn first_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(TEXT_LINES + 1)
        .collect();
    let more = lines.len() > TEXT_LINES;
    lines.truncate(TEXT_LINES);
    let mut s: String = lines
        .iter()
        .map(|l| {
            if l.len() > 300 {
                format!("{}…", l.chars().take(300).collect::<String>())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    if more {
        s.push_str("\n…");
    }
    s
}

/// Per suite-file state while streaming.
struct SuiteState<'m, 'r> {
    matcher: &'m Matcher<'r>,
    opts: &'m CheckOptions,
    /// Shared, so that classifying a case does not copy the suite name.
    name: Option<Rc<str>>,
    details_log: Option<String>,
    summary: SuiteSummary,
    /// Cases that need the suite name or the failure text before they can be classified.
    pending: Vec<HiveCase<'static>>,
    results: Vec<CaseResult>,
    passes: Vec<(String, String)>,
    /// (rule index, client) pairs seen in the run, for missing detection.
    rule_hits: HashSet<(usize, String)>,
    /// Expected test names seen, per client.
    expected_seen: HashSet<(String, String)>,
    /// Clients whose launch failed: their absent tests are a consequence, not news.
    launch_failed: BTreeSet<String>,
    real_cases: usize,
}

impl SuiteVisitor for SuiteState<'_, '_> {
    fn suite_name(&mut self, name: &str) {
        self.name = Some(Rc::from(name));
    }

    fn case(&mut self, case: HiveCase<'_>) {
        if let Some(c) = &self.opts.client {
            if split_client(&case.name).1.is_some_and(|x| x != c) {
                return;
            }
        }
        // Failures wait for the details log path (it follows testCases in hive's files).
        if !case.pass || self.name.is_none() {
            self.pending.push(case.into_owned());
        } else {
            self.classify(case, None);
        }
    }

    fn test_details_log(&mut self, path: &str) {
        self.details_log = Some(path.to_string());
    }
}

impl SuiteState<'_, '_> {
    fn classify(&mut self, case: HiveCase<'_>, text: Option<String>) {
        let suite: Rc<str> = self.name.clone().unwrap_or_else(|| Rc::from(""));
        let suite = &*suite;
        let (test, client) = split_client(&case.name);
        if let Some(c) = client {
            self.summary.clients.insert(c.to_string());
        }
        self.summary.cases += 1;
        if case.pass {
            self.summary.passed += 1;
        } else {
            self.summary.failed += 1;
        }
        let is_launch = test == "client launch";
        if !case.multi_test_context && !is_launch {
            self.real_cases += 1;
        }
        if suite == self.opts.expected_suite.as_str() {
            if let Some(c) = client {
                self.expected_seen.insert((test.to_string(), c.to_string()));
            }
        }
        let result = |outcome: Outcome,
                      rule: Option<&Rule>,
                      message: String,
                      text: Option<String>| CaseResult {
            suite: suite.to_string(),
            name: case.name.to_string(),
            outcome,
            entry: rule.map(|r| r.entry.id.clone()),
            entry_file: rule.map(|r| r.entry.path.clone()),
            passed: case.pass,
            message,
            text: text.map(|t| first_lines(&t)),
        };
        // Infrastructure first: a timeout or a failed launch says nothing about the test itself.
        if !case.pass && (case.timeout || case.multi_test_context || is_launch) {
            if is_launch {
                self.launch_failed
                    .insert(client.unwrap_or_default().to_string());
            }
            let why = if case.timeout {
                "timed out (terminated by host)"
            } else if is_launch {
                "the client failed to launch"
            } else {
                "a shared-client lifecycle case (multiTestContext) failed"
            };
            self.results
                .push(result(Outcome::Infra, None, why.into(), text));
            return;
        }
        if case.multi_test_context || is_launch {
            return;
        }
        let found = self.matcher.find(suite, test, client);
        let Some((index, rule)) = found else {
            if case.pass {
                if self.opts.keep_passes {
                    self.passes.push((suite.to_string(), case.name.to_string()));
                }
            } else {
                self.results.push(result(
                    Outcome::Regression,
                    None,
                    "failed and is not a known issue".into(),
                    text,
                ));
            }
            return;
        };
        self.rule_hits
            .insert((index, client.unwrap_or_default().to_string()));
        let file = rule.entry.path.display().to_string();
        let (outcome, message) = match (rule.expect(), case.pass) {
            (Expect::Fail, true) => (
                Outcome::UnexpectedPass,
                format!("passed, but {file} ({}) lists it as an expected failure: remove that exclusion (and close the issue if it was the last)", rule.entry.id),
            ),
            (Expect::Fail, false) => match (&rule.signature, &text) {
                (Some(sig), t) if !t.as_deref().is_some_and(|t| sig.is_match(t)) => (
                    Outcome::WrongFailure,
                    format!("failed, but not with the signature /{}/ of {} ({file}): a different failure is a real one", sig.as_str(), rule.entry.id),
                ),
                _ => (Outcome::ExpectedFail, format!("excused by {} ({file})", rule.entry.id)),
            },
            (Expect::Flaky, false) if rule.signature.as_ref().is_some_and(|sig| !text.as_deref().is_some_and(|t| sig.is_match(t))) => (
                Outcome::WrongFailure,
                format!(
                    "failed, but not with the signature /{}/ of {} ({file}): a different failure is a real one",
                    rule.signature.as_ref().map_or("", |s| s.as_str()),
                    rule.entry.id
                ),
            ),
            (Expect::Flaky, p) => (Outcome::Flaky, format!("{} this run; listed as flaky in {} ({file})", if p { "passed" } else { "failed" }, rule.entry.id)),
            (Expect::Skip, _) => (Outcome::SkippedRan, format!("ran although {} ({file}) lists it as skip: check --sim.limit", rule.entry.id)),
        };
        let keep_text = matches!(
            outcome,
            Outcome::WrongFailure | Outcome::ExpectedFail | Outcome::Flaky
        );
        self.results.push(result(
            outcome,
            Some(rule),
            message,
            if keep_text { text } else { None },
        ));
    }

    /// Classifies what waited for the end of the file, reading failure text from the details log.
    fn finish(&mut self, dir: &Path) -> std::result::Result<(), String> {
        let pending = std::mem::take(&mut self.pending);
        let mut log = match self.details_log.as_deref() {
            None | Some("") => None,
            Some(name) => open_details_log(dir, name)?,
        };
        for case in pending {
            let text = match (&case.details, case.log, &mut log) {
                (Some(d), _, _) if !d.is_empty() => Some(d.to_string()),
                (_, Some((begin, end)), Some(f)) if end > begin => read_slice(f, begin, end),
                _ => None,
            };
            self.classify(case, text);
        }
        Ok(())
    }
}

/// The details log a suite file names, opened only if it is a regular file inside the results
/// directory: the name comes from the suite file, and the text read from it can end up in a
/// public PR comment. A log that is absent (not downloaded with the results) is no error.
fn open_details_log(dir: &Path, name: &str) -> std::result::Result<Option<File>, String> {
    if !crate::fsutil::is_plain_relative(name) {
        return Err(format!(
            "testDetailsLog {name:?} is not a path inside the results directory"
        ));
    }
    let path = dir.join(name);
    let (Ok(real), Ok(root)) = (fs::canonicalize(&path), fs::canonicalize(dir)) else {
        return Ok(None);
    };
    if !real.starts_with(&root) {
        return Err(format!(
            "testDetailsLog {name:?} resolves to {}, outside the results directory",
            real.display()
        ));
    }
    crate::fsutil::open_regular(&real)
        .map(Some)
        .map_err(|e| format!("testDetailsLog {name:?}: {e}"))
}

fn read_slice(f: &mut File, begin: u64, end: u64) -> Option<String> {
    let len = (end - begin).min(TEXT_BYTES);
    f.seek(SeekFrom::Start(begin)).ok()?;
    let mut buf = Vec::with_capacity(len as usize);
    f.take(len).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Suite files of a results directory: top-level `*.json`, minus hive's own files.
pub fn suite_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io("reading", dir, e))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| NOT_SUITES.contains(&n))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Checks every suite file in `dir` against `registry`.
pub fn check(dir: &Path, registry: &Registry, opts: &CheckOptions) -> Result<HiveReport> {
    let matcher = Matcher::new(registry).map_err(|errs| {
        let (e, i, m) = &errs[0];
        Error::input(
            e.path.display().to_string(),
            None,
            format!("exclude[{i}]: {m} (run `warden known-issues lint`)"),
        )
    })?;
    let mut report = HiveReport {
        dir: dir.to_path_buf(),
        allow_missing: opts.allow_missing,
        upstream: registry.settings.upstream.clone(),
        ..HiveReport::default()
    };
    let files = suite_files(dir)?;
    if files.is_empty() {
        report.results.push(CaseResult {
            suite: String::new(),
            name: dir.display().to_string(),
            outcome: Outcome::EmptyRun,
            entry: None,
            entry_file: None,
            passed: false,
            message: "no suite files: hive wrote no results (did it crash, or is this the wrong directory?)".into(),
            text: None,
        });
    }
    let mut hits: HashSet<(usize, String)> = HashSet::new();
    let mut expected_seen: HashSet<(String, String)> = HashSet::new();
    let mut suites_run: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut not_launched: HashSet<(String, String)> = HashSet::new();
    for file in &files {
        let mut state = SuiteState {
            matcher: &matcher,
            opts,
            name: None,
            details_log: None,
            summary: SuiteSummary {
                file: file.clone(),
                ..SuiteSummary::default()
            },
            pending: Vec::new(),
            results: Vec::new(),
            passes: Vec::new(),
            rule_hits: HashSet::new(),
            expected_seen: HashSet::new(),
            launch_failed: BTreeSet::new(),
            real_cases: 0,
        };
        let reader = File::open(file).map_err(|e| Error::io("reading", file, e))?;
        read_suite(BufReader::with_capacity(0, reader), &mut state).map_err(|e| match e {
            SuiteError::Io(e) => Error::io("reading", file, e),
            SuiteError::Syntax { .. } => Error::input(
                file.display().to_string(),
                None,
                format!("not a hive suite file: {e}"),
            ),
        })?;
        if state.name.is_none() {
            return Err(Error::input(
                file.display().to_string(),
                None,
                "not a hive suite file: no \"name\"",
            ));
        }
        state
            .finish(dir)
            .map_err(|why| Error::input(file.display().to_string(), None, why))?;
        let name = state.name.as_deref().unwrap_or_default().to_string();
        state.summary.name = name.clone();
        if state.real_cases == 0 {
            state.results.push(CaseResult {
                suite: name.clone(),
                name: file
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
                outcome: Outcome::EmptyRun,
                entry: None,
                entry_file: None,
                passed: false,
                message: format!(
                    "suite {name} ran no test cases{}",
                    if state.summary.cases > 0 {
                        " (only client launch / lifecycle cases)"
                    } else {
                        ""
                    }
                ),
                text: None,
            });
        }
        state.results.sort_by(|a, b| a.name.cmp(&b.name));
        hits.extend(state.rule_hits);
        expected_seen.extend(state.expected_seen);
        not_launched.extend(
            state
                .launch_failed
                .iter()
                .map(|c| (name.clone(), c.clone())),
        );
        suites_run
            .entry(name)
            .or_default()
            .extend(state.summary.clients.iter().cloned());
        report.results.extend(state.results);
        report.passes.extend(state.passes);
        report.suites.push(state.summary);
    }
    // Listed tests absent from the run (for suites that ran; `skip` entries are meant to be absent).
    let clients_for = |suite: &str, rule_clients: &[String]| -> Vec<String> {
        let ran: Vec<String> = suites_run
            .get(suite)
            .map(|c| c.iter().cloned().collect())
            .unwrap_or_default();
        let mut v: Vec<String> = match &opts.client {
            Some(c) => vec![c.clone()],
            None => ran,
        };
        if !rule_clients.is_empty() {
            v.retain(|c| rule_clients.contains(c));
        }
        v
    };
    for (i, rule) in matcher.rules.iter().enumerate() {
        if rule.expect() == Expect::Skip || !suites_run.contains_key(&rule.exclusion.suite) {
            continue;
        }
        for c in clients_for(&rule.exclusion.suite, rule.clients) {
            if !hits.contains(&(i, c.clone()))
                && !not_launched.contains(&(rule.exclusion.suite.clone(), c.clone()))
            {
                report.results.push(CaseResult {
                    suite: rule.exclusion.suite.clone(),
                    name: format!("{} ({c})", rule.pattern()),
                    outcome: Outcome::Missing,
                    entry: Some(rule.entry.id.clone()),
                    entry_file: Some(rule.entry.path.clone()),
                    passed: false,
                    message: format!("listed in {} ({}) but absent from the run: renamed or removed upstream? update or remove the exclusion", rule.entry.path.display(), rule.entry.id),
                    text: None,
                });
            }
        }
    }
    if !opts.expected_tests.is_empty() {
        let clients = match (&opts.client, suites_run.get(&opts.expected_suite)) {
            (Some(c), _) => vec![c.clone()],
            (None, Some(c)) if !c.is_empty() => c.iter().cloned().collect(),
            _ => registry.settings.clients.clone(),
        };
        for test in &opts.expected_tests {
            for c in &clients {
                let skipped = matcher
                    .find(&opts.expected_suite, test, Some(c))
                    .is_some_and(|(_, r)| r.expect() == Expect::Skip);
                let launched = !not_launched.contains(&(opts.expected_suite.clone(), c.clone()));
                if !skipped && launched && !expected_seen.contains(&(test.clone(), c.clone())) {
                    report.results.push(CaseResult {
                        suite: opts.expected_suite.clone(),
                        name: format!("{test} ({c})"),
                        outcome: Outcome::Missing,
                        entry: None,
                        entry_file: None,
                        passed: false,
                        message: "in --expected-tests but absent from the run".into(),
                        text: None,
                    });
                }
            }
        }
    }
    for r in &report.results {
        *report.counts.entry(r.outcome).or_default() += 1;
    }
    let passes: usize = report.suites.iter().map(|s| s.passed).sum();
    let listed_passes = report.results.iter().filter(|r| r.passed).count();
    report
        .counts
        .insert(Outcome::Pass, passes.saturating_sub(listed_passes));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_suffix() {
        assert_eq!(
            split_client("eth_getLogs/no-topics (ethrex)"),
            ("eth_getLogs/no-topics", Some("ethrex"))
        );
        assert_eq!(
            split_client("client launch (reth_default)"),
            ("client launch", Some("reth_default"))
        );
        assert_eq!(split_client("ef_tests::ssz"), ("ef_tests::ssz", None));
        assert_eq!(split_client("a (b) (c)"), ("a (b)", Some("c")));
    }

    #[test]
    fn first_lines_are_bounded() {
        let text = (0..20)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let s = first_lines(&text);
        assert_eq!(s.lines().count(), TEXT_LINES + 1);
        assert!(s.ends_with('…'));
    }
}
