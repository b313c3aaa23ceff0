//! `warden log …`: what a log command did, and what it refused.

use std::io::{self, Write};

use super::Report;
use crate::log_monitor::MonitorReport;
use crate::markup::{markdown_code, text_value};
use crate::release::log_ops::{AppendReport, InitReport, LogVerifyReport, WitnessReport};

fn path(p: &std::path::Path) -> String {
    text_value(&p.display().to_string()).into_owned()
}

fn entries(n: u64) -> String {
    format!("{n} {}", if n == 1 { "entry" } else { "entries" })
}

impl Report for InitReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        match &self.log {
            Some(dir) => writeln!(
                w,
                "log         {}  (empty: checkpoint of size 0)",
                path(dir)
            )?,
            None => writeln!(w, "witness     {}", text_value(&self.origin))?,
        }
        writeln!(w, "origin      {}", text_value(&self.origin))?;
        if let Some(key) = &self.created_key {
            writeln!(
                w,
                "secret key  {}  (new, mode 0600; never commit it)",
                path(key)
            )?;
        }
        writeln!(w, "vkey        {}", self.vkey)?;
        match (&self.log, &self.vkey_file) {
            (Some(_), Some(file)) => writeln!(
                w,
                "            written to {}  (commit it; verifiers pass --require-log --log-vkey {})",
                path(file),
                path(file)
            ),
            (Some(_), None) => writeln!(
                w,
                "\nVerifiers pass the vkey: warden verify DIR --require-log --log-vkey '{}'",
                self.vkey
            ),
            (None, _) => writeln!(
                w,
                "\nVerifiers that require this witness pass: --witness '{}'",
                self.vkey
            ),
        }
    }
    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "Log `{}`: vkey {}",
            markdown_code(&self.origin),
            markdown_code(&self.vkey)
        )
    }
    fn exit_code(&self) -> u8 {
        0
    }
}

impl Report for AppendReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for e in &self.entries {
            let what = if e.already {
                "logged before, proof renewed"
            } else {
                "logged"
            };
            writeln!(
                w,
                "entry {:<6} key {}  {}  {what}  → {}",
                e.index,
                e.key_id,
                path(&e.signature),
                path(&e.proof)
            )?;
        }
        for (p, why) in &self.skipped {
            writeln!(w, "skipped      {}  {}", path(p), text_value(why))?;
        }
        writeln!(w, "log {}: {}", path(&self.log), entries(self.size))
    }
    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        for e in &self.entries {
            writeln!(w, "- entry {} — key `{}`", e.index, e.key_id)?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|(p, why)| format!("{}: {why}", p.display()))
            .collect()
    }
    fn exit_code(&self) -> u8 {
        0
    }
}

impl Report for LogVerifyReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        let log = text_value(&self.log);
        if let Some(problem) = &self.problem {
            return writeln!(w, "FAILED  log {log}: {}", text_value(problem));
        }
        if let Some(s) = &self.summary {
            writeln!(
                w,
                "OK  log {log}: {}, {} tile{}, every entry signed by the key it names and every tile the one its entries give",
                entries(s.size),
                s.tiles,
                if s.tiles == 1 { "" } else { "s" }
            )?;
            for (key, n) in &s.keys {
                writeln!(w, "    key {key}: {}", entries(*n))?;
            }
        }
        if !self.cosigned.is_empty() {
            writeln!(
                w,
                "    cosigned by {}",
                text_value(&self.cosigned.join(", "))
            )?;
        }
        Ok(())
    }
    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        match &self.problem {
            Some(p) => writeln!(w, "**Log failed:** {}", crate::markup::markdown_text(p)),
            None => writeln!(
                w,
                "Log verified: {} entries",
                self.summary.as_ref().map_or(0, |s| s.size)
            ),
        }
    }
    fn exit_code(&self) -> u8 {
        LogVerifyReport::exit_code(self)
    }
}

