//! `warden hive history DIR…`: every test that failed at least once, or that the registry lists,
//! across several runs (oldest first), and what each registry entry excused.
//!
//! One pass: each run is streamed once, keeping its failures and its listed cases, and for every
//! case a keyed 64-bit hash of its (suite, name), entered in a table of which runs ran it. A test
//! that failed in some run but is not among another run's failures either passed there or was
//! absent: the table says which, without reading that run again (a second pass over every run
//! did this before and took half the time). Memory grows with the tests that ever failed and with
//! the distinct test names (16 bytes or so each, one bit per run), not with the cases or the runs.
//! The hash is SipHash with this process's random key, so no file can be written to collide; by
//! chance two of 100,000 names collide once in about 10^9 histories. Runs are read on every core,
//! one run per thread at a time.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;

use super::classify::{first_lines, split_client};
use super::pins::{self, PinCheck, RunSources};
use super::stream::{failure_text, stream_run, RunVisitor};
use super::suite::HiveCase;
use crate::error::{Error, Result};
use crate::known_issues::matcher::Matcher;
use crate::known_issues::schema::Expect;
use crate::known_issues::Registry;

#[derive(Clone, Debug, Default)]
pub struct HistoryOptions {
    /// Only this client's cases.
    pub client: Option<String>,
    /// A test that passed in each of the last `fixed_after` runs after failing earlier is fixed.
    pub fixed_after: usize,
}

/// How a test did in one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Mark {
    Pass,
    Fail,
    Absent,
    /// Not run: its suite did not run for its client in that run (not part of the run, or the
    /// client failed to launch), so that run says nothing about it and is left out of its class.
    NotRun,
}

impl Mark {
    /// One character per run in the history strip.
    pub(crate) fn symbol(self) -> char {
        match self {
            Mark::Pass => '✓',
            Mark::Fail => '✗',
            Mark::Absent => '·',
            Mark::NotRun => '?',
        }
    }
}

pub(crate) use super::verdict::TestClass;

/// One test across the runs.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct TestHistory {
    pub(crate) suite: String,
    /// The name as hive wrote it, with the client suffix; for a listed pattern that matched no
    /// test, the pattern and its client.
    pub(crate) name: String,
    /// The one judgement of its runs (`broken`, `flaky`, `fixed`, `new`, `undecided`; `gone`
    /// and `stale` for what the last run or the registry says).
    #[serde(rename = "verdict")]
    pub(crate) class: TestClass,
    /// One mark per run, oldest first.
    pub(crate) marks: Vec<Mark>,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    /// The registry entry listing it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entry: Option<String>,
    /// Its exclusion's index in the registry's rules (for `known-issues update`).
    #[serde(skip)]
    pub(crate) rule: Option<usize>,
    /// The last run ended it by timeout (infrastructure, not the test).
    pub(crate) timeout: bool,
    /// First lines of its failure text in the last run it failed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    /// Listed with a signature and failing in the last run: whether that failure still matches
    /// the signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) signature_matches: Option<bool>,
    /// What the verdict rests on: the runs it failed in, the interval of a flaky test, and
    /// where a failure began.
    #[serde(rename = "evidence", skip_serializing_if = "Option::is_none")]
    pub(crate) verdict: Option<super::verdict::Verdict>,
}

impl TestHistory {
    /// The strip of marks, oldest first: `✓✓✗·✗`.
    pub(crate) fn strip(&self) -> String {
        self.marks.iter().map(|m| m.symbol()).collect()
    }
}

/// What a registry entry excused across the runs.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct EntryHistory {
    pub(crate) id: String,
    pub(crate) file: PathBuf,
    /// Listed tests seen, and those that failed in every run they ran in.
    pub(crate) tests: usize,
    pub(crate) failed_every_run: usize,
    pub(crate) flaky: usize,
    pub(crate) passing: usize,
    /// Exclusions that matched no test of any run (in suites that ran).
    pub(crate) unmatched: usize,
    pub(crate) verdict: String,
    /// How the entry does not hold, each with the runs that show it: its listed failure text no
    /// longer matches, it is called flaky but fails every run, or it is listed broken and
    /// passes under the newest client.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) does_not_hold: Vec<String>,
    /// The entry's title, the first paragraph of its why, and its review date, for people.
    pub(crate) title: String,
    pub(crate) why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) review_by: Option<String>,
}

