//! YAML from a pull request, parsed within a budget: aliases are expanded by the parser, so a
//! 70 KB file of nested aliases ("billion laughs") became a 1 GiB value. The nodes are counted
//! as the parser expands them, without building anything, and a document past the cap is
//! refused before it is built.

use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use std::cell::Cell;
use std::fmt;

/// The most nodes (scalars, sequences, mappings, aliases expanded) one document may have. The
/// largest real workflows have a few thousand.
pub(crate) const MAX_NODES: usize = 200_000;

/// The deepest nesting of sequences and mappings accepted. Real workflows nest about 8 deep;
/// measured on the parsed document, so brackets inside strings (`\033[1;36m` in a script) do not
/// count. The locator behind line numbers is slow on deep flow nesting (a 200 KB file of
/// nested `[` took 30 s).
pub(crate) const MAX_DEPTH: usize = 64;

/// Where in a file, and why, it could not be parsed.
pub(crate) type YamlError = ((usize, usize), String);

/// The line at which flow collections (`[`, `{`) nest deeper than [`MAX_DEPTH`], if they do:
/// checked before parsing, because the YAML parser itself is quadratic on deep flow nesting
/// (100,000 `[` did not finish in 20 s). Only brackets that open flow collections count: not
/// those in plain, quoted or block scalars (`printf '\033[1;36m'` in a script), nor in comments.
fn flow_too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    // Inside a block scalar (`|`, `>`): the indentation of the line that opened it.
    let mut block: Option<usize> = None;
    let mut quote: Option<char> = None;
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(opened) = block {
            if line.trim().is_empty() || indent > opened {
                continue;
            }
            block = None;
        }
        let mut rest = &line[indent..];
        if depth == 0 && quote.is_none() {
            // Block context: the value after any `- ` and `key: `.
            loop {
                let trimmed = rest.trim_start();
                if let Some(after) = trimmed
                    .strip_prefix("- ")
                    .or_else(|| (trimmed == "-").then_some(""))
                {
                    rest = after;
                } else if let Some(i) = key_end(trimmed) {
                    rest = &trimmed[i..];
                } else {
                    rest = trimmed;
                    break;
                }
            }
            if rest.starts_with('|') || rest.starts_with('>') {
                block = Some(indent);
                continue;
            }
            if !(rest.starts_with('[') || rest.starts_with('{')) {
                continue;
            }
        }
        let mut chars = rest.chars().peekable();
        let mut previous = ' ';
        while let Some(c) = chars.next() {
            match quote {
                Some('\'') if c == '\'' => {
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                    } else {
                        quote = None;
                    }
                }
                Some('"') if c == '\\' => {
                    chars.next();
                }
                Some('"') if c == '"' => quote = None,
                Some(_) => {}
                None => match c {
                    '\'' | '"' => quote = Some(c),
                    '#' if previous == ' ' || previous == '\t' => break,
                    '[' | '{' => {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return Some(n + 1);
                        }
                    }
                    ']' | '}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                },
            }
            previous = c;
        }
    }
    None
}

