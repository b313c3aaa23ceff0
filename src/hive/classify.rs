//! The classifier behind `warden hive check`: every (suite, test) of a hive run against the
//! known-issues registry, strictly.
//!
//! Passing cases are only counted, so memory stays flat in the number of cases; failures (few by
//! design) are kept with their text. Failure text in `testDetailsLog` is read only for failures.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use super::outcome::{CaseResult, HiveReport, Outcome, SuiteSummary};
use super::pins::{self, RunSources};
use super::stream::{failure_text, open_details_log, suite_files};
use super::suite::{read_suite, HiveCase, SuiteError, SuiteSources, SuiteVisitor};
use crate::error::{Error, Reason, Result};
use crate::known_issues::matcher::{Matcher, Rule};
use crate::known_issues::schema::Expect;
use crate::known_issues::Registry;

/// Failure text shown per real failure.
const TEXT_LINES: usize = 8;

#[derive(Clone, Debug, Default)]
pub struct ClassifyOptions {
    pub client: Option<String>,
    /// Tests that must be in the run (names without client suffix), for `expected_suite`.
    pub expected_tests: Vec<String>,
    pub expected_suite: String,
    pub allow_missing: bool,
    /// Keep passing case names (JUnit needs them; costs memory per case).
    pub keep_passes: bool,
    /// A run that does not match the registry's `[upstream]` pins fails.
    pub require_pins: bool,
}

/// Splits `name (client)` into the test and the client.
pub(crate) fn split_client(name: &str) -> (&str, Option<&str>) {
    // The last " (": by bytes from the end (a searcher for two bytes costs more than the name).
    let b = name.as_bytes();
    if b.last() != Some(&b')') {
        return (name, None);
    }
    let open = memchr::memrchr_iter(b'(', b).find(|&p| p > 0 && b[p - 1] == b' ');
    if let Some(open) = open.map(|p| p - 1) {
        if !name[open + 2..name.len() - 1].contains('(') {
            return (&name[..open], Some(&name[open + 2..name.len() - 1]));
        }
    }
    (name, None)
}

/// The excerpt of a failure text shown with a test: from the line that says why it failed (a
/// `FAIL` line, a failed assertion or a panic; else the first line naming an expected value, a
/// mismatch or an error), or from its start when no line does; `TEXT_LINES` lines of at most
/// 300 characters, `…` where lines were left out.
pub(crate) fn first_lines(text: &str) -> String {
    use std::sync::OnceLock;
    static STRONG: OnceLock<regex::Regex> = OnceLock::new();
    static WEAK: OnceLock<regex::Regex> = OnceLock::new();
    let strong = STRONG.get_or_init(|| {
        regex::Regex::new(
            r"(?i)(^\s*(--- )?FAIL(ED)?\b|\bassert(ion)?\b|\bpanicked\b|^\s*FAIL:|\btest failed\b)",
        )
        .expect("static regex")
    });
    let weak = WEAK.get_or_init(|| {
        regex::Regex::new(r"(?i)(\bexpected\b|\bmismatch|\bdiffers?\b|\berror\b|\bwant\b.*\bgot\b)")
            .expect("static regex")
    });
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let at = all
        .iter()
        .position(|l| strong.is_match(l))
        .or_else(|| all.iter().position(|l| weak.is_match(l)))
        .unwrap_or(0);
    let mut lines: Vec<&str> = all[at..].iter().copied().take(TEXT_LINES + 1).collect();
    let more = lines.len() > TEXT_LINES;
    lines.truncate(TEXT_LINES);
    if at > 0 {
        lines.insert(0, "…");
    }
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
    opts: &'m ClassifyOptions,
    /// Shared, so that classifying a case does not copy the suite name.
    name: Option<Arc<str>>,
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
    sources: Vec<SuiteSources>,
    /// Clients of cases `--client` left out: said when it leaves nothing.
    other_clients: BTreeSet<String>,
    /// Cases `--client` kept (all of them without it).
    kept: usize,
}

impl SuiteVisitor for SuiteState<'_, '_> {
    fn suite_name(&mut self, name: &str) {
        self.name = Some(Arc::from(name));
    }