/// One run: its directory, what it records of its sources, and its size.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct RunInfo {
    pub(crate) dir: PathBuf,
    /// How verdicts, onsets and notes name it ([`run_names`]).
    #[serde(skip)]
    pub(crate) name: String,
    pub(crate) sources: RunSources,
    pub(crate) cases: usize,
    pub(crate) failed: usize,
    /// Each suite that ran, with its clients.
    #[serde(skip)]
    pub(crate) suites: BTreeMap<String, BTreeSet<String>>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct History {
    pub(crate) runs: Vec<RunInfo>,
    /// Sorted by class, then suite and name.
    pub(crate) tests: Vec<TestHistory>,
    pub(crate) entries: Vec<EntryHistory>,
    /// The registry's pins against the last run.
    pub(crate) pins: Vec<PinCheck>,
    pub(crate) pin_mismatches: Vec<String>,
    pub(crate) fixed_after: usize,
    /// Broken and new failures grouped by where they began: one change, many failures, which is
    /// usually one issue. Oldest onset first.
    pub(crate) onsets: Vec<super::verdict::OnsetGroup>,
    /// What the runs' records say of themselves: runs that record no client version or hive
    /// commit (their verdicts cannot call a test flaky), runs given out of order, suite files
    /// that disagree. Also on stderr.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
    /// `--require-pins`: a pin mismatch is a failure.
    #[serde(skip)]
    pub require_pins: bool,
    /// `--all`: text and markdown list the known failures too, instead of folding them.
    #[serde(skip)]
    pub all: bool,
}

impl TestHistory {
    /// A known failure: broken, and listed in the registry (what the registry expects).
    pub(crate) fn is_known(&self) -> bool {
        self.class == TestClass::Known
    }
}

impl History {
    /// The tests text and markdown list: all with `--all`, else all but the known failures.
    pub(crate) fn shown(&self) -> impl Iterator<Item = &TestHistory> {
        self.tests.iter().filter(|t| self.all || !t.is_known())
    }

    /// The line that stands for the known failures not listed, if any.
    pub(crate) fn known_folded(&self) -> Option<String> {
        let n = self.tests.iter().filter(|t| t.is_known()).count();
        (!self.all && n > 0).then(|| {
            format!(
                "{} (broken, listed in the registry): --all lists {}",
                crate::markup::count(n, "known failure", "known failures"),
                if n == 1 { "it" } else { "them" }
            )
        })
    }

    pub(crate) fn count(&self, class: TestClass) -> usize {
        self.tests.iter().filter(|t| t.class == class).count()
    }

    /// Tests that failed in the last run, per suite (names without the client suffix).
    pub(crate) fn failed_last(&self) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for t in &self.tests {
            if t.marks.last() == Some(&Mark::Fail) {
                out.entry(t.suite.as_str())
                    .or_default()
                    .insert(split_client(&t.name).0);
            }
        }
        out
    }

    pub(crate) fn exit_code(&self) -> u8 {
        u8::from(self.require_pins && !self.pin_mismatches.is_empty())
    }
}

/// A case the first pass keeps: a failure, or a case the registry lists.
struct Kept {
    suite: String,
    name: String,
    pass: bool,
    timeout: bool,
    rule: Option<usize>,
    /// Inline text or log offsets, until the file's details log is open (last run only).
    pending: Option<HiveCase<'static>>,
    text: Option<String>,
    /// For a listed failure of the last run whose rule has a signature: whether its whole
    /// failure text still matches it.
    signature_matches: Option<bool>,
}

/// The pass over one run.
struct Scan<'a, 'r> {
    matcher: &'a Matcher<'r>,
    /// The key of the (suite, name) hashes.
    keys: &'a RandomState,
    /// This run's index, and the table its cases' hashes go to a few thousand at a time.
    run: usize,
    ran_in: &'a Mutex<RanIn>,
    ran: Vec<u64>,
    client: Option<&'a str>,
    want_text: bool,
    kept: Vec<Kept>,
    /// Where this file's cases start in `kept`.
    file_start: usize,
    cases: usize,
    failed: usize,
    suites: BTreeMap<String, BTreeSet<String>>,
}

