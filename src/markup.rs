//! Escaping for the places where text is interpreted: markdown tables (step summaries, PR
//! comments), GitHub Actions workflow commands, and XML (JUnit). A leaf: every renderer uses it,
//! and it uses nothing of warden's.

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

/// Text for XML attributes and elements: control characters other than LF and TAB dropped (XML
/// 1.0 cannot hold them), the five special characters escaped.
pub fn xml_text(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `n` and the noun in the right number: `count(1, "entry", "entries")` is `1 entry`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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

    #[test]
    fn xml_and_counts() {
        assert_eq!(xml_text("a<b>&\"c\u{1}\n"), "a&lt;b&gt;&amp;&quot;c\n");
        assert_eq!(count(1, "entry", "entries"), "1 entry");
        assert_eq!(count(0, "entry", "entries"), "0 entries");
    }
}
