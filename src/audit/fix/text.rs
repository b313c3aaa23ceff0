//! A workflow's text as `--fix` edits it: lines, the line ranges of a job's keys and steps (from
//! yamlpath's byte spans), and edits that replace whole lines. Everything an edit does not name
//! stays byte for byte: comments, quoting, blank lines, scripts.

use yamlpath::{route, Document};

/// The text and where each line starts.
pub(crate) struct Lines<'t> {
    pub(crate) text: &'t str,
    starts: Vec<usize>,
    /// The file's lines end with `\r\n`: so do the lines warden writes.
    crlf: bool,
}

impl<'t> Lines<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&s| s < text.len())
            .collect();
        let crlf =
            text.split('\n').next().is_some_and(|l| l.ends_with('\r')) && text.contains('\n');
        Lines { text, starts, crlf }
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The 0-based line of a byte offset.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// Line `i`, without its line break.
    pub(crate) fn line(&self, i: usize) -> &'t str {
        let start = self.starts[i];
        let end = self.starts.get(i + 1).copied().unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// Lines `a..b`, with their line breaks (the last one ends with one even at the file's end).
    pub(crate) fn slice(&self, a: usize, b: usize) -> String {
        if a >= b {
            return String::new();
        }
        let start = self.starts[a];
        let end = self.starts.get(b).copied().unwrap_or(self.text.len());
        let mut s = self.text[start..end].to_string();
        if !s.ends_with('\n') {
            s.push_str(self.newline());
        }
        s
    }

    fn newline(&self) -> &'static str {
        if self.crlf {
            "\r\n"
        } else {
            "\n"
        }
    }
}

/// The columns of a line's indentation.
pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Whether the value on a key's line opens a flow collection (`key: { … }`, `key: [ … ]`).
pub(crate) fn flow_value(line: &str) -> bool {
    let rest = line
        .find(": ")
        .map(|i| &line[i + 2..])
        .or_else(|| line.strip_suffix(':').map(|_| ""))
        .unwrap_or("");
    rest.trim_start().starts_with(['{', '['])
}

/// A job as lines: its key, its keys (each from its key line to the end of its value) and its
/// steps (each with the comments and blank lines above it).
pub(crate) struct JobLines {
    /// The `<id>:` line.
    pub(crate) key_line: usize,
    /// The indentation of the job's own keys.
    pub(crate) body_indent: usize,
    /// One past the job's last line.
    pub(crate) end: usize,
    /// `(key, first line, one past the last)`, in the file's order.
    pub(crate) entries: Vec<(String, usize, usize)>,
    /// `(first line, one past the last)` of each step.
    pub(crate) steps: Vec<(usize, usize)>,
    /// The indentation of the steps' `-`.
    pub(crate) step_indent: usize,
}

impl JobLines {
    pub(crate) fn entry(&self, key: &str) -> Option<(usize, usize)> {
        self.entries
            .iter()
            .find(|(k, ..)| k == key)
            .map(|(_, a, b)| (*a, *b))
    }
}

/// Why a job cannot be edited line by line.
pub(crate) type NotBlock = String;

/// The lines of job `id`, whose keys (in order) and number of steps the caller read from the
/// parsed workflow. Refused when the job or its steps are not block YAML.
pub(crate) fn job_lines(
    doc: &Document,
    lines: &Lines,
    id: &str,
    keys: &[String],
    n_steps: usize,
) -> Result<JobLines, NotBlock> {
    let span = |r: &yamlpath::Route| doc.query_pretty(r).ok().map(|f| f.location.byte_span);
    let key_at = |r: &yamlpath::Route| doc.query_key_only(r).ok().map(|f| f.location.byte_span.0);
    let job_key = key_at(&route!("jobs", id)).ok_or("the job's key cannot be found")?;
    let (_, job_end) = span(&route!("jobs", id)).ok_or("the job cannot be found")?;
    let key_line = lines.line_of(job_key);
    if flow_value(lines.line(key_line)) {
        return Err("the job is written in flow style (`{ … }`)".into());
    }
    let mut entries = Vec::new();
    for key in keys {
        let r = route!("jobs", id, key.as_str());
        let (Some(k), Some((_, end))) = (key_at(&r), span(&r)) else {
            return Err(format!("the job's `{key}` cannot be found in the text"));
        };
        entries.push((
            key.clone(),
            lines.line_of(k),
            lines.line_of(end.max(1) - 1) + 1,
        ));
    }
    entries.sort_by_key(|(_, a, _)| *a);
    let body_indent = entries
        .first()
        .map(|(_, a, _)| indent(lines.line(*a)))
        .ok_or("the job is empty")?;
    let steps = step_lines(doc, lines, id, n_steps)?;
    let step_indent = steps
        .first()
        .map(|&(a, b)| {
            (a..b)
                .map(|i| lines.line(i))
                .find(|l| l.trim_start().starts_with('-'))
                .map_or(body_indent + 2, indent)
        })
        .unwrap_or(body_indent + 2);
    Ok(JobLines {
        key_line,
        body_indent,
        end: lines.line_of(job_end.max(1) - 1) + 1,
        entries,
        steps,
        step_indent,
    })
}

