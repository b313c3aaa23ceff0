//! `warden audit`: findings as text, JSON (v1), SARIF 2.1.0, markdown and GitHub Actions
//! workflow commands; the fix plan and what `--apply` did. No audit knows which formats exist.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::{Serialize, Serializer};
use serde_json::json;

use super::{unsupported, write_json, Format, Report};
use crate::audit::apply::Applied;
use crate::audit::baseline::FindingKey;
use crate::audit::findings::{
    AuditReport, BaselineOutcome, Confidence, Coverage, Evidence, Finding, Location, Severity,
    Suppression,
};
use crate::audit::fix_plan;
use crate::audit::rule::Rule;
use crate::markup::{count, github_annotation, markdown_cell, markdown_code, text_value};

/// `warden audit --format` (one repository or an organisation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AuditFormat {
    #[default]
    Text,
    Json,
    Sarif,
    Markdown,
    /// With `--fix --dry-run`: the patch alone, for `git apply`.
    Patch,
}

impl From<AuditFormat> for Format {
    fn from(f: AuditFormat) -> Self {
        match f {
            AuditFormat::Text => Format::Text,
            AuditFormat::Json => Format::Json,
            AuditFormat::Sarif => Format::Sarif,
            AuditFormat::Markdown => Format::Markdown,
            AuditFormat::Patch => Format::Text,
        }
    }
}

const HELP_URI: &str =
    "https://github.com/release-warden/release-warden/blob/main/docs/audit.md#audit-findings";

impl Report for AuditReport {
    fn text(&self, w: &mut dyn Write, color: bool) -> io::Result<()> {
        text(w, self, color)
    }

    fn markdown(&self, w: &mut dyn Write) -> io::Result<()> {
        markdown(w, self)
    }

    fn annotations(&self, w: &mut dyn Write) -> io::Result<()> {
        github_annotations(w, self)
    }

    fn exit_code(&self) -> u8 {
        AuditReport::exit_code(self)
    }

    fn render_other(&self, format: Format, w: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Sarif => sarif(w, self),
            other => Err(unsupported(other)),
        }
    }
}

/// The report serialises as JSON v1, its frozen wire form.
impl Serialize for AuditReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        v1(self).serialize(s)
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

