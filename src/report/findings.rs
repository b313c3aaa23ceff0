//! Renderers for audit findings: text, JSON (v1), SARIF 2.1.0, markdown and GitHub Actions
//! workflow commands. No audit knows which formats exist.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;
use serde_json::json;

use crate::audit::{AuditReport, Finding, Location, Severity, RULES};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingsFormat {
    Text,
    Json,
    Sarif,
    Markdown,
}

const HELP_URI: &str = "https://github.com/release-warden/release-warden#audit-findings";

fn counts(r: &AuditReport) -> [(Severity, usize); 4] {
    [
        Severity::High,
        Severity::Medium,
        Severity::Low,
        Severity::Info,
    ]
    .map(|s| (s, r.findings.iter().filter(|f| f.severity == s).count()))
}

pub fn render(
    w: impl Write,
    r: &AuditReport,
    format: FindingsFormat,
    color: bool,
) -> io::Result<()> {
    match format {
        FindingsFormat::Text => text(w, r, color),
        FindingsFormat::Json => json_v1(w, r),
        FindingsFormat::Sarif => sarif(w, r),
        FindingsFormat::Markdown => markdown(w, r),
    }
}

fn paint(s: &str, sev: Severity, color: bool) -> String {
    if !color {
        return s.to_string();
    }
    let code = match sev {
        Severity::High => "1;31",
        Severity::Medium => "33",
        Severity::Low => "36",
        Severity::Info => "2",
    };
    format!("\x1b[{code}m{s}\x1b[0m")
}

fn text(mut w: impl Write, r: &AuditReport, color: bool) -> io::Result<()> {
    if let Some(repo) = &r.repository {
        writeln!(
            w,
            "repository {repo}; release tags {}",
            r.release_tag_patterns.join(", ")
        )?;
    }
    for f in &r.findings {
        let label = format!("{:<6}", f.severity.to_string().to_uppercase());
        writeln!(
            w,
            "{} {}  {}",
            paint(&label, f.severity, color),
            f.id,
            f.location
        )?;
        writeln!(w, "       {}", f.message)?;
        writeln!(w, "       fix: {}", f.remediation)?;
    }
    let c = counts(r);
    let verdict = if r.exit_code() == 0 { "ok" } else { "FAILED" };
    writeln!(
        w,
        "{} finding{}: {} high, {} medium, {} low, {} info (--fail-on {}: {verdict})",
        r.findings.len(),
        if r.findings.len() == 1 { "" } else { "s" },
        c[0].1,
        c[1].1,
        c[2].1,
        c[3].1,
        r.fail_on
    )
}

/// The JSON output, version 1. Its own types, so internal changes do not change the schema.
#[derive(Serialize)]
struct V1<'a> {
    version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    repository: Option<&'a str>,
    release_tag_patterns: &'a [String],
    fail_on: Severity,
    failed: bool,
    findings: Vec<V1Finding<'a>>,
}

#[derive(Serialize)]
struct V1Finding<'a> {
    id: &'a str,
    severity: Severity,
    confidence: crate::audit::Confidence,
    location: &'a Location,
    message: &'a str,
    remediation: &'a str,
}

