//! One self-contained HTML page for hive results (`hive history --format html`, `hive check
//! --format html`): no network request (a Content-Security-Policy forbids any), inline CSS and
//! one small inline script for the filters. Every text that comes from a run or the registry
//! (test names, failure text, entry titles) is escaped; links are only `#entry-…` anchors built
//! from a sanitised id, never a value from the input.
//!
//! At scale (100,000 cases × 30 runs) the page lists the tests with a failure in some run and
//! counts the ones that always passed; each row is one short line per run cell.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::hive::history::{History, Mark, TestClass};
use crate::hive::outcome::{HiveReport, Outcome};

/// `s` for HTML text and attribute values: `& < > " '` escaped, control characters (bar tab
/// and newline) shown as U+FFFD, and characters that reorder or hide text (bidirectional
/// overrides, zero-width characters) shown by their code point, `<U+202E>`, so a client version
/// or test name cannot make a row read as something else.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c if crate::markup::is_invisible(c) => {
                let _ = write!(out, "&lt;U+{:04X}&gt;", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// An id for an anchor: letters, digits and `-` only.
fn anchor(id: &str) -> String {
    let a: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("entry-{a}")
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#111}\
h1{font-size:1.3em}table{border-collapse:collapse}th,td{padding:1px 4px;text-align:left;vertical-align:top}\
thead th{position:sticky;top:0;background:#fff;border-bottom:1px solid #999}\
td.m{font-family:monospace;text-align:center;width:1.4em}\
td.p{background:#cfc}td.f{background:#f99}td.a{background:#eee;color:#777}td.n{background:#fff;color:#999}\
tr.row:hover{background:#ffd}.counts span{margin-right:1em}.k{font-size:.85em;color:#444}\
details pre{white-space:pre-wrap;max-width:70em;background:#f6f6f6;padding:.5em}\
#filters label{margin-right:.8em}dt{font-weight:600;margin-top:.6em}\
th.chg,li.chg{background:#fe9}";

/// Reads the filters (class checkboxes, entry select, and `#class=…&entry=…` in the address)
/// and hides the rows that do not match. Text only: it builds no HTML.
const SCRIPT: &str = "(function(){\
var rows=document.querySelectorAll('tr.row');\
var boxes=document.querySelectorAll('#filters input[type=checkbox]');\
var sel=document.getElementById('entry');\
function apply(){var on={};boxes.forEach(function(b){on[b.value]=b.checked;});\
var e=sel?sel.value:'';var shown=0;\
rows.forEach(function(r){var ok=on[r.dataset.class]!==false&&(!e||r.dataset.entry===e);\
r.hidden=!ok;if(ok)shown++;});\
document.getElementById('shown').textContent=String(shown);}\
var h=new URLSearchParams(location.hash.slice(1));\
if(h.get('class')){var want=h.get('class').split(',');boxes.forEach(function(b){b.checked=want.indexOf(b.value)>=0;});}\
if(h.get('entry')&&sel){sel.value=h.get('entry');}\
boxes.forEach(function(b){b.addEventListener('change',apply);});\
if(sel)sel.addEventListener('change',apply);apply();})();";

fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
<meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(title)
    );
}

fn mark_cell(out: &mut String, m: Mark, run: usize) {
    let (class, word) = match m {
        Mark::Pass => ("p", "passed"),
        Mark::Fail => ("f", "failed"),
        Mark::Absent => ("a", "absent"),
        Mark::NotRun => ("n", "not run"),
    };
    let _ = write!(
        out,
        "<td class=\"m {class}\" title=\"run {}: {word}\">{}</td>",
        run + 1,
        m.symbol()
    );
}

/// `hive history --format html`.
pub(crate) fn history_page(w: &mut dyn Write, h: &History) -> io::Result<()> {
    let mut out = String::new();
    head(&mut out, "hive history");
    let cases: usize = h.runs.last().map_or(0, |r| r.cases);
    let _ = write!(
        out,
        "<h1>hive history: {} runs</h1>\n<p class=\"counts\">",
        h.runs.len()
    );
    for c in TestClass::ALL {
        let _ = write!(out, "<span>{}: <b>{}</b></span>", c.label(), h.count(c));
    }
    let _ = write!(
        out,
        "<span>tests in the last run: <b>{cases}</b></span></p>\n<ol class=\"k\">"
    );
    let changed = run_changes(h);
    for (r, change) in h.runs.iter().zip(&changed) {
        let (class, what) = match change {
            Some(c) => (" class=\"chg\"", format!(" — changed: {}", escape(c))),
            None => ("", String::new()),
        };
        let _ = write!(
            out,
            "<li{class}>{}: {} tests, {} failed{what}</li>",
            escape(&r.dir.display().to_string()),
            r.cases,
            r.failed
        );
    }
    out.push_str("</ol>\n<div id=\"filters\">show: ");
    for c in TestClass::ALL
        .into_iter()
        .filter(|c| *c != TestClass::Known)
    {
        let _ = write!(
            out,
            "<label><input type=\"checkbox\" value=\"{0}\" checked> {0}</label>",
            c.label()
        );
    }
    // The known failures (broken, listed in the registry) are hidden until asked for: what
    // matters is what the registry does not expect.
    let _ = write!(
        out,
        "<label><input type=\"checkbox\" value=\"{}\"> known failures ({})</label>",
        TestClass::Known.label(),
        h.count(TestClass::Known)
    );
    out.push_str("<label>entry <select id=\"entry\"><option value=\"\">any</option>");
    for e in &h.entries {
        let _ = write!(out, "<option value=\"{0}\">{0}</option>", escape(&e.id));
    }
    let _ = writeln!(
        out,
        "</select></label> <span class=\"k\"><span id=\"shown\">{}</span> shown; \
marks: ✓ passed, ✗ failed, · absent, ? not run</span></div>",
        h.tests.len()
    );
    history_grid(&mut out, h, &changed);
    out.push_str("</tbody></table>\n");
    let _ = write!(
        out,
        "<p class=\"k\">Tests that passed in every run are not listed: {cases} ran in the last run.</p>\n<h2>Registry entries</h2>\n<dl>"
    );
    for e in &h.entries {
        let _ = write!(
            out,
            "<dt id=\"{}\">{}: {}</dt><dd>{}<br><span class=\"k\">{}{} · {}</span></dd>",
            anchor(&e.id),
            escape(&e.id),
            escape(&e.title),
            escape(&e.why),
            e.review_by
                .as_deref()
                .map(|d| format!("review by {} · ", escape(d)))
                .unwrap_or_default(),
            escape(&e.file.display().to_string()),
            escape(&e.verdict)
        );
    }
    let _ = write!(out, "</dl>\n<script>{SCRIPT}</script>\n</body></html>\n");
    w.write_all(out.as_bytes())
}

/// The grid of `hive history`: a column per run (those whose records changed marked), a row per
/// test, sorted by onset.
fn history_grid(out: &mut String, h: &History, changed: &[Option<String>]) {
    out.push_str("<table id=\"grid\"><thead><tr><th>test</th>");
    for (i, change) in changed.iter().enumerate() {
        match change {
            Some(c) => {
                let _ = write!(
                    out,
                    "<th class=\"chg\" title=\"{}\">{}</th>",
                    escape(c),
                    i + 1
                );
            }
            None => {
                let _ = write!(out, "<th>{}</th>", i + 1);
            }
        }
    }
    out.push_str("<th>verdict</th><th>why</th><th>entry</th></tr></thead><tbody>\n");
    // The known failures last; by onset, the oldest first (one change, many failures, side by
    // side); then as listed.
    let mut rows: Vec<&crate::hive::history::TestHistory> = h.tests.iter().collect();
    rows.sort_by_key(|t| {
        (
            t.is_known(),
            t.verdict
                .as_ref()
                .and_then(|v| v.onset.as_ref())
                .map_or(usize::MAX, |o| o.first_fail),
        )
    });
    for t in rows {
        let entry = t.entry.as_deref().unwrap_or("");
        let _ = write!(
            out,
            "<tr class=\"row\" data-class=\"{}\" data-entry=\"{}\"><td>{}/{}",
            t.class.label(),
            escape(entry),
            escape(&t.suite),
            escape(&t.name)
        );
        if let Some(text) = &t.text {
            let _ = write!(
                out,
                "<details><summary>failure</summary><pre>{}</pre></details>",
                escape(text)
            );
        }
        out.push_str("</td>");
        for (i, m) in t.marks.iter().enumerate() {
            mark_cell(out, *m, i);
        }
        let why = t.verdict.as_ref().map_or("", |v| v.why.as_str());
        let _ = write!(
            out,
            "<td>{}</td><td class=\"k\">{}</td><td>",
            t.class.label(),
            escape(why)
        );
        if !entry.is_empty() {
            let _ = write!(out, "<a href=\"#{}\">{}</a>", anchor(entry), escape(entry));
        }
        out.push_str("</td></tr>\n");
    }
}

/// For each run, what its records change from the run before (client versions, hive's commit,
/// the simulators' build arguments); `None` for the first and where nothing changed.
fn run_changes(h: &History) -> Vec<Option<String>> {
    let mut out = vec![None];
    for pair in h.runs.windows(2) {
        let (a, b) = (&pair[0].sources, &pair[1].sources);
        let mut what = Vec::new();
        let clients: std::collections::BTreeSet<&String> = a
            .client_versions
            .keys()
            .chain(b.client_versions.keys())
            .collect();
        for c in clients {
            let (x, y) = (a.client_versions.get(c), b.client_versions.get(c));
            if x != y {
                let shown = |v: Option<&String>| v.map_or("unrecorded", String::as_str).to_string();
                what.push(format!("client {c} {} → {}", shown(x), shown(y)));
            }
        }
        if a.hive != b.hive {
            let short = |v: &Option<String>| {
                v.as_deref()
                    .map_or("unrecorded".to_string(), |h| h.chars().take(12).collect())
            };
            what.push(format!("hive {} → {}", short(&a.hive), short(&b.hive)));
        }
        if a.sim_buildargs != b.sim_buildargs {
            what.push("simulator build arguments".into());
        }
        out.push((!what.is_empty()).then(|| what.join("; ")));
    }
    out.truncate(h.runs.len());
    out
}

/// `hive check --format html`: the counts, then every result that is not a plain pass.
pub(crate) fn check_page(w: &mut dyn Write, r: &HiveReport) -> io::Result<()> {
    let mut out = String::new();
    head(&mut out, "hive check");
    let verdict = if r.failed() { "FAILED" } else { "passed" };
    let _ = write!(out, "<h1>hive check: {verdict}</h1>\n<p class=\"counts\">");
    for (o, n) in r.counts.iter().filter(|(_, n)| **n > 0) {
        let _ = write!(out, "<span>{}: <b>{n}</b></span>", o.label());
    }
    out.push_str("</p>\n<table><thead><tr><th>suite</th><th>clients</th><th>tests</th><th>passed</th><th>failed</th></tr></thead><tbody>");
    for s in &r.suites {
        let clients: Vec<&str> = s.clients.iter().map(String::as_str).collect();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&s.name),
            escape(&clients.join(", ")),
            s.cases,
            s.passed,
            s.failed
        );
    }
    out.push_str("</tbody></table>\n");
    // First things first: what fails the check, then (hidden until asked for) what the registry
    // excuses, as the text and markdown fold it.
    let fails = |c: &&crate::hive::outcome::CaseResult| {
        c.outcome.is_error(r.allow_missing) || c.outcome == Outcome::Missing
    };
    let (first, excused): (Vec<_>, Vec<_>) = r.results.iter().partition(fails);
    let _ = writeln!(
        out,
        "<p id=\"filters\"><label><input type=\"checkbox\" value=\"fails\" checked> failing the check ({})</label>\
<label><input type=\"checkbox\" value=\"excused\"> excused by the registry ({})</label> \
<span class=\"k\">shown: <b id=\"shown\">{}</b></span></p>",
        first.len(),
        excused.len(),
        first.len()
    );
    out.push_str("<table id=\"grid\"><thead><tr><th>outcome</th><th>test</th><th>details</th></tr></thead><tbody>\n");
    for c in first.iter().chain(excused.iter()) {
        let bad = fails(c);
        let _ = write!(
            out,
            "<tr class=\"row\" data-class=\"{}\" data-entry=\"{}\"{}><td class=\"m {}\">{}</td><td>{}/{}</td><td>{}",
            if bad { "fails" } else { "excused" },
            escape(c.entry.as_deref().unwrap_or("")),
            if bad { "" } else { " hidden" },
            if bad { "f" } else { "a" },
            escape(c.outcome.label()),
            escape(&c.suite),
            escape(&c.name),
            escape(&c.message)
        );
        if let Some(text) = &c.text {
            let _ = write!(
                out,
                "<details><summary>failure</summary><pre>{}</pre></details>",
                escape(text)
            );
        }
        out.push_str("</td></tr>\n");
    }
    let _ = write!(
        out,
        "</tbody></table>\n<script>{SCRIPT}</script>\n</body></html>\n"
    );
    w.write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_cannot_become_markup() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(escape("a\u{1b}[31mb"), "a\u{FFFD}[31mb");
        // A client version with a right-to-left override, and a zero-width space.
        assert_eq!(
            escape("v9.2.0\u{202E}0.1.9v\u{200B}"),
            "v9.2.0&lt;U+202E&gt;0.1.9v&lt;U+200B&gt;"
        );
        assert_eq!(anchor("javascript:alert(1)"), "entry-javascript-alert-1-");
    }
}