/// What the verdict covers: "read 3 workflow files, 12 jobs; 2 signing jobs: release.yml
/// `sign` (MINISIGN_SECRET_KEY), …; followed .github/actions/sign".
fn coverage_line(c: &Coverage) -> String {
    let mut line = format!(
        "read {}, {}; ",
        count(c.workflow_files, "workflow file", "workflow files"),
        count(c.jobs, "job", "jobs")
    );
    if c.signing_jobs.is_empty() {
        line.push_str("no job holds a signing key");
    } else {
        let jobs: Vec<String> = c
            .signing_jobs
            .iter()
            .map(|j| {
                // A Gitea or Forgejo workflow by its path: the name alone would read as GitHub's.
                let forge = j.workflow.starts_with(".gitea") || j.workflow.starts_with(".forgejo");
                let file = match j.workflow.file_name() {
                    Some(n) if !forge => n.to_string_lossy().into_owned(),
                    _ => j.workflow.display().to_string(),
                };
                format!("{file} `{}` ({})", j.job, j.secrets.join(", "))
            })
            .collect();
        line.push_str(&format!(
            "{}: {}",
            count(c.signing_jobs.len(), "signing job", "signing jobs"),
            jobs.join("; ")
        ));
    }
    if !c.followed.is_empty() {
        line.push_str(&format!(
            "; followed {}",
            c.followed.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !c.never_run.is_empty() {
        line.push_str(&format!(
            "; not audited, as their `if:` is always false: {}",
            c.never_run.join(", ")
        ));
    }
    if c.holds_no_key {
        line.push_str("; no signing key here (none held, committed or seen signing a release): settings findings are info");
    }
    line
}

fn text(w: &mut dyn Write, r: &AuditReport, color: bool) -> io::Result<()> {
    if let Some(repo) = &r.repository {
        // Tag patterns come from workflows: one line, never a `::` command.
        writeln!(
            w,
            "repository {}; release tags {}",
            text_value(repo),
            text_value(&r.release_tag_patterns.join(", "))
        )?;
    }
    if r.workflows.is_empty() {
        writeln!(
            w,
            "no workflow files in .github/workflows/: no signing job to audit{}",
            if r.coverage.holds_no_key {
                "; no signing key here (none held, committed or seen signing a release): settings findings are info"
            } else {
                ""
            }
        )?;
    }
    findings_text(w, r, color)
}

/// The findings, what the baseline says is gone, and the counts (the key inventory's too).
pub(crate) fn findings_text(w: &mut dyn Write, r: &AuditReport, color: bool) -> io::Result<()> {
    let coverage = coverage_line(&r.coverage);
    for f in &r.findings {
        let label = format!("{:<6}", f.severity.to_string().to_uppercase());
        writeln!(
            w,
            "{} {}  {}",
            paint(&label, f.severity, color),
            f.rule,
            f.location
        )?;
        writeln!(w, "       {}", text_value(&f.message))?;
        writeln!(w, "       fix: {}", text_value(&f.remediation))?;
    }
    if let Some(b) = &r.baseline {
        for g in &b.gone {
            writeln!(
                w,
                "GONE   {}  {}",
                text_value(&g.id),
                text_value(&g.location)
            )?;
            writeln!(w, "       {}", text_value(&g.message))?;
        }
    }
    let [high, medium, low, info] = r.severity_counts();
    let verdict = if r.exit_code() == 0 { "ok" } else { "FAILED" };
    let suppressed = if r.suppressed.is_empty() {
        String::new()
    } else {
        format!(
            ", {} suppressed by {}",
            r.suppressed.len(),
            crate::audit::config::CONFIG_FILE
        )
    };
    if let Some(sources) = &r.sources {
        writeln!(w, "audited: {}", text_value(sources))?;
    }
    if !r.workflows.is_empty() {
        writeln!(w, "{}", text_value(&coverage))?;
    }
    let new = if r.baseline.is_some() { "new " } else { "" };
    let baseline = match &r.baseline {
        Some(b) => format!(
            "; baseline {}: {} unchanged, {} gone",
            text_value(&b.file.display().to_string()),
            b.unchanged,
            b.gone.len()
        ),
        None => String::new(),
    };
    writeln!(
        w,
        "{new}{}: {} high, {} medium, {} low, {} info{suppressed}{baseline} (--fail-on {}: {verdict})",
        count(r.findings.len(), "finding", "findings"),
        high,
        medium,
        low,
        info,
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
    /// The workflow files read, relative to the repository root.
    workflows: &'a [PathBuf],
    fail_on: Severity,
    failed: bool,
    findings: Vec<V1Finding<'a>>,
    /// With `--baseline`: `findings` are the new ones; what was unchanged and what is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a BaselineOutcome>,
    /// What the workflow audit read.
    coverage: &'a Coverage,
}

#[derive(Serialize)]
struct V1Finding<'a> {
    id: Rule,
    severity: Severity,
    confidence: Confidence,
    location: &'a Location,
    /// The signing secrets the finding is about (absent when it is about none).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    secrets: &'a [String],
    /// What in the job the finding is about, when it can have several (the action reference,
    /// the expression, the trigger): part of what `--baseline` matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a str>,
    message: &'a str,
    remediation: &'a str,
    /// Why each secret it calls a key is one: which sink, which line, how strong.
    #[serde(skip_serializing_if = "<[Evidence]>::is_empty")]
    evidence: &'a [Evidence],
    /// Present on a finding `.github/warden.toml` suppresses (it does not count).
    #[serde(skip_serializing_if = "Option::is_none")]
    suppressed: Option<&'a Suppression>,
}

/// The findings of a report as JSON v1 writes them (the key inventory's too).
pub(crate) fn v1_findings(r: &AuditReport) -> serde_json::Value {
    serde_json::to_value(v1(r).findings).unwrap_or_default()
}

fn v1(r: &AuditReport) -> V1<'_> {
    V1 {
        version: 1,
        repository: r.repository.as_deref(),
        release_tag_patterns: &r.release_tag_patterns,
        workflows: &r.workflows,
        fail_on: r.fail_on,
        failed: r.exit_code() != 0,
        baseline: r.baseline.as_ref(),
        coverage: &r.coverage,
        findings: r
            .findings
            .iter()
            .map(|f| (f, None))
            .chain(r.suppressed.iter().map(|(f, s)| (f, Some(s))))
            .map(|(f, suppressed)| V1Finding {
                id: f.rule,
                severity: f.severity,
                confidence: f.confidence,
                location: &f.location,
                secrets: &f.subject.secrets,
                subject: f.subject.detail.as_deref(),
                message: &f.message,
                remediation: &f.remediation,
                evidence: &f.evidence,
                suppressed,
            })
            .collect(),
    }
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
            Location::Api { .. } | Location::Key { .. } => None,
        })
        .unwrap_or_else(|| PathBuf::from(".github/workflows"))
}

