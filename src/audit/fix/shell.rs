//! A `run:` script read for what a split must know of it: the commands it runs and the files it
//! reads and writes, relative to the workspace. It reads the common shapes of release scripts
//! (simple commands, pipes, `&&`, `cd`, `VAR=value`, `$(…)`, redirections, heredocs) and says
//! `unclear` for what it cannot follow, so that a caller never moves a step it half read.

use std::collections::BTreeMap;

/// One simple command: its words (quotes removed) and where its output goes.
#[derive(Debug, Default)]
pub(crate) struct Command {
    pub(crate) words: Vec<String>,
    pub(crate) redirect_out: Vec<String>,
    pub(crate) redirect_in: Vec<String>,
}

/// What a script does, as far as the split needs it.
#[derive(Debug, Default)]
pub(crate) struct Script {
    /// Each command, with the folder it runs in (relative to where the step starts).
    pub(crate) commands: Vec<(String, Command)>,
    /// Why the script cannot be followed, if it cannot.
    pub(crate) unclear: Option<String>,
}

/// Splits `script` into simple commands with the folder each runs in.
pub(crate) fn read(script: &str) -> Script {
    let mut out = Script::default();
    let mut lines = Vec::new();
    // Continuations joined; heredoc bodies are data, dropped.
    let mut heredoc: Option<String> = None;
    let mut pending = String::new();
    for line in script.lines() {
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
            }
            continue;
        }
        if let Some(end) = heredoc_start(line) {
            heredoc = Some(end);
        }
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        lines.push(std::mem::take(&mut pending));
    }
    if !pending.is_empty() {
        lines.push(pending);
    }
    let mut simple = Vec::new();
    for line in &lines {
        match split_commands(line, 0) {
            Ok(cmds) => simple.extend(cmds),
            Err(why) => {
                out.unclear = Some(why);
                return out;
            }
        }
    }
    let mut cwd = String::new();
    let mut previous = String::new();
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    for words in simple {
        let mut cmd = parse_words(&words, &vars);
        // Leading assignments: remembered (for `$name` in later paths), not commands.
        while let Some(first) = cmd.words.first() {
            match assignment(first) {
                Some((name, value)) => {
                    vars.insert(name.to_string(), value.to_string());
                    cmd.words.remove(0);
                }
                None => break,
            }
        }
        let Some(first) = cmd.words.first().cloned() else {
            continue;
        };
        if first == "cd" {
            let to = cmd.words.get(1).cloned().unwrap_or_default();
            let next = match to.as_str() {
                "-" => previous.clone(),
                "" | "~" => {
                    out.unclear = Some("`cd` to the home folder".into());
                    return out;
                }
                t if t.starts_with('/') || t.contains('$') => {
                    out.unclear = Some(format!("`cd {t}`: a folder warden cannot place"));
                    return out;
                }
                t => join(&cwd, t),
            };
            previous = std::mem::replace(&mut cwd, next);
            continue;
        }
        out.commands.push((cwd.clone(), cmd));
    }
    out
}

/// `NAME=value` (a shell assignment), the value unquoted.
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    ok.then_some((name, value))
}