/// Whether a case is a test of the client asked about (not a lifecycle or launch case).
fn is_test<'c>(case: &'c HiveCase<'_>, client: Option<&str>) -> Option<(&'c str, Option<&'c str>)> {
    let (test, c) = split_client(&case.name);
    if client.is_some_and(|want| c.is_some_and(|c| c != want))
        || case.multi_test_context
        || test == "client launch"
    {
        return None;
    }
    Some((test, c))
}

impl RunVisitor for Scan<'_, '_> {
    fn case(&mut self, suite: &str, case: HiveCase<'_>) {
        // Every case, as the second pass looked every case up by (suite, name).
        self.ran
            .push(self.keys.hash_one((suite, case.name.as_ref())));
        if self.ran.len() == RAN_BATCH {
            self.flush_ran();
        }
        let Some((test, client)) = is_test(&case, self.client) else {
            return;
        };
        self.cases += 1;
        let clients = self.suites.entry(suite.to_string()).or_default();
        if let Some(c) = client {
            if !clients.contains(c) {
                clients.insert(c.to_string());
            }
        }
        let rule = self.matcher.find(suite, test, client).map(|(i, _)| i);
        if case.pass && rule.is_none() {
            return;
        }
        if !case.pass {
            self.failed += 1;
        }
        let keep_text = !case.pass && self.want_text;
        self.kept.push(Kept {
            suite: suite.to_string(),
            name: case.name.to_string(),
            pass: case.pass,
            timeout: case.timeout,
            rule,
            pending: keep_text.then(|| case.into_owned()),
            text: None,
            signature_matches: None,
        });
    }

    fn file_end(&mut self, mut log: Option<&mut File>) {
        for k in &mut self.kept[self.file_start..] {
            if let Some(case) = k.pending.take() {
                let text = failure_text(&case, log.as_deref_mut());
                let signature = k
                    .rule
                    .and_then(|r| self.matcher.rules[r].signature.as_ref());
                k.signature_matches =
                    signature.map(|sig| text.as_deref().is_some_and(|t| sig.is_match(t)));
                k.text = text.map(|t| first_lines(&t));
            }
        }
        self.file_start = self.kept.len();
    }
}

/// Hashes a reader holds before it takes the lock of the table.
const RAN_BATCH: usize = 4096;

/// What the pass keeps of a run.
struct Scanned {
    kept: Vec<Kept>,
    cases: usize,
    failed: usize,
    suites: BTreeMap<String, BTreeSet<String>>,
}

impl Scan<'_, '_> {
    fn into_run(self) -> Scanned {
        Scanned {
            kept: self.kept,
            cases: self.cases,
            failed: self.failed,
            suites: self.suites,
        }
    }

    fn flush_ran(&mut self) {
        if let Ok(mut table) = self.ran_in.lock() {
            table.add(self.run, &self.ran);
        }
        self.ran.clear();
    }
}

/// Which runs ran each (suite, name) hash: for each group of 64 runs, a map from the hash to a
/// bit per run.
struct RanIn {
    groups: Vec<HashMap<u64, u64>>,
}

impl RanIn {
    fn new(runs: usize) -> Self {
        RanIn {
            groups: (0..runs.div_ceil(64)).map(|_| HashMap::new()).collect(),
        }
    }

    fn add(&mut self, run: usize, hashes: &[u64]) {
        let Some(group) = self.groups.get_mut(run / 64) else {
            return;
        };
        for &h in hashes {
            *group.entry(h).or_default() |= 1 << (run % 64);
        }
    }

    fn ran(&self, hash: u64, run: usize) -> bool {
        self.groups
            .get(run / 64)
            .and_then(|g| g.get(&hash))
            .is_some_and(|bits| bits & (1 << (run % 64)) != 0)
    }
}

/// Runs `job` for every index below `n` on up to `threads` threads; results in index order.
fn on_every_core<T: Send>(n: usize, job: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(n.max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<T>>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = job(i);
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .map_err(|_| Error::Usage("a reader thread panicked".into()))?
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Usage("a run was not read".into()))))
        .collect()
}

