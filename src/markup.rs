//! Escaping for the places where text is interpreted: markdown tables (step summaries, PR
//! comments), GitHub Actions workflow commands, and XML (JUnit). A leaf: every renderer uses it,
//! and it uses nothing of warden's.

use std::borrow::Cow;

/// The hidden marker of warden's sticky PR comment. No text from input may carry it: a copy in a
/// registry title would make another comment look like warden's.
pub(crate) const COMMENT_MARKER: &str = "<!-- warden:known-issues -->";

/// Characters that change how a line reads without being seen: bidirectional overrides and
/// isolates, zero-width characters, and the Unicode line and paragraph separators.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2028}' | '\u{2029}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// A value taken from input (a file name, job id, test name, registry title, message), made safe
/// for one line of text output on a CI runner: it cannot break the line, and cannot start one
/// with `::` (a workflow command the Actions runner would execute). Unusual values are quoted and
/// escaped like a Rust string; ordinary ones are unchanged.
pub fn text_value(s: &str) -> Cow<'_, str> {
    // U+FFFD stands for bytes that were not UTF-8 (a lossy file name): quoted, so it is seen.
    let unusual = s
        .chars()
        .any(|c| c.is_control() || is_invisible(c) || c == '\u{FFFD}')
        || s.trim_start().starts_with("::");
    if unusual {
        let escaped: String = s
            .chars()
            .map(|c| match c {
                '\u{FFFD}' => "\\u{fffd}".to_string(),
                c => c.escape_debug().to_string(),
            })
            .collect();
        Cow::Owned(format!("\"{escaped}\""))
    } else {
        Cow::Borrowed(s)
    }
}