/// `a/b` joined with `c` (`..` taken back where it can be).
pub(crate) fn join(base: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// The terminator of a heredoc that starts on `line` (`<<EOF`, `<<-'EOF'`, `<< "EOF"`).
fn heredoc_start(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = &line[at + 2..];
    if rest.starts_with('<') {
        return None; // a here-string
    }
    let rest = rest.trim_start_matches('-').trim_start();
    let word: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// A line split into simple commands at `;`, `&&`, `||`, `|`, `&` outside quotes; `$(…)` and
/// backquotes become commands of their own. Shell keywords and comments are dropped.
fn split_commands(line: &str, depth: usize) -> Result<Vec<String>, String> {
    if depth > 8 {
        return Err("command substitutions nested more than 8 deep".into());
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            '\\' if !single => {
                current.push(c);
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            '#' if !single
                && !double
                && (current.is_empty() || current.ends_with(char::is_whitespace)) =>
            {
                break;
            }
            '$' if !single && chars.peek() == Some(&'(') => {
                chars.next();
                if chars.peek() == Some(&'(') {
                    // Arithmetic: a value, not a command.
                    current.push_str("$((");
                    continue;
                }
                let mut open = 1;
                let mut inner = String::new();
                for n in chars.by_ref() {
                    match n {
                        '(' => open += 1,
                        ')' => {
                            open -= 1;
                            if open == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    inner.push(n);
                }
                if open != 0 {
                    return Err("a `$(` that does not close on its line".into());
                }
                out.extend(split_commands(&inner, depth + 1)?);
                current.push_str("$SUBST");
            }
            '`' if !single => {
                let inner: String = chars.by_ref().take_while(|&n| n != '`').collect();
                out.extend(split_commands(&inner, depth + 1)?);
                current.push_str("$SUBST");
            }
            ';' | '|' | '&' if !single && !double => {
                // `>&2`, `2>&1`: part of a redirection.
                if c == '&' && current.ends_with('>') {
                    current.push(c);
                    continue;
                }
                if matches!(chars.peek(), Some('|' | '&')) && c != ';' {
                    chars.next();
                }
                out.push(std::mem::take(&mut current));
            }
            '(' | ')' | '{' | '}' if !single && !double && current.trim().is_empty() => {}
            c => current.push(c),
        }
    }
    if single || double {
        return Err("a quote that does not close on its line".into());
    }
    out.push(current);
    Ok(out
        .into_iter()
        .map(|c| strip_keyword(c.trim()).to_string())
        .filter(|c| !c.is_empty())
        .collect())
}

/// A command with the shell keyword before it taken off (`then x` → `x`); keywords alone and
/// loop heads (`for … in …`, `case`) are dropped.
fn strip_keyword(c: &str) -> &str {
    let mut c = c;
    loop {
        let (head, rest) = c.split_once(char::is_whitespace).unwrap_or((c, ""));
        match head {
            "then" | "else" | "do" | "!" | "elif" | "if" | "while" | "until" => c = rest.trim(),
            "fi" | "done" | "esac" | "for" | "case" | "select" | "function" | ";;" => return "",
            _ => return c,
        }
    }
}

/// Words of one simple command: quotes removed, `$name` of an earlier assignment replaced,
/// redirections taken apart.
fn parse_words(text: &str, vars: &BTreeMap<String, String>) -> Command {
    let mut cmd = Command::default();
    let mut words = Vec::new();
    let mut current = String::new();
    let mut started = false;
    let (mut single, mut double) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                started = true;
            }
            '"' if !single => {
                double = !double;
                started = true;
            }
            '\\' if !single => {
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            '$' if !single
                && chars
                    .peek()
                    .is_some_and(|n| *n == '{' || n.is_ascii_alphabetic() || *n == '_') =>
            {
                let braced = chars.peek() == Some(&'{');
                if braced {
                    chars.next();
                    // `${{ … }}` is an expression the runner fills in before the shell runs.
                    if chars.peek() == Some(&'{') {
                        current.push_str("${{");
                        chars.next();
                        for n in chars.by_ref() {
                            current.push(n);
                            if current.ends_with("}}") {
                                break;
                            }
                        }
                        continue;
                    }
                }
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        name.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                let mut rest = String::new();
                if braced {
                    for n in chars.by_ref() {
                        if n == '}' {
                            break;
                        }
                        rest.push(n);
                    }
                }
                match vars.get(&name) {
                    Some(v) if rest.is_empty() => current.push_str(v),
                    _ => {
                        current.push('$');
                        current.push_str(&name);
                    }
                }
            }
            c if c.is_whitespace() && !single && !double => {
                if started || !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            c => current.push(c),
        }
    }
    if started || !current.is_empty() {
        words.push(current);
    }
    take_redirections(&mut words, &mut cmd);
    cmd.words = words;
    cmd
}

/// Takes the redirections out of `words` into `cmd`: `> f`, `>> f`, `2> f`, `>f`, `< f`; a
/// heredoc's marker ends the words.
fn take_redirections(words: &mut Vec<String>, cmd: &mut Command) {
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        let op_end = w.trim_start_matches(|c: char| c.is_ascii_digit());
        let (is_out, is_in) = (op_end.starts_with('>'), op_end.starts_with('<'));
        if (is_out || is_in) && !op_end.starts_with("<<") {
            let target = op_end.trim_start_matches(['>', '<', '&']).to_string();
            let target = if target.is_empty() && i + 1 < words.len() {
                words.remove(i + 1)
            } else {
                target
            };
            if is_out {
                cmd.redirect_out.push(target);
            } else {
                cmd.redirect_in.push(target);
            }
            words.remove(i);
            continue;
        }
        if op_end.starts_with("<<") {
            words.truncate(i);
            break;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(script: &str) -> Vec<(String, Vec<String>)> {
        read(script)
            .commands
            .into_iter()
            .map(|(cwd, c)| (cwd, c.words))
            .collect()
    }

    #[test]
    fn commands_pipes_cd_and_substitutions_are_followed() {
        let got = commands(
            "set -e\ndir=out/release\ncd dist && echo | /tmp/bin/minisign -Sm *.tar.gz # sign\ncd -\necho \"SHA=$(sha256sum $dir/a.apk | awk '{ print $1 }')\" >> $GITHUB_ENV\n",
        );
        let words: Vec<(String, String)> = got
            .iter()
            .map(|(cwd, w)| (cwd.clone(), w.join(" ")))
            .collect();
        assert_eq!(
            words,
            [
                ("", "set -e"),
                ("dist", "echo"),
                ("dist", "/tmp/bin/minisign -Sm *.tar.gz"),
                ("", "sha256sum out/release/a.apk"),
                ("", "awk { print $1 }"),
                ("", "echo SHA=$SUBST"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    #[test]
    fn heredocs_are_data_and_unclear_scripts_say_so() {
        let got = commands("cat > notes.md <<'EOF'\nrm -rf /\nEOF\nls\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].1, ["cat"]);
        assert!(read("echo 'open\n").unclear.is_some());
        assert!(read("cd \"$HOME/x\"\n").unclear.is_some());
        // A hostile nesting is refused, not followed down the stack.
        let deep = format!("echo {}x{}\n", "$(".repeat(100_000), ")".repeat(100_000));
        assert!(read(&deep).unclear.is_some());
    }
}
