//! How sure a test's history is (issue 40, first part): from its marks across the runs and what
//! each run records of its sources (the client's version from the suite files' `clientVersions`,
//! hive's commit from `hive.json`), a verdict with its evidence:
//!
//! - `broken`: fails in every run since run R (the onset, with what changed there);
//! - `flaky`: failed k of n, with the 95 % Wilson score interval on its failure rate — only when
//!   it both passed and failed under one client version and one hive commit;
//! - `fixed`: passed in each of the last runs after failing;
//! - `new`: failed in the last run only, after passing;
//! - `undecided`: the runs cannot tell (too few, or its passes and failures fall under different
//!   client or hive versions).
//!
//! Nothing here reads a file: the runs are `history`'s.

use serde::Serialize;

use std::collections::BTreeMap;

/// z for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `k` failures of `n` runs, at 95 %, to 4 decimals.
pub(crate) fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (lo, hi) = wilson_exact(k, n);
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    (round(lo), round(hi))
}

fn wilson_exact(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((center - half).max(0.0), (center + half).min(1.0))
}

/// What a test's runs add up to: the one vocabulary of history, check, diff, summary, update,
/// HTML and JSON (`gone` and `stale` are never a verdict of runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TestClass {
    /// Passed or was absent, then failed in the last run.
    New,
    /// Failing in every run since its onset, including the last.
    Broken,
    /// Both passed and failed under one client version and hive commit.
    Flaky,
    /// Failed and passed, but the runs cannot tell a flake from a break yet (too few, or only
    /// across changes of the client or hive): `--plan` says what to re-run.
    Undecided,
    /// Failed, then passed in each of the last `fixed_after` runs.
    Fixed,
    /// Failed in some run, absent from the last: renamed or removed upstream, or not run.
    Gone,
    /// Listed in the registry, but passed in every run it ran in, or absent from every run.
    Stale,
    /// Broken, and listed in the registry: a known failure (reports fold them into one line).
    Known,
    /// Listed in the registry, and failed in this run as its entry says (`hive check` judges
    /// one run: a history says `known` or `flaky`).
    Expected,
}

impl TestClass {
    /// Every class a history gives, in the order reports list them.
    pub(crate) const ALL: [TestClass; 8] = [
        TestClass::New,
        TestClass::Broken,
        TestClass::Flaky,
        TestClass::Undecided,
        TestClass::Fixed,
        TestClass::Gone,
        TestClass::Stale,
        TestClass::Known,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            TestClass::New => "new",
            TestClass::Broken => "broken",
            TestClass::Flaky => "flaky",
            TestClass::Undecided => "undecided",
            TestClass::Fixed => "fixed",
            TestClass::Gone => "gone",
            TestClass::Stale => "stale",
            TestClass::Known => "known",
            TestClass::Expected => "expected",
        }
    }
}

/// Where a failure began: the last run it passed in, the first it failed in, and what differs
/// between them in the runs' own records.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Onset {
    /// Index (oldest first) of the last run it passed in before failing; `None` when it never
    /// passed before.
    pub(crate) last_pass: Option<usize>,
    pub(crate) first_fail: usize,
    /// "client reth v1.4.2 → v1.4.3", "hive 1a2b → 3c4d"; empty: nothing recorded changed.
    pub(crate) changes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Verdict {
    /// The test's verdict, written once, as the test's own.
    #[serde(skip)]
    pub(crate) verdict: TestClass,
    /// Runs it failed in, of those it ran in.
    pub(crate) failed: usize,
    pub(crate) ran: usize,
    /// The 95 % Wilson interval on the failure rate, for a flaky test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) interval: Option<(f64, f64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) onset: Option<Onset>,
    /// Why, in words ("7 of 30, 12–41 %", "fails since run 12: client … → …").
    pub(crate) why: String,
}

