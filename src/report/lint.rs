//! `warden known-issues lint`: `FILE:LINE:COL: message` per problem and a summary; `::error`
//! annotations on the same places.

use std::io::{self, Write};

use super::Report;
use crate::known_issues::lint::LintReport;
use crate::markup::{count, markdown_cell, markdown_code};

fn summary(r: &LintReport) -> String {
    format!(
        "known-issues lint: {}, {}",
        count(r.entries, "entry", "entries"),
        count(r.problems.len(), "problem", "problems")
    )
}

impl Report for LintReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for p in &self.problems {
            writeln!(w, "{p}")?;
        }
        writeln!(w, "{}", summary(self))
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "### {}\n", summary(self))?;
        if self.problems.is_empty() {
            return Ok(());
        }
        writeln!(w, "| where | problem |\n|---|---|")?;
        for p in &self.problems {
            let at = match p.line {
                0 => p.path.display().to_string(),
                line => format!("{}:{line}:{}", p.path.display(), p.column),
            };
            writeln!(
                w,
                "| {} | {} |",
                markdown_code(&at),
                markdown_cell(&p.message)
            )?;
        }
        Ok(())
    }

    fn annotations(&self, w: &mut dyn Write) -> io::Result<()> {
        for p in &self.problems {
            writeln!(w, "{}", p.github_annotation())?;
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        u8::from(!self.problems.is_empty())
    }
}
