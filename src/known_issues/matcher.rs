//! Matching hive test names against the registry's exclusions.

use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use regex::{Regex, RegexBuilder};
use rustc_hash::FxHashMap;

use super::schema::{Entry, Exclusion, Expect, MatchKind, Registry};

/// An exclusion ready to match: glob and signature compiled once.
#[derive(Debug)]
pub(crate) struct Rule<'r> {
    pub(crate) entry: &'r Entry,
    pub(crate) exclusion: &'r Exclusion,
    pub(crate) clients: &'r [String],
    glob: Option<GlobMatcher>,
    pub(crate) signature: Option<Regex>,
}

impl<'r> Rule<'r> {
    pub(crate) fn expect(&self) -> Expect {
        self.exclusion.expect
    }

    pub(crate) fn pattern(&self) -> &str {
        self.exclusion.test.get_ref()
    }

    /// Whether the rule covers `test` (name without the client suffix) in `suite` for `client`.
    /// A case without a client suffix, or a rule without clients, matches any client.
    pub(crate) fn matches(&self, suite: &str, test: &str, client: Option<&str>) -> bool {
        if self.exclusion.suite != suite {
            return false;
        }
        if let Some(c) = client {
            if !self.clients.is_empty() && !self.clients.iter().any(|x| x == c) {
                return false;
            }
        }
        self.matches_name(test)
    }

    pub(crate) fn matches_name(&self, test: &str) -> bool {
        let pattern = self.pattern();
        match self.exclusion.match_kind {
            MatchKind::Exact => test == pattern,
            MatchKind::Prefix => test.starts_with(pattern),
            MatchKind::Glob => self.glob.as_ref().is_some_and(|g| g.is_match(test)),
        }
    }
}

/// The compiled size one signature regex may take. A registry comes from pull requests: 200
/// signatures near the regex crate's default limit took 13 s and 625 MB to compile.
const SIGNATURE_SIZE_LIMIT: usize = 256 * 1024;

/// All rules of a registry, with exact names indexed and the prefix and glob rules of each suite
/// compiled into one set, so a case is matched against every rule in one pass (3,000 glob rules
/// against 100,000 cases took 58 s one rule at a time).
#[derive(Debug)]
pub(crate) struct Matcher<'r> {
    pub(crate) rules: Vec<Rule<'r>>,
    /// Exact names, looked up once per case: a fast non-DoS-resistant hash is fine for our own keys.
    exact: FxHashMap<(&'r str, &'r str), Vec<usize>>,
    /// Per suite: one set of the prefix and glob rules, and the rule index of each set member.
    patterns: FxHashMap<&'r str, (GlobSet, Vec<usize>)>,
}

/// The glob a prefix or glob rule matches as; `None` for a broken glob (it matches nothing).
fn set_member(rule: &Rule) -> Option<Glob> {
    match rule.exclusion.match_kind {
        MatchKind::Exact => None,
        MatchKind::Prefix => Glob::new(&format!("{}*", globset::escape(rule.pattern()))).ok(),
        MatchKind::Glob => rule.glob.as_ref().map(|g| g.glob().clone()),
    }
}

/// Why a rule could not be compiled: (entry, exclusion index, message).
pub(crate) type CompileError<'r> = (&'r Entry, usize, String);

impl<'r> Matcher<'r> {
    /// Compiles every rule; fails when any glob or signature does not compile.
    pub(crate) fn new(registry: &'r Registry) -> Result<Self, Vec<CompileError<'r>>> {
        let (matcher, errors) = Self::compile(registry);
        if errors.is_empty() {
            Ok(matcher)
        } else {
            Err(errors)
        }
    }

    /// Compiles every rule for reading results: a rule that does not compile is bad input, named
    /// with its file (lint says more).
    pub(crate) fn valid(registry: &'r Registry) -> crate::error::Result<Self> {
        Self::new(registry).map_err(|errs| {
            let (e, i, m) = &errs[0];
            crate::error::Error::input(
                e.path.display().to_string(),
                None,
                format!("exclude[{i}]: {m} (run `warden known-issues lint`)"),
            )
        })
    }

    /// Compiles what it can (a broken glob matches nothing, a broken signature is dropped) and
    /// returns the errors alongside, so lint can report them and still check the rest.
    pub(crate) fn compile(registry: &'r Registry) -> (Self, Vec<CompileError<'r>>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        for entry in &registry.entries {
            for (i, ex) in entry.data.exclude.iter().enumerate() {
                let glob = match ex.match_kind {
                    MatchKind::Glob => match Glob::new(ex.test.get_ref()) {
                        Ok(g) => Some(g.compile_matcher()),
                        Err(e) => {
                            errors.push((
                                entry,
                                i,
                                format!("invalid glob {:?}: {e}", ex.test.get_ref()),
                            ));
                            None
                        }
                    },
                    _ => None,
                };
                let signature = match &ex.signature {
                    Some(s) => match RegexBuilder::new(s.get_ref())
                        .size_limit(SIGNATURE_SIZE_LIMIT)
                        .build()
                    {
                        Ok(r) => Some(r),
                        Err(e) => {
                            let mut first = e
                                .to_string()
                                .lines()
                                .last()
                                .unwrap_or_default()
                                .trim()
                                .to_string();
                            if matches!(e, regex::Error::CompiledTooBig(_)) {
                                first.push_str(" (a repeated Unicode class such as \\w{10}? an ASCII class such as [A-Za-z0-9_] is far smaller)");
                            }
                            errors.push((
                                entry,
                                i,
                                format!("signature is not a valid regex: {first}"),
                            ));
                            None
                        }
                    },
                    None => None,
                };
                rules.push(Rule {
                    entry,
                    exclusion: ex,
                    clients: entry.clients(ex, &registry.settings),
                    glob,
                    signature,
                });
            }
        }
        let mut exact: FxHashMap<(&str, &str), Vec<usize>> = FxHashMap::default();
        let mut builders: FxHashMap<&str, (GlobSetBuilder, Vec<usize>)> = FxHashMap::default();
        for (i, r) in rules.iter().enumerate() {
            if r.exclusion.match_kind == MatchKind::Exact {
                exact
                    .entry((
                        r.exclusion.suite.as_str(),
                        r.exclusion.test.get_ref().as_str(),
                    ))
                    .or_default()
                    .push(i);
            } else if let Some(glob) = set_member(r) {
                let (set, members) = builders
                    .entry(r.exclusion.suite.as_str())
                    .or_insert_with(|| (GlobSetBuilder::new(), Vec::new()));
                set.add(glob);
                members.push(i);
            }
        }
        // Every member compiled on its own already: the set builds.
        let patterns = builders
            .into_iter()
            .filter_map(|(suite, (set, members))| Some((suite, (set.build().ok()?, members))))
            .collect();
        (
            Matcher {
                rules,
                exact,
                patterns,
            },
            errors,
        )
    }

    /// The first rule (in id order) covering this case.
    pub(crate) fn find(
        &self,
        suite: &str,
        test: &str,
        client: Option<&str>,
    ) -> Option<(usize, &Rule<'r>)> {
        let exact = self
            .exact
            .get(&(suite, test))
            .into_iter()
            .flatten()
            .copied();
        let patterns = self.patterns.get(suite).map(|(set, members)| {
            set.matches(test)
                .into_iter()
                .map(|m| members[m])
                .collect::<Vec<_>>()
        });
        exact
            .chain(patterns.into_iter().flatten())
            .filter(|&i| self.rules[i].matches(suite, test, client))
            .min()
            .map(|i| (i, &self.rules[i]))
    }
}