/// What the verdicts need of one run: its name, and what it records of its sources.
pub(crate) struct RunSide<'a> {
    pub(crate) name: String,
    /// Client name → the version it reported (`clientVersions`).
    pub(crate) versions: &'a BTreeMap<String, String>,
    /// `hive.json`'s commit.
    pub(crate) hive: Option<&'a str>,
    /// The simulators' build arguments (`--sim.buildarg`, e.g. the execution-apis branch), when
    /// the run records its command line.
    pub(crate) simulator: Option<String>,
}

/// The sources a run records for one client: its version, and hive's commit. A run that records
/// both has a key: runs share a key only when both are recorded and equal.
fn key<'a>(run: &'a RunSide<'_>, client: &str) -> Option<(&'a String, &'a str)> {
    Some((run.versions.get(client)?, run.hive?))
}

/// What runs `a` and `b` record of `client`, hive and the simulator: what changed ("client reth
/// 1.4.2 → 1.4.3"), and what did not or is not known ("hive unchanged", "hive not recorded").
fn compare(runs: &[RunSide<'_>], client: &str, a: usize, b: usize) -> (Vec<String>, Vec<String>) {
    let (ra, rb) = (&runs[a], &runs[b]);
    let mut changed = Vec::new();
    let mut same = Vec::new();
    let mut one = |what: String, x: Option<String>, y: Option<String>| match (x, y) {
        (Some(x), Some(y)) if x == y => same.push(format!("{what} unchanged")),
        (Some(x), Some(y)) => changed.push(format!("{what} {x} → {y}")),
        (None, None) => same.push(format!("{what} not recorded")),
        (x, y) => {
            let shown = |v: Option<String>| v.unwrap_or_else(|| "unrecorded".into());
            changed.push(format!("{what} {} → {}", shown(x), shown(y)))
        }
    };
    let short = |h: Option<&str>| h.map(|h| h.chars().take(12).collect::<String>());
    one(
        format!("client {client}"),
        ra.versions.get(client).cloned(),
        rb.versions.get(client).cloned(),
    );
    one("hive".into(), short(ra.hive), short(rb.hive));
    if ra.simulator.is_some() || rb.simulator.is_some() {
        one(
            "simulator".into(),
            ra.simulator.clone(),
            rb.simulator.clone(),
        );
    }
    (changed, same)
}

/// What changed between runs `a` and `b` (recorded on both sides, or recorded on one only).
fn changes(runs: &[RunSide<'_>], client: &str, a: usize, b: usize) -> Vec<String> {
    compare(runs, client, a, b).0
}

fn percent((lo, hi): (f64, f64)) -> String {
    format!("{:.0}–{:.0} %", lo * 100.0, hi * 100.0)
}

fn onset_words(runs: &[RunSide<'_>], client: &str, o: &Onset) -> String {
    let since = format!("fails since run {}", runs[o.first_fail].name);
    match o.last_pass {
        None => format!("{since} (it never passed before)"),
        Some(p) => {
            let (changed, same) = compare(runs, client, p, o.first_fail);
            let all: Vec<String> = changed.into_iter().chain(same).collect();
            format!("{since}: {}", all.join("; "))
        }
    }
}

/// One test's runs as the judgement reads them: (run index, failed) for the runs it ran in.
struct Evidence<'r, 'a> {
    ran: Vec<(usize, bool)>,
    failed: usize,
    runs: &'r [RunSide<'a>],
    client: &'r str,
}

impl Evidence<'_, '_> {
    fn verdict(
        &self,
        verdict: TestClass,
        interval: Option<(f64, f64)>,
        onset: Option<Onset>,
        why: String,
    ) -> Option<Verdict> {
        Some(Verdict {
            verdict,
            failed: self.failed,
            ran: self.ran.len(),
            interval,
            onset,
            why,
        })
    }

    /// The sources (client version and hive commit, both recorded) under which the test both
    /// passed and failed among `ran`, in any order: the only evidence of a flake.
    fn mixed(&self, ran: &[(usize, bool)]) -> Vec<(&String, &str)> {
        let mut seen: Vec<((&String, &str), bool, bool)> = Vec::new();
        for &(i, f) in ran {
            let Some(k) = key(&self.runs[i], self.client) else {
                continue;
            };
            match seen.iter_mut().find(|(x, _, _)| *x == k) {
                Some(e) => {
                    e.1 |= f;
                    e.2 |= !f;
                }
                None => seen.push((k, f, !f)),
            }
        }
        seen.into_iter()
            .filter(|(_, f, p)| *f && *p)
            .map(|(k, _, _)| k)
            .collect()
    }

    /// Flaky: failed k of n of the runs under the sources where it both passed and failed, with
    /// the interval on that rate.
    fn flaky(&self, onset: Option<Onset>) -> Option<Verdict> {
        let mixed = self.mixed(&self.ran);
        let under: Vec<&(usize, bool)> = self
            .ran
            .iter()
            .filter(|(i, _)| key(&self.runs[*i], self.client).is_some_and(|k| mixed.contains(&k)))
            .collect();
        let (k, n) = (under.iter().filter(|(_, f)| *f).count(), under.len());
        let interval = wilson(k, n);
        let whole = if n < self.ran.len() {
            format!(" (of the {n} runs under the versions it both passed and failed under)")
        } else {
            String::new()
        };
        Some(Verdict {
            verdict: TestClass::Flaky,
            failed: k,
            ran: n,
            interval: Some(interval),
            onset,
            why: format!("{k} of {n}, {}{whole}", percent(interval)),
        })
    }

    /// Passing in the last `trailing` runs: fixed by a recorded change, or because it never
    /// recovered before, or because a flake at the lowest rate seen before would not pass that
    /// often in a row (under 5 %).
    fn fixed(&self, trailing: usize) -> Option<Verdict> {
        let n = self.ran.len();
        let (last, first_pass) = (self.ran[n - trailing - 1].0, self.ran[n - trailing].0);
        let (what, same) = compare(self.runs, self.client, last, first_pass);
        let before = &self.ran[..n - trailing];
        let low = wilson(before.iter().filter(|(_, f)| *f).count(), before.len()).0;
        let unlikely_for_a_flake = (1.0 - low).powi(trailing as i32) < 0.05;
        if what.is_empty() && !self.mixed(before).is_empty() && !unlikely_for_a_flake {
            return None;
        }
        let all: Vec<String> = what.into_iter().chain(same).collect();
        let why = format!(
            "passes since run {}: {}",
            self.runs[first_pass].name,
            all.join("; ")
        );
        self.verdict(TestClass::Fixed, None, None, why)
    }

    /// The last run failed: the streak of failures at the end, the pass before it, and what
    /// the streak makes of the test. One failure after passing is `new` (never `broken`, even
    /// across a change: one run cannot tell a break from a flake).
    fn failing(&self) -> Option<Verdict> {
        let (ran, n) = (&self.ran, self.ran.len());
        let streak = ran.iter().rev().take_while(|(_, f)| *f).count();
        let first_fail = ran[n - streak].0;
        let last_pass = (streak < n).then(|| ran[n - streak - 1].0);
        let onset = Onset {
            last_pass,
            first_fail,
            changes: last_pass
                .map_or_else(Vec::new, |p| changes(self.runs, self.client, p, first_fail)),
        };
        let words = onset_words(self.runs, self.client, &onset);
        if last_pass.is_none() {
            return if n >= 2 {
                self.verdict(TestClass::Broken, None, Some(onset), words)
            } else {
                let why = "one run: too few to tell a flake from a break".to_string();
                self.verdict(TestClass::Undecided, None, Some(onset), why)
            };
        }
        // A flake's evidence before the streak: a pass and a failure under one version.
        let flaky_before = !self.mixed(&ran[..n - streak]).is_empty();
        if streak == 1 {
            if flaky_before && onset.changes.is_empty() {
                return self.flaky(Some(onset));
            }
            let why = format!("new: {words}");
            return self.verdict(TestClass::New, None, Some(onset), why);
        }
        // A change both runs record, at the onset of two or more failures: broken there.
        let recorded = |p: usize| key(&self.runs[p], self.client).is_some();
        if !onset.changes.is_empty() && recorded(first_fail) && last_pass.is_some_and(recorded) {
            return self.verdict(TestClass::Broken, None, Some(onset), words);
        }
        // Nothing recorded changed at the onset: how likely is the streak for a flake at the
        // rate seen before it (its 95 % upper bound)?
        let before = &ran[..n - streak];
        let upper = wilson(before.iter().filter(|(_, f)| *f).count(), before.len()).1;
        if upper.powi(streak as i32) < 0.05 {
            let why = format!(
                "{words}; a flake at the rate before it (at most {:.0} %) fails {streak} runs in a row less than 5 % of the time",
                upper * 100.0
            );
            return self.verdict(TestClass::Broken, None, Some(onset), why);
        }
        if flaky_before {
            return self.flaky(Some(onset));
        }
        let why = format!("{words}: too few runs to tell");
        self.verdict(TestClass::Undecided, None, Some(onset), why)
    }
}

/// The verdict of a test of `client` with `outcomes` (per run of `runs`: `Some(true)` failed,
/// `Some(false)` passed, `None` not counted), or `None` when it never failed. A test is flaky
/// only when it failed and later passed under one client version and one hive commit; a
/// trailing run of failures is `broken` when its onset is a recorded change, or when a flake at
/// the rate seen before it would fail so often in a row less than 5 % of the time.
pub(crate) fn judge(
    outcomes: &[Option<bool>],
    runs: &[RunSide<'_>],
    client: &str,
    fixed_after: usize,
) -> Option<Verdict> {
    let ran: Vec<(usize, bool)> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.map(|f| (i, f)))
        .collect();
    let failed = ran.iter().filter(|(_, f)| *f).count();
    if failed == 0 {
        return None;
    }
    let e = Evidence {
        ran,
        failed,
        runs,
        client,
    };
    let n = e.ran.len();
    if e.ran[n - 1].1 {
        return e.failing();
    }
    let trailing = e.ran.iter().rev().take_while(|(_, f)| !*f).count();
    if trailing >= fixed_after {
        if let Some(v) = e.fixed(trailing) {
            return Some(v);
        }
    }
    if !e.mixed(&e.ran).is_empty() {
        return e.flaky(None);
    }
    let unrecorded = e.ran.iter().any(|(i, _)| key(&runs[*i], client).is_none());
    let why = if unrecorded {
        format!("{failed} of {n}: the runs do not all record the client's version and hive's commit, so a flake cannot be told from a change")
    } else {
        format!(
            "{failed} of {n}: it passed and failed only under different client or hive versions"
        )
    };
    e.verdict(TestClass::Undecided, None, None, why)
}

/// Tests whose failures began at one onset (same last pass, same first failure, same changes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct OnsetGroup {
    /// The runs (as given) of the last pass and the first failure.
    pub(crate) last_pass: Option<String>,
    pub(crate) first_fail: String,
    pub(crate) changes: Vec<String>,
    /// `suite/name` of each test, in the order given.
    pub(crate) tests: Vec<String>,
}

/// The onsets of the broken and new verdicts among `verdicts`, grouped, oldest first.
pub(crate) fn group_onsets<'v>(
    verdicts: impl Iterator<Item = (String, &'v Verdict)>,
    runs: &[String],
) -> Vec<OnsetGroup> {
    let mut groups: Vec<(usize, OnsetGroup)> = Vec::new();
    for (test, v) in verdicts {
        if !matches!(v.verdict, TestClass::Broken | TestClass::New) {
            continue;
        }
        // A test that never passed has no onset within these runs.
        let Some(o) = v.onset.as_ref().filter(|o| o.last_pass.is_some()) else {
            continue;
        };
        let last_pass = o.last_pass.map(|i| runs[i].clone());
        let first_fail = runs[o.first_fail].clone();
        match groups.iter_mut().find(|(_, g)| {
            g.last_pass == last_pass && g.first_fail == first_fail && g.changes == o.changes
        }) {
            Some((_, g)) => g.tests.push(test),
            None => groups.push((
                o.first_fail,
                OnsetGroup {
                    last_pass,
                    first_fail,
                    changes: o.changes.clone(),
                    tests: vec![test],
                },
            )),
        }
    }
    groups.sort_by_key(|(i, _)| *i);
    groups.into_iter().map(|(_, g)| g).collect()
}

/// Repetitions of a test that fails at `rate` needed before "flaky at that rate" and "broken"
/// part at 95 % (a flake passes at least once with probability 1 − rate^n ≥ 0.95). Without a rate
/// seen (0 or 1), 0.5 is assumed.
pub(crate) fn repetitions(rate: f64) -> u32 {
    let p = if rate > 0.0 && rate < 1.0 { rate } else { 0.5 };
    ((0.05f64).ln() / p.ln()).ceil().clamp(1.0, 1000.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run i's sources: the client's version and hive's commit, leaked for the test's length.
    fn run(i: usize, client: &str, hive: &str) -> RunSide<'static> {
        let versions: &'static BTreeMap<String, String> =
            Box::leak(Box::new([("reth".to_string(), client.to_string())].into()));
        RunSide {
            name: format!("{}", i + 1),
            versions,
            hive: Some(Box::leak(hive.to_string().into_boxed_str())),
            simulator: None,
        }
    }

    fn marks(s: &str) -> Vec<Option<bool>> {
        s.chars()
            .map(|c| match c {
                'p' => Some(false),
                'f' => Some(true),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn wilson_intervals_are_the_textbook_ones() {
        // Computed apart from this code (Python, the score interval's closed form, z = 1.96):
        // 0/10 → 0–0.2775 is also Newcombe's (1998) table value.
        let close =
            |(a, b): (f64, f64), (c, d): (f64, f64)| (a - c).abs() < 5e-4 && (b - d).abs() < 5e-4;
        assert!(
            close(wilson(7, 30), (0.1179, 0.4093)),
            "{:?}",
            wilson(7, 30)
        );
        assert!(close(wilson(0, 10), (0.0, 0.2775)), "{:?}", wilson(0, 10));
        assert!(close(wilson(10, 10), (0.7225, 1.0)), "{:?}", wilson(10, 10));
        assert!(
            close(wilson(1, 29), (0.0061, 0.1718)),
            "{:?}",
            wilson(1, 29)
        );
    }

    #[test]
    fn a_client_change_at_run_12_of_30_is_a_break_with_its_onset() {
        let runs: Vec<RunSide> = (0..30)
            .map(|i| run(i, if i < 11 { "1.4.2" } else { "1.4.3" }, "aaaa"))
            .collect();
        let m = marks(&format!("{}{}", "p".repeat(11), "f".repeat(19)));
        let v = judge(&m, &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::Broken);
        assert_eq!(
            v.onset,
            Some(Onset {
                last_pass: Some(10),
                first_fail: 11,
                changes: vec!["client reth 1.4.2 → 1.4.3".into()]
            })
        );
        assert_eq!(
            v.why,
            "fails since run 12: client reth 1.4.2 → 1.4.3; hive unchanged"
        );
    }

    #[test]
    fn a_flake_under_one_client_gets_its_interval_and_a_break_across_a_change_is_never_flaky() {
        let runs: Vec<RunSide> = (0..30).map(|i| run(i, "1.4.2", "aaaa")).collect();
        // 6 failures of 30, every fifth run, ending on a pass.
        let pattern: String = (0..30)
            .map(|i| if i % 5 == 2 { 'f' } else { 'p' })
            .collect();
        let v = judge(&marks(&pattern), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::Flaky);
        assert_eq!(v.why, "6 of 30, 10–37 %");
        // Passes under one client, failures under the next: never flaky across the change.
        let runs: Vec<RunSide> = (0..6)
            .map(|i| run(i, ["1", "1", "2", "2", "3", "3"][i], "aaaa"))
            .collect();
        let v = judge(&marks("ppffff"), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::Broken);
        let v = judge(&marks("ppffp-"), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::Undecided);
        assert_eq!(
            v.why,
            "2 of 5: it passed and failed only under different client or hive versions"
        );
        // A failure after a pass under one version is new; a pass and a failure under one
        // version before it, in either order, are a flake's, its rate counted under that
        // version only.
        let v = judge(&marks("ppffpf"), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::New);
        let runs: Vec<RunSide> = (0..6)
            .map(|i| run(i, ["1", "1", "2", "2", "2", "2"][i], "aaaa"))
            .collect();
        let v = judge(&marks("ppfpf-"), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::Flaky);
        assert_eq!(
            v.why,
            "2 of 3, 21–94 % (of the 3 runs under the versions it both passed and failed under)"
        );
        // One failure right after a client change is new, not broken.
        let v = judge(&marks("ppppf-"), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::New);
    }

    #[test]
    fn runs_that_do_not_record_their_versions_never_make_a_flake() {
        let versions: &'static BTreeMap<String, String> = Box::leak(Box::default());
        let runs: Vec<RunSide> = (0..6)
            .map(|i| RunSide {
                name: format!("{}", i + 1),
                versions,
                hive: None,
                simulator: None,
            })
            .collect();
        let v = judge(&marks("pfpfpp"), &runs, "reth", 3).unwrap();
        assert_eq!(v.verdict, TestClass::Undecided);
        assert_eq!(v.why, "2 of 6: the runs do not all record the client's version and hive's commit, so a flake cannot be told from a change");
        let v = judge(&marks("ppppff"), &runs, "reth", 3).unwrap();
        assert_eq!(
            v.why,
            "fails since run 5: client reth not recorded; hive not recorded: too few runs to tell"
        );
    }

    #[test]
    fn a_hive_change_too_few_runs_and_a_fix() {
        let runs: Vec<RunSide> = (0..4)
            .map(|i| run(i, "1", if i < 2 { "aaaa" } else { "bbbb" }))
            .collect();
        let v = judge(&marks("ppff"), &runs, "reth", 2).unwrap();
        assert_eq!(
            v.why,
            "fails since run 3: hive aaaa → bbbb; client reth unchanged"
        );
        assert_eq!(v.verdict, TestClass::Broken);
        let one = [run(0, "1", "aaaa")];
        assert_eq!(
            judge(&marks("f"), &one, "reth", 2).unwrap().verdict,
            TestClass::Undecided
        );
        let v = judge(&marks("ffpp"), &runs, "reth", 2).unwrap();
        assert_eq!(
            (v.verdict, v.why.as_str()),
            (
                TestClass::Fixed,
                "passes since run 3: hive aaaa → bbbb; client reth unchanged"
            )
        );
        // Two failures in a row after passing, nothing changed: a flake at ≤ 60 % would do that.
        let same: Vec<RunSide> = (0..4).map(|i| run(i, "1", "aaaa")).collect();
        let v = judge(&marks("ppff"), &same, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::Undecided);
        // Ten passes, then four failures, nothing changed: broken.
        let long: Vec<RunSide> = (0..14).map(|i| run(i, "1", "aaaa")).collect();
        let v = judge(&marks("ppppppppppffff"), &long, "reth", 2).unwrap();
        assert_eq!(v.verdict, TestClass::Broken);
    }

    #[test]
    fn repetitions_separate_a_flake_from_a_break() {
        assert_eq!(repetitions(0.2), 2);
        assert_eq!(repetitions(0.5), 5);
        assert_eq!(repetitions(0.9), 29);
        assert_eq!(repetitions(0.0), 5);
    }
}
