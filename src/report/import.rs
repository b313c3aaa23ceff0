//! `warden known-issues import`: a line per entry written and per name left out.

use std::io::{self, Write};

use super::Report;
use crate::known_issues::import::ImportReport;
use crate::markup::{markdown_code, text_value};

impl Report for ImportReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for (file, suite, n) in &self.written {
            writeln!(
                w,
                "wrote {}: {n} exclusion{} of {} (status = \"draft\": review, then lint)",
                text_value(&file.display().to_string()),
                if *n == 1 { "" } else { "s" },
                text_value(suite)
            )?;
        }
        for (name, why) in &self.unmapped {
            writeln!(w, "not imported: {}: {}", text_value(name), text_value(why))?;
        }
        let total: usize = self.written.iter().map(|(_, _, n)| n).sum();
        writeln!(
            w,
            "{total} test{} imported into {} entr{}, {} not imported",
            if total == 1 { "" } else { "s" },
            self.written.len(),
            if self.written.len() == 1 { "y" } else { "ies" },
            self.unmapped.len()
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        for (file, suite, n) in &self.written {
            writeln!(
                w,
                "- {}: {n} exclusions of {}",
                markdown_code(&file.display().to_string()),
                markdown_code(suite)
            )?;
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        0
    }
}
