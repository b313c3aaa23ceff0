//! `warden known-issues summary`: the body of the sticky PR comment ("Known issues — intentionally
//! skipped tests"), optionally with how each excluded test fared in a hive run.

use std::fmt::Write as _;

use crate::hive::history::{History, TestClass};
use crate::hive::outcome::{HiveReport, Outcome};
use crate::hive::pins::PinStatus;
use crate::known_issues::schema::Registry;
use crate::markup::{self, count as n_of, markdown_code, markdown_prose, text_value};

/// The hidden marker a later step finds to update the comment in place.
pub const MARKER: &str = markup::COMMENT_MARKER;
pub const HEADING: &str = "Known issues — intentionally skipped tests";

/// Every value from the registry or the results is escaped: in markdown it cannot mention, link,
/// format or carry the marker; in text it cannot break a line or start a workflow command.
///
/// With `history` (the earlier runs and this one, oldest first), each test of the run gains its
/// strip of marks over the runs.
pub fn render(
    registry: &Registry,
    results: Option<&HiveReport>,
    history: Option<&History>,
    markdown: bool,
) -> String {
    let text = |s: &str| {
        if markdown {
            markdown_prose(s)
        } else {
            text_value(s).into_owned()
        }
    };
    let code = |s: &str| {
        if markdown {
            markdown_code(s)
        } else {
            text_value(s).into_owned()
        }
    };
    let mut out = String::new();
    let total: usize = registry.entries.iter().map(|e| e.data.exclude.len()).sum();
    let (h2, h3) = if markdown {
        ("## ", "### ")
    } else {
        ("", "* ")
    };
    let _ = writeln!(out, "{h2}{HEADING}\n");
    let _ = writeln!(
        out,
        "{} known issue{}, {} excluded test{}.",
        registry.entries.len(),
        if registry.entries.len() == 1 { "" } else { "s" },
        total,
        if total == 1 { "" } else { "s" }
    );
    if let Some(r) = results {
        let count = |o: Outcome| r.counts.get(&o).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "In this run ({}): {}, {} flaky, {}, {}, {} missing.",
            code(&r.dir.display().to_string()),
            n_of(
                count(Outcome::ExpectedFail),
                "expected failure",
                "expected failures"
            ),
            count(Outcome::Flaky),
            n_of(
                count(Outcome::UnexpectedPass),
                "unexpected pass",
                "unexpected passes"
            ),
            n_of(
                count(Outcome::WrongFailure),
                "wrong failure",
                "wrong failures"
            ),
            count(Outcome::Missing)
        );
    }
    if let Some(h) = history {
        let classes: Vec<String> = [
            TestClass::New,
            TestClass::Persistent,
            TestClass::Flaky,
            TestClass::Fixed,
            TestClass::Stale,
        ]
        .iter()
        .map(|c| format!("{} {}", h.count(*c), c.label()))
        .collect();
        let _ = writeln!(
            out,
            "Over the last {} (oldest first; ✓ passed, ✗ failed, · absent): {}.",
            n_of(h.runs.len(), "run", "runs"),
            classes.join(", ")
        );
    }
    let strip = |suite: &str, name: &str| -> String {
        history
            .and_then(|h| h.tests.iter().find(|t| t.suite == suite && t.name == name))
            .map(|t| t.strip())
            .unwrap_or_default()
    };
    let run_pins = results.map(|r| r.pins.as_slice()).unwrap_or_default();
    if !registry.settings.upstream.is_empty() {
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
                            format!(" (the run used {})", code(run))
                        }
                        _ => " (not recorded by the run)".into(),
                    },
                };
                format!("{} {}{how}", text(k), code(v))
            })
            .collect();
        let _ = writeln!(out, "Pinned upstream: {}.", pins.join(", "));
        if run_pins.iter().any(|p| p.status == PinStatus::Mismatch) {
            let _ = writeln!(
                out,
                "The run does not match the pins: unexpected passes are likely an upstream change."
            );
        }
    }
    for e in &registry.entries {
        let n = e.data.exclude.len();
        let _ = writeln!(
            out,
            "\n{h3}{} ({}, {})",
            text(&e.data.title),
            code(&e.id),
            e.data.status.name()
        );
        if !e.data.locations.is_empty() {
            let wh: Vec<String> = e
                .data
                .locations
                .iter()
                .map(|l| match &l.symbol {
                    Some(s) => format!("{} ({})", code(l.path.get_ref()), code(s.get_ref())),
                    None => code(l.path.get_ref()),
                })
                .collect();
            let _ = writeln!(
                out,
                "\n{}Where:{} {}",
                if markdown { "**" } else { "" },
                if markdown { "**" } else { "" },
                wh.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "\n{}",
            text(
                &e.why_first_paragraph()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        );
        if n > 0 {
            let _ = writeln!(out, "\nExcludes {n} test{}.", if n == 1 { "" } else { "s" });
        }
        if let Some(r) = results {
            let mine: Vec<_> = r
                .results
                .iter()
                .filter(|c| c.entry.as_deref() == Some(e.id.as_str()))
                .collect();
            if !mine.is_empty() {
                if markdown && history.is_some() {
                    out.push_str("\n| test | this run | runs |\n|---|---|---|\n");
                    for c in mine {
                        let _ = writeln!(
                            out,
                            "| {} | {} | `{}` |",
                            code(&c.name),
                            c.outcome.label(),
                            strip(&c.suite, &c.name)
                        );
                    }
                } else if markdown {
                    out.push_str("\n| test | this run |\n|---|---|\n");
                    for c in mine {
                        let _ = writeln!(out, "| {} | {} |", code(&c.name), c.outcome.label());
                    }
                } else {
                    out.push('\n');
                    for c in mine {
                        let marks = strip(&c.suite, &c.name);
                        let _ = writeln!(
                            out,
                            "  {:<16} {}{}",
                            c.outcome.label(),
                            if marks.is_empty() {
                                String::new()
                            } else {
                                format!("{marks} ")
                            },
                            text(&c.name)
                        );
                    }
                }
            }
        }
    }
    if markdown {
        let _ = writeln!(out, "\n{MARKER}");
    }
    out
}