/// Each step's lines: from the line after the previous step (its comments and blank lines) to
/// its own last line; the first step takes only the comment lines right above it.
fn step_lines(
    doc: &Document,
    lines: &Lines,
    id: &str,
    n: usize,
) -> Result<Vec<(usize, usize)>, NotBlock> {
    let steps_line = doc
        .query_key_only(&route!("jobs", id, "steps"))
        .ok()
        .map(|f| lines.line_of(f.location.byte_span.0));
    let mut out: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        let f = doc
            .query_pretty(&route!("jobs", id, "steps", i))
            .map_err(|_| format!("step {} cannot be found in the text", i + 1))?;
        let (a, b) = f.location.byte_span;
        let mut first = lines.line_of(a);
        // `-` alone on the line above the step's first key.
        if !lines.line(first).trim_start().starts_with('-') && first > 0 {
            first -= 1;
        }
        if !lines.line(first).trim_start().starts_with('-') {
            return Err("the steps are not a block sequence (`- …` items)".into());
        }
        if Some(first) == steps_line {
            return Err("the steps are written in flow style (`[ … ]`)".into());
        }
        // A span can run on over the comments and blank lines below the step: those belong
        // to the next step (or stay where they are after the last one).
        let mut last = lines.line_of(b.max(1) - 1) + 1;
        while last > first + 1 && {
            let l = lines.line(last - 1).trim();
            l.is_empty() || l.starts_with('#')
        } {
            last -= 1;
        }
        let start = match out.last() {
            Some(&(_, prev_end)) => prev_end,
            None => {
                let mut s = first;
                while s > 0
                    && Some(s - 1) != steps_line
                    && lines.line(s - 1).trim_start().starts_with('#')
                {
                    s -= 1;
                }
                s
            }
        };
        out.push((start, last));
    }
    Ok(out)
}

/// Whole-line edits on one text: `(first line, one past the last, new text)`. Insertions have
/// an empty range. Applied together, so every line number is of the original.
#[derive(Default)]
pub(crate) struct Edits(Vec<(usize, usize, String)>);

impl Edits {
    pub(crate) fn replace(&mut self, a: usize, b: usize, text: String) {
        self.0.push((a, b, text));
    }

    pub(crate) fn insert(&mut self, at: usize, text: String) {
        self.0.push((at, at, text));
    }

    pub(crate) fn delete(&mut self, a: usize, b: usize) {
        self.0.push((a, b, String::new()));
    }

