//! GitHub Actions expressions, as far as the audit needs them: where `${{ … }}` appears in a
//! value, and which secrets an expression reads. Parsed with a small lexer of the expression
//! language (identifiers, property access, index, strings, calls), not a regex over the text, so
//! `secrets.gpg-private-key`, `SECRETS.X`, `secrets['X']`, `toJSON(secrets)` and
//! `secrets[matrix.key]` all come out right.

/// What an expression reads from the `secrets` context.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SecretRef {
    /// `secrets.NAME` or `secrets['NAME']` (names are case-insensitive: kept as written).
    Named(String),
    /// The whole context (`toJSON(secrets)`, `secrets.*`) or an index that is not a literal
    /// (`secrets[matrix.key]`): any secret, the signing key included, can reach the value.
    Every(String),
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Dot,
    Star,
    Open(char),
    Close(char),
    Other,
}

/// Identifiers may hold `-` (`secrets.gpg-private-key`, `steps.my-step.outputs`).
fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn lex(expr: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '\'' => {
                // A string: `''` is a quote inside it.
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            s.push('\'');
                        }
                        Some('\'') | None => break,
                        Some(ch) => s.push(ch),
                    }
                }
                out.push(Token::Str(s));
            }
            '.' => out.push(Token::Dot),
            '*' => out.push(Token::Star),
            '(' | '[' => out.push(Token::Open(c)),
            ')' | ']' => out.push(Token::Close(c)),
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut s = String::from(c);
                while let Some(&n) = chars.peek() {
                    if !is_ident_char(n) {
                        break;
                    }
                    s.push(n);
                    chars.next();
                }
                out.push(Token::Ident(s));
            }
            _ => out.push(Token::Other),
        }
    }
    out
}

/// The secrets one expression (the text between `${{` and `}}`, or a whole `if:`) reads.
pub(crate) fn secrets_read(expr: &str) -> Vec<SecretRef> {
    let tokens = lex(expr);
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Ident(name) = t else { continue };
        // `x.secrets` is a property of something else; `secrets` itself is a context.
        if !name.eq_ignore_ascii_case("secrets") || (i > 0 && tokens[i - 1] == Token::Dot) {
            continue;
        }
        let found = match (tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3)) {
            (Some(Token::Dot), Some(Token::Ident(n)), _) => SecretRef::Named(n.clone()),
            (Some(Token::Dot), Some(Token::Star), _) => SecretRef::Every(format!("{name}.*")),
            (Some(Token::Open('[')), Some(Token::Str(n)), Some(Token::Close(']'))) => {
                SecretRef::Named(n.clone())
            }
            (Some(Token::Open('[')), _, _) => SecretRef::Every(format!("{name}[…]")),
            _ => SecretRef::Every(name.clone()),
        };
        out.push(found);
    }
    out
}

/// The inputs (`inputs.NAME`, `inputs['NAME']`) an expression reads, lower-cased.
pub(crate) fn inputs_read(expr: &str) -> Vec<String> {
    let tokens = lex(expr);
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Ident(name) = t else { continue };
        if !name.eq_ignore_ascii_case("inputs") || (i > 0 && tokens[i - 1] == Token::Dot) {
            continue;
        }
        match (tokens.get(i + 1), tokens.get(i + 2)) {
            (Some(Token::Dot), Some(Token::Ident(n))) => out.push(n.to_ascii_lowercase()),
            (Some(Token::Open('[')), Some(Token::Str(n))) => out.push(n.to_ascii_lowercase()),
            _ => {}
        }
    }
    out
}

/// Every `${{ … }}` in a value: the byte offset of its `${{` and the expression inside.
pub(crate) fn expressions(value: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut from = 0;
    std::iter::from_fn(move || {
        let start = from + value.get(from..)?.find("${{")?;
        let inner = start + 3;
        let end = inner + value[inner..].find("}}")?;
        from = end + 2;
        Some((start, &value[inner..end]))
    })
}

/// The secrets a YAML string value reads through its `${{ … }}` expressions; with `whole`, the
/// value is an expression itself (`if:`), `${{` or not.
pub(crate) fn secrets_in_value(value: &str, whole: bool) -> Vec<SecretRef> {
    if whole && !value.contains("${{") {
        return secrets_read(value);
    }
    expressions(value)
        .flat_map(|(_, e)| {
            // The whole expression names what hands over every secret (`toJSON(secrets)`).
            secrets_read(e).into_iter().map(move |r| match r {
                SecretRef::Every(_) => SecretRef::Every(one_line(e)),
                named => named,
            })
        })
        .collect()
}

/// An expression on one line, for messages: runs of whitespace (a multi-line `if:`) as one space.
pub(crate) fn one_line(expr: &str) -> String {
    expr.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(n: &str) -> SecretRef {
        SecretRef::Named(n.into())
    }

    #[test]
    fn secret_references_come_from_the_expression_language() {
        assert_eq!(
            secrets_read("secrets.gpg-private-key"),
            [named("gpg-private-key")]
        );
        assert_eq!(
            secrets_read("SECRETS.Minisign_Key"),
            [named("Minisign_Key")]
        );
        assert_eq!(secrets_read("secrets['A-B'] || secrets[\"x\"]").len(), 2);
        assert_eq!(secrets_read("secrets['it''s']"), [named("it's")]);
        assert_eq!(
            secrets_read("toJSON(secrets)"),
            [SecretRef::Every("secrets".into())]
        );
        assert_eq!(
            secrets_read("secrets[matrix.key]"),
            [SecretRef::Every("secrets[…]".into())]
        );
        assert_eq!(
            secrets_read("secrets[format('{0}_KEY', matrix.os)]"),
            [SecretRef::Every("secrets[…]".into())]
        );
        assert_eq!(secrets_read("github.event.secrets.x"), []);
        assert_eq!(secrets_read("'secrets.X'"), []);
    }

    #[test]
    fn expressions_in_values() {
        let v = "echo ${{ secrets.A }} and ${{secrets.B}} ${{ unterminated";
        assert_eq!(secrets_in_value(v, false), [named("A"), named("B")]);
        assert_eq!(secrets_in_value("secrets.K != ''", true), [named("K")]);
        assert_eq!(one_line("a &&\n   b"), "a && b");
        assert_eq!(
            inputs_read("inputs.Secret-Key || inputs['pw']"),
            ["secret-key", "pw"]
        );
    }
}
