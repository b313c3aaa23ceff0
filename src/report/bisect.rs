//! `hive bisect`'s report: the first bad commit and its parent (or why the probes could not
//! decide), then the path table, in text, markdown and JSON.

use std::io::{self, Write};

use super::Report;
use crate::github::workflow_runs::CommitInfo;
use crate::hive::bisect::{path_markdown, path_text, MIN_RUNS};
use crate::hive::bisect_run::{BisectReport, Ending};
use crate::markup::{markdown_cell, markdown_code, text_value};

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// `abc123def456 (2026-11-30) Title`, escaped by `esc`.
fn commit_line(c: &CommitInfo, esc: &dyn Fn(&str) -> String) -> String {
    format!(
        "{} ({}) {}",
        esc(&c.sha),
        esc(c.date.as_deref().unwrap_or("?")),
        esc(&c.title)
    )
}

/// What every run's URL is before its id (`https://github.com/o/r/actions/runs/`), when they
/// share it: the text table names runs by id, and this line makes each a link.
fn runs_prefix(r: &BisectReport) -> Option<String> {
    let mut prefixes = r
        .path
        .iter()
        .flat_map(|row| &row.probes)
        .filter_map(|p| p.run.as_deref())
        .map(|run| {
            run.rsplit_once("/actions/runs/")
                .map(|(p, _)| format!("{p}/actions/runs/"))
        });
    let first = prefixes.next()??;
    prefixes
        .all(|p| p.as_deref() == Some(first.as_str()))
        .then_some(first)
}

fn what(r: &BisectReport) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &r.test {
        parts.push(format!("test /{t}/"));
    }
    if let Some(s) = &r.suite {
        parts.push(format!("suite /{s}/"));
    }
    parts.join(" in ")
}

impl Report for BisectReport {
    fn text(&self, w: &mut dyn Write, _color: bool) -> io::Result<()> {
        let esc = |s: &str| text_value(s).into_owned();
        writeln!(
            w,
            "hive bisect: {} over {} commits of {}, {} dispatches of {} on {} in {}",
            esc(&what(self)),
            self.commits,
            esc(&self.commits_repo),
            self.dispatches,
            esc(&self.workflow),
            esc(&self.git_ref),
            esc(&self.repo)
        )?;
        match &self.ending {
            Ending::Found { first_bad, parent } => {
                writeln!(w, "first bad commit: {}", commit_line(first_bad, &esc))?;
                writeln!(w, "its parent:       {}", commit_line(parent, &esc))?;
            }
            Ending::Undecided { at, why } => {
                writeln!(w, "undecided at {}: {}", esc(short(&at.sha)), esc(why))?;
            }
            Ending::Plan {
                first,
                midpoints,
                most_dispatches,
            } => {
                writeln!(
                    w,
                    "dry run: nothing dispatched. Each endpoint is probed until {MIN_RUNS} runs reach it, then about {midpoints} commits between them, each until its runs decide; at most {most_dispatches} dispatches (--max-dispatches). The first:"
                )?;
                for d in first {
                    let inputs: Vec<String> = d
                        .inputs
                        .iter()
                        .map(|(k, v)| format!("{}={}", esc(k), esc(v)))
                        .collect();
                    writeln!(w, "  {}  {}", esc(short(&d.commit)), inputs.join(" "))?;
                }
            }
        }
        if !self.path.is_empty() {
            writeln!(
                w,
                "\npath (commit, date, failures of valid runs [95 % interval], verdict, runs):"
            )?;
            w.write_all(path_text(&self.path).as_bytes())?;
            if let Some(prefix) = runs_prefix(self) {
                writeln!(w, "run N is {}N", esc(&prefix))?;
            }
        }
        Ok(())
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        let code = |s: &str| markdown_code(s);
        writeln!(
            w,
            "### hive bisect: {} over {} commits of {}\n",
            markdown_cell(&what(self)),
            self.commits,
            code(&self.commits_repo)
        )?;
        match &self.ending {
            Ending::Found { first_bad, parent } => {
                writeln!(
                    w,
                    "**First bad commit:** {} ({}) {}  \n**Its parent:** {} ({}) {}\n",
                    code(&first_bad.sha),
                    markdown_cell(first_bad.date.as_deref().unwrap_or("?")),
                    markdown_cell(&first_bad.title),
                    code(&parent.sha),
                    markdown_cell(parent.date.as_deref().unwrap_or("?")),
                    markdown_cell(&parent.title),
                )?;
            }
            Ending::Undecided { at, why } => {
                writeln!(
                    w,
                    "**Undecided** at {}: {}\n",
                    code(short(&at.sha)),
                    markdown_cell(why)
                )?;
            }
            Ending::Plan {
                midpoints,
                most_dispatches,
                ..
            } => {
                writeln!(
                    w,
                    "Dry run: nothing dispatched. Each endpoint is probed until {MIN_RUNS} runs reach it, then about {midpoints} commits between them; at most {most_dispatches} dispatches.\n"
                )?;
            }
        }
        writeln!(
            w,
            "{} dispatches of {} on {} in {}.\n",
            self.dispatches,
            code(&self.workflow),
            code(&self.git_ref),
            code(&self.repo)
        )?;
        if !self.path.is_empty() {
            w.write_all(path_markdown(&self.path).as_bytes())?;
        }
        Ok(())
    }

    /// 0 when the first bad commit is found (or `--dry-run`), 1 when the probes could not decide.
    fn exit_code(&self) -> u8 {
        match self.ending {
            Ending::Undecided { .. } => 1,
            _ => 0,
        }
    }
}
