//! `warden check`: a line per check and a summary; a markdown table; `::error` annotations on
//! the files that failed.

use std::io::{self, Write};

use serde::Serialize;

use super::{write_json, Report};
use crate::markup::{github_annotation, markdown_cell, markdown_code, text_value};
use crate::repo_check::{CheckLine, CheckReport};

impl Report for CheckReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for l in &self.lines {
            writeln!(
                w,
                "{}  {:<12} {}: {}",
                if l.passed { "ok  " } else { "FAIL" },
                l.check,
                text_value(&l.subject),
                text_value(&l.detail)
            )?;
        }
        let failed = self.failed();
        writeln!(
            w,
            "check: {} passed, {} failed",
            self.lines.len() - failed,
            failed
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "### warden check: {}\n",
            if self.failed() == 0 { "ok" } else { "FAILED" }
        )?;
        writeln!(w, "| | check | subject | detail |\n|---|---|---|---|")?;
        for l in &self.lines {
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                if l.passed { "ok" } else { "FAIL" },
                l.check,
                markdown_code(&l.subject),
                markdown_cell(&l.detail)
            )?;
        }
        Ok(())
    }

    /// An `::error` per failed check. A subject of the form `path[:line[:col]]` that names a
    /// file under the root puts the annotation on that file.
    fn annotations(&self, w: &mut dyn Write) -> io::Result<()> {
        for l in self.lines.iter().filter(|l| !l.passed) {
            let spot = l.subject.split(' ').next().unwrap_or_default();
            let mut parts = spot.split(':');
            let path = parts.next().unwrap_or_default();
            let mut props = Vec::new();
            if !path.is_empty() && self.root.join(path).is_file() {
                props.push(("file", path.to_string()));
                for key in ["line", "col"] {
                    if let Some(n) = parts.next().filter(|n| n.parse::<u64>().is_ok()) {
                        props.push((key, n.to_string()));
                    }
                }
            }
            props.push(("title", format!("warden check {}", l.check)));
            let message = format!("{}: {}", l.subject, l.detail);
            writeln!(w, "{}", github_annotation("error", &props, &message))?;
        }
        Ok(())
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        #[derive(Serialize)]
        struct Doc<'a> {
            checks: &'a [CheckLine],
            passed: usize,
            failed: usize,
        }
        write_json(
            w,
            &Doc {
                checks: &self.lines,
                passed: self.lines.len() - self.failed(),
                failed: self.failed(),
            },
        )
    }

    fn exit_code(&self) -> u8 {
        u8::from(self.failed() > 0)
    }
}
