//! `warden known-issues init` and `import`: the on-ramp. `init` writes a commented
//! `registry.toml` and one example entry; `import` turns the lists a project keeps today (reth's
//! `expected_failures.yaml` / `ignored_tests.yaml`, or a bash array such as ethrex's
//! `KNOWN_EXCLUDED_TESTS`) into draft entries, one per suite, naming what it could not map.
//!
//! Names keep everything but the client suffix: `Re-Org Out (Cancun) (reth)` is the test
//! `Re-Org Out (Cancun)` for client `reth`, and an EEST node id `…::test_x[…]-reth` is
//! `…::test_x[…]`. `exclusions --format reth-yaml` writes each back in its own style, so an
//! import followed by an export gives the same names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::schema::Expect;
use crate::error::{Error, Result};

/// Where `import` reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// reth's `expected_failures.yaml` / `ignored_tests.yaml`: suite → names with the client.
    RethYaml,
    /// A bash array (`NAME=( 'test' … )`) of names of one suite, without client suffix.
    Bash,
}

/// What `import` wrote, and what it could not map.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ImportReport {
    /// Each entry written: file, suite, how many exclusions.
    pub(crate) written: Vec<(PathBuf, String, usize)>,
    /// Names that were not imported, with why.
    pub(crate) unmapped: Vec<(String, String)>,
}

/// The test name and client of a listed `name`: ` (client)` at the end, or `-client` after an
/// EEST node id (`…::test[…]-client`); `None` when it carries no suffix of `client`.
pub(crate) fn split_client<'a>(name: &'a str, client: &str) -> Option<&'a str> {
    if let Some(test) = name
        .strip_suffix(')')
        .and_then(|n| n.strip_suffix(client))
        .and_then(|n| n.strip_suffix(" ("))
    {
        return Some(test);
    }
    name.strip_suffix(client)
        .and_then(|n| n.strip_suffix('-'))
        .filter(|n| is_node_id(n))
}

/// An EEST (pytest) node id: hive's EEST simulators name tests `path::test[params]`, and lists
/// suffix them with `-client` rather than ` (client)`.
pub(crate) fn is_node_id(test: &str) -> bool {
    test.contains("::")
}

/// `name` with the client suffix in the style its kind of name takes.
pub(crate) fn with_client(test: &str, client: &str) -> String {
    if is_node_id(test) {
        format!("{test}-{client}")
    } else {
        format!("{test} ({client})")
    }
}

/// The names `text` lists, by suite.
fn read_lists(
    text: &str,
    format: ImportFormat,
    suite: Option<&str>,
    origin: &str,
) -> Result<BTreeMap<String, Vec<String>>> {
    match format {
        ImportFormat::RethYaml => {
            // Parsed within the audit's node budget: a list from a pull request may be an
            // alias bomb.
            let value = crate::yaml::parse(text)
                .map_err(|((line, _), why)| Error::input(origin, Some(line), why))?;
            let doc: BTreeMap<String, Option<Vec<String>>> = yaml_serde::from_value(value)
                .map_err(|e| {
                    Error::input(origin, None, format!("not a suite → names YAML map: {e}"))
                })?;
            Ok(doc
                .into_iter()
                .map(|(s, names)| (s, names.unwrap_or_default()))
                .collect())
        }
        ImportFormat::Bash => {
            let suite = suite.ok_or_else(|| {
                Error::Usage("a bash array names tests of one suite: pass --suite NAME".into())
            })?;
            let names =
                bash_words(text).map_err(|(line, why)| Error::input(origin, Some(line), why))?;
            Ok(BTreeMap::from([(suite.to_string(), names)]))
        }
    }
}