fn sarif(w: &mut dyn Write, r: &AuditReport) -> io::Result<()> {
    write_json(w, &sarif_log(vec![sarif_run(r)]))
}

/// A SARIF 2.1.0 log of `runs`.
pub(crate) fn sarif_log(runs: Vec<serde_json::Value>) -> serde_json::Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": runs,
    })
}

/// One report as one SARIF run (an organisation's report has one per repository).
pub(crate) fn sarif_run(r: &AuditReport) -> serde_json::Value {
    let anchor = api_anchor(r);
    let rules: Vec<_> = crate::audit::rules::ALL
        .iter()
        .map(|rule| {
            json!({
                "id": rule.id(),
                "name": rule.id(),
                "shortDescription": {"text": rule.description()},
                "helpUri": format!("{HELP_URI}-{}", rule.id()),
            })
        })
        .collect();
    // A finding that stands for several (its parts) is one result per part: each location
    // annotated on its own line, each fingerprint its own.
    let expanded: Vec<(Finding, Option<&Suppression>)> = r
        .findings
        .iter()
        .map(|f| (f, None))
        .chain(r.suppressed.iter().map(|(f, s)| (f, Some(s))))
        .flat_map(|(f, s)| {
            if f.parts.is_empty() {
                return vec![(f.clone(), s)];
            }
            f.parts
                .iter()
                .map(|(loc, words)| {
                    let mut one = f.clone();
                    one.location = loc.clone();
                    one.message = words.clone();
                    one.parts.clear();
                    (one, s)
                })
                .collect()
        })
        .collect();
    let results: Vec<_> = expanded
        .iter()
        .map(|(f, s)| (f, *s))
        .map(|(f, suppressed): (&Finding, Option<&Suppression>)| {
            let (uri, line, col, logical) = match &f.location {
                Location::Workflow {
                    path, line, column, ..
                } => (path.clone(), *line, *column, None),
                Location::Api { resource } => (anchor.clone(), 1, 1, Some(resource.clone())),
                Location::Key { .. } => (anchor.clone(), 1, 1, f.location.key_handle()),
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
            let mut result = json!({
                "ruleId": f.rule.id(),
                "ruleIndex": crate::audit::rules::ALL.iter().position(|r| *r == f.rule).unwrap_or_default(),
                "level": sarif_level(f.severity),
                "message": {"text": format!("{} Fix: {}", f.message, f.remediation)},
                "locations": [location],
                "properties": {"severity": f.severity, "confidence": f.confidence},
                "partialFingerprints": {
                    "wardenFinding/v1": FindingKey::of(f, r.repository.as_deref()).fingerprint()
                },
            });
            if r.baseline.is_some() && suppressed.is_none() {
                result["baselineState"] = json!("new");
            }
            if let Some(s) = suppressed {
                result["suppressions"] = json!([{"kind": "external", "justification": s.reason}]);
            }
            result
        })
        .collect();
    let mut run = json!({
        "tool": {"driver": {
            "name": "warden",
            "version": env!("CARGO_PKG_VERSION"),
            "informationUri": HELP_URI,
            "rules": rules,
        }},
        "results": results,
    });
    if let Some(repo) = &r.repository {
        run["automationDetails"] = json!({"id": format!("warden-audit/{repo}/")});
    }
    run
}

fn markdown(w: &mut dyn Write, r: &AuditReport) -> io::Result<()> {
    writeln!(
        w,
        "### warden audit: {}\n",
        if r.exit_code() == 0 { "ok" } else { "FAILED" }
    )?;
    if let Some(repo) = &r.repository {
        // Tag patterns come from workflows: each a code span that cannot end early.
        let tags: Vec<String> = r
            .release_tag_patterns
            .iter()
            .map(|t| markdown_code(t))
            .collect();
        writeln!(
            w,
            "Repository {}, release tags {}.\n",
            markdown_code(repo),
            tags.join(", ")
        )?;
    }
    findings_markdown(w, r)
}

/// The findings as a table, with the counts and what the baseline says is gone (the key
/// inventory's too).
pub(crate) fn findings_markdown(w: &mut dyn Write, r: &AuditReport) -> io::Result<()> {
    let [high, medium, low, info] = r.severity_counts();
    writeln!(
        w,
        "{}{} high, {} medium, {} low, {} info (fail on {}).\n",
        if r.baseline.is_some() { "New: " } else { "" },
        high,
        medium,
        low,
        info,
        r.fail_on
    )?;
    if let Some(b) = &r.baseline {
        writeln!(
            w,
            "Baseline {}: {} unchanged, {} gone.\n",
            markdown_code(&b.file.display().to_string()),
            b.unchanged,
            b.gone.len()
        )?;
        if !b.gone.is_empty() {
            writeln!(w, "| gone | where | what |\n|---|---|---|")?;
            for g in &b.gone {
                writeln!(
                    w,
                    "| {} | {} | {} |",
                    markdown_code(&g.id),
                    markdown_code(&g.location),
                    markdown_cell(&g.message)
                )?;
            }
            writeln!(w)?;
        }
    }
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
            f.rule,
            markdown_code(&f.location.to_string()),
            markdown_cell(&f.message),
            markdown_cell(&f.remediation)
        )?;
    }
    Ok(())
}

