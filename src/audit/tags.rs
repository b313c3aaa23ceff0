//! Release tags: the patterns a signing workflow runs on, the sample tags each stands for, and
//! whether a ruleset, legacy protection or deployment policy pattern covers them all.

use crate::github::settings::{LegacyProtection, Ruleset};
/// fnmatch as GitHub applies it to ref patterns: `*` does not cross `/`, `**` does.
pub(crate) fn ref_glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The characters of a glob class body (`0-9a-f_`), ranges expanded.
fn class_members(class: &str) -> Vec<char> {
    let chars: Vec<char> = class.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 2 < chars.len() && chars[i + 1] == '-' && chars[i] <= chars[i + 2] {
            out.extend(chars[i]..=chars[i + 2]);
            i += 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Tags that a release tag pattern stands for, to test rule patterns against. A rule covers the
/// release tags only if it matches every sample: `v1.*` does not cover `v*`, because
/// `v99.0.0-rc.1` and `vx` are release tags too (any such tag runs the release workflow).
pub(crate) fn sample_tags(pattern: &str) -> Vec<String> {
    const STAR: [&str; 3] = ["1.2.3", "99.0.0-rc.1", "x"];
    const ONE: [char; 3] = ['1', '9', 'x'];
    // A sample must match its own pattern; `X+` is checked as `X*` (globs have no `+`).
    let own = ref_glob(&pattern.replace('+', "*"));
    let samples: Vec<String> = (0..3)
        .map(|k| {
            let mut out = String::new();
            let mut chars = pattern.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '*' => {
                        while chars.peek() == Some(&'*') {
                            chars.next();
                        }
                        out.push_str(STAR[k]);
                    }
                    '?' => out.push(ONE[k]),
                    // GitHub's filter syntax: one or more of the previous character, and one
                    // has just been written.
                    '+' => {}
                    // A class: its first, middle or last member (a negated class gets a digit
                    // or a letter it does not name).
                    '[' => {
                        let class: String = chars.by_ref().take_while(|&c| c != ']').collect();
                        match class.strip_prefix(['!', '^']) {
                            Some(negated) => out.extend(
                                ['0', 'a', 'Z', '_']
                                    .into_iter()
                                    .find(|c| !negated.contains(*c)),
                            ),
                            None => {
                                let members = class_members(&class);
                                out.extend(members.get(k * members.len().saturating_sub(1) / 2));
                            }
                        }
                    }
                    '\\' => out.extend(chars.next()),
                    c => out.push(c),
                }
            }
            out
        })
        .collect();
    let mut kept: Vec<String> = samples
        .into_iter()
        .filter(|s| own.as_ref().is_none_or(|g| g.is_match(s)))
        .collect();
    kept.dedup();
    if kept.is_empty() {
        kept.push(pattern.to_string());
    }
    kept
}

/// The release tag patterns, and the sample tags (`refs/tags/…`) a protection must cover.
#[derive(Clone, Debug)]
pub(crate) struct ReleaseTags {
    patterns: Vec<String>,
    samples: Vec<String>,
}

impl ReleaseTags {
    pub(crate) fn new(patterns: &[String]) -> Self {
        ReleaseTags {
            patterns: patterns.to_vec(),
            samples: patterns
                .iter()
                .flat_map(|p| sample_tags(p))
                .map(|t| format!("refs/tags/{t}"))
                .collect(),
        }
    }

    /// The patterns as a reader sees them: `v*, release-*`.
    pub(crate) fn listed(&self) -> String {
        self.patterns.join(", ")
    }

    /// The pattern a remediation proposes (the first one).
    pub(crate) fn first(&self) -> &str {
        self.patterns.first().map_or("v*", String::as_str)
    }

    /// The first release tag (without `refs/tags/`) that `covers` rejects; `covers` is asked
    /// about `refs/tags/…` names.
    pub(crate) fn missed(&self, covers: impl Fn(&str) -> bool) -> Option<&str> {
        self.samples
            .iter()
            .find(|s| !covers(s))
            .map(|s| s.trim_start_matches("refs/tags/"))
    }
}

/// Whether a ruleset's `ref_name` condition covers `tag_ref` (`refs/tags/…`).
pub(crate) fn ruleset_covers(rs: &Ruleset, tag_ref: &str) -> bool {
    let (include, exclude) = rs.ref_patterns();
    let matches = |p: &String| p == "~ALL" || ref_glob(p).is_some_and(|g| g.is_match(tag_ref));
    include.iter().any(matches) && !exclude.iter().any(matches)
}

/// An active ruleset that covers every release tag.
pub(crate) fn ruleset_protects(rs: &Ruleset, tags: &ReleaseTags) -> bool {
    rs.is_active() && tags.missed(|t| ruleset_covers(rs, t)).is_none()
}

/// Why a legacy tag protection leaves some release tag unprotected; `None` when it protects
/// them all.
pub(crate) fn legacy_gap(p: &LegacyProtection, tags: &ReleaseTags) -> Option<String> {
    let Some(pattern) = &p.pattern else {
        return Some("no pattern".into());
    };
    let Some(glob) = ref_glob(&format!("refs/tags/{pattern}")) else {
        return Some("not a valid pattern".into());
    };
    if let Some(tag) = tags.missed(|t| glob.is_match(t)) {
        return Some(format!("does not cover {tag}"));
    }
    (p.enabled == Some(false)).then(|| "disabled".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_patterns_follow_fnmatch() {
        let g = ref_glob("refs/tags/v*").unwrap();
        assert!(g.is_match("refs/tags/v1.2.3"));
        assert!(!g.is_match("refs/tags/v1/x"), "* does not cross /");
        assert!(!g.is_match("refs/tags/pkg-v1"));
        assert_eq!(sample_tags("v*"), ["v1.2.3", "v99.0.0-rc.1", "vx"]);
        assert_eq!(
            sample_tags("v[0-9]+.[0-9]+.[0-9]+"),
            ["v0.0.0", "v4.4.4", "v9.9.9"]
        );
        for pattern in [
            "v*.*.*-*",
            "v[0-9]*",
            "release-?",
            "v[!a-z]*",
            "v**",
            "v1.0.0",
        ] {
            let samples = sample_tags(pattern);
            assert!(!samples.is_empty());
            for s in samples {
                assert!(ref_glob(pattern).unwrap().is_match(&s), "{pattern}: {s}");
            }
        }
        // A narrower rule pattern misses at least one sample.
        for (release, rule) in [
            ("v*", "v1.*"),
            ("v*", "v[0-9]*"),
            ("v*", "v*.*"),
            ("v[0-9]+.[0-9]+.[0-9]+", "v0.*"),
        ] {
            let g = ref_glob(rule).unwrap();
            assert!(
                !sample_tags(release).iter().all(|s| g.is_match(s)),
                "{rule} must not cover {release}"
            );
        }
        let wider = ref_glob("v**").unwrap();
        assert!(sample_tags("v*").iter().all(|s| wider.is_match(s)));
    }
}