/// What the list's authors wrote beside each suite: comment blocks (`#` lines together), each
/// given to the suite whose key it stands above, else to the suite it stands in; a comment at
/// the end of an item's line too. A file's opening block set apart by a blank line is about the
/// whole file and goes nowhere. For a bash array, every comment in it and the block above it.
fn comments_by_suite(
    text: &str,
    format: ImportFormat,
    bash_suite: Option<&str>,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut block: Vec<String> = Vec::new();
    let mut current: Option<String> = bash_suite.map(str::to_string);
    let mut seen_content = false;
    fn give(
        out: &mut BTreeMap<String, Vec<String>>,
        suite: &Option<String>,
        block: &mut Vec<String>,
    ) {
        if let (Some(s), false) = (suite, block.is_empty()) {
            out.entry(s.clone()).or_default().push(block.join("\n"));
        }
        block.clear();
    }
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(c) = trimmed.strip_prefix('#') {
            block.push(c.strip_prefix(' ').unwrap_or(c).trim_end().to_string());
            continue;
        }
        if trimmed.is_empty() {
            // An opening block apart from everything is the file's own header.
            if !seen_content && !block.is_empty() {
                block.clear();
            }
            continue;
        }
        seen_content = true;
        let key = match format {
            ImportFormat::RethYaml if !line.starts_with([' ', '\t', '-']) => line
                .split_once(':')
                .map(|(k, _)| k.trim().trim_matches(['"', '\'']).to_string()),
            _ => None,
        };
        match key {
            Some(k) => {
                current = Some(k);
                give(&mut out, &current, &mut block);
            }
            None => give(&mut out, &current, &mut block),
        }
        // `- name  # why`: a comment after the item (not a `#` inside a quoted name).
        let after_item = line.match_indices(" #").map(|(at, _)| at).find(|&at| {
            let before = &line[..at];
            before.matches('"').count() % 2 == 0 && before.matches('\'').count() % 2 == 0
        });
        if let Some(c) = after_item.map(|at| &line[at + 2..]) {
            let c = c.trim();
            if !c.is_empty() {
                out.entry(current.clone().unwrap_or_default())
                    .or_default()
                    .push(c.to_string());
            }
        }
    }
    give(&mut out, &current, &mut block);
    out.remove("");
    out
}

/// The web links in `text` (`http://`, `https://`), without trailing punctuation, in order.
fn links_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("http") {
        let rest = &text[at..];
        if !(rest.starts_with("https://") || rest.starts_with("http://")) {
            continue;
        }
        let end = rest
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | ')' | ']')
            })
            .unwrap_or(rest.len());
        let link = rest[..end].trim_end_matches(['.', ',', ';', ':']);
        if link.len() > "https://".len() && !out.iter().any(|l| l == link) {
            out.push(link.to_string());
        }
    }
    out
}

/// The words of the first bash array in `text` (`NAME=( … )`): single-quoted, double-quoted
/// (with `\"` and `\\`) or bare, `#` comments skipped. Nothing is expanded.
fn bash_words(text: &str) -> std::result::Result<Vec<String>, (usize, String)> {
    let start = text
        .find("=(")
        .ok_or((1, "no bash array (`NAME=( … )`) here".to_string()))?;
    let body = &text[start + 2..];
    let line_of = |at: usize| text[..start + 2 + at].matches('\n').count() + 1;
    let mut words = Vec::new();
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            ')' => return Ok(words),
            c if c.is_whitespace() => {}
            '#' => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                let mut w = String::new();
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, c)) => w.push(c),
                        None => return Err((line_of(at), "an unclosed ' quote".into())),
                    }
                }
                // `'it'\''s'`: adjacent quoted parts make one word.
                while let Some(&(_, next)) = chars.peek() {
                    if next.is_whitespace() || next == ')' {
                        break;
                    }
                    chars.next();
                    if next == '\\' {
                        if let Some((_, c)) = chars.next() {
                            w.push(c);
                        }
                    } else if next == '\'' {
                        loop {
                            match chars.next() {
                                Some((_, '\'')) => break,
                                Some((_, c)) => w.push(c),
                                None => return Err((line_of(at), "an unclosed ' quote".into())),
                            }
                        }
                    } else {
                        w.push(next);
                    }
                }
                words.push(w);
            }
            '"' => {
                let mut w = String::new();
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, c)) => w.push(c),
                            None => return Err((line_of(at), "an unclosed \" quote".into())),
                        },
                        Some((_, '$')) | Some((_, '`')) => {
                            return Err((
                                line_of(at),
                                "a double-quoted word with $ or `: warden expands nothing; quote it with '…'".into(),
                            ))
                        }
                        Some((_, c)) => w.push(c),
                        None => return Err((line_of(at), "an unclosed \" quote".into())),
                    }
                }
                words.push(w);
            }
            c => {
                let mut w = String::from(c);
                while let Some(&(_, next)) = chars.peek() {
                    if next.is_whitespace() || next == ')' {
                        break;
                    }
                    w.push(next);
                    chars.next();
                }
                words.push(w);
            }
        }
    }
    Err((line_of(body.len()), "the array is not closed with )".into()))
}

/// An entry id for imported failures of `suite`: kebab case.
fn entry_id(suite: &str) -> String {
    let mut id: String = suite
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while id.contains("--") {
        id = id.replace("--", "-");
    }
    format!("imported-{}", id.trim_matches('-'))
}

