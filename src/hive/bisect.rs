//! The decisions of `hive bisect` (issue 52, first part): which commit between a good and a bad
//! one to probe next, when a commit's probes decide its side, and the first bad commit. Nothing
//! here dispatches or reads a run: the caller probes the commit this asks for and records what
//! the probe showed.
//!
//! A flaky test fails on the good side too, so one failure proves nothing. Each side's failure
//! rate is what its probes show, pooled over the commits already placed on it (the endpoints
//! first). A commit is probed again until the 95 % Wilson score interval of its own failure rate
//! (the statistics `hive history` uses) excludes the other side's rate: good when its upper
//! bound is below the bad side's rate, bad when its lower bound is above the good side's (and at
//! least [`MIN_RUNS`] runs back it, so a good commit's few unlucky failures do not make it bad).
//! A probe that never reached the candidate (the client did not run that commit, the test did
//! not run, the run failed before hive) decides nothing: it is kept, with why, and the commit is
//! probed again. A commit whose probes reach the cap undecided stops the bisection there.

use serde::Serialize;

use super::verdict::wilson;

/// The fewest valid runs that make a commit bad, and that each endpoint needs first.
pub(crate) const MIN_RUNS: usize = 4;
/// The most probes (valid or not) spent on one commit before it is called undecided.
pub(crate) const MAX_PROBES_PER_COMMIT: usize = 10;

/// What one probe showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "result", content = "why")]
pub(crate) enum ProbeResult {
    Passed,
    Failed,
    /// It never reached the candidate: what went wrong instead (the step that failed).
    Invalid(String),
}

/// One probe of a commit: its result and the run that made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Probe {
    #[serde(flatten)]
    pub(crate) result: ProbeResult,
    pub(crate) run: Option<String>,
}

/// Which side a commit's probes put it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Side {
    Good,
    Bad,
}

/// What to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Probe the commit at this index (again).
    Probe(usize),
    /// The first bad commit, its parent the last good one.
    Found { first_bad: usize },
    /// The probes cannot decide the commit at this index within the cap, or the endpoints do
    /// not differ.
    Undecided { at: usize, why: String },
}

/// A bisection over `commits` (oldest first): the first is good, the last bad.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Bisection {
    pub(crate) commits: Vec<String>,
    /// Each commit's probes, in the order made.
    pub(crate) probes: Vec<Vec<Probe>>,
    /// The side each decided commit is on.
    pub(crate) sides: Vec<Option<Side>>,
    /// The commits in the order they were probed first (the path table's rows).
    pub(crate) path: Vec<usize>,
}

/// Failures and valid runs.
fn counts(probes: &[Probe]) -> (usize, usize) {
    let failed = probes
        .iter()
        .filter(|p| p.result == ProbeResult::Failed)
        .count();
    let valid = probes
        .iter()
        .filter(|p| !matches!(p.result, ProbeResult::Invalid(_)))
        .count();
    (failed, valid)
}

impl Bisection {
    pub(crate) fn new(commits: Vec<String>) -> Self {
        let n = commits.len();
        Bisection {
            commits,
            probes: vec![Vec::new(); n],
            sides: vec![None; n],
            path: Vec::new(),
        }
    }

    /// Records a probe of the commit at `at`, and whether it now decides its side.
    pub(crate) fn record(&mut self, at: usize, probe: Probe) {
        if !self.path.contains(&at) {
            self.path.push(at);
        }
        self.probes[at].push(probe);
        if at != 0 && at + 1 != self.commits.len() {
            self.sides[at] = self.decide(at);
        }
    }

    /// The last commit known good and the first known bad.
    fn bounds(&self) -> (usize, usize) {
        let last = self.commits.len() - 1;
        let good = (0..=last)
            .filter(|&i| i == 0 || self.sides[i] == Some(Side::Good))
            .max()
            .unwrap_or(0);
        let bad = (0..=last)
            .filter(|&i| i == last || self.sides[i] == Some(Side::Bad))
            .min()
            .unwrap_or(last);
        (good, bad)
    }

