//! `warden known-issues render`: whether the doc is up to date (`--check`, exit 1 when not), or
//! where it was written.

use std::io::{self, Write};

use super::Report;
use crate::known_issues::doc::DocOutcome;
use crate::markup::{markdown_code, text_value};

impl DocOutcome {
    fn line(&self, path: &dyn Fn(&std::path::Path) -> String) -> String {
        match self {
            DocOutcome::UpToDate { path: p } => format!("{} is up to date", path(p)),
            DocOutcome::OutOfDate { path: p } => format!(
                "{} is out of date: run `warden known-issues render`",
                path(p)
            ),
            DocOutcome::Wrote { path: p, entries } => {
                format!("wrote {} ({entries} entries)", path(p))
            }
        }
    }
}

impl Report for DocOutcome {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        writeln!(
            w,
            "{}",
            self.line(&|p| text_value(&p.display().to_string()).into_owned())
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "{}",
            self.line(&|p| markdown_code(&p.display().to_string()))
        )
    }

    fn exit_code(&self) -> u8 {
        u8::from(matches!(self, DocOutcome::OutOfDate { .. }))
    }
}
