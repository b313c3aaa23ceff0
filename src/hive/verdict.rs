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

use super::history::{Mark, RunInfo};

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

/// What a test's runs say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum VerdictKind {
    Broken,
    Flaky,
    Fixed,
    New,
    Undecided,
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
    pub(crate) verdict: VerdictKind,
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

/// The sources a run records for one client: its version, and hive's commit.
fn sources(run: &RunInfo, client: &str) -> (Option<String>, Option<String>) {
    (
        run.sources.client_versions.get(client).cloned(),
        run.sources.hive.clone(),
    )
}

/// What differs between runs `a` and `b` for `client`.
fn changes(runs: &[RunInfo], client: &str, a: usize, b: usize) -> Vec<String> {
    let ((ca, ha), (cb, hb)) = (sources(&runs[a], client), sources(&runs[b], client));
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unrecorded".into());
    let mut out = Vec::new();
    if ca != cb {
        out.push(format!("client {client} {} → {}", shown(&ca), shown(&cb)));
    }
    if ha != hb {
        let short = |v: &Option<String>| {
            v.as_deref()
                .map(|h| h.chars().take(12).collect::<String>())
                .unwrap_or_else(|| "unrecorded".into())
        };
        out.push(format!("hive {} → {}", short(&ha), short(&hb)));
    }
    out
}

fn percent((lo, hi): (f64, f64)) -> String {
    format!("{:.0}–{:.0} %", lo * 100.0, hi * 100.0)
}

/// The name of run `i` in words.
fn run_name(runs: &[RunInfo], i: usize) -> String {
    runs[i]
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{}", i + 1))
}

fn onset_words(runs: &[RunInfo], o: &Onset) -> String {
    let since = format!("fails since run {}", run_name(runs, o.first_fail));
    match (o.last_pass, o.changes.is_empty()) {
        (None, _) => format!("{since} (it never passed before)"),
        (Some(_), true) => format!("{since}: client and hive unchanged"),
        (Some(_), false) => format!("{since}: {}", o.changes.join("; ")),
    }
}