/// Classifies one test's marks (runs where its client did not launch left out).
fn classify(marks: &[Mark], listed: bool, fixed_after: usize) -> Option<TestClass> {
    let marks: Vec<Mark> = marks
        .iter()
        .copied()
        .filter(|m| *m != Mark::NotRun)
        .collect();
    let failed = marks.iter().filter(|m| **m == Mark::Fail).count();
    let passed = marks.iter().filter(|m| **m == Mark::Pass).count();
    let last = *marks.last()?;
    Some(if failed == 0 {
        if !listed {
            return None;
        }
        TestClass::Stale
    } else if last == Mark::Absent {
        TestClass::Gone
    } else if marks.len() > 1 && last == Mark::Fail && failed == 1 {
        TestClass::New
    } else if passed == 0 {
        TestClass::Broken
    } else if marks.len() >= fixed_after
        && marks[marks.len() - fixed_after..]
            .iter()
            .all(|m| *m == Mark::Pass)
    {
        TestClass::Fixed
    } else {
        TestClass::Flaky
    })
}

/// The runs' scans merged: a history per test, marked per run, and what each run was.
fn merge_scans(
    scans: Vec<(Scanned, RunSources)>,
    dirs: &[PathBuf],
) -> (Vec<TestHistory>, Vec<RunInfo>) {
    let n = dirs.len();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut tests: Vec<TestHistory> = Vec::new();
    let mut runs = Vec::with_capacity(n);
    for (r, (scan, sources)) in scans.into_iter().enumerate() {
        for k in scan.kept {
            let i = *index
                .entry((k.suite.clone(), k.name.clone()))
                .or_insert_with(|| {
                    tests.push(TestHistory {
                        suite: k.suite,
                        name: k.name,
                        class: TestClass::Stale,
                        marks: vec![Mark::Absent; n],
                        passed: 0,
                        failed: 0,
                        entry: None,
                        rule: None,
                        timeout: false,
                        text: None,
                        signature_matches: None,
                        verdict: None,
                    });
                    tests.len() - 1
                });
            let t = &mut tests[i];
            // A name twice in one run: a failure wins.
            if t.marks[r] != Mark::Fail {
                t.marks[r] = if k.pass { Mark::Pass } else { Mark::Fail };
            }
            t.rule = t.rule.or(k.rule);
            if r + 1 == n && !k.pass {
                t.timeout = k.timeout;
                t.text = k.text.or(t.text.take());
                t.signature_matches = k.signature_matches.or(t.signature_matches);
            }
        }
        runs.push(RunInfo {
            dir: dirs[r].clone(),
            name: String::new(),
            sources,
            cases: scan.cases,
            failed: scan.failed,
            suites: scan.suites,
        });
    }
    (tests, runs)
}

/// A test that failed somewhere passed in each other run that ran it; absent only where its
/// suite ran for its client (otherwise the run says nothing of it).
fn settle_marks(
    tests: &mut [TestHistory],
    (keys, ran_in): (&RandomState, &RanIn),
    runs: &[RunInfo],
) {
    // For tests that failed somewhere, whether each other run ran them (then it passed there).
    for t in tests.iter_mut() {
        if !t.marks.contains(&Mark::Fail) {
            continue;
        }
        let hash = keys.hash_one((t.suite.as_str(), t.name.as_str()));
        for (r, mark) in t.marks.iter_mut().enumerate() {
            if *mark == Mark::Absent && ran_in.ran(hash, r) {
                *mark = Mark::Pass;
            }
        }
    }
    // Absent only where its suite ran for its client: otherwise the run says nothing of it.
    for t in tests.iter_mut() {
        let client = split_client(&t.name).1;
        for (r, mark) in t.marks.iter_mut().enumerate() {
            let ran = runs[r]
                .suites
                .get(&t.suite)
                .is_some_and(|clients| client.is_none_or(|c| clients.contains(c)));
            if *mark == Mark::Absent && !ran {
                *mark = Mark::NotRun;
            }
        }
    }
}