/// The byte after `key: ` (or a `key:` that ends the line) in a block-context line, when the
/// line is a mapping entry whose key is plain or quoted.
fn key_end(line: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') if i == 0 => quote = Some(c),
            (None, '[' | '{' | '#') if i == 0 => return None,
            (None, ':') => {
                let next = line[i + 1..].chars().next();
                if next.is_none() || next == Some(' ') {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The document of `text` as a YAML value, aliases expanded, or where and why not.
pub(crate) fn parse(text: &str) -> Result<yaml_serde::Value, YamlError> {
    if let Some(line) = flow_too_deep(text) {
        return Err((
            (line, 1),
            format!("nested more than {MAX_DEPTH} levels deep: not audited"),
        ));
    }
    let located = |e: yaml_serde::Error| {
        let at = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        (at, e.to_string())
    };
    let state = State {
        left: Cell::new(MAX_NODES),
        too_deep: Cell::new(false),
    };
    let budget = Budget {
        state: &state,
        depth: 0,
    };
    if let Err(e) = budget.deserialize(yaml_serde::Deserializer::from_str(text)) {
        // The parser's own guards say "repetition limit exceeded" (100 alias jumps per event)
        // and "recursion limit exceeded" (128 levels).
        let message = e.to_string();
        return Err(
            if state.left.get() == 0 || message.contains("repetition limit") {
                (
                (1, 1),
                format!("more than {MAX_NODES} YAML nodes once its aliases are expanded: not audited"),
            )
            } else if state.too_deep.get() || message.contains("recursion limit") {
                (
                    e.location().map_or((1, 1), |l| (l.line(), l.column())),
                    format!("nested more than {MAX_DEPTH} levels deep: not audited"),
                )
            } else {
                located(e)
            },
        );
    }
    yaml_serde::from_str(text).map_err(located)
}

/// What is left of the budget, and whether the depth ran out.
struct State {
    left: Cell<usize>,
    too_deep: Cell<bool>,
}

/// Spends one node of the budget per value visited, at `depth`.
struct Budget<'a> {
    state: &'a State,
    depth: usize,
}

impl<'a> Budget<'a> {
    fn spend<E: serde::de::Error>(&self) -> Result<(), E> {
        match self.state.left.get() {
            0 => Err(E::custom("too many nodes")),
            n => {
                self.state.left.set(n - 1);
                Ok(())
            }
        }
    }

    /// The budget for what a collection holds, one level down.
    fn inner<E: serde::de::Error>(&self) -> Result<Budget<'a>, E> {
        if self.depth >= MAX_DEPTH {
            self.state.too_deep.set(true);
            return Err(E::custom("too deep"));
        }
        Ok(Budget {
            state: self.state,
            depth: self.depth + 1,
        })
    }

    fn same(&self) -> Budget<'a> {
        Budget {
            state: self.state,
            depth: self.depth,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Budget<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Budget<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.spend()
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.spend()
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.spend()
    }
    fn visit_i128<E: serde::de::Error>(self, _: i128) -> Result<(), E> {
        self.spend()
    }
    fn visit_u128<E: serde::de::Error>(self, _: u128) -> Result<(), E> {
        self.spend()
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.spend()
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        self.spend()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.spend()
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.spend()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.spend()?;
        self.same().deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.same().deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.spend()?;
        let inner = self.inner()?;
        while seq.next_element_seed(inner.same())?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.spend()?;
        let inner = self.inner()?;
        while map.next_key_seed(inner.same())?.is_some() {
            map.next_value_seed(inner.same())?;
        }
        Ok(())
    }
    /// A tagged value (`!tag value`).
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        self.spend()?;
        let ((), variant) = data.variant_seed(self.same())?;
        variant.newtype_variant_seed(self.same())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_count_once_per_use_and_a_bomb_is_refused() {
        let ok = "a: &x [1, 2, 3]\nb: *x\nc: !tag {k: v}\n";
        assert_eq!(parse(ok).unwrap()["b"], parse(ok).unwrap()["a"]);
        let refused = |bomb: &str| {
            let (at, why) = parse(bomb).unwrap_err();
            assert_eq!(at, (1, 1));
            assert_eq!(
                why,
                "more than 200000 YAML nodes once its aliases are expanded: not audited"
            );
        };
        // 2,000 scalars used 300 times: 600,000 nodes from 8 KB, few alias jumps (the budget).
        let scalars = vec!["x"; 2000].join(", ");
        let uses = vec!["*l0"; 300].join(", ");
        refused(&format!("l0: &l0 [{scalars}]\nl1: [{uses}]\n"));
        // Nine levels of ten aliases: 10^9 nodes from 300 bytes (the parser's own guard).
        let mut bomb = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let p = i - 1;
            bomb.push_str(&format!(
                "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
            ));
        }
        refused(&bomb);
        // Depth is the document's, not the text's brackets: colour codes in a script are text.
        let colours = format!("run: |\n  {}\n", "printf '\\033[1;36m%s' x; ".repeat(100));
        assert!(parse(&colours).is_ok());
        let deep = format!("a: {}{}\n", "[".repeat(70), "]".repeat(70));
        let (_, why) = parse(&deep).unwrap_err();
        assert_eq!(why, "nested more than 64 levels deep: not audited");
        // Flow depth is counted before parsing, outside scalars and comments only.
        for ok in [
            "run: printf '\\033[1;36m[[[[' \"[[[[\" # [[[[\n",
            &format!("run: |\n  {}\nnext: 1\n", "[".repeat(100)),
            &format!("x: \"{}\"\n", "[".repeat(100)),
            &format!("x: '{}'\n", "{".repeat(100)),
            "- [a, [b, {c: [d]}]]\n",
        ] {
            assert_eq!(flow_too_deep(ok), None, "{ok}");
        }
        let nested = format!("jobs:\n  - x: {}\n", "[".repeat(65));
        assert_eq!(flow_too_deep(&nested), Some(2));
        let across = format!("a: [\n{}\n", "  [\n".repeat(70));
        assert!(flow_too_deep(&across).is_some());
        // A syntax error keeps its place.
        assert_eq!(parse("a: [1,\n").unwrap_err().0 .0, 2);
    }
}
