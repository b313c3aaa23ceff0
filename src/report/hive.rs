//! `warden hive check`: text, JSON, JUnit XML and markdown.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use serde::Serialize;

use super::{unsupported, write_json, Format, Report};
use crate::hive::outcome::{CaseResult, HiveReport, Outcome, SuiteSummary};
use crate::markup::{count, markdown_cell, markdown_code, text_value, xml_text as xml};

/// `warden hive check --format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum HiveCheckFormat {
    #[default]
    Text,
    Json,
    Junit,
    Markdown,
    /// A self-contained HTML page.
    Html,
}

impl From<HiveCheckFormat> for Format {
    fn from(f: HiveCheckFormat) -> Self {
        match f {
            HiveCheckFormat::Text => Format::Text,
            HiveCheckFormat::Json => Format::Json,
            HiveCheckFormat::Html => Format::Html,
            HiveCheckFormat::Junit => Format::Junit,
            HiveCheckFormat::Markdown => Format::Markdown,
        }
    }
}

fn verdict(r: &HiveReport) -> String {
    let errors: Vec<String> = r
        .counts
        .iter()
        .filter(|(o, n)| **n > 0 && o.is_error(r.allow_missing))
        .map(|(o, n)| format!("{n} {}", o.label()))
        .collect();
    let mut errors = errors;
    if r.require_pins && !r.pin_mismatches.is_empty() {
        errors.push("pin mismatch".into());
    }
    if errors.is_empty() {
        "ok".into()
    } else {
        format!("FAILED ({})", errors.join(", "))
    }
}

impl Report for HiveReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        text(w, self)
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        markdown(w, self)
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        #[derive(Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            report: &'a HiveReport,
            ok: bool,
        }
        write_json(
            w,
            &Doc {
                report: self,
                ok: !self.failed(),
            },
        )
    }

    fn warnings(&self) -> Vec<String> {
        self.pin_mismatches.clone()
    }

    fn exit_code(&self) -> u8 {
        HiveReport::exit_code(self)
    }

    fn render_other(&self, format: Format, w: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Junit => junit(w, self),
            Format::Html => super::html::check_page(w, self),
            other => Err(unsupported(other)),
        }
    }
}

