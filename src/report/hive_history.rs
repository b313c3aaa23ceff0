//! `warden hive history`: one line per test with its strip of runs (text), a strip table for a
//! PR comment or step summary (markdown), JSON; and the `--sim.limit` regex of the last run's
//! failures.

use std::io::{self, Write};

use super::{write_json, Report};
use crate::hive::history::{History, Mark, TestClass, TestHistory};
use crate::hive::pins::PinStatus;
use crate::known_issues::exclusions::sim_limit_pattern;
use crate::markup::{count, markdown_cell, markdown_code, text_value};

/// Rows of the markdown table: a PR comment holds 65,536 characters.
const MARKDOWN_ROWS: usize = 150;

fn summary(h: &History) -> String {
    let classes: Vec<String> = TestClass::ALL
        .iter()
        .map(|c| format!("{} {}", h.count(*c), c.label()))
        .collect();
    format!(
        "hive history: {}, {}",
        count(h.runs.len(), "run", "runs"),
        classes.join(", ")
    )
}

/// "hive a74a5a70 (the last run matched)", per pin.
fn pins(h: &History) -> Option<String> {
    (!h.pins.is_empty()).then(|| {
        h.pins
            .iter()
            .map(|p| {
                let how = match (p.status, &p.run) {
                    (PinStatus::Matched, _) => "the last run matched".to_string(),
                    (PinStatus::Mismatch, Some(run)) => format!("the last run used {run}"),
                    _ => "not recorded by the last run".to_string(),
                };
                format!("{} {} ({how})", p.name, p.pinned)
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// "onset: fails since run 12 (last passed in run 11): client reth a → b; 3 tests: …".
fn onset_line(g: &crate::hive::verdict::OnsetGroup) -> String {
    let after = g.last_pass.as_ref().map_or_else(
        || " (never passed before)".to_string(),
        |p| format!(" (last passed in run {p})"),
    );
    let what = if g.changes.is_empty() {
        "nothing recorded changed".to_string()
    } else {
        g.changes.join("; ")
    };
    let shown: Vec<&str> = g.tests.iter().take(10).map(String::as_str).collect();
    let more = g.tests.len().saturating_sub(shown.len());
    format!(
        "onset: fails since run {}{after}: {what}; {}: {}{}",
        g.first_fail,
        count(g.tests.len(), "test", "tests"),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

fn name(t: &TestHistory) -> String {
    format!("{}/{}", t.suite, t.name)
}

/// What follows a test's name: its pass rate when flaky, its entry when listed, and for a listed
/// test that failed before and passes in a last run that does not match the pins, that upstream
/// likely changed.
fn detail(h: &History, t: &TestHistory) -> String {
    let mut parts = Vec::new();
    if t.entry.is_some()
        && t.failed > 0
        && !h.pin_mismatches.is_empty()
        && t.marks.last() == Some(&Mark::Pass)
    {
        parts.push(
            "passed in the last run: likely an upstream change, the run does not match the pins"
                .to_string(),
        );
    }
    // The verdict's evidence: the failures out of runs with the interval, or the onset and what
    // changed there.
    if let Some(v) = &t.verdict {
        parts.push(v.why.clone());
    }
    if t.timeout {
        parts.push("timed out in the last run".into());
    }
    if let Some(e) = &t.entry {
        parts.push(format!("listed in {e}"));
    }
    parts.join("; ")
}

impl Report for History {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for (i, r) in self.runs.iter().enumerate() {
            writeln!(
                w,
                "run {:>2}: {} ({}, {} failed)",
                i + 1,
                text_value(&r.dir.display().to_string()),
                count(r.cases, "case", "cases"),
                r.failed
            )?;
        }
        if let Some(p) = pins(self) {
            writeln!(w, "pinned upstream: {}", text_value(&p))?;
        }
        for t in self.shown() {
            // Names and failure text come from the results: one line each, never a command.
            let d = detail(self, t);
            writeln!(
                w,
                "{:<10} {} {}{}",
                t.class.label().to_uppercase(),
                t.strip(),
                text_value(&name(t)),
                if d.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", text_value(&d))
                }
            )?;
            if t.class == TestClass::New {
                for line in t.text.iter().flat_map(|x| x.lines()) {
                    writeln!(w, "    | {}", text_value(line))?;
                }
            }
        }
        if let Some(line) = self.known_folded() {
            writeln!(w, "{:<10} {line}", "KNOWN")?;
        }
        for g in &self.onsets {
            writeln!(w, "{}", text_value(&onset_line(g)))?;
        }
        for e in &self.entries {
            writeln!(
                w,
                "entry {} ({}): {}",
                text_value(&e.id),
                text_value(&e.file.display().to_string()),
                text_value(&e.verdict)
            )?;
            for d in &e.does_not_hold {
                writeln!(w, "    does not hold: {}", text_value(d))?;
            }
        }
        writeln!(w, "{}", summary(self))
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "### {}\n", summary(self))?;
        writeln!(
            w,
            "One mark per run, oldest first: ✓ passed, ✗ failed, · absent, ? its suite did not run for its client.\n"
        )?;
        if let Some(p) = pins(self) {
            writeln!(w, "Pinned upstream: {}\n", markdown_cell(&p))?;
        }
        let shown: Vec<&TestHistory> = self.shown().collect();
        if !shown.is_empty() {
            writeln!(w, "| runs | test | verdict | notes |\n|---|---|---|---|")?;
            for t in shown.iter().take(MARKDOWN_ROWS) {
                writeln!(
                    w,
                    "| `{}` | {} | {} | {} |",
                    t.strip(),
                    markdown_code(&name(t)),
                    t.class.label(),
                    markdown_cell(&detail(self, t))
                )?;
            }
            if shown.len() > MARKDOWN_ROWS {
                writeln!(
                    w,
                    "\n…and {} more (see `--format json`).",
                    shown.len() - MARKDOWN_ROWS
                )?;
            }
        }
        if let Some(line) = self.known_folded() {
            writeln!(w, "\n{}", markdown_cell(&format!("{line}.")))?;
        }
        if !self.onsets.is_empty() {
            writeln!(w, "\nWhere failures began (one change, many failures):\n")?;
            for g in &self.onsets {
                writeln!(w, "- {}", markdown_cell(&onset_line(g)))?;
            }
        }
        if !self.entries.is_empty() {
            writeln!(
                w,
                "\n| entry | tests | failed every run | verdict |\n|---|---|---|---|"
            )?;
            for e in &self.entries {
                let mut verdict = e.verdict.clone();
                for d in &e.does_not_hold {
                    verdict += &format!("; does not hold: {d}");
                }
                writeln!(
                    w,
                    "| {} | {} | {} | {} |",
                    markdown_code(&e.id),
                    e.tests,
                    e.failed_every_run,
                    markdown_cell(&verdict)
                )?;
            }
        }
        Ok(())
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        write_json(w, self)
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.pin_mismatches.clone();
        w.extend(self.notes.iter().cloned());
        w
    }

    fn exit_code(&self) -> u8 {
        History::exit_code(self)
    }

    fn render_other(&self, format: super::Format, w: &mut dyn Write) -> io::Result<()> {
        match format {
            super::Format::Html => super::html::history_page(w, self),
            other => Err(super::unsupported(other)),
        }
    }
}

/// `--plan`: per suite, the `--sim.limit` pattern of the tests whose runs cannot tell yet
/// (undecided) or that failed for the first time (new), and the repetitions that part "flaky at
/// the rate seen" from "broken" at 95 %: a flake failing at rate p passes at least once in n
/// runs with probability 1 − pⁿ (the rate is the test's own, or ½ when none is seen, as for a
/// new failure).
pub fn rerun_plan(h: &History) -> String {
    use crate::hive::classify::split_client;
    use crate::hive::verdict::repetitions;
    let mut suites: std::collections::BTreeMap<&str, (Vec<&str>, u32)> = Default::default();
    for t in &h.tests {
        let Some(v) = &t.verdict else { continue };
        if !matches!(v.verdict, TestClass::Undecided | TestClass::New) {
            continue;
        }
        // A new failure has no rate yet (one failure since its onset): ½, as for none seen.
        let rate = match v.verdict {
            TestClass::New => 1.0,
            _ => v.failed as f64 / v.ran.max(1) as f64,
        };
        let e = suites.entry(t.suite.as_str()).or_default();
        e.0.push(split_client(&t.name).0);
        e.1 = e.1.max(repetitions(rate));
    }
    if suites.is_empty() {
        return "nothing to re-run: every failing test's runs decide it\n".to_string();
    }
    let mut out = String::new();
    for (suite, (mut names, n)) in suites {
        names.sort_unstable();
        names.dedup();
        out.push_str(&format!(
            "# {}: {} to re-run {n} times\n",
            text_value(suite),
            count(names.len(), "test", "tests")
        ));
        out.push_str(&sim_limit_pattern(suite, &names));
    }
    out
}

/// `--rerun-regex`: one `--sim.limit` pattern per suite, of the tests that failed in the last run.
pub fn rerun_regex(h: &History) -> String {
    h.failed_last()
        .into_iter()
        .map(|(suite, tests)| {
            let names: Vec<&str> = tests.into_iter().collect();
            sim_limit_pattern(suite, &names)
        })
        .collect()
}