/// The verdict of a test of `client` with `marks` (one per run of `runs`), or `None` when it
/// never failed. A test is flaky only when it both passed and failed under one client version
/// and one hive commit; a trailing run of failures is `broken` when its onset is a recorded
/// change, or when a flake at the rate seen before it would fail so often in a row less than
/// 5 % of the time.
pub(crate) fn judge(
    marks: &[Mark],
    runs: &[RunInfo],
    client: &str,
    fixed_after: usize,
) -> Option<Verdict> {
    let ran: Vec<(usize, bool)> = marks
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            Mark::Pass => Some((i, false)),
            Mark::Fail => Some((i, true)),
            _ => None,
        })
        .collect();
    let failed = ran.iter().filter(|(_, f)| *f).count();
    if failed == 0 {
        return None;
    }
    let n = ran.len();
    let verdict = |verdict, interval, onset, why: String| {
        Some(Verdict {
            verdict,
            failed,
            ran: n,
            interval,
            onset,
            why,
        })
    };
    // The sign of a flake: a failure, then a pass, under one client version and hive commit
    // (it recovered without anything recorded changing).
    let recovered = |runs_ran: &[(usize, bool)]| {
        let mut failed_under: Vec<(Option<&String>, Option<&String>)> = Vec::new();
        runs_ran.iter().any(|&(i, f)| {
            let key = (
                runs[i].sources.client_versions.get(client),
                runs[i].sources.hive.as_ref(),
            );
            if f {
                if !failed_under.contains(&key) {
                    failed_under.push(key);
                }
                false
            } else {
                failed_under.contains(&key)
            }
        })
    };
    let mixed_under_one_source = recovered(&ran);
    let last_fail = ran.last().is_some_and(|(_, f)| *f);
    // Trailing passes after a failure: fixed (the fix's onset said).
    let trailing_passes = ran.iter().rev().take_while(|(_, f)| !*f).count();
    if trailing_passes >= fixed_after && !last_fail {
        let last = ran[n - trailing_passes - 1].0;
        let first_pass = ran[n - trailing_passes].0;
        let what = changes(runs, client, last, first_pass);
        // Fixed: by a recorded change, or it never recovered before, or a flake at the lowest
        // rate seen before would not pass that often in a row (under 5 %).
        let before = &ran[..n - trailing_passes];
        let low = wilson(before.iter().filter(|(_, f)| *f).count(), before.len()).0;
        let unlikely_for_a_flake = (1.0 - low).powi(trailing_passes as i32) < 0.05;
        if !what.is_empty() || !recovered(before) || unlikely_for_a_flake {
            let why = format!(
                "passes since run {}{}",
                run_name(runs, first_pass),
                if what.is_empty() {
                    ": client and hive unchanged".to_string()
                } else {
                    format!(": {}", what.join("; "))
                }
            );
            return verdict(VerdictKind::Fixed, None, None, why);
        }
    }
    if !last_fail {
        return if mixed_under_one_source {
            let interval = wilson(failed, n);
            verdict(
                VerdictKind::Flaky,
                Some(interval),
                None,
                format!("{failed} of {n}, {}", percent(interval)),
            )
        } else {
            verdict(
                VerdictKind::Undecided,
                None,
                None,
                format!("{failed} of {n}: it passed and failed only under different client or hive versions"),
            )
        };
    }
    // The last run failed: the streak of failures at the end, and the pass before it.
    let streak = ran.iter().rev().take_while(|(_, f)| *f).count();
    let first_fail = ran[n - streak].0;
    let last_pass = (streak < n).then(|| ran[n - streak - 1].0);
    let onset = Onset {
        last_pass,
        first_fail,
        changes: last_pass.map_or_else(Vec::new, |p| changes(runs, client, p, first_fail)),
    };
    let Some(_) = last_pass else {
        return if n >= 2 {
            let why = onset_words(runs, &onset);
            verdict(VerdictKind::Broken, None, Some(onset), why)
        } else {
            verdict(
                VerdictKind::Undecided,
                None,
                Some(onset),
                "one run: too few to tell a flake from a break".into(),
            )
        };
    };
    if streak == 1 && !(mixed_under_one_source && failed > 1) {
        let why = format!("new: {}", onset_words(runs, &onset));
        return verdict(VerdictKind::New, None, Some(onset), why);
    }
    if !onset.changes.is_empty() {
        let why = onset_words(runs, &onset);
        return verdict(VerdictKind::Broken, None, Some(onset), why);
    }
    // Nothing recorded changed at the onset: how likely is the streak for a flake at the rate
    // seen before it (its 95 % upper bound)?
    let before = &ran[..n - streak];
    let (k0, n0) = (before.iter().filter(|(_, f)| *f).count(), before.len());
    let upper = wilson(k0, n0).1;
    if upper.powi(streak as i32) < 0.05 {
        let why = format!(
            "{}; a flake at the rate before it (at most {:.0} %) fails {streak} runs in a row less than 5 % of the time",
            onset_words(runs, &onset),
            upper * 100.0
        );
        return verdict(VerdictKind::Broken, None, Some(onset), why);
    }
    if mixed_under_one_source {
        let interval = wilson(failed, n);
        return verdict(
            VerdictKind::Flaky,
            Some(interval),
            Some(onset),
            format!("{failed} of {n}, {}", percent(interval)),
        );
    }
    let why = format!("{}: too few runs to tell", onset_words(runs, &onset));
    verdict(VerdictKind::Undecided, None, Some(onset), why)
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
    use crate::hive::pins::RunSources;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn run(i: usize, client: &str, hive: &str) -> RunInfo {
        RunInfo {
            dir: PathBuf::from(format!("runs/{}", i + 1)),
            sources: RunSources {
                hive: Some(hive.into()),
                client_versions: [("reth".to_string(), client.to_string())].into(),
                sim_buildargs: BTreeMap::new(),
            },
            cases: 1,
            failed: 0,
            suites: BTreeMap::new(),
        }
    }

    fn marks(s: &str) -> Vec<Mark> {
        s.chars()
            .map(|c| match c {
                'p' => Mark::Pass,
                'f' => Mark::Fail,
                '-' => Mark::Absent,
                _ => Mark::NotRun,
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
        let runs: Vec<RunInfo> = (0..30)
            .map(|i| run(i, if i < 11 { "1.4.2" } else { "1.4.3" }, "aaaa"))
            .collect();
        let m = marks(&format!("{}{}", "p".repeat(11), "f".repeat(19)));
        let v = judge(&m, &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, VerdictKind::Broken);
        assert_eq!(
            v.onset,
            Some(Onset {
                last_pass: Some(10),
                first_fail: 11,
                changes: vec!["client reth 1.4.2 → 1.4.3".into()]
            })
        );
        assert_eq!(v.why, "fails since run 12: client reth 1.4.2 → 1.4.3");
    }

    #[test]
    fn a_flake_under_one_client_gets_its_interval_and_a_break_across_a_change_is_never_flaky() {
        let runs: Vec<RunInfo> = (0..30).map(|i| run(i, "1.4.2", "aaaa")).collect();
        // 6 failures of 30, every fifth run, ending on a pass.
        let pattern: String = (0..30)
            .map(|i| if i % 5 == 2 { 'f' } else { 'p' })
            .collect();
        let v = judge(&marks(&pattern), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, VerdictKind::Flaky);
        assert_eq!(v.why, "6 of 30, 10–37 %");
        // Passes under one client, failures under the next, then passes again: never flaky.
        let runs: Vec<RunInfo> = (0..6)
            .map(|i| run(i, ["1", "1", "2", "2", "3", "3"][i], "aaaa"))
            .collect();
        let v = judge(&marks("ppffpf"), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, VerdictKind::New);
        let v = judge(&marks("ppffp-"), &runs, "reth", 2).unwrap();
        assert_eq!(v.verdict, VerdictKind::Undecided);
        assert_eq!(
            v.why,
            "2 of 5: it passed and failed only under different client or hive versions"
        );
    }

    #[test]
    fn a_hive_change_too_few_runs_and_a_fix() {
        let runs: Vec<RunInfo> = (0..4)
            .map(|i| run(i, "1", if i < 2 { "aaaa" } else { "bbbb" }))
            .collect();
        let v = judge(&marks("ppff"), &runs, "reth", 2).unwrap();
        assert_eq!(v.why, "fails since run 3: hive aaaa → bbbb");
        assert_eq!(v.verdict, VerdictKind::Broken);
        let one = [run(0, "1", "aaaa")];
        assert_eq!(
            judge(&marks("f"), &one, "reth", 2).unwrap().verdict,
            VerdictKind::Undecided
        );
        let v = judge(&marks("ffpp"), &runs, "reth", 2).unwrap();
        assert_eq!(
            (v.verdict, v.why.as_str()),
            (VerdictKind::Fixed, "passes since run 3: hive aaaa → bbbb")
        );
        // Two failures in a row after passing, nothing changed: a flake at ≤ 60 % would do that.
        let same: Vec<RunInfo> = (0..4).map(|i| run(i, "1", "aaaa")).collect();
        let v = judge(&marks("ppff"), &same, "reth", 2).unwrap();
        assert_eq!(v.verdict, VerdictKind::Undecided);
        // Ten passes, then four failures, nothing changed: broken.
        let long: Vec<RunInfo> = (0..14).map(|i| run(i, "1", "aaaa")).collect();
        let v = judge(&marks("ppppppppppffff"), &long, "reth", 2).unwrap();
        assert_eq!(v.verdict, VerdictKind::Broken);
    }

    #[test]
    fn repetitions_separate_a_flake_from_a_break() {
        assert_eq!(repetitions(0.2), 2);
        assert_eq!(repetitions(0.5), 5);
        assert_eq!(repetitions(0.9), 29);
        assert_eq!(repetitions(0.0), 5);
    }
}
