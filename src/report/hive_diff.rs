//! `warden hive diff`: a line per changed test and a summary; a markdown table; JSON.

use std::io::{self, Write};

use super::{write_json, Report};
use crate::hive::diff::{Change, HiveDiff};
use crate::hive::verdict::TestClass;
use crate::markup::{markdown_cell, markdown_code, text_value};

/// `--format` of `hive history`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RunsFormat {
    #[default]
    Text,
    Json,
    Markdown,
    /// A self-contained HTML page (`hive history`): a heat map of tests × runs with filters.
    Html,
}

impl From<RunsFormat> for super::Format {
    fn from(f: RunsFormat) -> Self {
        match f {
            RunsFormat::Text => super::Format::Text,
            RunsFormat::Json => super::Format::Json,
            RunsFormat::Markdown => super::Format::Markdown,
            RunsFormat::Html => super::Format::Html,
        }
    }
}

/// `--format` of `hive diff`: the history's page has no counterpart for two runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    #[default]
    Text,
    Json,
    Markdown,
}

impl From<DiffFormat> for super::Format {
    fn from(f: DiffFormat) -> Self {
        match f {
            DiffFormat::Text => super::Format::Text,
            DiffFormat::Json => super::Format::Json,
            DiffFormat::Markdown => super::Format::Markdown,
        }
    }
}

fn summary(d: &HiveDiff) -> String {
    format!(
        "hive diff: {} {}, {} {}, {} changed, {} added, {} removed",
        d.new_failures.len(),
        TestClass::New.label(),
        d.fixed.len(),
        TestClass::Fixed.label(),
        d.changed.len(),
        d.added.len(),
        d.removed.len()
    )
}

fn name(c: &Change) -> String {
    format!("{}/{}", c.suite, c.test)
}

/// The sections, in the order they are printed: label, changes. A new failure and a fixed test
/// are named with the verdict words (`TestClass`'s labels).
fn sections(d: &HiveDiff) -> [(String, &[Change]); 5] {
    [
        (TestClass::New.label().to_uppercase(), &d.new_failures),
        (TestClass::Fixed.label().to_uppercase(), &d.fixed),
        ("CHANGED".into(), &d.changed),
        ("ADDED".into(), &d.added),
        ("REMOVED".into(), &d.removed),
    ]
}

impl Report for HiveDiff {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for (label, changes) in sections(self) {
            for c in changes {
                // Suite and test names and failure text come from the results: one line each.
                write!(w, "{label:<12} {}", text_value(&name(c)))?;
                match (c.passed, &c.old_text, &c.new_text) {
                    (Some(p), _, _) => writeln!(w, " ({})", if p { "passed" } else { "failed" })?,
                    (None, Some(o), Some(n)) => {
                        writeln!(w)?;
                        writeln!(w, "    - {}", text_value(o))?;
                        writeln!(w, "    + {}", text_value(n))?;
                    }
                    (None, None, Some(n)) => {
                        writeln!(w)?;
                        for line in n.lines() {
                            writeln!(w, "    | {}", text_value(line))?;
                        }
                    }
                    _ => writeln!(w)?,
                }
            }
        }
        writeln!(w, "{}", summary(self))
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "### {}\n", summary(self))?;
        if sections(self).iter().all(|(_, c)| c.is_empty()) {
            return Ok(());
        }
        writeln!(w, "| change | test | details |\n|---|---|---|")?;
        for (label, changes) in sections(self) {
            for c in changes {
                let details = match (c.passed, &c.old_text, &c.new_text) {
                    (Some(p), _, _) => (if p { "passed" } else { "failed" }).to_string(),
                    (None, Some(o), Some(n)) => {
                        format!("{} → {}", markdown_code(o), markdown_code(n))
                    }
                    (None, None, Some(n)) => markdown_cell(n.lines().next().unwrap_or_default()),
                    _ => String::new(),
                };
                writeln!(
                    w,
                    "| {} | {} | {details} |",
                    label.to_lowercase(),
                    markdown_code(&name(c))
                )?;
            }
        }
        Ok(())
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        write_json(w, self)
    }

    fn exit_code(&self) -> u8 {
        HiveDiff::exit_code(self)
    }
}