fn clients(s: &SuiteSummary) -> String {
    if s.clients.is_empty() {
        "no client suffix".into()
    } else {
        s.clients
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn pins(r: &HiveReport) -> Option<String> {
    (!r.upstream.is_empty()).then(|| {
        r.upstream
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

fn text(w: &mut dyn Write, r: &HiveReport) -> io::Result<()> {
    if let Some(p) = pins(r) {
        writeln!(w, "pinned upstream: {}", text_value(&p))?;
    }
    // Suite, client and test names and failure text come from the results: each is one line,
    // never a `::` workflow command.
    for s in &r.suites {
        let lifecycle = match s.lifecycle {
            0 => String::new(),
            n => format!(" (and {})", count(n, "lifecycle case", "lifecycle cases")),
        };
        writeln!(
            w,
            "{} ({}): {}, {} passed, {} failed{lifecycle}",
            text_value(&s.name),
            text_value(&clients(s)),
            count(s.cases, "test", "tests"),
            s.passed,
            s.failed
        )?;
    }
    for c in r
        .results
        .iter()
        .filter(|c| c.outcome.is_error(r.allow_missing) || c.outcome == Outcome::Missing)
    {
        // A result of no suite (an empty run) is named by itself: no leading `/`.
        let name = if c.suite.is_empty() {
            text_value(&c.name).into_owned()
        } else {
            format!("{}/{}", text_value(&c.suite), text_value(&c.name))
        };
        writeln!(
            w,
            "{:<16} {name}: {}",
            c.outcome.label().to_uppercase(),
            text_value(&c.message)
        )?;
        if let Some(t) = &c.text {
            for line in t.lines() {
                writeln!(w, "    | {}", text_value(line))?;
            }
        }
    }
    // Excused failures: one line per registry entry and outcome with its count (a passing run
    // stays short); `--verbose` names every case.
    let excused = r.results.iter().filter(|c| {
        matches!(
            c.outcome,
            Outcome::EXPECTED | Outcome::FLAKY | Outcome::SkippedRan
        )
    });
    if r.verbose {
        for c in excused {
            writeln!(
                w,
                "excused ({}) {}/{}: {}",
                c.outcome.label(),
                text_value(&c.suite),
                text_value(&c.name),
                text_value(&c.message)
            )?;
        }
    } else {
        let mut by_entry: BTreeMap<(&str, &str), (usize, BTreeSet<&str>)> = BTreeMap::new();
        for c in excused {
            let e = by_entry
                .entry((c.entry.as_deref().unwrap_or("?"), c.outcome.label()))
                .or_default();
            e.0 += 1;
            e.1.insert(&c.suite);
        }
        for ((entry, label), (n, suites)) in &by_entry {
            writeln!(
                w,
                "excused ({label}) {}: {} in {} (--verbose lists them)",
                text_value(entry),
                count(*n, "case", "cases"),
                text_value(&suites.iter().copied().collect::<Vec<_>>().join(", "))
            )?;
        }
    }
    let summary: Vec<String> = r
        .counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(o, n)| format!("{n} {}", o.label()))
        .collect();
    writeln!(w, "outcomes: {}", summary.join(", "))?;
    writeln!(w, "hive check: {}", verdict(r))
}

fn markdown(w: &mut dyn Write, r: &HiveReport) -> io::Result<()> {
    writeln!(w, "### Hive results: {}\n", verdict(r))?;
    if let Some(p) = pins(r) {
        writeln!(w, "Pinned upstream: {}\n", markdown_cell(&p))?;
    }
    writeln!(
        w,
        "| suite | clients | tests | passed | failed |\n|---|---|---|---|---|"
    )?;
    for s in &r.suites {
        writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            markdown_cell(&s.name),
            markdown_cell(&clients(s)),
            s.cases,
            s.passed,
            s.failed
        )?;
    }
    // What fails the check first; the excused folded into one line per entry and outcome, as
    // in the text (`--verbose` lists them).
    let (news, excused): (Vec<&CaseResult>, Vec<&CaseResult>) = r
        .results
        .iter()
        .partition(|c| c.outcome.is_error(r.allow_missing) || c.outcome == Outcome::Missing);
    let listed: Vec<&CaseResult> = if r.verbose {
        news.iter().chain(excused.iter()).copied().collect()
    } else {
        news
    };
    if !listed.is_empty() {
        writeln!(w, "\n| outcome | test | details |\n|---|---|---|")?;
        for c in listed {
            writeln!(
                w,
                "| {} | {} | {} |",
                c.outcome.label(),
                markdown_code(&format!("{}/{}", c.suite, c.name)),
                markdown_cell(&c.message)
            )?;
        }
    }
    if !r.verbose && !excused.is_empty() {
        let mut by_entry: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for c in &excused {
            *by_entry
                .entry((c.entry.as_deref().unwrap_or("?"), c.outcome.label()))
                .or_default() += 1;
        }
        writeln!(w)?;
        for ((entry, label), n) in &by_entry {
            writeln!(
                w,
                "- excused ({label}) by {}: {} (`--verbose` lists them)",
                markdown_code(entry),
                count(*n, "case", "cases")
            )?;
        }
    }
    Ok(())
}

fn junit(w: &mut dyn Write, r: &HiveReport) -> io::Result<()> {
    writeln!(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    let errors = r
        .results
        .iter()
        .filter(|c| c.outcome.is_error(r.allow_missing))
        .count();
    writeln!(
        w,
        "<testsuites name=\"hive\" tests=\"{}\" failures=\"{errors}\">",
        r.passes.len() + r.results.len()
    )?;
    let mut suites: Vec<&str> = r.suites.iter().map(|s| s.name.as_str()).collect();
    for c in &r.results {
        suites.push(&c.suite);
    }
    suites.sort();
    suites.dedup();
    for suite in suites {
        let cases: Vec<_> = r.results.iter().filter(|c| c.suite == suite).collect();
        let passes: Vec<_> = r.passes.iter().filter(|(s, _)| s == suite).collect();
        let failures = cases
            .iter()
            .filter(|c| c.outcome.is_error(r.allow_missing))
            .count();
        writeln!(
            w,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
            xml(suite),
            cases.len() + passes.len()
        )?;
        for (_, name) in passes {
            writeln!(
                w,
                "    <testcase classname=\"{}\" name=\"{}\"/>",
                xml(suite),
                xml(name)
            )?;
        }
        for c in cases {
            write!(
                w,
                "    <testcase classname=\"{}\" name=\"{}\">",
                xml(suite),
                xml(&c.name)
            )?;
            if c.outcome.is_error(r.allow_missing) {
                write!(
                    w,
                    "<failure type=\"{}\" message=\"{}\">{}</failure>",
                    c.outcome.label(),
                    xml(&c.message),
                    xml(c.text.as_deref().unwrap_or_default())
                )?;
            } else if c.outcome != Outcome::Pass {
                write!(
                    w,
                    "<skipped message=\"{}: {}\"/>",
                    c.outcome.label(),
                    xml(&c.message)
                )?;
            }
            writeln!(w, "</testcase>")?;
        }
        writeln!(w, "  </testsuite>")?;
    }
    writeln!(w, "</testsuites>")
}