    /// A side's failure rate: its probes pooled over the endpoint and the commits placed on it.
    fn rate(&self, side: Side) -> f64 {
        let last = self.commits.len() - 1;
        let (mut k, mut n) = (0, 0);
        for i in 0..=last {
            let on_side = match side {
                Side::Good => i == 0 || self.sides[i] == Some(Side::Good),
                Side::Bad => i == last || self.sides[i] == Some(Side::Bad),
            };
            if on_side {
                let (f, v) = counts(&self.probes[i]);
                k += f;
                n += v;
            }
        }
        if n == 0 {
            return 0.5;
        }
        k as f64 / n as f64
    }

    /// The side the commit at `at`'s probes decide, if they do.
    fn decide(&self, at: usize) -> Option<Side> {
        let (k, n) = counts(&self.probes[at]);
        if n == 0 {
            return None;
        }
        let (lo, hi) = wilson(k, n);
        if hi < self.rate(Side::Bad) {
            Some(Side::Good)
        } else if n >= MIN_RUNS && lo > self.rate(Side::Good) {
            Some(Side::Bad)
        } else {
            None
        }
    }

    /// What to probe next, or the answer.
    pub(crate) fn next(&self) -> Next {
        let last = self.commits.len() - 1;
        // The endpoints first: each needs MIN_RUNS valid runs, and they must differ.
        for at in [last, 0] {
            let (_, n) = counts(&self.probes[at]);
            if n < MIN_RUNS {
                return self.probe_or_give_up(at);
            }
        }
        let (k, n) = counts(&self.probes[last]);
        let (lo_bad, _) = wilson(k, n);
        if lo_bad <= self.rate(Side::Good) {
            let probed = self.probes[0].len() + self.probes[last].len();
            if probed < 2 * MAX_PROBES_PER_COMMIT {
                // Not yet apart: more runs at the side with fewer.
                let (_, good_n) = counts(&self.probes[0]);
                return Next::Probe(if good_n <= n { 0 } else { last });
            }
            return Next::Undecided {
                at: last,
                why: format!(
                    "the test fails about as often at the good commit ({:.0} %) as at the bad one ({:.0} %): nothing to bisect",
                    100.0 * self.rate(Side::Good),
                    100.0 * self.rate(Side::Bad)
                ),
            };
        }
        let (good, bad) = self.bounds();
        if bad <= good + 1 {
            return Next::Found { first_bad: bad };
        }
        self.probe_or_give_up((good + bad) / 2)
    }

    fn probe_or_give_up(&self, at: usize) -> Next {
        if self.probes[at].len() >= MAX_PROBES_PER_COMMIT {
            let (k, n) = counts(&self.probes[at]);
            let invalid = self.probes[at].len() - n;
            return Next::Undecided {
                at,
                why: format!(
                    "{} probes of {} decide nothing: failed {k} of {n} valid runs ({invalid} never reached the commit)",
                    self.probes[at].len(),
                    self.commits[at]
                ),
            };
        }
        Next::Probe(at)
    }

    /// The probes to dispatch at once, `parallel` at most: the fewest more valid runs that could
    /// place the commit [`Bisection::next`] asks about (an endpoint, or a commit that failed
    /// already, needs [`MIN_RUNS`]; one that only passed may be placed by one more pass), and
    /// while the endpoints lack runs, the other endpoint's too. With `parallel` 1 it is `next`.
    pub(crate) fn batch(&self, parallel: usize) -> Vec<usize> {
        let Next::Probe(at) = self.next() else {
            return Vec::new();
        };
        let last = self.commits.len() - 1;
        let wanted = |at: usize, taken: usize| {
            let (failed, valid) = counts(&self.probes[at]);
            let needed = if at == 0 || at == last || failed > 0 {
                MIN_RUNS.saturating_sub(valid).max(1)
            } else {
                1
            };
            needed.min(MAX_PROBES_PER_COMMIT.saturating_sub(self.probes[at].len() + taken))
        };
        let mut out = vec![at; wanted(at, 0).min(parallel).max(1)];
        if at == 0 || at == last {
            let other = if at == 0 { last } else { 0 };
            if counts(&self.probes[other]).1 < MIN_RUNS {
                let more = wanted(other, 0).min(parallel.saturating_sub(out.len()));
                out.extend(std::iter::repeat_n(other, more));
            }
        }
        out
    }

