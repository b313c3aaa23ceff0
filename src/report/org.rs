//! `warden audit --org`: a table of repositories × findings by severity, worst first, then each
//! repository's findings; JSON (one v1 report per repository); SARIF (one run per repository);
//! markdown for an issue or a step summary.

use std::io::{self, Write};

use serde::Serialize;

use super::audit::{sarif_log, sarif_run};
use super::{unsupported, write_json, Format, Report};
use crate::audit::findings::{AuditReport, Severity};
use crate::audit::org::{NotAudited, OrgReport};
use crate::github::api::RequestCounts;
use crate::markup::{count, markdown_cell, markdown_code, text_value};

fn name(r: &AuditReport) -> &str {
    r.repository.as_deref().unwrap_or_default()
}

fn verdict(o: &OrgReport) -> &'static str {
    if o.exit_code() == 0 {
        "ok"
    } else {
        "FAILED"
    }
}

fn summary(o: &OrgReport) -> String {
    let failing = o.reports.iter().filter(|r| r.exit_code() != 0).count();
    format!(
        "{}: {} audited ({failing} with findings at or above {}), {} unreadable, {} not started, {} excluded; {} requests ({}{} not modified, {} from the cache): {}",
        text_value(&o.organization),
        count(o.reports.len(), "repository", "repositories"),
        o.fail_on,
        o.unreadable.len(),
        o.not_started.len(),
        o.excluded,
        o.requests.sent,
        match o.requests.graphql {
            0 => String::new(),
            n => format!("{n} GraphQL, "),
        },
        o.requests.not_modified,
        o.requests.from_cache,
        verdict(o)
    )
}

impl Report for OrgReport {
    fn text(&self, w: &mut dyn Write, color: bool) -> io::Result<()> {
        let width = self
            .reports
            .iter()
            .map(|r| name(r).len())
            .chain(self.unreadable.iter().map(|u| u.repository.len()))
            .max()
            .unwrap_or(10)
            .max(10);
        writeln!(w, "{:<width$}  HIGH MEDIUM  LOW INFO", "REPOSITORY")?;
        for r in &self.reports {
            let [h, m, l, i] = r.severity_counts();
            writeln!(
                w,
                "{:<width$}  {h:>4} {m:>6} {l:>4} {i:>4}",
                text_value(name(r))
            )?;
        }
        for (label, list) in [
            ("UNREADABLE", &self.unreadable),
            ("NOT STARTED", &self.not_started),
        ] {
            for u in list {
                let known = if u.in_baseline {
                    " (as in the baseline)"
                } else {
                    ""
                };
                writeln!(
                    w,
                    "{label} {}{known}: {}",
                    text_value(&u.repository),
                    text_value(&u.reason)
                )?;
            }
        }
        for r in self.reports.iter().filter(|r| !r.findings.is_empty()) {
            writeln!(w, "\n== {}", text_value(name(r)))?;
            r.text(w, color)?;
        }
        writeln!(w, "{}", summary(self))
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(
            w,
            "### warden audit of {}: {}\n",
            markdown_code(&self.organization),
            verdict(self)
        )?;
        writeln!(w, "{}\n", markdown_cell(&summary(self)))?;
        writeln!(
            w,
            "| repository | high | medium | low | info |\n|---|---|---|---|---|"
        )?;
        for r in &self.reports {
            let [h, m, l, i] = r.severity_counts();
            writeln!(w, "| {} | {h} | {m} | {l} | {i} |", markdown_code(name(r)))?;
        }
        for u in self.unreadable.iter().chain(&self.not_started) {
            writeln!(
                w,
                "| {} | not audited: {} | | | |",
                markdown_code(&u.repository),
                markdown_cell(&u.reason)
            )?;
        }
        Ok(())
    }

    fn json(&self, w: &mut dyn Write) -> io::Result<()> {
        #[derive(Serialize)]
        struct Doc<'a> {
            version: u32,
            organization: &'a str,
            fail_on: Severity,
            failed: bool,
            /// Each a `warden audit --format json` report (version 1).
            repositories: &'a [AuditReport],
            unreadable: &'a [NotAudited],
            not_started: &'a [NotAudited],
            excluded: usize,
            requests: RequestCounts,
            /// With `--inventory`, in a saved run: each repository's key facts, for `--resume`.
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            key_facts: &'a [crate::audit::inventory::facts::RepoFacts],
        }
        write_json(
            w,
            &Doc {
                version: 1,
                organization: &self.organization,
                fail_on: self.fail_on,
                failed: self.exit_code() != 0,
                repositories: &self.reports,
                unreadable: &self.unreadable,
                not_started: &self.not_started,
                excluded: self.excluded,
                requests: self.requests,
                key_facts: &self.key_facts,
            },
        )
    }

    fn exit_code(&self) -> u8 {
        OrgReport::exit_code(self)
    }

    fn render_other(&self, format: Format, w: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Sarif => {
                write_json(w, &sarif_log(self.reports.iter().map(sarif_run).collect()))
            }
            other => Err(unsupported(other)),
        }
    }
}
