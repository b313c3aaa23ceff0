//! `warden known-issues exclusions`: the registry as the lists other tools read: a bash array
//! (ethrex's `KNOWN_EXCLUDED_TESTS`), plain lines, JSON, reth's YAML, and an include regex for
//! hive's `--sim.limit` (which has no exclude).

use crate::error::Reason;
use std::collections::BTreeSet;

use serde::Serialize;

use super::matcher::{Matcher, Rule};
use super::schema::{Expect, MatchKind, Registry};

/// `warden known-issues exclusions --format`: the list shapes other tools read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExclusionFormat {
    Bash,
    Lines,
    Json,
    RethYaml,
    SimLimit,
}

#[derive(Clone, Debug, Default)]
pub struct Query {
    pub suite: Option<String>,
    pub client: Option<String>,
    /// Which `expect` kinds to list; empty = all (sim-limit always uses `skip`).
    pub expect: Vec<Expect>,
    /// The full upstream test list (names without client suffix), to expand prefix/glob rules
    /// and to build `sim-limit`.
    pub tests_from: Option<Vec<String>>,
}

/// A test listing is read whole; hive's largest suites list tens of thousands of tests.
const TEST_LIST_CAP: u64 = 64 << 20;

/// `parse_test_list` of a file: a regular file of at most 64 MiB of UTF-8.
pub fn read_test_list(path: &std::path::Path) -> crate::error::Result<Vec<String>> {
    let text = crate::files::guarded::read_small_file(path, TEST_LIST_CAP, "a test list")?;
    Ok(parse_test_list(&text))
}

/// Reads a test listing: one name per line (first TAB-separated column), `#` comments skipped.
pub(crate) fn parse_test_list(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').next().unwrap_or_default().trim().to_string())
        .collect()
}

/// Go's `regexp.QuoteMeta`: escapes exactly `\.+*?()|[]{}^$`, so the pattern reads the same in
/// RE2 (hive) and in Rust's regex.
pub(crate) fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            // A line break in a test name must not end the pattern's line.
            out.push_str(&format!("\\x{{{:x}}}", u32::from(c)));
            continue;
        }
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A `--sim.limit` pattern running exactly `tests` (names without the client suffix) of `suite`.
/// It matches each name with and without the " (client)" suffix, as rpc-compat applies the
/// pattern to both (see the reference note on hive's testmatch), and hive splits the pattern at
/// the first unbracketed `/`, so a `/` in the suite name (eels/consume-engine) is written `[/]`.
pub(crate) fn sim_limit_pattern(suite: &str, tests: &[&str]) -> String {
    let names: Vec<String> = tests.iter().map(|t| quote_meta(t)).collect();
    format!(
        "{}/^(?:{})(?: \\([^)]*\\))?$\n",
        quote_meta(suite).replace('/', "[/]"),
        names.join("|")
    )
}

/// Single-quoted for bash: every character stays literal (`'` becomes `'\''`).
pub(crate) fn bash_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[derive(Serialize)]
struct JsonRule<'a> {
    id: &'a str,
    suite: &'a str,
    test: &'a str,
    #[serde(rename = "match")]
    match_kind: &'static str,
    clients: &'a [String],
    expect: Expect,
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<&'a str>,
    /// Upstream names the rule covers, when a test list was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    expands_to: Option<Vec<String>>,
}