    fn case(&mut self, case: HiveCase<'_>) {
        if let Some(c) = &self.opts.client {
            if let Some(other) = split_client(&case.name).1.filter(|x| x != c) {
                if self.other_clients.len() < 16 {
                    self.other_clients.insert(other.to_string());
                }
                return;
            }
        }
        self.kept += 1;
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

    fn sources(&mut self, sources: &SuiteSources) {
        self.sources.push(sources.clone());
    }
}

/// What a listed test's result is, by what its rule expects and how it ended.
fn listed_outcome(rule: &Rule, pass: bool, text: Option<&str>) -> (Outcome, String) {
    let file = rule.entry.path.display().to_string();
    match (rule.expect(), pass) {
            (Expect::Fail, true) => (
                Outcome::FIXED,
                format!("passed, but {file} ({}) lists it as an expected failure: remove that exclusion (and close the issue if it was the last)", rule.entry.id),
            ),
            (Expect::Fail, false) => match (&rule.signature, text) {
                (Some(sig), t) if !t.is_some_and(|t| sig.is_match(t)) => (
                    Outcome::WrongFailure,
                    format!("failed, but not with the signature /{}/ of {} ({file}): a different failure is a real one", sig.as_str(), rule.entry.id),
                ),
                _ => (Outcome::EXPECTED, format!("excused by {} ({file})", rule.entry.id)),
            },
            (Expect::Flaky, false) if rule.signature.as_ref().is_some_and(|sig| !text.is_some_and(|t| sig.is_match(t))) => (
                Outcome::WrongFailure,
                format!(
                    "failed, but not with the signature /{}/ of {} ({file}): a different failure is a real one",
                    rule.signature.as_ref().map_or("", |s| s.as_str()),
                    rule.entry.id
                ),
            ),
            (Expect::Flaky, p) => (Outcome::FLAKY, format!("{} this run; listed as flaky in {} ({file})", if p { "passed" } else { "failed" }, rule.entry.id)),
            (Expect::Skip, _) => (Outcome::SkippedRan, format!("ran although {} ({file}) lists it as skip: check --sim.limit", rule.entry.id)),
        }
}

/// Why a failed case says nothing about the test itself, if so: it timed out, the client failed
/// to launch, or a shared-client lifecycle case failed. The one decider of an infrastructure
/// failure (`hive check`, and a `hive bisect` probe's validity).
pub(crate) fn infra_cause(case: &HiveCase<'_>) -> Option<&'static str> {
    if case.pass {
        return None;
    }
    let (test, _) = split_client(&case.name);
    if case.timeout {
        Some("timed out (terminated by host)")
    } else if test == "client launch" {
        Some("the client failed to launch")
    } else if case.multi_test_context {
        Some("a shared-client lifecycle case (multiTestContext) failed")
    } else {
        None
    }
}

impl SuiteState<'_, '_> {
    fn classify(&mut self, case: HiveCase<'_>, text: Option<String>) {
        let suite: Arc<str> = self.name.clone().unwrap_or_else(|| Arc::from(""));
        let suite = &*suite;
        let (test, client) = split_client(&case.name);
        if let Some(c) = client.filter(|c| !self.summary.clients.contains(*c)) {
            self.summary.clients.insert(c.to_string());
        }
        // Tests are counted as `hive history` and `hive diff` count them: lifecycle and launch
        // cases apart, so one run has one count everywhere.
        let is_launch = test == "client launch";
        if case.multi_test_context || is_launch {
            self.summary.lifecycle += 1;
        } else {
            self.real_cases += 1;
            self.summary.cases += 1;
            if case.pass {
                self.summary.passed += 1;
            } else {
                self.summary.failed += 1;
            }
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
        if let Some(why) = infra_cause(&case) {
            if is_launch {
                self.launch_failed
                    .insert(client.unwrap_or_default().to_string());
            }
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
                    Outcome::NEW,
                    None,
                    "failed and is not a known issue".into(),
                    text,
                ));
            }
            return;
        };
        self.rule_hits
            .insert((index, client.unwrap_or_default().to_string()));
        let (outcome, message) = listed_outcome(rule, case.pass, text.as_deref());
        let keep_text = matches!(
            outcome,
            Outcome::WrongFailure | Outcome::EXPECTED | Outcome::FLAKY
        );
        self.results.push(result(
            outcome,
            Some(rule),
            message,
            if keep_text { text } else { None },
        ));
    }