/// How an entry names the list it came from: the path relative to `cwd` when the file is under
/// it, else the file's name alone. Never an absolute path (it would carry the importer's home
/// folder into the registry and the rendered doc), never a control or invisible character (the
/// name is written into a TOML comment line).
pub fn origin_name(file: &Path, cwd: Option<&Path>) -> String {
    use std::path::Component;
    let relative = if file.is_absolute() {
        cwd.and_then(|c| file.strip_prefix(c).ok())
    } else {
        Some(file)
    };
    let plain = relative.filter(|p| {
        p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    });
    let shown = match plain {
        Some(p) => p.to_string_lossy().trim_start_matches("./").to_string(),
        None => file.file_name().map_or_else(
            || "the list".to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
    };
    shown
        .chars()
        .map(|c| {
            if c.is_control() || crate::markup::is_invisible(c) {
                '?'
            } else {
                c
            }
        })
        .collect()
}

fn toml_string(s: &str) -> String {
    toml::Value::from(s).to_string()
}

/// Reads `text` (from `origin`) as `format` and writes one draft entry per suite into
/// `registry`: exact exclusions for `client`, expected to `expect`. Refused, with nothing
/// written, when an entry file exists already.
pub fn import(
    registry: &Path,
    (text, origin): (&str, &str),
    format: ImportFormat,
    (client, suite, expect): (&str, Option<&str>, Expect),
) -> Result<ImportReport> {
    let lists = read_lists(text, format, suite, origin)?;
    let comments = comments_by_suite(text, format, suite);
    let mut report = ImportReport::default();
    let mut files = Vec::new();
    for (suite, names) in lists {
        let mut tests = Vec::new();
        for name in names {
            let test = match format {
                ImportFormat::RethYaml => match split_client(&name, client) {
                    Some(t) => t.to_string(),
                    None => {
                        report.unmapped.push((
                            name,
                            format!("no client suffix ` ({client})` or `-{client}`"),
                        ));
                        continue;
                    }
                },
                ImportFormat::Bash => name,
            };
            if test.is_empty() || test.chars().any(char::is_control) {
                report
                    .unmapped
                    .push((test, "empty, or a control character in the name".into()));
            } else if tests.contains(&test) {
                report.unmapped.push((test, "listed twice".into()));
            } else {
                tests.push(test);
            }
        }
        if tests.is_empty() {
            continue;
        }
        // Two suites can make one id ("a/b", "a_b"): each gets its own file, planned here,
        // before anything is written.
        let base = entry_id(&suite);
        let id = (1..)
            .map(|n| match n {
                1 => base.clone(),
                n => format!("{base}-{n}"),
            })
            .find(|id| {
                !files
                    .iter()
                    .any(|(f, ..): &(PathBuf, String, usize, String)| {
                        f.file_stem().is_some_and(|s| s == id.as_str())
                    })
            })
            .unwrap_or(base);
        let body = entry_body(origin, &suite, comments.get(&suite), &tests, client, expect);
        let file = registry.join(format!("{id}.toml"));
        if file.exists() {
            return Err(Error::Refused(format!(
                "{} exists already: nothing written (move it away to import again)",
                file.display()
            )));
        }
        files.push((file, suite, tests.len(), body));
    }
    std::fs::create_dir_all(registry).map_err(|e| Error::io("creating", registry, e))?;
    for (file, suite, n, body) in files {
        crate::files::atomic::write_atomic(&file, body.as_bytes(), 0o644, false)?;
        report.written.push((file, suite, n));
    }
    Ok(report)
}

/// The text of one imported entry: its draft header, `why` from the list's comments, the links
/// they name, and one exclusion per test.
fn entry_body(
    origin: &str,
    suite: &str,
    comments: Option<&Vec<String>>,
    tests: &[String],
    client: &str,
    expect: Expect,
) -> String {
    // What the list's authors wrote is the start of `why`, its links the entry's links.
    let written = comments.map(|c| c.join("\n\n")).unwrap_or_default();
    let why = if written.trim().is_empty() {
        format!("Listed in {origin} before the registry existed, with no comment saying why.")
    } else {
        format!("Listed in {origin} before the registry existed. Its comments:\n\n{written}")
    };
    let links: Vec<String> = links_in(&written).iter().map(|l| toml_string(l)).collect();
    let mut body = format!(
        "# Imported by `warden known-issues import` from {origin}: review the title, why and removal,\n# then remove `status = \"draft\"` (lint refuses drafts without --allow-draft).\ntitle = {}\nwhy = {}\nremoval = \"When each test passes: `warden known-issues update` removes fixed exclusions.\"\nstatus = \"draft\"\ndrafted_by = \"import\"\n{}",
        toml_string(&format!("{suite}: tests listed in {origin}")),
        toml_string(&why),
        if links.is_empty() {
            String::new()
        } else {
            format!("links = [{}]\n", links.join(", "))
        }
    );
    for t in tests {
        body.push_str(&format!(
            "\n[[exclude]]\nsuite = {}\ntest = {}\nclients = [{}]\nexpect = \"{}\"\n",
            toml_string(suite),
            toml_string(t),
            toml_string(client),
            match expect {
                Expect::Fail => "fail",
                Expect::Flaky => "flaky",
                Expect::Skip => "skip",
            }
        ));
    }
    body
}

/// `known-issues init`: a commented `registry.toml` for `clients` and one example entry.
/// Refused when the registry exists.
pub fn init(registry: &Path, clients: &[String]) -> Result<Vec<PathBuf>> {
    let settings = registry.join(super::schema::SETTINGS_FILE);
    if settings.exists() {
        return Err(Error::Refused(format!(
            "{} exists already: the registry is set up",
            settings.display()
        )));
    }
    if clients.is_empty() {
        return Err(Error::Usage(
            "pass --client NAME (the client your hive runs test; repeatable)".into(),
        ));
    }
    let list: Vec<String> = clients.iter().map(|c| toml_string(c)).collect();
    let registry_toml = format!(
        "# The known-issues registry's settings. Each other *.toml here is one known issue.\n\
         # `warden known-issues lint` checks them; `render` writes the doc; `exclusions` the lists.\n\
         \n\
         # The clients hive runs (the suffix of test names, `name (client)`).\n\
         clients = [{}]\n\
         \n\
         # The hive suites you run that no entry names yet: `exclusions --suite` accepts them.\n\
         # suites = [\"rpc-compat\"]\n\
         \n\
         # Where `warden known-issues render` writes the human-readable list.\n\
         doc = \"docs/known_issues.md\"\n\
         \n\
         # The upstreams a run must match (`hive check` says when it does not), by commit:\n\
         # [upstream]\n\
         # hive = \"<commit>\"\n",
        list.join(", ")
    );
    let example =
        "# One known issue: why a test fails, and what ends it. Edit, or delete this file.\n\
         # A draft until `status = \"draft\"` goes: lint refuses it, summaries leave it out.\n\
         title = \"Example: eth_getLogs returns logs without blockTimestamp\"\n\
         status = \"draft\"\n\
         drafted_by = \"init\"\n\
         why = \"\"\"\n\
         The response omits the field the spec added; the test compares the whole object.\n\
         \"\"\"\n\
         removal = \"When the field is returned (link the issue here).\"\n\
         review_by = 2999-12-31\n\
         \n\
         # Each [[exclude]] names one hive test (without the client suffix): `expect` is fail,\n\
         # flaky or skip; `match` exact (default), prefix or glob; `signature` a regex the\n\
         # failure's details must match.\n\
         # [[exclude]]\n\
         # suite = \"rpc-compat\"\n\
         # test = \"eth_getLogs/no-topics\"\n";
    let files = [
        (settings, registry_toml),
        (registry.join("example.toml"), example.to_string()),
    ];
    std::fs::create_dir_all(registry).map_err(|e| Error::io("creating", registry, e))?;
    let mut written = Vec::new();
    for (file, text) in files {
        crate::files::atomic::write_atomic(&file, text.as_bytes(), 0o644, false)?;
        written.push(file);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_suffixes_come_off_in_both_styles() {
        assert_eq!(
            split_client("Re-Org Out (Cancun) (reth)", "reth"),
            Some("Re-Org Out (Cancun)")
        );
        assert_eq!(
            split_client(
                "tests/a.py::test_x[fork_Prague-blockchain_test]-reth",
                "reth"
            ),
            Some("tests/a.py::test_x[fork_Prague-blockchain_test]")
        );
        assert_eq!(split_client("eth_call/foo (ethrex)", "reth"), None);
        assert_eq!(split_client("plain-reth", "reth"), None);
        for name in [
            "Re-Org Out (Cancun)",
            "tests/a.py::test_x[fork_Prague-blockchain_test]",
        ] {
            assert_eq!(split_client(&with_client(name, "reth"), "reth"), Some(name));
        }
    }

    #[test]
    fn a_yaml_alias_bomb_is_refused_not_expanded() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..9 {
            let prev = if i == 0 {
                "a".to_string()
            } else {
                format!("l{}", i - 1)
            };
            let refs = vec![format!("*{prev}"); 10].join(", ");
            bomb.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
        }
        let err = read_lists(&bomb, ImportFormat::RethYaml, None, "bomb.yaml").unwrap_err();
        assert!(err.to_string().contains("YAML nodes"), "{err}");
    }

    #[test]
    fn bash_arrays_are_read_without_expansion() {
        let text = "# ethrex\nKNOWN_EXCLUDED_TESTS=(\n  'a b'  # why\n  \"c\\\"d\"\n  e/f\n  'it'\\''s'\n)\n";
        assert_eq!(bash_words(text).unwrap(), ["a b", "c\"d", "e/f", "it's"]);
        assert_eq!(bash_words("X=(\n 'open\n").unwrap_err().0, 2);
        assert!(bash_words("X=( \"$(rm -rf /)\" )").is_err());
    }
}

#[cfg(test)]
mod origin_tests {
    use super::origin_name;
    use std::path::Path;

    #[test]
    fn an_entry_never_names_an_absolute_path_or_a_line_break() {
        let cwd = Path::new("/home/dev/reth");
        assert_eq!(
            origin_name(
                Path::new("/home/dev/reth/.github/assets/hive/expected_failures.yaml"),
                Some(cwd)
            ),
            ".github/assets/hive/expected_failures.yaml"
        );
        assert_eq!(
            origin_name(Path::new("/tmp/lists/expected_failures.yaml"), Some(cwd)),
            "expected_failures.yaml"
        );
        assert_eq!(
            origin_name(Path::new("../other/ignored_tests.yaml"), Some(cwd)),
            "ignored_tests.yaml"
        );
        assert_eq!(origin_name(Path::new("./lists.sh"), None), "lists.sh");
        assert_eq!(
            origin_name(Path::new("a\nb\u{202E}.yaml"), None),
            "a?b?.yaml"
        );
    }
}

#[cfg(test)]
mod comment_tests {
    use super::{comments_by_suite, links_in, ImportFormat};

    #[test]
    fn comments_go_to_the_suite_they_stand_above_or_in() {
        // The shapes of reth's lists: a header set apart, a tracking link above a suite, a
        // block inside a list, a comment after an item, a `#` inside a quoted name.
        let yaml = "# Ignored tests\n#\n# Format: suite → names\n\n# tracked by https://github.com/o/r/issues/1\nrpc-compat:\n  - a (reth)\n\nengine-api: []\n\n# EIP-7610: impossible on mainnet.\n#   ref: https://example.org/x#c1.\neels/consume-engine:\n  - t1-reth\n  # Hive infra bug, all clients.\n  # Tracked: https://github.com/h/h/issues/2\n  - t2-reth\n  - t3-reth  # slow on CI\n  - \"test #4 (reth)\"\n";
        let c = comments_by_suite(yaml, ImportFormat::RethYaml, None);
        assert_eq!(
            c.into_iter().collect::<Vec<_>>(),
            [
                (
                    "eels/consume-engine".to_string(),
                    vec![
                        "EIP-7610: impossible on mainnet.\n  ref: https://example.org/x#c1."
                            .to_string(),
                        "Hive infra bug, all clients.\nTracked: https://github.com/h/h/issues/2"
                            .to_string(),
                        "slow on CI".to_string(),
                    ]
                ),
                (
                    "rpc-compat".to_string(),
                    vec!["tracked by https://github.com/o/r/issues/1".to_string()]
                ),
            ]
        );
        let bash = "#!/bin/bash\n\n# Failing since the Osaka fork: see https://github.com/e/e/issues/3\nKNOWN=(\n  'a/b'  # flaky\n  # timeouts\n  'c/d'\n)\n";
        let c = comments_by_suite(bash, ImportFormat::Bash, Some("rpc-compat"));
        assert_eq!(
            c["rpc-compat"],
            [
                "Failing since the Osaka fork: see https://github.com/e/e/issues/3",
                "flaky",
                "timeouts"
            ]
        );
    }

    #[test]
    fn links_are_found_without_trailing_punctuation() {
        assert_eq!(
            links_in("see https://a.org/x#c1. and (http://b.org/y), https://a.org/x#c1, https://"),
            ["https://a.org/x#c1", "http://b.org/y"]
        );
    }
}