/// Renders the exclusions. Returns the text and warnings (e.g. listed names absent upstream).
pub fn render(
    registry: &Registry,
    format: ExclusionFormat,
    query: &Query,
) -> Result<(String, Vec<String>), Reason> {
    let matcher = Matcher::new(registry).map_err(|errs| {
        errs.iter()
            .map(|(e, i, m)| format!("{}: exclude[{i}]: {m}", e.path.display()))
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    known_filter(registry, &matcher, query)?;
    let wanted = |r: &Rule| {
        query
            .suite
            .as_deref()
            .is_none_or(|s| r.exclusion.suite == s)
            && query
                .client
                .as_deref()
                .is_none_or(|c| r.clients.is_empty() || r.clients.iter().any(|x| x == c))
            && (format == ExclusionFormat::SimLimit
                || query.expect.is_empty()
                || query.expect.contains(&r.expect()))
    };
    let rules: Vec<&Rule> = matcher.rules.iter().filter(|r| wanted(r)).collect();
    let mut warnings = Vec::new();
    if let Some(list) = &query.tests_from {
        for r in &rules {
            if !list.iter().any(|n| r.matches_name(n)) {
                warnings.push(format!(
                    "{}: {}/{} matches no test in the upstream list",
                    r.entry.id,
                    r.exclusion.suite,
                    r.pattern()
                ));
            }
        }
    }
    if matches!(format, ExclusionFormat::Bash | ExclusionFormat::Lines) {
        flat_list_fits(&rules, query)?;
    }
    let text = match format {
        ExclusionFormat::Bash => bash(&rules, query),
        ExclusionFormat::Lines => {
            let set: BTreeSet<String> = rules.iter().flat_map(|r| names(r, query)).collect();
            set.into_iter().map(|n| n + "\n").collect()
        }
        ExclusionFormat::Json => json(&rules, query)?,
        ExclusionFormat::RethYaml => reth_yaml(&rules, query)?,
        ExclusionFormat::SimLimit => sim_limit(&rules, query)?,
    };
    Ok((text, warnings))
}

/// A `--suite` or `--client` the registry does not know is a typo, not an empty list: the
/// suites and clients it knows are those of `registry.toml` and those its entries name.
fn known_filter(registry: &Registry, matcher: &Matcher, query: &Query) -> Result<(), Reason> {
    let suites: BTreeSet<&str> = (registry.settings.suites.iter().map(String::as_str))
        .chain(matcher.rules.iter().map(|r| r.exclusion.suite.as_str()))
        .collect();
    if let Some(suite) = query.suite.as_deref().filter(|s| !suites.contains(s)) {
        return Err(unknown("--suite", suite, "suite", &suites, "suites").into());
    }
    let clients: BTreeSet<&str> = (registry.settings.clients.iter().map(String::as_str))
        .chain(
            matcher
                .rules
                .iter()
                .flat_map(|r| r.clients.iter().map(String::as_str)),
        )
        .collect();
    if let Some(client) = query.client.as_deref().filter(|c| !clients.contains(c)) {
        return Err(unknown("--client", client, "client", &clients, "clients").into());
    }
    Ok(())
}

fn unknown(flag: &str, value: &str, what: &str, known: &BTreeSet<&str>, key: &str) -> String {
    let known = if known.is_empty() {
        "none".to_string()
    } else {
        known.iter().copied().collect::<Vec<_>>().join(", ")
    };
    let mut why = format!(
        "{flag} {}: the registry knows no {what} of that name (its {key}: {known})",
        crate::markup::text_value(value)
    );
    if key == "suites" {
        why.push_str("; a suite with no entry yet goes in registry.toml's `suites`");
    }
    why
}

/// A bash array or plain lines are bare names of one suite: several suites without `--suite`
/// would merge, and a glob or prefix gated on a failure signature would lose its gate (a
/// `test = "*"` rule would skip every test). Both are refused, saying what to do. (An exact name
/// gated on a signature names one test, as the registry's doc says it is excluded.)
fn flat_list_fits(rules: &[&Rule], query: &Query) -> Result<(), Reason> {
    let suites: BTreeSet<&str> = rules.iter().map(|r| r.exclusion.suite.as_str()).collect();
    if query.suite.is_none() && suites.len() > 1 {
        return Err(format!(
            "the rules cover {} suites ({}): a bash array or lines name tests of one suite; pass --suite NAME, or --format json / reth-yaml, which keep the suites",
            suites.len(),
            suites.into_iter().collect::<Vec<_>>().join(", ")
        ).into());
    }
    for r in rules.iter().filter(|r| r.exclusion.signature.is_some()) {
        if r.exclusion.match_kind != MatchKind::Exact {
            return Err(format!(
                "{}: the {} rule {} applies only to failures matching its signature; as a bare name it would exclude every test it matches: use --format json (which keeps the signature), or --expect to leave it out",
                r.entry.id,
                r.exclusion.match_kind.name(),
                bash_quote(r.pattern())
            ).into());
        }
    }
    Ok(())
}

/// Names a rule stands for: expanded against the upstream list when there is one.
fn names(r: &Rule, query: &Query) -> Vec<String> {
    match &query.tests_from {
        Some(list) => list.iter().filter(|n| r.matches_name(n)).cloned().collect(),
        None => vec![r.pattern().to_string()],
    }
}

fn header(comment: &str) -> String {
    format!("{comment} Generated by `warden known-issues exclusions` from the known-issues registry. Do not edit.\n")
}

/// ethrex's `KNOWN_EXCLUDED_TESTS` bash array, each name single-quoted, with its entry id.
fn bash(rules: &[&Rule], query: &Query) -> String {
    let mut s = header("#");
    s.push_str("KNOWN_EXCLUDED_TESTS=(\n");
    let mut seen = BTreeSet::new();
    for r in rules {
        for n in names(r, query) {
            if seen.insert(n.clone()) {
                s.push_str(&format!("  {}  # {}\n", bash_quote(&n), r.entry.id));
            }
        }
    }
    s.push_str(")\n");
    s
}

fn json(rules: &[&Rule], query: &Query) -> Result<String, Reason> {
    let doc: Vec<JsonRule> = rules
        .iter()
        .map(|r| JsonRule {
            id: &r.entry.id,
            suite: &r.exclusion.suite,
            test: r.pattern(),
            match_kind: r.exclusion.match_kind.name(),
            clients: r.clients,
            expect: r.expect(),
            signature: r.exclusion.signature.as_ref().map(|s| s.get_ref().as_str()),
            expands_to: query.tests_from.as_ref().map(|_| names(r, query)),
        })
        .collect();
    Ok(serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n")
}

/// reth's expected-failures YAML: suite → full names with the client suffix.
fn reth_yaml(rules: &[&Rule], query: &Query) -> Result<String, Reason> {
    if query.tests_from.is_none() {
        if let Some(r) = rules
            .iter()
            .find(|r| r.exclusion.match_kind != MatchKind::Exact)
        {
            return Err(format!(
                "{}: a {} rule cannot be listed as exact names without the upstream list: pass --tests-from FILE",
                r.entry.id,
                r.exclusion.match_kind.name()
            ).into());
        }
    }
    let mut s = header("#");
    let suites: BTreeSet<&str> = rules.iter().map(|r| r.exclusion.suite.as_str()).collect();
    for suite in suites {
        s.push_str(&format!(
            "{}:\n",
            serde_json::to_string(suite).unwrap_or_default()
        ));
        let mut seen = BTreeSet::new();
        for r in rules.iter().filter(|r| r.exclusion.suite == suite) {
            let clients: Vec<&str> = match &query.client {
                Some(c) => vec![c.as_str()],
                None => r.clients.iter().map(String::as_str).collect(),
            };
            if clients.is_empty() {
                return Err(format!(
                    "{}: no clients to suffix the names with: pass --client NAME or set clients",
                    r.entry.id
                )
                .into());
            }
            for n in names(r, query) {
                for c in &clients {
                    // An EEST node id takes `-client`, as reth's lists write it.
                    let full = super::import::with_client(&n, c);
                    if seen.insert(full.clone()) {
                        s.push_str(&format!(
                            "  - {}  # {}\n",
                            serde_json::to_string(&full).unwrap_or_default(),
                            r.entry.id
                        ));
                    }
                }
            }
        }
    }
    Ok(s)
}

/// hive's `--sim.limit` has no exclude: an include regex of every upstream test but the `skip`
/// rules of one suite.
fn sim_limit(rules: &[&Rule], query: &Query) -> Result<String, Reason> {
    let list = query
        .tests_from
        .as_ref()
        .ok_or("sim-limit needs the full upstream test list: pass --tests-from FILE")?;
    let suite = match &query.suite {
        Some(s) => s.clone(),
        None => {
            let suites: BTreeSet<&str> = rules.iter().map(|r| r.exclusion.suite.as_str()).collect();
            match suites.into_iter().collect::<Vec<_>>().as_slice() {
                [one] => one.to_string(),
                _ => return Err("sim-limit covers one suite: pass --suite NAME".into()),
            }
        }
    };
    let skipped: Vec<&&Rule> = rules
        .iter()
        .filter(|r| r.expect() == Expect::Skip && r.exclusion.suite == suite)
        .collect();
    let kept: Vec<&str> = list
        .iter()
        .filter(|n| !skipped.iter().any(|r| r.matches_name(n)))
        .map(String::as_str)
        .collect();
    if kept.is_empty() {
        return Err("every upstream test is skipped: nothing would run".into());
    }
    Ok(sim_limit_pattern(&suite, &kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_meta_is_gos() {
        assert_eq!(
            quote_meta("eth_getLogs/contract-addr"),
            "eth_getLogs/contract-addr"
        );
        assert_eq!(
            quote_meta(r"a.b+c*d?e(f)g|h[i]j{k}l^m$n\o"),
            r"a\.b\+c\*d\?e\(f\)g\|h\[i\]j\{k\}l\^m\$n\\o"
        );
    }

    #[test]
    fn bash_quote_keeps_everything_literal() {
        assert_eq!(bash_quote("it's $HOME `x` \\"), r"'it'\''s $HOME `x` \'");
    }
}
