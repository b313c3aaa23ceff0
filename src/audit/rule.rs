//! What an audit rule is, as the value every finding carries: its id (the only name it has:
//! JSON, SARIF `ruleId`, the README table, `.github/warden.toml`), the severity its findings
//! carry, a one-line description (SARIF) and the README's explanation. The rules themselves,
//! one file each with their check, are listed in `rules/mod.rs`.

use std::fmt;

use serde::Serialize;

use super::severity::Severity;

/// A rule's metadata, written once in the rule's own file.
#[derive(Debug)]
pub struct Meta {
    /// The stable kebab-case id.
    pub(crate) id: &'static str,
    /// The severity of the rule's findings. `unverifiable` findings carry the severity of the
    /// check that could not be made instead.
    pub(crate) severity: Severity,
    /// One line on what a finding of this rule means (SARIF's short description).
    pub(crate) description: &'static str,
    /// The README table's explanation: what exactly the rule looks for.
    pub(crate) explanation: &'static str,
}

/// A rule: its metadata, compared and ordered by id.
#[derive(Clone, Copy)]
pub struct Rule(pub &'static Meta);

impl Rule {
    pub fn id(self) -> &'static str {
        self.0.id
    }

    pub(crate) fn description(self) -> &'static str {
        self.0.description
    }

    pub fn explanation(self) -> &'static str {
        self.0.explanation
    }

    pub fn default_severity(self) -> Severity {
        self.0.severity
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Rule {}

impl PartialOrd for Rule {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rule {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.id().cmp(other.id())
    }
}

impl std::hash::Hash for Rule {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}