    /// Classifies what waited for the end of the file, reading failure text from the details log.
    fn finish(&mut self, dir: &Path) -> std::result::Result<(), Reason> {
        let pending = std::mem::take(&mut self.pending);
        let mut log = match self.details_log.as_deref() {
            None | Some("") => None,
            Some(name) => open_details_log(dir, name)?,
        };
        for case in pending {
            let text = failure_text(&case, log.as_mut());
            self.classify(case, text);
        }
        Ok(())
    }
}

/// What the suite files of a run add up to, for the checks that look across them.
#[derive(Default)]
struct RunState {
    /// (rule index, client) pairs seen in the run.
    hits: HashSet<(usize, String)>,
    /// (test, client) pairs of the expected suite seen in the run.
    expected_seen: HashSet<(String, String)>,
    /// Suites that ran, with the clients seen in each.
    suites_run: BTreeMap<String, BTreeSet<String>>,
    /// (suite, client) pairs whose client failed to launch.
    not_launched: HashSet<(String, String)>,
    sources: RunSources,
    /// Cases `--client` kept, over every suite, and the clients it left out.
    kept: usize,
    other_clients: BTreeSet<String>,
}

/// Classifies every case of every suite file in `dir` against `registry`, then reports listed
/// and expected tests absent from the run.
pub fn classify_run(dir: &Path, registry: &Registry, opts: &ClassifyOptions) -> Result<HiveReport> {
    let matcher = Matcher::valid(registry)?;
    let mut report = HiveReport {
        dir: dir.to_path_buf(),
        allow_missing: opts.allow_missing,
        upstream: registry.settings.upstream.clone(),
        ..HiveReport::default()
    };
    report.require_pins = opts.require_pins;
    let files = suite_files(dir)?;
    if files.is_empty() {
        report.results.push(CaseResult::unlisted(
            String::new(),
            dir.display().to_string(),
            Outcome::EmptyRun,
            super::stream::no_suites_hint(dir),
        ));
    }
    let mut run = RunState::default();
    run.sources.hive = pins::hive_commit(dir);
    for file in &files {
        classify_suite_file(file, dir, &matcher, opts, &mut run, &mut report)?;
    }
    if let Some(c) = opts.client.as_deref().filter(|_| run.kept == 0) {
        if !run.other_clients.is_empty() {
            // A filter that matches nothing is a typo or the wrong run, not an empty run.
            return Err(Error::Usage(format!(
                "--client {}: the run in {} has no cases of client {}; its clients: {}",
                c,
                dir.display(),
                c,
                run.other_clients
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    report.pins = pins::check(&registry.settings.upstream, &run.sources);
    report.pin_mismatches = report
        .pins
        .iter()
        .filter_map(pins::PinCheck::mismatch_message)
        .collect();
    report.sources = std::mem::take(&mut run.sources);
    missing_listed(&matcher, opts, &run, &mut report);
    missing_expected(&matcher, registry, opts, &run, &mut report);
    if !report.pin_mismatches.is_empty() {
        for r in report
            .results
            .iter_mut()
            .filter(|r| r.outcome == Outcome::FIXED)
        {
            r.message.push_str(
                " (likely an upstream change: the run does not match the pinned upstream)",
            );
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

/// Streams one suite file, classifying its cases into `report` and what the run-wide checks
/// need into `run`.
fn classify_suite_file(
    file: &Path,
    dir: &Path,
    matcher: &Matcher,
    opts: &ClassifyOptions,
    run: &mut RunState,
    report: &mut HiveReport,
) -> Result<()> {
    let mut state = SuiteState {
        matcher,
        opts,
        name: None,
        details_log: None,
        summary: SuiteSummary {
            file: file.to_path_buf(),
            ..SuiteSummary::default()
        },
        pending: Vec::new(),
        results: Vec::new(),
        passes: Vec::new(),
        rule_hits: HashSet::new(),
        expected_seen: HashSet::new(),
        launch_failed: BTreeSet::new(),
        real_cases: 0,
        sources: Vec::new(),
        other_clients: BTreeSet::new(),
        kept: 0,
    };
    let reader =
        crate::files::guarded::open_regular(file).map_err(|e| Error::io("reading", file, e))?;
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
        state.results.push(CaseResult::unlisted(
            name.clone(),
            file.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            Outcome::EmptyRun,
            match (&opts.client, state.other_clients.is_empty()) {
                (Some(c), false) => format!(
                    "suite {name} has no cases of client {c} (--client); the run has: {}",
                    state
                        .other_clients
                        .iter()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                _ => format!(
                    "suite {name} ran no test cases{}",
                    if state.summary.lifecycle > 0 {
                        " (only client launch / lifecycle cases)"
                    } else {
                        ""
                    }
                ),
            },
        ));
    }
    state.results.sort_by(|a, b| a.name.cmp(&b.name));
    for s in &state.sources {
        run.sources.add(s);
    }
    run.kept += state.kept;
    run.other_clients.extend(state.other_clients);
    run.hits.extend(state.rule_hits);
    run.expected_seen.extend(state.expected_seen);
    run.not_launched.extend(
        state
            .launch_failed
            .iter()
            .map(|c| (name.clone(), c.clone())),
    );
    run.suites_run
        .entry(name)
        .or_default()
        .extend(state.summary.clients.iter().cloned());
    report.results.extend(state.results);
    report.passes.extend(state.passes);
    report.suites.push(state.summary);
    Ok(())
}

/// Listed tests absent from the run (for suites that ran; `skip` entries are meant to be absent,
/// and a client that failed to launch ran nothing).
fn missing_listed(
    matcher: &Matcher,
    opts: &ClassifyOptions,
    run: &RunState,
    report: &mut HiveReport,
) {
    let clients_for = |suite: &str, rule_clients: &[String]| -> Vec<String> {
        let ran: Vec<String> = run
            .suites_run
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
        if rule.expect() == Expect::Skip || !run.suites_run.contains_key(&rule.exclusion.suite) {
            continue;
        }
        for c in clients_for(&rule.exclusion.suite, rule.clients) {
            if !run.hits.contains(&(i, c.clone()))
                && !run
                    .not_launched
                    .contains(&(rule.exclusion.suite.clone(), c.clone()))
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
}

/// Tests of `--expected-tests` absent from the run, per client.
fn missing_expected(
    matcher: &Matcher,
    registry: &Registry,
    opts: &ClassifyOptions,
    run: &RunState,
    report: &mut HiveReport,
) {
    if opts.expected_tests.is_empty() {
        return;
    }
    let clients = match (&opts.client, run.suites_run.get(&opts.expected_suite)) {
        (Some(c), _) => vec![c.clone()],
        (None, Some(c)) if !c.is_empty() => c.iter().cloned().collect(),
        _ => registry.settings.clients.clone(),
    };
    for test in &opts.expected_tests {
        for c in &clients {
            let skipped = matcher
                .find(&opts.expected_suite, test, Some(c))
                .is_some_and(|(_, r)| r.expect() == Expect::Skip);
            let launched = !run
                .not_launched
                .contains(&(opts.expected_suite.clone(), c.clone()));
            if !skipped && launched && !run.expected_seen.contains(&(test.clone(), c.clone())) {
                report.results.push(CaseResult::unlisted(
                    opts.expected_suite.clone(),
                    format!("{test} ({c})"),
                    Outcome::Missing,
                    "in --expected-tests but absent from the run",
                ));
            }
        }
    }
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

    #[test]
    fn the_excerpt_starts_where_the_log_says_why() {
        let log = "starting client\nwaiting for sync\nsending request 0x1\n--- FAIL: TestX (1.2s)\n    want 0x01, got 0x\n";
        assert_eq!(
            first_lines(log),
            "…\n--- FAIL: TestX (1.2s)\n    want 0x01, got 0x"
        );
        let log =
            "setup\nresponse differs from expected (-- client, ++ test):\n--  \"result\": \"0x\"";
        assert_eq!(
            first_lines(log),
            "…\nresponse differs from expected (-- client, ++ test):\n--  \"result\": \"0x\""
        );
        // No line says why: the start.
        assert_eq!(first_lines("a\nb"), "a\nb");
    }
}