    /// How many probes were made (dispatches), invalid ones included.
    #[cfg(test)]
    pub(crate) fn dispatched(&self) -> usize {
        self.probes.iter().map(Vec::len).sum()
    }
}

/// One row of the path table: a commit the bisection probed, in the order it was first probed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct PathRow {
    pub(crate) commit: String,
    /// The commit's date, as the caller read it.
    pub(crate) date: Option<String>,
    /// Failures of valid runs, valid runs, and probes that never reached the commit.
    pub(crate) failed: usize,
    pub(crate) runs: usize,
    pub(crate) invalid: usize,
    /// The 95 % Wilson interval of its failure rate.
    pub(crate) interval: (f64, f64),
    /// `good`, `bad`, or `None` while undecided (the endpoints are good and bad by definition).
    pub(crate) side: Option<Side>,
    /// The runs that probed it, in order.
    pub(crate) probes: Vec<Probe>,
}

impl Bisection {
    /// The path table: each commit probed, in the order first probed; `dates` gives a commit's
    /// date when the caller knows it.
    pub(crate) fn path_table(&self, dates: &dyn Fn(&str) -> Option<String>) -> Vec<PathRow> {
        let last = self.commits.len() - 1;
        self.path
            .iter()
            .map(|&i| {
                let probes = &self.probes[i];
                let (failed, runs) = counts(probes);
                let side = match i {
                    0 => Some(Side::Good),
                    i if i == last => Some(Side::Bad),
                    _ => self.sides[i],
                };
                PathRow {
                    commit: self.commits[i].clone(),
                    date: dates(&self.commits[i]),
                    failed,
                    runs,
                    invalid: probes.len() - runs,
                    interval: wilson(failed, runs),
                    side,
                    probes: probes.clone(),
                }
            })
            .collect()
    }
}

impl PathRow {
    /// Its verdict as a word.
    fn verdict(&self) -> &'static str {
        match self.side {
            Some(Side::Good) => "good",
            Some(Side::Bad) => "bad",
            None => "undecided",
        }
    }

    /// Each probe as `show` words it: its run, and `Ok(passed|failed)` or `Err(why)` for one
    /// that never reached the commit.
    fn runs(&self, show: impl Fn(&str, Result<&str, &str>) -> String) -> Vec<String> {
        self.probes
            .iter()
            .map(|p| {
                let run = p.run.as_deref().unwrap_or("?");
                match &p.result {
                    ProbeResult::Passed => show(run, Ok("passed")),
                    ProbeResult::Failed => show(run, Ok("failed")),
                    ProbeResult::Invalid(why) => show(run, Err(why)),
                }
            })
            .collect()
    }
}

/// A run as the text table names it: its id, the last part of its URL.
fn run_id(run: &str) -> &str {
    match run.rsplit_once("/actions/runs/") {
        Some((_, id)) if !id.is_empty() => id,
        _ => run,
    }
}

/// A run in markdown: its id linked to its page, when the URL is a plain `https://` one.
fn run_link(run: &str) -> String {
    use crate::markup::{markdown_code, plain_https_url};
    if plain_https_url(run) && run_id(run) != run {
        format!("[{}]({run})", markdown_code(run_id(run)))
    } else {
        markdown_code(run)
    }
}

/// The path table as text, one commit a line (`commit  date  k of n failed [lo, hi]  side
/// runs`), every value from a run or the repository escaped.
pub(crate) fn path_text(rows: &[PathRow]) -> String {
    use crate::markup::text_value;
    let mut out = String::new();
    for r in rows {
        let runs = r.runs(|run, result| match result {
            Ok(word) => format!("{} {word}", text_value(run_id(run))),
            Err(why) => format!("{} invalid: {}", text_value(run_id(run)), text_value(why)),
        });
        out.push_str(&format!(
            "{:<12}  {:<10}  failed {} of {} [{:.2}, {:.2}]{}  {}  ({})\n",
            text_value(&r.commit.chars().take(12).collect::<String>()),
            r.date
                .as_deref()
                .map_or("?".into(), |d| text_value(d).into_owned()),
            r.failed,
            r.runs,
            r.interval.0,
            r.interval.1,
            match r.invalid {
                0 => String::new(),
                n => format!(", {n} invalid"),
            },
            r.verdict(),
            runs.join("; ")
        ));
    }
    out
}