/// Reads the runs in `dirs` (oldest first) and classifies every test that failed in one of them
/// or that the registry lists.
pub fn history(dirs: &[PathBuf], registry: &Registry, opts: &HistoryOptions) -> Result<History> {
    // A run without suite files is a wrong folder or a crashed hive, never a run of nothing.
    for dir in dirs {
        if super::stream::suite_files(dir)?.is_empty() {
            return Err(crate::error::Error::Usage(super::stream::no_suites_hint(
                dir,
            )));
        }
    }
    if dirs.is_empty() {
        return Err(Error::Usage(
            "hive history needs at least one results directory".into(),
        ));
    }
    let matcher = Matcher::valid(registry)?;
    let n = dirs.len();
    let fixed_after = opts.fixed_after.max(1);
    // One pass: failures and listed cases of every run, and which runs ran which names.
    let keys = RandomState::new();
    let ran_in = Mutex::new(RanIn::new(n));
    let scans = on_every_core(n, |i| {
        let mut scan = Scan {
            matcher: &matcher,
            keys: &keys,
            run: i,
            ran_in: &ran_in,
            ran: Vec::with_capacity(RAN_BATCH),
            client: opts.client.as_deref(),
            want_text: i + 1 == n,
            kept: Vec::new(),
            file_start: 0,
            cases: 0,
            failed: 0,
            suites: BTreeMap::new(),
        };
        let sources = stream_run(&dirs[i], &mut scan)?;
        scan.flush_ran();
        Ok((scan.into_run(), sources))
    })?;
    let ran_in = ran_in
        .into_inner()
        .map_err(|_| Error::Usage("a reader thread panicked".into()))?;
    let (mut tests, mut runs) = merge_scans(scans, dirs);
    let names = run_names(&runs);
    for (r, name) in runs.iter_mut().zip(names) {
        r.name = name;
    }
    settle_marks(&mut tests, (&keys, &ran_in), &runs);
    tests.retain_mut(|t| {
        t.passed = t.marks.iter().filter(|m| **m == Mark::Pass).count();
        t.failed = t.marks.iter().filter(|m| **m == Mark::Fail).count();
        t.entry = t.rule.map(|r| matcher.rules[r].entry.id.clone());
        match classify(&t.marks, t.rule.is_some(), fixed_after) {
            Some(c) => {
                t.class = c;
                true
            }
            None => false,
        }
    });
    add_verdicts(&mut tests, &runs, fixed_after);
    unmatched_rules(&matcher, &runs, opts, &mut tests);
    // What matters first: the known failures (broken and listed) last, the rest by verdict,
    // and within one what the registry does not list yet.
    tests.sort_by(|a, b| {
        (a.is_known(), a.class, a.entry.is_some(), &a.suite, &a.name).cmp(&(
            b.is_known(),
            b.class,
            b.entry.is_some(),
            &b.suite,
            &b.name,
        ))
    });
    let entries = entry_histories(&matcher, &tests, &runs);
    let last = runs.last().map(|r| r.sources.clone()).unwrap_or_default();
    let pins = pins::check(&registry.settings.upstream, &last);
    let onsets = onsets(&tests, &runs);
    Ok(History {
        notes: run_notes(&runs),
        onsets,
        pin_mismatches: pins.iter().filter_map(PinCheck::mismatch_message).collect(),
        pins,
        runs,
        tests,
        entries,
        fixed_after,
        require_pins: false,
        all: false,
    })
}