/// `::error file=…,line=…::` lines for GitHub Actions.
fn github_annotations(w: &mut dyn Write, r: &AuditReport) -> io::Result<()> {
    for f in &r.findings {
        let level = match f.severity {
            Severity::High => "error",
            Severity::Medium => "warning",
            Severity::Low | Severity::Info => "notice",
        };
        let line = match &f.location {
            Location::Workflow {
                path, line, column, ..
            } => github_annotation(
                level,
                &[
                    ("file", path.display().to_string()),
                    ("line", line.to_string()),
                    ("col", column.to_string()),
                    ("title", f.rule.to_string()),
                ],
                &f.message,
            ),
            Location::Api { .. } | Location::Key { .. } => github_annotation(
                level,
                &[("title", f.rule.to_string())],
                &format!("{} ({})", f.message, f.location),
            ),
        };
        writeln!(w, "{line}")?;
    }
    Ok(())
}

/// The fix plan, after the findings: each step's `gh api` command and JSON body, or what a
/// person must do.
pub fn write_fix_plan(w: &mut dyn Write, r: &AuditReport) -> io::Result<()> {
    let steps = fix_plan::plan(r);
    let repo = r.repository.as_deref().unwrap_or("OWNER/NAME");
    if steps.is_empty() {
        return writeln!(w, "\nfix plan: no settings finding to fix");
    }
    writeln!(w, "\nfix plan for {repo} (review each step; `--apply` sends the API changes after a confirmation):")?;
    for (i, s) in steps.iter().enumerate() {
        writeln!(w, "\n{}. {}", i + 1, text_value(&s.title))?;
        if let Some(request) = &s.request {
            writeln!(
                w,
                "  gh api --method {} {} --input - <<'JSON'\n{}\nJSON",
                request.method.as_str(),
                request.route,
                serde_json::to_string_pretty(&request.body).unwrap_or_default()
            )?;
        }
        for m in &s.manual {
            writeln!(w, "  {}", text_value(m))?;
        }
    }
    Ok(())
}

/// What `--apply` sent, a line per request.
pub fn write_applied(w: &mut dyn Write, applied: &[Applied]) -> io::Result<()> {
    for a in applied {
        let method = a.method.as_str();
        let (title, route) = (text_value(&a.title), &a.route);
        match &a.status {
            Ok(status) if a.succeeded() => {
                writeln!(w, "applied  {method} {route} ({status}): {title}")?
            }
            Ok(status) => writeln!(
                w,
                "FAILED   {method} {route} ({status} {}): {title}",
                text_value(&a.message)
            )?,
            Err(e) => writeln!(w, "FAILED   {method} {route} ({e}): {title}")?,
        }
    }
    writeln!(w, "run `warden audit` again to confirm the changes")
}

/// What `warden audit --fix` changed (or, with `--dry-run`, would change: the diff) and what it
/// left, then the settings half of the remedy: the keys belong to the environment.
pub fn write_workflow_fixes(
    w: &mut dyn Write,
    fixes: &crate::audit::WorkflowFixes,
    dry_run: bool,
    written: &[(std::path::PathBuf, Result<(), String>)],
) -> io::Result<()> {
    if dry_run {
        write_patch(w, fixes)?;
    }
    write_workflow_fix_words(w, fixes, dry_run, written)
}

