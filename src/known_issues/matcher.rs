//! Matching hive test names against the registry's exclusions.

use globset::{Glob, GlobMatcher};
use regex::Regex;
use rustc_hash::FxHashMap;

use super::schema::{Entry, Exclusion, Expect, MatchKind, Registry};

/// An exclusion ready to match: glob and signature compiled once.
#[derive(Debug)]
pub struct Rule<'r> {
    pub entry: &'r Entry,
    pub exclusion: &'r Exclusion,
    pub clients: &'r [String],
    glob: Option<GlobMatcher>,
    pub signature: Option<Regex>,
}

impl<'r> Rule<'r> {
    pub fn expect(&self) -> Expect {
        self.exclusion.expect
    }

    pub fn pattern(&self) -> &str {
        self.exclusion.test.get_ref()
    }

    /// Whether the rule covers `test` (name without the client suffix) in `suite` for `client`.
    /// A case without a client suffix, or a rule without clients, matches any client.
    pub fn matches(&self, suite: &str, test: &str, client: Option<&str>) -> bool {
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

    pub fn matches_name(&self, test: &str) -> bool {
        let pattern = self.pattern();
        match self.exclusion.match_kind {
            MatchKind::Exact => test == pattern,
            MatchKind::Prefix => test.starts_with(pattern),
            MatchKind::Glob => self.glob.as_ref().is_some_and(|g| g.is_match(test)),
        }
    }
}

/// All rules of a registry, with exact names indexed for large runs.
#[derive(Debug)]
pub struct Matcher<'r> {
    pub rules: Vec<Rule<'r>>,
    /// Exact names, looked up once per case: a fast non-DoS-resistant hash is fine for our own keys.
    exact: FxHashMap<(&'r str, &'r str), Vec<usize>>,
    patterns: Vec<usize>,
}

/// Why a rule could not be compiled: (entry, exclusion index, message).
pub type CompileError<'r> = (&'r Entry, usize, String);

impl<'r> Matcher<'r> {
    /// Compiles every rule; fails when any glob or signature does not compile.
    pub fn new(registry: &'r Registry) -> Result<Self, Vec<CompileError<'r>>> {
        let (matcher, errors) = Self::compile(registry);
        if errors.is_empty() {
            Ok(matcher)
        } else {
            Err(errors)
        }
    }

    /// Compiles what it can (a broken glob matches nothing, a broken signature is dropped) and
    /// returns the errors alongside, so lint can report them and still check the rest.
    pub fn compile(registry: &'r Registry) -> (Self, Vec<CompileError<'r>>) {
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
                    Some(s) => match Regex::new(s.get_ref()) {
                        Ok(r) => Some(r),
                        Err(e) => {
                            let first = e
                                .to_string()
                                .lines()
                                .last()
                                .unwrap_or_default()
                                .trim()
                                .to_string();
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
        let mut patterns = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            if r.exclusion.match_kind == MatchKind::Exact {
                exact
                    .entry((
                        r.exclusion.suite.as_str(),
                        r.exclusion.test.get_ref().as_str(),
                    ))
                    .or_default()
                    .push(i);
            } else {
                patterns.push(i);
            }
        }
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
    pub fn find(
        &self,
        suite: &str,
        test: &str,
        client: Option<&str>,
    ) -> Option<(usize, &Rule<'r>)> {
        let exact = self.exact.get(&(suite, test)).into_iter().flatten();
        exact
            .chain(self.patterns.iter())
            .copied()
            .filter(|&i| self.rules[i].matches(suite, test, client))
            .min()
            .map(|i| (i, &self.rules[i]))
    }
}
