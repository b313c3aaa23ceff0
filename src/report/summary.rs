//! `warden known-issues summary`: the body of the sticky PR comment ("Known issues — intentionally
//! skipped tests"), optionally with how each excluded test fared in a hive run.

use crate::error::Reason;
use std::fmt::Write as _;

use crate::hive::history::{History, TestClass};
use crate::hive::outcome::{CaseResult, HiveReport, Outcome};
use crate::hive::pins::PinStatus;
use crate::known_issues::schema::{IssueStatus, Registry};
use crate::markup::{self, count as n_of, markdown_code, markdown_prose, text_value};

/// `warden known-issues summary --format`: markdown (the comment) or text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryFormat {
    #[default]
    Markdown,
    Text,
}

impl From<SummaryFormat> for super::Format {
    fn from(f: SummaryFormat) -> Self {
        match f {
            SummaryFormat::Markdown => super::Format::Markdown,
            SummaryFormat::Text => super::Format::Text,
        }
    }
}

/// The hidden marker a later step finds to update the comment in place.
pub const MARKER: &str = markup::COMMENT_MARKER;
pub(crate) const HEADING: &str = "Known issues — intentionally skipped tests";

/// How values are written: markdown (a PR comment, a step summary) or text.
#[derive(Clone, Copy)]
struct Escape {
    markdown: bool,
}

impl Escape {
    fn text(self, s: &str) -> String {
        if self.markdown {
            markdown_prose(s)
        } else {
            text_value(s).into_owned()
        }
    }

    fn code(self, s: &str) -> String {
        if self.markdown {
            markdown_code(s)
        } else {
            text_value(s).into_owned()
        }
    }
}

/// `warden known-issues summary` as a report: the comment (markdown) and its text form.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    pub markdown: String,
    text: String,
}

impl Summary {
    /// Adds a link to the full hive report (an uploaded `hive history --format html`), before
    /// the marker: `url` must be `https://`, without spaces, quotes or brackets.
    pub fn link_report(&mut self, url: &str) -> Result<(), Reason> {
        if !markup::plain_https_url(url) {
            return Err(format!(
                "--report-url {}: an https:// URL without spaces, quotes or brackets",
                markup::text_value(url)
            )
            .into());
        }
        let line = format!("[The full hive report]({url}) (heat map of tests × runs).\n\n");
        match self.markdown.rfind(MARKER) {
            Some(at) => self.markdown.insert_str(at, &line),
            None => self.markdown.push_str(&line),
        }
        self.text
            .push_str(&format!("\nThe full hive report: {url}\n"));
        Ok(())
    }

    pub fn new(
        registry: &Registry,
        results: Option<&HiveReport>,
        history: Option<&History>,
    ) -> Self {
        Summary {
            markdown: render(registry, results, history, true),
            text: render(registry, results, history, false),
        }
    }
}

impl super::Report for Summary {
    fn text(&self, w: &mut dyn std::io::Write, _color: bool) -> std::io::Result<()> {
        w.write_all(self.text.as_bytes())
    }

    fn markdown(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(self.markdown.as_bytes())
    }

    /// The summary reports; it never fails a run.
    fn exit_code(&self) -> u8 {
        0
    }
}

/// Every value from the registry or the results is escaped: in markdown it cannot mention, link,
/// format or carry the marker; in text it cannot break a line or start a workflow command.
///
/// With `history` (the earlier runs and this one, oldest first), each test of the run gains its
/// strip of marks over the runs.
pub(crate) fn render(
    registry: &Registry,
    results: Option<&HiveReport>,
    history: Option<&History>,
    markdown: bool,
) -> String {
    let esc = Escape { markdown };
    let mut out = String::new();
    // Drafts are not known issues yet (their why is unwritten): left out, and counted.
    let entries: Vec<_> = registry
        .entries
        .iter()
        .filter(|e| e.data.status != IssueStatus::Draft)
        .collect();
    let drafts = registry.entries.len() - entries.len();
    let total: usize = entries.iter().map(|e| e.data.exclude.len()).sum();
    let (h2, h3) = if markdown {
        ("## ", "### ")
    } else {
        ("", "* ")
    };
    let _ = writeln!(out, "{h2}{HEADING}\n");
    let _ = writeln!(
        out,
        "{}, {}{}.",
        n_of(entries.len(), "known issue", "known issues"),
        n_of(total, "excluded test", "excluded tests"),
        match drafts {
            0 => String::new(),
            n => format!(
                " ({} not shown until written up)",
                n_of(n, "draft", "drafts")
            ),
        }
    );
    if let Some(r) = results {
        run_line(&mut out, r, esc);
    }
    if let Some(h) = history {
        history_line(&mut out, h, esc);
    }
    pins(&mut out, registry, results, esc);
    for e in entries {
        let n = e.data.exclude.len();
        let _ = writeln!(
            out,
            "\n{h3}{} ({}, {})",
            esc.text(&e.data.title),
            esc.code(&e.id),
            e.data.status.name()
        );
        if !e.data.locations.is_empty() {
            let wh: Vec<String> = e
                .data
                .locations
                .iter()
                .map(|l| match &l.symbol {
                    Some(s) => {
                        format!("{} ({})", esc.code(l.path.get_ref()), esc.code(s.get_ref()))
                    }
                    None => esc.code(l.path.get_ref()),
                })
                .collect();
            let bold = if markdown { "**" } else { "" };
            let _ = writeln!(out, "\n{bold}Where:{bold} {}", wh.join(", "));
        }
        let why: Vec<&str> = e.why_first_paragraph().split_whitespace().collect();
        let _ = writeln!(out, "\n{}", esc.text(&why.join(" ")));
        let mine: Option<Vec<&CaseResult>> = results.map(|r| {
            r.results
                .iter()
                .filter(|c| c.entry.as_deref() == Some(e.id.as_str()))
                .collect()
        });
        // Exclusions are names or patterns: what they match in this run is counted apart.
        match (&mine, n) {
            (_, 0) => {}
            (Some(m), n) => {
                let _ = writeln!(
                    out,
                    "\n{}, matching {} of this run.",
                    n_of(n, "exclusion", "exclusions"),
                    n_of(m.len(), "test", "tests")
                );
            }
            (None, n) => {
                let _ = writeln!(out, "\n{}.", n_of(n, "exclusion", "exclusions"));
            }
        }
        if let Some(mine) = mine {
            entry_results(&mut out, &mine, history, esc);
        }
    }
    if markdown {
        let _ = writeln!(out, "\n{MARKER}");
    }
    out
}