/// Each failing test's verdict, from its marks and the runs' records of their sources.
fn add_verdicts(tests: &mut [TestHistory], runs: &[RunInfo], fixed_after: usize) {
    let sides: Vec<super::verdict::RunSide<'_>> = runs
        .iter()
        .map(|r| super::verdict::RunSide {
            name: r.name.clone(),
            versions: &r.sources.client_versions,
            hive: r.sources.hive.as_deref(),
            simulator: (!r.sources.sim_buildargs.is_empty()).then(|| {
                r.sources
                    .sim_buildargs
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
        })
        .collect();
    for t in tests.iter_mut() {
        let outcomes: Vec<Option<bool>> = t
            .marks
            .iter()
            .map(|m| match m {
                Mark::Pass => Some(false),
                Mark::Fail => Some(true),
                _ => None,
            })
            .collect();
        let client = split_client(&t.name).1.unwrap_or_default();
        t.verdict = super::verdict::judge(&outcomes, &sides, client, fixed_after);
    }
    // The class of a test its runs judge is the verdict's: one judgement, never two.
    for t in tests.iter_mut() {
        // Absent from the last run, or never failing: nothing to judge now.
        if matches!(t.class, TestClass::Gone | TestClass::Stale) {
            t.verdict = None;
            continue;
        }
        if let Some(v) = &t.verdict {
            t.class = v.verdict;
        }
        // Broken and listed: a known failure, in the same one vocabulary.
        if t.class == TestClass::Broken && t.rule.is_some() {
            t.class = TestClass::Known;
            if let Some(v) = &mut t.verdict {
                v.verdict = TestClass::Known;
            }
        }
    }
}

/// What the runs' records say of themselves, for people: runs without the records a flake
/// needs, runs out of order, and each run's own notes.
fn run_notes(runs: &[RunInfo]) -> Vec<String> {
    let names: Vec<String> = runs.iter().map(|r| r.name.clone()).collect();
    let mut notes = Vec::new();
    let list = |pick: &dyn Fn(&RunInfo) -> bool| -> Vec<String> {
        runs.iter()
            .zip(&names)
            .filter(|(r, _)| pick(r))
            .map(|(_, n)| n.clone())
            .collect()
    };
    for (what, missing) in [
        (
            "clientVersions",
            list(&|r: &RunInfo| r.sources.client_versions.is_empty()),
        ),
        (
            "hive.json's commit",
            list(&|r: &RunInfo| r.sources.hive.is_none()),
        ),
    ] {
        if !missing.is_empty() {
            notes.push(format!(
                "run{} {} record{} no {what}: a pass and a failure there cannot make a test flaky",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                if missing.len() == 1 { "s" } else { "" }
            ));
        }
    }
    for i in 1..runs.len() {
        if let (Some(a), Some(b)) = (runs[i - 1].sources.started, runs[i].sources.started) {
            if b < a {
                notes.push(format!(
                    "run {} was written before run {} (suite files at {b} and {a}): runs are read in the order given, oldest first",
                    names[i], names[i - 1]
                ));
            }
        }
    }
    for (r, n) in runs.iter().zip(&names) {
        notes.extend(r.sources.notes.iter().map(|x| format!("run {n}: {x}")));
    }
    notes
}

/// How runs are named in verdicts and onsets: the folder's name (`1780003600`), or the path as
/// given when two runs share a folder name (`a/results`, `b/results`).
fn run_names(runs: &[RunInfo]) -> Vec<String> {
    let base = |r: &RunInfo| r.dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let bases: Vec<Option<String>> = runs.iter().map(base).collect();
    runs.iter()
        .zip(&bases)
        .map(|(r, b)| match b {
            Some(b) if bases.iter().filter(|x| x.as_ref() == Some(b)).count() == 1 => b.clone(),
            _ => r.dir.display().to_string(),
        })
        .collect()
}

/// The broken and new failures grouped by where they began.
fn onsets(tests: &[TestHistory], runs: &[RunInfo]) -> Vec<super::verdict::OnsetGroup> {
    super::verdict::group_onsets(
        tests.iter().filter_map(|t| {
            t.verdict
                .as_ref()
                .map(|v| (format!("{}/{}", t.suite, t.name), v))
        }),
        &runs.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
    )
}

/// Listed tests absent from every run: one stale row per exclusion and client that matched
/// nothing, for suites that ran with that client (`skip` exclusions are meant to be absent).
fn unmatched_rules(
    matcher: &Matcher,
    runs: &[RunInfo],
    opts: &HistoryOptions,
    tests: &mut Vec<TestHistory>,
) {
    let matched: HashSet<usize> = tests.iter().filter_map(|t| t.rule).collect();
    for (i, rule) in matcher.rules.iter().enumerate() {
        if matched.contains(&i) || rule.expect() == Expect::Skip {
            continue;
        }
        let ran: BTreeSet<&str> = runs
            .iter()
            .filter_map(|r| r.suites.get(&rule.exclusion.suite))
            .flatten()
            .map(String::as_str)
            .filter(|c| rule.clients.is_empty() || rule.clients.iter().any(|x| x == c))
            .filter(|c| opts.client.as_deref().is_none_or(|want| want == *c))
            .collect();
        for c in ran {
            tests.push(TestHistory {
                suite: rule.exclusion.suite.clone(),
                name: format!("{} ({c})", rule.pattern()),
                class: TestClass::Stale,
                marks: vec![Mark::Absent; runs.len()],
                passed: 0,
                failed: 0,
                entry: Some(rule.entry.id.clone()),
                rule: Some(i),
                timeout: false,
                text: None,
                signature_matches: None,
                verdict: None,
            });
        }
    }
}

/// Per registry entry: how its listed tests did, and what that says about the entry.
fn entry_histories(
    matcher: &Matcher,
    tests: &[TestHistory],
    runs: &[RunInfo],
) -> Vec<EntryHistory> {
    let mut out: Vec<EntryHistory> = Vec::new();
    for entry_rules in matcher
        .rules
        .iter()
        .enumerate()
        .collect::<Vec<_>>()
        .chunk_by(|a, b| std::ptr::eq(a.1.entry, b.1.entry))
    {
        let entry = entry_rules[0].1.entry;
        let mine: Vec<&TestHistory> = tests
            .iter()
            .filter(|t| {
                t.rule
                    .is_some_and(|r| entry_rules.iter().any(|(i, _)| *i == r))
            })
            .collect();
        let seen: Vec<&&TestHistory> = mine.iter().filter(|t| t.passed + t.failed > 0).collect();
        let every = seen.iter().filter(|t| t.passed == 0).count();
        let flaky = seen.iter().filter(|t| t.class == TestClass::Flaky).count();
        let passing = seen.iter().filter(|t| t.failed == 0).count();
        let failing: Vec<&&&TestHistory> = seen.iter().filter(|t| t.failed > 0).collect();
        let unmatched = mine.len() - seen.len();
        let listed_flaky = entry_rules.iter().any(|(_, r)| r.expect() == Expect::Flaky);
        let all_are = |c: TestClass| !failing.is_empty() && failing.iter().all(|t| t.class == c);
        let verdict = if mine.is_empty() {
            "not checked: none of its suites ran".to_string()
        } else if failing.is_empty() {
            "stale: none of its tests failed in any run (passed, or absent): remove its exclusions"
                .to_string()
        } else if listed_flaky && every == seen.len() && unmatched == 0 {
            "not a flake: its tests failed in every run; list them as expect = \"fail\"".to_string()
        } else if flaky > 0 && !listed_flaky {
            format!("flaky: {flaky} of its tests passed and failed under one client version and hive commit")
        } else if every == seen.len() {
            format!(
                "excuses {every} failing test{} in every run",
                if every == 1 { "" } else { "s" }
            )
        } else if all_are(TestClass::Fixed) && passing + failing.len() == seen.len() {
            "fixed: its tests failed, then passed in each of the last runs: remove its exclusions"
                .to_string()
        } else if all_are(TestClass::Known) {
            format!(
                "excuses {} test{} broken since a change the runs record",
                failing.len(),
                if failing.len() == 1 { "" } else { "s" }
            )
        } else {
            format!("{every} of its {} tests failed in every run", seen.len())
        };
        out.push(EntryHistory {
            does_not_hold: does_not_hold(entry_rules, &mine, runs),
            id: entry.id.clone(),
            file: entry.path.clone(),
            tests: seen.len(),
            failed_every_run: every,
            flaky,
            passing,
            unmatched,
            verdict,
            title: entry.data.title.clone(),
            why: entry.why_first_paragraph().to_string(),
            review_by: entry
                .data
                .review_by
                .as_ref()
                .map(|d| d.get_ref().to_string()),
        });
    }
    out
}

/// How an entry's listing no longer holds, each with the runs that show it: a failure that no
/// longer matches its signature (last run), a flaky listing whose tests failed in every run they
/// ran in, a broken (`expect = "fail"`) listing whose tests pass under the newest client.
fn does_not_hold(
    rules: &[(usize, &crate::known_issues::matcher::Rule)],
    mine: &[&TestHistory],
    runs: &[RunInfo],
) -> Vec<String> {
    let names: Vec<String> = runs.iter().map(|r| r.name.clone()).collect();
    let runs_where = |t: &TestHistory, m: Mark| -> String {
        let runs: Vec<String> = t
            .marks
            .iter()
            .zip(&names)
            .filter(|(x, _)| **x == m)
            .map(|(_, n)| n.clone())
            .collect();
        span(&runs)
    };
    let listed_as = |t: &TestHistory, e: Expect| {
        t.rule
            .and_then(|r| rules.iter().find(|(i, _)| *i == r))
            .is_some_and(|(_, x)| x.expect() == e)
    };
    let mut out = Vec::new();
    let last = names.last().cloned().unwrap_or_default();
    for t in mine {
        if t.signature_matches == Some(false) {
            out.push(format!(
                "{}/{} fails in run {last}, but no longer with its listed failure text",
                t.suite, t.name
            ));
        }
        if listed_as(t, Expect::Flaky) && t.failed > 1 && t.passed == 0 {
            out.push(format!(
                "{}/{} is listed flaky but failed in every run it ran in ({})",
                t.suite,
                t.name,
                runs_where(t, Mark::Fail)
            ));
        }
        if listed_as(t, Expect::Fail) && t.failed > 0 {
            if let Some(newest) = passes_under_newest(t, runs, &names) {
                out.push(newest);
            }
        }
    }
    out.truncate(20);
    out
}

/// "listed broken, but passes under the newest client (reth 1.4.3): runs 29, 30": every run
/// under the last run's client version that ran it passed it.
fn passes_under_newest(t: &TestHistory, runs: &[RunInfo], names: &[String]) -> Option<String> {
    let client = split_client(&t.name).1?;
    let newest = runs.last()?.sources.client_versions.get(client)?;
    let under: Vec<(usize, Mark)> = t
        .marks
        .iter()
        .enumerate()
        .filter(|(i, m)| {
            matches!(m, Mark::Pass | Mark::Fail)
                && runs[*i].sources.client_versions.get(client) == Some(newest)
        })
        .map(|(i, m)| (i, *m))
        .collect();
    (!under.is_empty() && under.iter().all(|(_, m)| *m == Mark::Pass)).then(|| {
        let shown: Vec<String> = under.iter().map(|(i, _)| names[*i].clone()).collect();
        format!(
            "{}/{} is listed broken but passes under the newest client ({client} {newest}): {}",
            t.suite,
            t.name,
            span(&shown)
        )
    })
}

/// Runs, named: "run A", "runs A, B, C", or "19 runs, A to B".
fn span(runs: &[String]) -> String {
    match runs {
        [one] => format!("run {one}"),
        [first, .., last] if runs.len() > 3 => {
            format!("{} runs, {first} to {last}", runs.len())
        }
        _ => format!("runs {}", runs.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Mark::{Absent as A, Fail as F, NotRun as N, Pass as P};

    #[test]
    fn classes() {
        let c = |m: &[Mark], listed| classify(m, listed, 2);
        assert_eq!(c(&[F, F, F], false), Some(TestClass::Broken));
        assert_eq!(c(&[A, F, F], false), Some(TestClass::Broken));
        assert_eq!(c(&[P, A, F], false), Some(TestClass::New));
        assert_eq!(c(&[F], false), Some(TestClass::Broken));
        assert_eq!(c(&[F, P, P], true), Some(TestClass::Fixed));
        assert_eq!(c(&[F, F, P], true), Some(TestClass::Flaky));
        assert_eq!(c(&[P, F, P, F], false), Some(TestClass::Flaky));
        assert_eq!(c(&[F, F, A], true), Some(TestClass::Gone));
        assert_eq!(c(&[P, P, P], true), Some(TestClass::Stale));
        assert_eq!(c(&[A, A], true), Some(TestClass::Stale));
        assert_eq!(c(&[P, P], false), None);
        // A run where the client did not launch says nothing.
        assert_eq!(c(&[F, F, N], true), Some(TestClass::Broken));
        assert_eq!(c(&[P, N], false), None);
        assert_eq!(c(&[N, N], true), None);
    }
}
