//! `warden known-issues update`: the unified diff of the registry files (unless written), one
//! line per change, and a summary; JSON.

use std::io::{self, Write};

use super::{write_json, Report};
use crate::hive::registry_update::Update;
use crate::markup::{count, markdown_prose, text_value};

fn summary(u: &Update) -> String {
    let edits = u.changes.iter().filter(|c| c.edits).count();
    if u.files.is_empty() {
        return format!(
            "known-issues update: nothing to change{}",
            if u.changes.is_empty() {
                String::new()
            } else {
                format!(" ({})", count(u.changes.len(), "note", "notes"))
            }
        );
    }
    format!(
        "known-issues update: {} in {}{}",
        count(edits, "change", "changes"),
        count(u.files.len(), "file", "files"),
        if u.written {
            ", written"
        } else {
            " (run again with --write to apply)"
        }
    )
}

impl Report for Update {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        if !self.written {
            // Diff lines start with ' ', '+', '-' or '@': no line of it is a workflow command.
            w.write_all(self.diff().as_bytes())?;
        }
        for c in &self.changes {
            writeln!(
                w,
                "{:<8} {}: {}",
                c.kind.label().to_uppercase(),
                text_value(&c.file.display().to_string()),
                text_value(&c.message)
            )?;
        }
        writeln!(w, "{}", summary(self))
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "### {}\n", summary(self))?;
        for c in &self.changes {
            writeln!(
                w,
                "- **{}**: {}",
                c.kind.label(),
                markdown_prose(&c.message)
            )?;
        }
        Ok(())
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        write_json(w, self)
    }

    fn exit_code(&self) -> u8 {
        0
    }
}