/// "In this run (…): …" for the results.
fn run_line(out: &mut String, r: &HiveReport, esc: Escape) {
    let count = |o: Outcome| r.counts.get(&o).copied().unwrap_or(0);
    let _ = writeln!(
        out,
        "In this run ({}): {} expected, {} flaky, {} fixed, {}, {} missing.",
        esc.code(&r.dir.display().to_string()),
        count(Outcome::EXPECTED),
        count(Outcome::FLAKY),
        count(Outcome::FIXED),
        n_of(
            count(Outcome::WrongFailure),
            "wrong failure",
            "wrong failures"
        ),
        count(Outcome::Missing)
    );
}

/// "Over the last N runs: …" for the history. A count of what is news (new, broken, flaky)
/// names its tests when there are a few; the known failures (broken and listed) are counted.
fn history_line(out: &mut String, h: &History, esc: Escape) {
    const NAMED: usize = 5;
    let classes: Vec<String> = [
        TestClass::New,
        TestClass::Broken,
        TestClass::Flaky,
        TestClass::Fixed,
        TestClass::Stale,
        TestClass::Known,
    ]
    .iter()
    .map(|c| {
        let news: Vec<String> = h
            .tests
            .iter()
            .filter(|t| t.class == *c)
            .filter(|_| matches!(c, TestClass::New | TestClass::Broken | TestClass::Flaky))
            .map(|t| esc.code(&format!("{}/{}", t.suite, t.name)))
            .collect();
        let mut said = format!("{} {}", h.count(*c), c.label());
        if !news.is_empty() && news.len() <= NAMED {
            said.push_str(&format!(" ({})", news.join(", ")));
        }
        said
    })
    .collect();
    let _ = writeln!(
        out,
        "Over the last {} (oldest first; ✓ passed, ✗ failed, · absent, ? not run): {}.",
        n_of(h.runs.len(), "run", "runs"),
        classes.join(", ")
    );
}

/// The pins, and whether the run matched each.
fn pins(out: &mut String, registry: &Registry, results: Option<&HiveReport>, esc: Escape) {
    if registry.settings.upstream.is_empty() {
        return;
    }
    let run_pins = results.map(|r| r.pins.as_slice()).unwrap_or_default();
    let pins: Vec<String> = registry
        .settings
        .upstream
        .iter()
        .map(|(k, v)| {
            let how = match run_pins.iter().find(|p| &p.name == k) {
                None => String::new(),
                Some(p) => match (p.status, &p.run) {
                    (PinStatus::Matched, _) => " (the run matched)".into(),
                    (PinStatus::Mismatch, Some(run)) => {
                        format!(" (the run used {})", esc.code(run))
                    }
                    _ => " (not recorded by the run)".into(),
                },
            };
            format!("{} {}{how}", esc.text(k), esc.code(v))
        })
        .collect();
    let _ = writeln!(out, "Pinned upstream: {}.", pins.join(", "));
    if run_pins.iter().any(|p| p.status == PinStatus::Mismatch) {
        let _ = writeln!(
            out,
            "The run does not match the pins: a listed test that passed (fixed) is likely an upstream change."
        );
    }
}

/// How an entry's tests fared in the run (and over the runs, with a history).
fn entry_results(out: &mut String, mine: &[&CaseResult], history: Option<&History>, esc: Escape) {
    if mine.is_empty() {
        return;
    }
    let strip = |c: &CaseResult| -> String {
        history
            .and_then(|h| {
                h.tests
                    .iter()
                    .find(|t| t.suite == c.suite && t.name == c.name)
            })
            .map(|t| t.strip())
            .unwrap_or_default()
    };
    match (esc.markdown, history.is_some()) {
        (true, true) => {
            out.push_str("\n| test | this run | runs |\n|---|---|---|\n");
            for c in mine {
                let _ = writeln!(
                    out,
                    "| {} | {} | `{}` |",
                    esc.code(&c.name),
                    c.outcome.label(),
                    strip(c)
                );
            }
        }
        (true, false) => {
            out.push_str("\n| test | this run |\n|---|---|\n");
            for c in mine {
                let _ = writeln!(out, "| {} | {} |", esc.code(&c.name), c.outcome.label());
            }
        }
        (false, _) => {
            out.push('\n');
            for c in mine {
                let marks = strip(c);
                let marks = if marks.is_empty() { marks } else { marks + " " };
                let _ = writeln!(
                    out,
                    "  {:<16} {marks}{}",
                    c.outcome.label(),
                    esc.text(&c.name)
                );
            }
        }
    }
}