    pub(crate) fn extend(&mut self, other: Edits) {
        self.0.extend(other.0);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether an edit of `other` touches a line one of these changes (two jobs' fixes that
    /// both rewrite one `needs:`): applied together, one would be lost.
    pub(crate) fn overlaps(&self, other: &Edits) -> bool {
        let clash = |(a1, b1): (usize, usize), (a2, b2): (usize, usize)| match (a1 == b1, a2 == b2)
        {
            (true, true) => false,
            (true, false) => a2 < a1 && a1 < b2,
            (false, true) => a1 < a2 && a2 < b1,
            (false, false) => a1 < b2 && a2 < b1,
        };
        self.0
            .iter()
            .any(|(a, b, _)| other.0.iter().any(|(c, d, _)| clash((*a, *b), (*c, *d))))
    }

    /// The new text. Ranges must not overlap; insertions at the same line keep their order.
    pub(crate) fn apply(mut self, lines: &Lines) -> String {
        self.0.sort_by_key(|(a, b, _)| (*a, *b));
        let mut out = String::with_capacity(lines.text.len() + 1024);
        let mut at = 0;
        for (a, b, text) in self.0 {
            out.push_str(&lines.slice(at.min(a), a));
            // What warden writes has `\n` line ends; moved lines keep their own.
            match lines.crlf {
                true => out.push_str(&text.replace("\r\n", "\n").replace('\n', "\r\n")),
                false => out.push_str(&text),
            }
            at = at.max(b);
        }
        let rest = lines.slice(at, lines.len());
        // The file's last line keeps its lack of a line break.
        if at < lines.len() && !lines.text.ends_with('\n') {
            out.push_str(rest.strip_suffix(lines.newline()).unwrap_or(&rest));
        } else {
            out.push_str(&rest);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKFLOW: &str = "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest # here\n    steps:\n      # first\n      - run: a\n\n      # second, with\n      # two comment lines\n      - name: b\n        run: |\n          b1\n          b2\n      # trailing\n\n  other:\n    runs-on: x\n    steps:\n      - run: c";

    fn lines_of(doc: &Document, lines: &Lines) -> JobLines {
        let keys = vec!["runs-on".to_string(), "steps".to_string()];
        job_lines(doc, lines, "build", &keys, 2).unwrap()
    }

    #[test]
    fn a_step_takes_the_comments_above_it_and_leaves_those_below_the_last_step() {
        let doc = Document::new(WORKFLOW).unwrap();
        let lines = Lines::new(WORKFLOW);
        let job = lines_of(&doc, &lines);
        assert_eq!(job.key_line, 2);
        assert_eq!(job.body_indent, 4);
        assert_eq!(job.step_indent, 6);
        // "# first" + "- run: a"; then the blank line, both comments and the whole `run: |`.
        assert_eq!(job.steps, vec![(5, 7), (7, 14)]);
        assert_eq!(lines.slice(7, 14).lines().last(), Some("          b2"));
        assert_eq!(job.entry("runs-on"), Some((3, 4)));
    }

    #[test]
    fn edits_replace_whole_lines_and_keep_the_rest_byte_for_byte() {
        let doc = Document::new(WORKFLOW).unwrap();
        let lines = Lines::new(WORKFLOW);
        let job = lines_of(&doc, &lines);
        let mut edits = Edits::default();
        let (a, b) = job.steps[0];
        edits.delete(a, b);
        edits.insert(
            job.entry("runs-on").unwrap().1,
            "    environment: release\n".into(),
        );
        let out = edits.apply(&lines);
        assert_eq!(
            out,
            "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest # here\n    environment: release\n    steps:\n\n      # second, with\n      # two comment lines\n      - name: b\n        run: |\n          b1\n          b2\n      # trailing\n\n  other:\n    runs-on: x\n    steps:\n      - run: c"
        );
        // No edit: the text as it was, its missing last line break included.
        assert_eq!(Edits::default().apply(&lines), WORKFLOW);
    }

    #[test]
    fn a_file_with_crlf_line_ends_keeps_them_in_what_warden_writes() {
        let text = WORKFLOW.replace('\n', "\r\n");
        let doc = Document::new(text.as_str()).unwrap();
        let lines = Lines::new(&text);
        let job = lines_of(&doc, &lines);
        let mut edits = Edits::default();
        edits.insert(job.end, "\n  new:\n    runs-on: x\n".into());
        let out = edits.apply(&lines);
        assert_eq!(out.matches('\n').count(), out.matches("\r\n").count());
        assert!(out.contains("\r\n  new:\r\n    runs-on: x\r\n"));
    }

    #[test]
    fn flow_style_is_seen_after_the_key_not_in_an_expression() {
        assert!(flow_value("    env: { A: b }"));
        assert!(flow_value("    steps: [ ]"));
        assert!(!flow_value("      KEY: ${{ secrets.K }}"));
        assert!(!flow_value("    env:"));
    }
}