/// Text of several lines (an error message that lists problems): each line as `text_value`.
pub fn text_lines(s: &str) -> String {
    s.split('\n')
        .map(|l| text_value(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text from input for markdown (a PR comment, a step summary, a table cell), all on one line:
/// line breaks and control characters become spaces; what markdown or HTML would interpret is
/// escaped (emphasis, code, links, images, math, raw HTML, table cells, and a heading, list or
/// quote at the start); `@` mentions, `#` and `GH-` references and bare URLs are broken with a
/// zero-width space; warden's comment marker is removed.
pub(crate) fn markdown_text(s: &str) -> String {
    let s = s.replace(COMMENT_MARKER, "");
    let mut out = String::with_capacity(s.len() + 8);
    let lead = s.len() - s.trim_start().len();
    let digits = s[lead..].bytes().take_while(u8::is_ascii_digit).count();
    for (i, c) in s.char_indices() {
        let at_start = i == lead && matches!(c, '#' | '>' | '-' | '+' | '=');
        let ordered = digits > 0 && i == lead + digits && matches!(c, '.' | ')');
        match c {
            c if c.is_control() || is_invisible(c) => out.push(' '),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if !at_start => out.push_str("&gt;"),
            '@' | '#' if !at_start => {
                out.push(c);
                out.push_str("&#8203;");
            }
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c if at_start || ordered => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    break_gh_references(
        &out.replace("://", ":&#8203;//")
            .replace("www.", "www&#8203;."),
    )
}

/// `GH-123` (any case, at a word start) is an issue reference on GitHub, like `#123`: a
/// zero-width space after `GH` keeps it text.
fn break_gh_references(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for i in 0..b.len().saturating_sub(3) {
        let word_start = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if word_start
            && b[i].eq_ignore_ascii_case(&b'g')
            && b[i + 1].eq_ignore_ascii_case(&b'h')
            && b[i + 2] == b'-'
            && b[i + 3].is_ascii_digit()
        {
            out.push_str(&s[last..i + 2]);
            out.push_str("&#8203;");
            last = i + 2;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// Prose from input (a registry `why`, a title): `markdown_text`, except that balanced `code`
/// spans stay code spans, where nothing can mention, link or format.
pub(crate) fn markdown_prose(s: &str) -> String {
    let s = s.replace(COMMENT_MARKER, "");
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return markdown_text(&s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 0 {
            out.push_str(&markdown_text(part));
        } else {
            let inner: String = part
                .chars()
                .map(|c| {
                    if c.is_control() || is_invisible(c) {
                        ' '
                    } else {
                        c
                    }
                })
                .collect();
            out.push('`');
            out.push_str(&inner.replace('|', "\\|"));
            out.push('`');
        }
    }
    out
}

/// Whether `url` may be a markdown link target as it is: `https://`, without spaces, control
/// or invisible characters, quotes or brackets.
pub(crate) fn plain_https_url(url: &str) -> bool {
    url.starts_with("https://")
        && !url.chars().any(|c| {
            c.is_whitespace() || c.is_control() || is_invisible(c) || "<>()[]\"'`\\".contains(c)
        })
}

/// Text for a markdown table cell: `markdown_prose`, which also keeps the row whole.
pub(crate) fn markdown_cell(s: &str) -> String {
    markdown_prose(s)
}

/// A markdown code span for `s`, fit for a table cell (nothing inside a span is interpreted but
/// `|`); escaped text when `s` holds a backtick (which would end the span).
pub(crate) fn markdown_code(s: &str) -> String {
    let s = s.replace(COMMENT_MARKER, "");
    if s.contains('`') || s.chars().any(|c| c.is_control() || is_invisible(c)) {
        markdown_text(&s)
    } else {
        format!("`{}`", s.replace('|', "\\|"))
    }
}

/// A GitHub Actions workflow command (`::error file=…,line=…::message`), escaped as the runner
/// expects: `%`, CR and LF everywhere, and `:` and `,` too inside property values.
pub(crate) fn github_annotation(level: &str, props: &[(&str, String)], message: &str) -> String {
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

/// Text for XML attributes and elements: control characters other than LF and TAB dropped (XML
/// 1.0 cannot hold them), the five special characters escaped, and LF written as `&#10;`, so a
/// value never starts a line of the document (JUnit printed on a runner: no `::` command).
pub(crate) fn xml_text(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
}

/// `n` and the noun in the right number: `count(1, "entry", "entries")` is `1 entry`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gh_references_are_broken_like_hash_references() {
        assert_eq!(
            markdown_text("fixed in GH-123 and gh-7, not sigh-1 or GH-x"),
            "fixed in GH&#8203;-123 and gh&#8203;-7, not sigh-1 or GH-x"
        );
        assert_eq!(markdown_text("GH-1"), "GH&#8203;-1");
        assert_eq!(markdown_text("é GH-2"), "é GH&#8203;-2");
    }

    #[test]
    fn table_cells_keep_the_row_whole() {
        assert_eq!(markdown_cell("a|b\nc"), "a\\|b c");
        assert_eq!(markdown_code("eth_call/x|y"), "`eth_call/x\\|y`");
        // A backtick would end the span: plain escaped text instead.
        assert_eq!(markdown_code("a`b|c"), "a\\`b\\|c");
    }

    #[test]
    fn markdown_from_input_is_inert() {
        assert_eq!(
            markdown_text("**approved** by @org/team [x](https://e.com) <img src=x> #1 $x$"),
            "\\*\\*approved\\*\\* by @&#8203;org/team \\[x\\](https:&#8203;//e.com) &lt;img src=x&gt; #&#8203;1 \\$x\\$"
        );
        assert_eq!(markdown_text("# big"), "\\# big");
        assert_eq!(markdown_text("- item"), "\\- item");
        assert_eq!(markdown_text("12. item"), "12\\. item");
        assert_eq!(markdown_text("a - b. c"), "a - b. c");
        assert_eq!(
            markdown_prose("returns `blockTimestamp` to @x"),
            "returns `blockTimestamp` to @&#8203;x"
        );
        assert_eq!(markdown_prose("odd ` tick"), "odd \\` tick");
        assert_eq!(markdown_text("a <!-- warden:known-issues --> b"), "a  b");
        assert_eq!(markdown_code("x <!-- warden:known-issues -->"), "`x `");
    }

    #[test]
    fn text_values_cannot_start_a_workflow_command() {
        assert_eq!(text_value("build"), "build");
        assert_eq!(
            text_value("x\n::stop-commands::t"),
            "\"x\\n::stop-commands::t\""
        );
        assert_eq!(text_value("::warning::x"), "\"::warning::x\"");
        assert_eq!(text_lines("a\n::error::x\nb"), "a\n\"::error::x\"\nb");
        assert_eq!(text_value("a\u{202E}b"), "\"a\\u{202e}b\"");
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

    #[test]
    fn xml_and_counts() {
        assert_eq!(
            xml_text("a<b>&\"c\u{1}\n::x"),
            "a&lt;b&gt;&amp;&quot;c&#10;::x"
        );
        assert_eq!(count(1, "entry", "entries"), "1 entry");
        assert_eq!(count(0, "entry", "entries"), "0 entries");
    }
}