impl Report for WitnessReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        let log = text_value(&self.log);
        match (&self.problem, &self.cosignature) {
            (Some(problem), _) => {
                writeln!(w, "REFUSED  log {log}: {}", text_value(problem))?;
                if let Some(e) = &self.evidence {
                    writeln!(w, "         evidence: {}", path(e))?;
                }
                Ok(())
            }
            (None, Some(line)) => {
                writeln!(
                    w,
                    "cosigned  log {log}: size {} (this witness cosigned size {} before)",
                    self.size, self.previous
                )?;
                writeln!(w, "{line}")
            }
            (None, None) => writeln!(w, "log {log}: size {}", self.size),
        }
    }
    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        match &self.problem {
            Some(p) => writeln!(
                w,
                "**Witness refused:** {}",
                crate::markup::markdown_text(p)
            ),
            None => writeln!(w, "Witness cosigned size {}", self.size),
        }
    }
    fn exit_code(&self) -> u8 {
        WitnessReport::exit_code(self)
    }
}

impl Report for crate::release::witness_net::CosignReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        for o in &self.witnesses {
            match (&o.cosignature, &o.problem) {
                (Some(line), _) => {
                    writeln!(w, "cosigned  {}", text_value(&o.url))?;
                    writeln!(w, "          {}", text_value(line))?;
                }
                (None, problem) => writeln!(
                    w,
                    "FAILED    {}: {}",
                    text_value(&o.url),
                    text_value(problem.as_deref().unwrap_or("no answer"))
                )?,
            }
        }
        let cosigned = self.cosigned();
        writeln!(
            w,
            "log {}: checkpoint of size {}, {cosigned} of {} witnesses cosigned (at least {} needed){}",
            path(&self.log),
            self.size,
            self.witnesses.len(),
            self.threshold,
            if self.written || cosigned == 0 {
                ""
            } else {
                "; not written back: the log moved on meanwhile, run again"
            }
        )
    }
    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        let cosigned = self.cosigned();
        writeln!(
            w,
            "Checkpoint of size {}: {cosigned} of {} witnesses cosigned",
            self.size,
            self.witnesses.len()
        )
    }
    fn exit_code(&self) -> u8 {
        crate::release::witness_net::CosignReport::exit_code(self)
    }
}

impl Report for MonitorReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        let log = text_value(&self.log);
        if let Some(problem) = &self.problem {
            return writeln!(w, "FAILED   log {log}: {}", text_value(problem));
        }
        for e in &self.entries {
            let mut line = format!("entry {}  key {}", e.index, e.key_id);
            if let Some(tag) = &e.tag {
                line.push_str(&format!("  tag {}", text_value(tag)));
            }
            if let Some(run) = &e.run {
                line.push_str(&format!("  {}", text_value(run)));
            }
            if e.problems.is_empty() {
                writeln!(w, "OK       {line}")?;
            } else {
                writeln!(w, "FLAGGED  {line}: {}", text_value(&e.problems.join("; ")))?;
            }
        }
        let flagged = self
            .entries
            .iter()
            .filter(|e| !e.problems.is_empty())
            .count();
        writeln!(
            w,
            "log {log}: entries {} to {} read, {} of {} ({} of other repositories), {flagged} flagged",
            self.from,
            self.size,
            self.entries.len(),
            text_value(&self.repo),
            self.other_repositories
        )
    }
    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        for e in self.entries.iter().filter(|e| !e.problems.is_empty()) {
            writeln!(
                w,
                "- **entry {}** (key `{}`): {}",
                e.index,
                e.key_id,
                crate::markup::markdown_text(&e.problems.join("; "))
            )?;
        }
        Ok(())
    }
    fn annotations(&self, w: &mut dyn Write) -> io::Result<()> {
        for e in self.entries.iter().filter(|e| !e.problems.is_empty()) {
            let message = format!(
                "log entry {} (key {}): {}",
                e.index,
                e.key_id,
                e.problems.join("; ")
            );
            writeln!(
                w,
                "{}",
                crate::markup::github_annotation("error", &[], &message)
            )?;
        }
        Ok(())
    }
    fn exit_code(&self) -> u8 {
        MonitorReport::exit_code(self)
    }
}