/// The diff of `--fix`, for `git apply`: its lines as they are, tabs and CRLF ends included;
/// only a line a terminal or the Actions runner would act on is escaped (and no longer applies).
pub fn write_patch(w: &mut dyn Write, fixes: &crate::audit::WorkflowFixes) -> io::Result<()> {
    for line in fixes.diff().split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let end = body.strip_suffix('\r').unwrap_or(body);
        let plain = end.replace('\t', " ");
        if crate::markup::text_value(&plain) == plain.as_str() {
            writeln!(w, "{body}")?;
        } else {
            writeln!(w, "{}", crate::markup::text_value(body))?;
        }
    }
    Ok(())
}

/// What `--fix` did or would do to each file and job, in words (no diff).
pub fn write_workflow_fix_words(
    w: &mut dyn Write,
    fixes: &crate::audit::WorkflowFixes,
    dry_run: bool,
    written: &[(std::path::PathBuf, Result<(), String>)],
) -> io::Result<()> {
    for f in &fixes.files {
        let path = text_value(&f.path.display().to_string()).into_owned();
        let verb = match written.iter().find(|(p, _)| *p == f.path) {
            _ if dry_run => "would fix".to_string(),
            Some((_, Ok(()))) => "fixed".to_string(),
            Some((_, Err(why))) => format!("NOT WRITTEN ({})", text_value(why)),
            None => "fixed".to_string(),
        };
        writeln!(w, "{verb} {path}:")?;
        for c in &f.changes {
            writeln!(w, "  {}", text_value(c))?;
        }
    }
    for n in &fixes.not_fixed {
        writeln!(
            w,
            "not fixed {}:{}{}: {}",
            text_value(&n.path.display().to_string()),
            n.line,
            if n.job.is_empty() {
                String::new()
            } else {
                format!(" (job {})", text_value(&n.job))
            },
            text_value(&n.reason)
        )?;
    }
    if fixes.files.is_empty() && fixes.not_fixed.is_empty() {
        writeln!(
            w,
            "fix: no job holds a signing key outside an environment: nothing to change"
        )?;
    }
    let unwritten = written.iter().any(|(_, r)| r.is_err());
    if !fixes.secrets.is_empty() && !unwritten {
        write_secret_moves(w, fixes)?;
    }
    Ok(())
}

/// The settings half of the fix: each key stored in the environment, and the repository secret
/// deleted once no job outside the environment reads it. Only names GitHub can hold are put in
/// a command (letters, digits and `_`, not starting with a digit), so a command is safe to paste.
fn write_secret_moves(w: &mut dyn Write, fixes: &crate::audit::WorkflowFixes) -> io::Result<()> {
    let env = &fixes.environment;
    writeln!(w, "\nThen keep each key in the `{env}` environment only (GitHub never reads a secret's value back, so this is yours to do; `gh secret set` asks for the value):")?;
    let fetched: std::collections::BTreeSet<String> = fixes
        .fetched
        .iter()
        .map(|k| k.to_ascii_uppercase())
        .collect();
    for s in fixes.secrets.difference(&fetched) {
        let storable = s.chars().next().is_some_and(|c| !c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !storable {
            writeln!(
                w,
                "  {}: not a name GitHub stores a secret under; move it by hand",
                text_value(s)
            )?;
            continue;
        }
        writeln!(w, "  gh secret set {s} --env {env}")?;
        match fixes.still_read.get(s) {
            None => writeln!(w, "  gh secret delete {s}")?,
            Some(jobs) => writeln!(
                w,
                "  (keep the repository secret {s} for now: {} still read{} it outside `{env}`; delete it once {} fixed)",
                text_value(&jobs.join(", ")),
                if jobs.len() == 1 { "s" } else { "" },
                if jobs.len() == 1 { "that job is" } else { "they are" }
            )?,
        }
    }
    for s in &fixes.fetched {
        writeln!(
            w,
            "  {}: fetched with the job's OIDC token, not a GitHub secret: let the store's trust policy accept only the subject `repo:OWNER/REPO:environment:{env}` (a run behind `{env}` is the only one whose token says so)",
            text_value(s)
        )?;
    }
    writeln!(w, "and protect `{env}`: a deployment policy of your release tags and required reviewers (`warden audit --fix-plan` prints the requests; `--apply` sends them).")
}