fn json_v1(mut w: impl Write, r: &AuditReport) -> io::Result<()> {
    let doc = V1 {
        version: 1,
        repository: r.repository.as_deref(),
        release_tag_patterns: &r.release_tag_patterns,
        fail_on: r.fail_on,
        failed: r.exit_code() != 0,
        findings: r
            .findings
            .iter()
            .map(|f| V1Finding {
                id: f.id,
                severity: f.severity,
                confidence: f.confidence,
                location: &f.location,
                message: &f.message,
                remediation: &f.remediation,
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut w, &doc)?;
    writeln!(w)
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// Where a settings finding is shown in code scanning: the first workflow that signs, else the
/// workflows folder.
fn api_anchor(r: &AuditReport) -> PathBuf {
    r.findings
        .iter()
        .find_map(|f| match &f.location {
            Location::Workflow { path, .. } => Some(path.clone()),
            Location::Api { .. } => None,
        })
        .unwrap_or_else(|| PathBuf::from(".github/workflows"))
}

fn sarif(mut w: impl Write, r: &AuditReport) -> io::Result<()> {
    let anchor = api_anchor(r);
    let rules: Vec<_> = RULES
        .iter()
        .map(|(id, d)| {
            json!({
                "id": id,
                "name": id,
                "shortDescription": {"text": d},
                "helpUri": format!("{HELP_URI}-{id}"),
            })
        })
        .collect();
    let results: Vec<_> = r
        .findings
        .iter()
        .map(|f: &Finding| {
            let (uri, line, col, logical) = match &f.location {
                Location::Workflow {
                    path, line, column, ..
                } => (path.clone(), *line, *column, None),
                Location::Api { resource } => (anchor.clone(), 1, 1, Some(resource.clone())),
            };
            let mut location = json!({
                "physicalLocation": {
                    "artifactLocation": {"uri": uri.to_string_lossy().replace('\\', "/")},
                    "region": {"startLine": line.max(1), "startColumn": col.max(1)}
                }
            });
            if let Some(res) = logical {
                location["logicalLocations"] =
                    json!([{"fullyQualifiedName": format!("GET /{res}"), "kind": "resource"}]);
            }
            json!({
                "ruleId": f.id,
                "ruleIndex": RULES.iter().position(|(id, _)| *id == f.id).unwrap_or(0),
                "level": sarif_level(f.severity),
                "message": {"text": format!("{} Fix: {}", f.message, f.remediation)},
                "locations": [location],
                "properties": {"severity": f.severity, "confidence": f.confidence},
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "warden",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": HELP_URI,
                "rules": rules,
            }},
            "results": results,
        }]
    });
    serde_json::to_writer_pretty(&mut w, &doc)?;
    writeln!(w)
}

fn markdown(mut w: impl Write, r: &AuditReport) -> io::Result<()> {
    let c = counts(r);
    writeln!(
        w,
        "### warden audit: {}\n",
        if r.exit_code() == 0 { "ok" } else { "FAILED" }
    )?;
    if let Some(repo) = &r.repository {
        writeln!(
            w,
            "Repository `{repo}`, release tags `{}`.\n",
            r.release_tag_patterns.join("`, `")
        )?;
    }
    writeln!(
        w,
        "{} high, {} medium, {} low, {} info (fail on {}).\n",
        c[0].1, c[1].1, c[2].1, c[3].1, r.fail_on
    )?;
    if r.findings.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "| severity | finding | where | what | fix |\n|---|---|---|---|---|"
    )?;
    for f in &r.findings {
        writeln!(
            w,
            "| {} | `{}` | {} | {} | {} |",
            f.severity,
            f.id,
            super::markdown_code(&f.location.to_string()),
            super::markdown_cell(&f.message),
            super::markdown_cell(&f.remediation)
        )?;
    }
    Ok(())
}

/// `::error file=…,line=…::` lines for GitHub Actions.
pub fn github_annotations(mut w: impl Write, r: &AuditReport) -> io::Result<()> {
    for f in &r.findings {
        let level = match f.severity {
            Severity::High => "error",
            Severity::Medium => "warning",
            Severity::Low | Severity::Info => "notice",
        };
        let line = match &f.location {
            Location::Workflow {
                path, line, column, ..
            } => super::github_annotation(
                level,
                &[
                    ("file", path.display().to_string()),
                    ("line", line.to_string()),
                    ("col", column.to_string()),
                    ("title", f.id.to_string()),
                ],
                &f.message,
            ),
            Location::Api { .. } => super::github_annotation(
                level,
                &[("title", f.id.to_string())],
                &format!("{} ({})", f.message, f.location),
            ),
        };
        writeln!(w, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_described_once() {
        let mut ids: Vec<&str> = RULES.iter().map(|(id, _)| *id).collect();
        assert!(RULES.iter().all(|(_, d)| !d.is_empty()));
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }
}
