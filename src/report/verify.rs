//! `warden verify`: a line per artifact (`OK  name  key ID  tag T`) and a summary; a markdown
//! table for the step summary; JSON with the counts.

use std::io::{self, Write};

use serde::Serialize;

use super::{write_json, Report};
use crate::markup::{markdown_cell, markdown_code, text_value};
use crate::verdict::report::{ArtifactStatus, VerifyReport};

fn counts(r: &VerifyReport) -> String {
    let mut s = format!(
        "{} verified, {} failed, {} errors",
        r.count(ArtifactStatus::Ok),
        r.count(ArtifactStatus::Failed),
        r.count(ArtifactStatus::Error)
    );
    if !r.skipped.is_empty() {
        s.push_str(&format!(", {} skipped", r.skipped.len()));
    }
    s
}

impl Report for VerifyReport {
    fn text(&self, w: &mut dyn Write, color: bool) -> io::Result<()> {
        for r in &self.results {
            let (label, ansi) = match r.status {
                ArtifactStatus::Ok => ("OK   ", "32"),
                ArtifactStatus::Failed => ("FAIL ", "31"),
                ArtifactStatus::Error => ("ERROR", "1;31"),
            };
            let label = if color {
                format!("\x1b[{ansi}m{label}\x1b[0m")
            } else {
                label.to_string()
            };
            let mut line = format!("{label} {}", text_value(&r.name));
            if r.status == ArtifactStatus::Ok && r.checked == ["provenance"] {
                line.push_str("  the run and the uploads match GitHub's records");
            } else if let (ArtifactStatus::Ok, Some(says)) = (r.status, &r.says) {
                line.push_str(&format!("  {}", text_value(says)));
            } else if r.status == ArtifactStatus::Ok {
                match (r.key_id, &r.key_file) {
                    (Some(id), Some(file)) => line.push_str(&format!(
                        "  key {id} ({})",
                        text_value(&file.display().to_string())
                    )),
                    (Some(id), None) => line.push_str(&format!("  key {id}")),
                    (None, _) if r.checked.contains(&"sha512") => line.push_str("  sha512"),
                    (None, _) => line.push_str("  sha256"),
                }
                let cosigners: Vec<String> = r
                    .signers
                    .iter()
                    .filter(|s| s.counted && Some(s.key_id) != r.key_id)
                    .map(|s| s.key_id.to_string())
                    .collect();
                if !cosigners.is_empty() {
                    line.push_str(&format!("  co-signed by {}", cosigners.join(", ")));
                }
                if let Some(n) = r.required_signatures {
                    let counted = r.signers.iter().filter(|s| s.counted).count();
                    line.push_str(&format!("  ({counted} of {n} required)"));
                }
                if let Some(tag) = &r.tag {
                    line.push_str(&format!("  tag {}", text_value(tag)));
                }
                if let Some(comment) = &r.trusted_comment {
                    // Someone else's comment: what it binds, or all of it when it binds nothing.
                    if let Some(file) = &r.file {
                        line.push_str(&format!("  file {}", text_value(file)));
                    }
                    if let Some(commit) = &r.commit {
                        line.push_str(&format!("  commit {}", text_value(commit)));
                    }
                    if r.binds_nothing {
                        // Quoted once: `text_value` quotes what it escapes.
                        let shown = text_value(comment);
                        let quoted = shown.starts_with('"') && shown.len() > 1;
                        let shown = if quoted {
                            shown.into_owned()
                        } else {
                            format!("\"{shown}\"")
                        };
                        line.push_str(&format!("  comment {shown}"));
                    }
                }
                if let Some(run) = &r.run {
                    line.push_str(&format!("  run {}", run.run_id));
                }
                if r.checked.contains(&"log") {
                    line.push_str("  in the log");
                }
            } else if let Some(reason) = &r.reason {
                line.push_str(&format!("  {}", text_value(reason)));
            }
            writeln!(w, "{line}")?;
        }
        for s in &self.skipped {
            writeln!(
                w,
                "SKIP  {}  {}",
                text_value(&s.name),
                text_value(&s.reason)
            )?;
        }
        writeln!(w, "{}", counts(self))
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        let verdict = if self.exit_code() == 0 {
            "verified"
        } else {
            "FAILED"
        };
        writeln!(w, "### warden verify: {verdict}\n")?;
        writeln!(
            w,
            "| status | artifact | key | tag | details |\n|---|---|---|---|---|"
        )?;
        for r in &self.results {
            let status = match r.status {
                ArtifactStatus::Ok => "ok",
                ArtifactStatus::Failed => "FAILED",
                ArtifactStatus::Error => "ERROR",
            };
            writeln!(
                w,
                "| {status} | {} | {} | {} | {} |",
                markdown_code(&r.name),
                match (r.key_id, &r.key_file) {
                    (Some(id), Some(file)) =>
                        format!("{id} ({})", markdown_code(&file.display().to_string())),
                    (Some(id), None) => id.to_string(),
                    (None, _) => String::new(),
                },
                markdown_cell(r.tag.as_deref().unwrap_or("")),
                markdown_cell(r.reason.as_deref().or(r.says.as_deref()).unwrap_or(""))
            )?;
        }
        for s in &self.skipped {
            writeln!(
                w,
                "| skipped | {} |  |  | {} |",
                markdown_code(&s.name),
                markdown_cell(&s.reason)
            )?;
        }
        writeln!(w, "\n{}", counts(self))
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        #[derive(Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            report: &'a VerifyReport,
            verified: usize,
            failed: usize,
            errors: usize,
            exit_code: u8,
        }
        write_json(
            w,
            &Doc {
                report: self,
                verified: self.count(ArtifactStatus::Ok),
                failed: self.count(ArtifactStatus::Failed),
                errors: self.count(ArtifactStatus::Error),
                exit_code: self.exit_code(),
            },
        )
    }

    fn exit_code(&self) -> u8 {
        VerifyReport::exit_code(self)
    }
}
