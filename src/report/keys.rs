//! `warden keys list` and `warden keys revoke`: the keys folder's trusted and revoked keys, and
//! where a revocation was written.

use std::io::{self, Write};

use super::Report;
use crate::markup::{markdown_code, text_value};
use crate::trust::keys::KeysReport;
use crate::trust::revocation::RevokeReport;

impl Report for KeysReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for k in &self.trusted {
            let state = if k.expired { "expired" } else { "trusted" };
            let mut about: Vec<String> = [&k.name, &k.role]
                .into_iter()
                .flatten()
                .map(|v| text_value(v).into_owned())
                .collect();
            if let Some(until) = &k.valid_until {
                about.push(format!("until {}", text_value(until)));
            }
            let about = if about.is_empty() {
                String::new()
            } else {
                format!("  {}", about.join(", "))
            };
            writeln!(
                w,
                "{state:<8} {}  {}{about}",
                k.key_id,
                text_value(&k.file.display().to_string())
            )?;
        }
        for r in &self.revoked {
            let by = if r.signed_by == r.key_id {
                "itself".to_string()
            } else {
                format!("key {}", r.signed_by)
            };
            writeln!(
                w,
                "revoked  {}  at {}: {} (signed by {by}; {})",
                r.key_id,
                text_value(&r.revoked_at),
                text_value(&r.reason),
                text_value(&r.file.display().to_string())
            )?;
        }
        for r in &self.rotations {
            writeln!(
                w,
                "rotated  {} -> {}  at {} ({})",
                r.old,
                r.new,
                text_value(&r.rotated_at),
                text_value(&r.file.display().to_string())
            )?;
        }
        if let Some(policy) = &self.policy {
            writeln!(
                w,
                "policy   {} distinct signer{} must sign a release ({})",
                self.threshold,
                if self.threshold == 1 { "" } else { "s" },
                text_value(&policy.display().to_string())
            )?;
        }
        for one in &self.one_signer {
            let ids: Vec<String> = one.keys.iter().map(ToString::to_string).collect();
            writeln!(
                w,
                "signer   {} are one signer: a key and its successors count once ({})",
                ids.join(", "),
                text_value(&one.rotations.join(", "))
            )?;
        }
        for problem in &self.problems {
            writeln!(w, "FAIL     {}", text_value(problem))?;
        }
        let dir = text_value(&self.keys_dir.display().to_string()).into_owned();
        if !self.problems.is_empty() {
            let these = if self.problems.len() == 1 {
                "this is"
            } else {
                "these are"
            };
            return writeln!(w, "{dir}: not usable until {these} fixed");
        }
        let usable = self.trusted.iter().filter(|k| !k.expired).count();
        let expired = self.trusted.len() - usable;
        let expired = if expired > 0 {
            format!("{expired} expired, ")
        } else {
            String::new()
        };
        writeln!(
            w,
            "{dir}: {usable} trusted, {expired}{} revoked",
            self.revoked.len()
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "| key | state |\n|---|---|")?;
        for k in &self.trusted {
            let state = if k.expired { "expired" } else { "trusted" };
            writeln!(w, "| {} | {state} |", markdown_code(&k.key_id.to_string()))?;
        }
        for r in &self.revoked {
            writeln!(w, "| {} | revoked |", markdown_code(&r.key_id.to_string()))?;
        }
        for p in &self.problems {
            writeln!(w, "\n**problem:** {}", crate::markup::markdown_text(p))?;
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        u8::from(!self.problems.is_empty())
    }
}

impl Report for crate::trust::rotation::RotateReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        writeln!(
            w,
            "rotated key {} to {}: {} and {} (signed by both keys)",
            self.old,
            self.new,
            text_value(&self.public_key.display().to_string()),
            text_value(&self.statement.display().to_string())
        )?;
        writeln!(
            w,
            "Commit keys/: users who pinned {} follow it with `warden verify --public-key OLD.pub --follow-rotations`.",
            self.old
        )
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "rotated key {} to {}",
            markdown_code(&self.old.to_string()),
            markdown_code(&self.new.to_string())
        )
    }

    fn exit_code(&self) -> u8 {
        0
    }
}

impl Report for RevokeReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        writeln!(
            w,
            "revoked key {}: {} and {}",
            self.key_id,
            text_value(&self.statement.display().to_string()),
            text_value(&self.signature.display().to_string())
        )?;
        match &self.pending {
            Some(why) => writeln!(
                w,
                "Not valid yet: {}. Do not commit it alone: until it is complete the keys folder does not load.",
                text_value(why)
            ),
            None => writeln!(
                w,
                "Commit both: `warden verify` with this keys folder refuses the key's signatures from now on."
            ),
        }
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "revoked key {}", markdown_code(&self.key_id.to_string()))
    }

    fn exit_code(&self) -> u8 {
        0
    }
}
