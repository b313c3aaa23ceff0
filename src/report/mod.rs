//! Renderers: every report the library returns, in every format, through one trait.
//!
//! A [`Report`] knows its text, markdown (step summaries, PR comments), GitHub Actions
//! annotations, JSON and exit code; the binary's one `emit` decides where each goes. Formats
//! only some reports have (SARIF for `audit`, JUnit for `hive check`) come from
//! [`Report::render_other`]. Escaping for markdown, workflow commands and XML is `crate::markup`'s.

pub(crate) mod audit;
pub(crate) mod bisect;
pub(crate) mod check;
pub(crate) mod doc;
pub(crate) mod hive;
pub(crate) mod hive_diff;
pub(crate) mod hive_history;
pub(crate) mod html;
pub(crate) mod import;
mod inventory;
pub(crate) mod keygen;
mod keys;
pub(crate) mod lint;
mod log;
pub(crate) mod org;
pub(crate) mod sign;
pub(crate) mod summary;
pub(crate) mod update;
pub(crate) mod verify;

pub use audit::{
    write_applied, write_fix_plan, write_patch, write_workflow_fix_words, write_workflow_fixes,
    AuditFormat,
};
pub use hive::HiveCheckFormat;
pub use hive_diff::{DiffFormat, RunsFormat};
pub use hive_history::{rerun_plan, rerun_regex};
pub use summary::{Summary, SummaryFormat, MARKER};

use std::io::{self, Write};

use serde::Serialize;

/// An output format: what a [`Report`] renders. Each report family declares the formats it has
/// (`TextOrJson`, `audit::AuditFormat`, `hive::HiveCheckFormat`, `hive_diff::RunsFormat`, `hive_diff::DiffFormat`,
/// `summary::SummaryFormat`), and a command's `--format` offers only those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Sarif,
    Junit,
    /// One self-contained page (`hive history`, `hive check`).
    Html,
}

/// `--format` of the reports that are text or JSON: `sign`, `verify`, `check`,
/// `known-issues update`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    #[default]
    Text,
    Json,
}

impl From<TextOrJson> for Format {
    fn from(f: TextOrJson) -> Self {
        match f {
            TextOrJson::Text => Format::Text,
            TextOrJson::Json => Format::Json,
        }
    }
}

pub trait Report: Serialize {
    /// For a person at a terminal; `color` allows ANSI colour.
    fn text(&self, w: &mut dyn Write, color: bool) -> io::Result<()>;

    /// For `$GITHUB_STEP_SUMMARY` and PR comments.
    fn markdown(&self, w: &mut dyn Write) -> io::Result<()>;

    /// GitHub Actions workflow commands (`::error file=…::…`) for what failed; none by default.
    fn annotations(&self, _w: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// Things worth saying that are not results (entries passed over, say); for stderr.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Facts worth saying that are not a caution (what a release is); for stderr, as `note:`.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// For programs: the report's own serialisation, unless the report has a wire format.
    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        write_json(w, self)
    }

    /// 0 when everything verified or passed, 1 when something failed (2 is for errors).
    fn exit_code(&self) -> u8;

    /// The report in `format`.
    fn render(&self, format: Format, w: &mut dyn Write, color: bool) -> io::Result<()> {
        match format {
            Format::Text => self.text(w, color),
            Format::Json => self.json(w),
            Format::Markdown => self.markdown(w),
            other => self.render_other(other, w),
        }
    }

    /// The formats only some reports have (SARIF, JUnit); none by default.
    fn render_other(&self, format: Format, _w: &mut dyn Write) -> io::Result<()> {
        Err(unsupported(format))
    }
}

/// The error for a format a report does not have.
pub fn unsupported(format: Format) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("no {format:?} output for this report"),
    )
}

/// Pretty JSON and a final line break.
pub(crate) fn write_json<T: Serialize + ?Sized>(w: &mut dyn Write, value: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, value)?;
    writeln!(w)
}