/// The path table in markdown (a table; cells escaped).
pub(crate) fn path_markdown(rows: &[PathRow]) -> String {
    use crate::markup::{markdown_cell, markdown_code};
    let mut out = String::from(
        "| commit | date | failed | interval | verdict | runs |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let runs = r.runs(|run, result| match result {
            Ok(word) => format!("{} {word}", run_link(run)),
            Err(why) => format!("{} invalid ({})", run_link(run), markdown_cell(why)),
        });
        out.push_str(&format!(
            "| {} | {} | {} of {}{} | {:.2}–{:.2} | {} | {} |\n",
            markdown_code(&r.commit.chars().take(12).collect::<String>()),
            markdown_cell(r.date.as_deref().unwrap_or("?")),
            r.failed,
            r.runs,
            match r.invalid {
                0 => String::new(),
                n => format!(" ({n} invalid)"),
            },
            r.interval.0,
            r.interval.1,
            r.verdict(),
            runs.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of uniform numbers in [0, 1) (SplitMix64).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    const COMMITS: usize = 40;
    const BREAKS_AT: usize = 23;

    /// The history of issue 52: the test passes 75 % of the time before commit 23 and never
    /// after; two probes (the 3rd and the 9th dispatch) fail before reaching the client.
    fn probe(rng: &mut Rng, at: usize, dispatch: usize) -> Probe {
        let result = if dispatch == 3 || dispatch == 9 {
            ProbeResult::Invalid("the hive step failed before the client started".into())
        } else if at >= BREAKS_AT || rng.next() < 0.25 {
            ProbeResult::Failed
        } else {
            ProbeResult::Passed
        };
        Probe {
            result,
            run: Some(format!("run-{dispatch}")),
        }
    }

    fn bisect(seed: u64) -> (Next, usize) {
        let mut rng = Rng(seed);
        let mut b = Bisection::new((0..COMMITS).map(|i| format!("c{i:02}")).collect());
        loop {
            match b.next() {
                Next::Probe(at) => {
                    let p = probe(&mut rng, at, b.dispatched() + 1);
                    b.record(at, p);
                }
                done => return (done, b.dispatched()),
            }
        }
    }

    /// One run per step, as a person bisects by hand: a failure is bad, a pass good.
    fn naive(seed: u64) -> usize {
        let mut rng = Rng(seed);
        let (mut good, mut bad) = (0, COMMITS - 1);
        while bad > good + 1 {
            let mid = (good + bad) / 2;
            match probe(&mut rng, mid, 1).result {
                ProbeResult::Failed => bad = mid,
                _ => good = mid,
            }
        }
        bad
    }

    #[test]
    fn the_evidence_finds_commit_23_where_one_run_per_step_does_not() {
        let seeds = 500;
        let (mut right, mut within_30, mut naive_wrong) = (0, 0, 0);
        for seed in 0..seeds {
            let (found, dispatched) = bisect(seed);
            if found
                == (Next::Found {
                    first_bad: BREAKS_AT,
                })
            {
                right += 1;
            }
            if dispatched <= 30 {
                within_30 += 1;
            }
            if naive(seed) != BREAKS_AT {
                naive_wrong += 1;
            }
        }
        // Measured over these 500 histories (2026-12-05): 495 right, 487 within 30 dispatches;
        // one run per step names a wrong commit in 265. (With 3 runs to call a commit bad
        // instead of 4: 474 right.)
        assert!(right * 100 >= seeds * 97, "{right} of {seeds} right");
        assert!(
            within_30 * 100 >= seeds * 95,
            "{within_30} of {seeds} within 30"
        );
        assert!(
            naive_wrong * 100 >= seeds * 40,
            "naive wrong {naive_wrong} of {seeds}"
        );
    }

    /// Batches of up to 4 probes at once (`--parallel 4`): as right, in fewer rounds of waiting.
    #[test]
    fn batches_find_the_same_commit_in_fewer_rounds() {
        let seeds = 200;
        let (mut right, mut rounds_total, mut sequential_total, mut dispatched_total) =
            (0, 0, 0, 0);
        for seed in 0..seeds {
            let mut rng = Rng(seed);
            let mut b = Bisection::new((0..COMMITS).map(|i| format!("c{i:02}")).collect());
            let mut rounds = 0;
            loop {
                let batch = b.batch(4);
                if batch.is_empty() {
                    break;
                }
                rounds += 1;
                for at in batch {
                    let p = probe(&mut rng, at, b.dispatched() + 1);
                    b.record(at, p);
                }
            }
            if b.next()
                == (Next::Found {
                    first_bad: BREAKS_AT,
                })
            {
                right += 1;
            }
            rounds_total += rounds;
            dispatched_total += b.dispatched();
            sequential_total += bisect(seed).1;
        }
        // Measured (2026-12-05): 199 of 200 right; 2,801 rounds of waiting against 5,261 one at a
        // time (0.53×), for 5,495 dispatches (4 % more).
        assert!(right * 100 >= seeds * 97, "{right} of {seeds} right");
        assert!(
            rounds_total * 10 <= sequential_total * 6,
            "{rounds_total} rounds, {sequential_total} sequential"
        );
        assert!(
            dispatched_total * 10 <= sequential_total * 12,
            "{dispatched_total} dispatches, {sequential_total} sequential"
        );
    }

    #[test]
    fn the_path_table_shows_each_step_with_its_evidence() {
        let mut b = Bisection::new((0..5).map(|i| format!("c{i}")).collect());
        let p = |result: ProbeResult, run: &str| Probe {
            result,
            run: Some(run.to_string()),
        };
        for i in 0..4 {
            b.record(4, p(ProbeResult::Failed, &format!("1{i}")));
        }
        for (i, r) in [
            ProbeResult::Passed,
            ProbeResult::Failed,
            ProbeResult::Passed,
            ProbeResult::Passed,
        ]
        .into_iter()
        .enumerate()
        {
            b.record(0, p(r, &format!("2{i}")));
        }
        assert_eq!(b.next(), Next::Probe(2));
        b.record(2, p(ProbeResult::Invalid("hive \u{202e}step".into()), "30"));
        b.record(2, p(ProbeResult::Passed, "31"));
        assert_eq!(b.next(), Next::Probe(3));
        for i in 0..4 {
            b.record(3, p(ProbeResult::Failed, &format!("4{i}")));
        }
        assert_eq!(b.next(), Next::Found { first_bad: 3 });
        let rows = b.path_table(&|c| (c == "c2").then(|| "2026-11-30".to_string()));
        assert_eq!(
            path_text(&rows),
            "c4            ?           failed 4 of 4 [0.51, 1.00]  bad  (10 failed; 11 failed; 12 failed; 13 failed)\n\
c0            ?           failed 1 of 4 [0.05, 0.70]  good  (20 passed; 21 failed; 22 passed; 23 passed)\n\
c2            2026-11-30  failed 0 of 1 [0.00, 0.79], 1 invalid  good  (30 invalid: \"hive \\u{202e}step\"; 31 passed)\n\
c3            ?           failed 4 of 4 [0.51, 1.00]  bad  (40 failed; 41 failed; 42 failed; 43 failed)\n"
        );
        assert!(path_markdown(&rows).starts_with(
            "| commit | date | failed | interval | verdict | runs |\n|---|---|---|---|---|---|\n| `c4` | ? | 4 of 4 | 0.51–1.00 | bad |"
        ));
    }

    #[test]
    fn an_invalid_probe_never_decides_a_commit() {
        let mut b = Bisection::new((0..5).map(|i| format!("c{i}")).collect());
        for _ in 0..MAX_PROBES_PER_COMMIT - 1 {
            b.record(
                2,
                Probe {
                    result: ProbeResult::Invalid("no client".into()),
                    run: None,
                },
            );
        }
        assert_eq!(b.sides[2], None);
        b.record(
            2,
            Probe {
                result: ProbeResult::Invalid("no client".into()),
                run: None,
            },
        );
        assert_eq!(b.sides[2], None);
        assert_eq!(
            b.probe_or_give_up(2),
            Next::Undecided {
                at: 2,
                why: "10 probes of c2 decide nothing: failed 0 of 0 valid runs (10 never reached the commit)".into()
            }
        );
    }
}
