//! `warden sign`: a line per signed file and a summary; JSON with digests and sizes.

use std::io::{self, Write};

use super::Report;
use crate::markup::{count, markdown_code, text_value};
use crate::release::sign::SignReport;
use crate::util::to_hex;

impl Report for SignReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for a in &self.artifacts {
            writeln!(
                w,
                "signed  {}  -> {}",
                text_value(&a.path.display().to_string()),
                text_value(&a.signature.display().to_string())
            )?;
        }
        if let Some(c) = &self.checksums {
            writeln!(
                w,
                "wrote   {}  -> {}",
                text_value(&c.path.display().to_string()),
                text_value(&c.signature.display().to_string())
            )?;
        }
        writeln!(
            w,
            "{} signed with key {}",
            count(self.artifacts.len(), "artifact", "artifacts"),
            self.key_id
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "### warden sign: {} signed with key {}\n",
            count(self.artifacts.len(), "artifact", "artifacts"),
            self.key_id
        )?;
        writeln!(
            w,
            "| file | signature | SHA-256 | bytes |\n|---|---|---|---|"
        )?;
        for f in self.artifacts.iter().chain(&self.checksums) {
            writeln!(
                w,
                "| {} | {} | `{}` | {} |",
                markdown_code(&f.path.display().to_string()),
                markdown_code(&f.signature.display().to_string()),
                to_hex(&f.sha256),
                f.size
            )?;
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|(path, why)| format!("skipped {}: {why}", path.display()))
            .chain(self.warnings.iter().cloned())
            .collect()
    }

    fn exit_code(&self) -> u8 {
        0
    }
}

impl Report for crate::release::cosign::CosignReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        let name = self
            .name
            .as_deref()
            .map(|n| format!(" ({})", text_value(n)))
            .unwrap_or_default();
        writeln!(
            w,
            "co-signed {}  -> {}",
            text_value(&self.checksums.display().to_string()),
            text_value(&self.signature.display().to_string())
        )?;
        writeln!(
            w,
            "key {}{name}: {} of {} required signatures{}",
            self.key_id,
            self.signers,
            self.required,
            if self.signers >= self.required {
                ""
            } else {
                " (more keys must co-sign before it verifies)"
            }
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "co-signed {} with key {}: {} of {} required signatures",
            markdown_code(&self.checksums.display().to_string()),
            markdown_code(&self.key_id.to_string()),
            self.signers,
            self.required
        )
    }

    fn exit_code(&self) -> u8 {
        0
    }
}
