//! Renderers: turn the library's reports into text or JSON on any writer.

pub mod findings;
pub mod hive;

use std::io::{self, Write};
use std::path::Path;

use crate::check::CheckLine;
use crate::release::sign::SignReport;
use crate::release::verify::{Status, VerifyReport};

/// Output formats shared by the commands that report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

fn json<T: serde::Serialize>(mut w: impl Write, value: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut w, value)?;
    writeln!(w)
}

/// One line per artifact (`OK  name  key ID  tag T`), then a summary line.
pub fn verify(mut w: impl Write, report: &VerifyReport, format: Format) -> io::Result<()> {
    if format == Format::Json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            report: &'a VerifyReport,
            verified: usize,
            failed: usize,
            errors: usize,
            exit_code: u8,
        }
        return json(
            w,
            &Doc {
                report,
                verified: report.count(Status::Ok),
                failed: report.count(Status::Failed),
                errors: report.count(Status::Error),
                exit_code: report.exit_code(),
            },
        );
    }
    for r in &report.results {
        let label = match r.status {
            Status::Ok => "OK   ",
            Status::Failed => "FAIL ",
            Status::Error => "ERROR",
        };
        let mut line = format!("{label} {}", r.name);
        if r.status == Status::Ok {
            match r.key_id {
                Some(id) => line.push_str(&format!("  key {id}")),
                None => line.push_str("  sha256"),
            }
            if let Some(tag) = &r.tag {
                line.push_str(&format!("  tag {tag}"));
            }
        } else if let Some(reason) = &r.reason {
            line.push_str(&format!("  {reason}"));
        }
        writeln!(w, "{line}")?;
    }
    writeln!(
        w,
        "{} verified, {} failed, {} errors",
        report.count(Status::Ok),
        report.count(Status::Failed),
        report.count(Status::Error)
    )
}

pub fn sign(mut w: impl Write, report: &SignReport, format: Format) -> io::Result<()> {
    if format == Format::Json {
        return json(w, report);
    }
    for a in &report.artifacts {
        writeln!(
            w,
            "signed  {}  -> {}",
            a.path.display(),
            a.signature.display()
        )?;
    }
    if let Some(c) = &report.checksums {
        writeln!(
            w,
            "wrote   {}  -> {}",
            c.path.display(),
            c.signature.display()
        )?;
    }
    writeln!(
        w,
        "{} artifact{} signed with key {}",
        report.artifacts.len(),
        if report.artifacts.len() == 1 { "" } else { "s" },
        report.key_id
    )
}

/// Text for a markdown table cell: `|` escaped, and line breaks (which would end the row) as
/// spaces.
pub fn markdown_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A markdown code span for `s`, fit for a table cell; escaped text when `s` holds a backtick
/// (which would end the span).
pub fn markdown_code(s: &str) -> String {
    if s.contains('`') {
        markdown_cell(s)
    } else {
        format!("`{}`", markdown_cell(s))
    }
}

/// A GitHub Actions workflow command (`::error file=…,line=…::message`), escaped as the runner
/// expects: `%`, CR and LF everywhere, and `:` and `,` too inside property values.
pub fn github_annotation(level: &str, props: &[(&str, String)], message: &str) -> String {
    let data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let props: Vec<String> = props
        .iter()
        .map(|(k, v)| format!("{k}={}", data(v).replace(':', "%3A").replace(',', "%2C")))
        .collect();
    let sep = if props.is_empty() { "" } else { " " };
    format!("::{level}{sep}{}::{}", props.join(","), data(message))
}

/// `::error` lines for the failed checks. A subject of the form `path[:line[:col]]` that names a
/// file under `root` puts the annotation on that file.
pub fn check_annotations(mut w: impl Write, lines: &[CheckLine], root: &Path) -> io::Result<()> {
    for l in lines.iter().filter(|l| !l.passed) {
        let spot = l.subject.split(' ').next().unwrap_or_default();
        let mut parts = spot.split(':');
        let path = parts.next().unwrap_or_default();
        let mut props = Vec::new();
        if !path.is_empty() && root.join(path).is_file() {
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

pub fn check(mut w: impl Write, lines: &[CheckLine], format: Format) -> io::Result<()> {
    let failed = lines.iter().filter(|l| !l.passed).count();
    if format == Format::Json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            checks: &'a [CheckLine],
            passed: usize,
            failed: usize,
        }
        return json(
            w,
            &Doc {
                checks: lines,
                passed: lines.len() - failed,
                failed,
            },
        );
    }
    for l in lines {
        writeln!(
            w,
            "{}  {:<12} {}: {}",
            if l.passed { "ok  " } else { "FAIL" },
            l.check,
            l.subject,
            l.detail
        )?;
    }
    writeln!(
        w,
        "check: {} passed, {} failed",
        lines.len() - failed,
        failed
    )
}

/// A markdown table of a verification, for `$GITHUB_STEP_SUMMARY`.
pub fn verify_markdown(mut w: impl Write, report: &VerifyReport) -> io::Result<()> {
    let verdict = if report.exit_code() == 0 {
        "verified"
    } else {
        "FAILED"
    };
    writeln!(w, "### warden verify: {verdict}\n")?;
    writeln!(
        w,
        "| status | artifact | key | tag | details |\n|---|---|---|---|---|"
    )?;
    for r in &report.results {
        let status = match r.status {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
            Status::Error => "ERROR",
        };
        writeln!(
            w,
            "| {status} | {} | {} | {} | {} |",
            markdown_code(&r.name),
            r.key_id.map_or(String::new(), |k| k.to_string()),
            markdown_cell(r.tag.as_deref().unwrap_or("")),
            markdown_cell(r.reason.as_deref().unwrap_or(""))
        )?;
    }
    writeln!(
        w,
        "\n{} verified, {} failed, {} errors",
        report.count(Status::Ok),
        report.count(Status::Failed),
        report.count(Status::Error)
    )
}

/// A markdown table of `warden check`, for `$GITHUB_STEP_SUMMARY`.
pub fn check_markdown(mut w: impl Write, lines: &[CheckLine]) -> io::Result<()> {
    let failed = lines.iter().filter(|l| !l.passed).count();
    writeln!(
        w,
        "### warden check: {}\n",
        if failed == 0 { "ok" } else { "FAILED" }
    )?;
    writeln!(w, "| | check | subject | detail |\n|---|---|---|---|")?;
    for l in lines {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_keep_the_row_whole() {
        assert_eq!(markdown_cell("a|b\nc"), "a\\|b c");
        assert_eq!(markdown_code("eth_call/x|y"), "`eth_call/x\\|y`");
        // A backtick would end the span: plain escaped text instead.
        assert_eq!(markdown_code("a`b|c"), "a`b\\|c");
    }

    #[test]
    fn annotations_escape_data_and_properties() {
        assert_eq!(
            github_annotation(
                "warning",
                &[("file", "a,b:c.yml".into()), ("line", "3".into())],
                "50% done\r\nnext: line"
            ),
            "::warning file=a%2Cb%3Ac.yml,line=3::50%25 done%0D%0Anext: line"
        );
        assert_eq!(github_annotation("notice", &[], "m"), "::notice::m");
    }
}
