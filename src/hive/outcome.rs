//! What a hive run came to: each reported case's outcome, a summary per suite file, and the
//! report `warden hive check` renders.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use super::pins::{PinCheck, RunSources};
use super::verdict::TestClass;

/// What one case of one run came to against the registry: a verdict in the one vocabulary
/// ([`TestClass`]: `new`, `fixed`, `flaky`, `expected`), or a condition of the run itself that no
/// history has a word for (`wrong failure`, `missing`, `infra`, `empty run`, `skipped but ran`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Outcome {
    /// `new` (not listed, failed), `fixed` (listed `fail`, passed: the entry should go),
    /// `expected` (listed `fail`, failed as it says) or `flaky` (listed `flaky`).
    Verdict(TestClass),
    /// Listed `fail` with a signature, failed for another reason.
    WrongFailure,
    /// Listed (or expected), absent from the run.
    Missing,
    /// `client launch` failed, a `multiTestContext` case failed, or a timeout.
    Infra,
    /// A suite with no real cases, or no suite file at all.
    EmptyRun,
    /// Listed `skip` but run anyway.
    SkippedRan,
    Pass,
}

impl Outcome {
    pub(crate) const NEW: Outcome = Outcome::Verdict(TestClass::New);
    pub(crate) const FIXED: Outcome = Outcome::Verdict(TestClass::Fixed);
    pub(crate) const EXPECTED: Outcome = Outcome::Verdict(TestClass::Expected);
    pub(crate) const FLAKY: Outcome = Outcome::Verdict(TestClass::Flaky);

    pub(crate) fn is_error(self, allow_missing: bool) -> bool {
        match self {
            Outcome::NEW
            | Outcome::WrongFailure
            | Outcome::FIXED
            | Outcome::Infra
            | Outcome::EmptyRun => true,
            Outcome::Missing => !allow_missing,
            _ => false,
        }
    }

    /// Its word: a verdict's is the class's own label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Outcome::Verdict(class) => class.label(),
            Outcome::WrongFailure => "wrong failure",
            Outcome::Missing => "missing",
            Outcome::Infra => "infra",
            Outcome::EmptyRun => "empty run",
            Outcome::SkippedRan => "skipped but ran",
            Outcome::Pass => "pass",
        }
    }

    /// The order reports and counts list outcomes in: what fails the check first.
    fn rank(self) -> (u8, Option<TestClass>) {
        let rank = match self {
            Outcome::NEW => 0,
            Outcome::WrongFailure => 1,
            Outcome::FIXED => 2,
            Outcome::Missing => 3,
            Outcome::Infra => 4,
            Outcome::EmptyRun => 5,
            Outcome::EXPECTED => 6,
            Outcome::FLAKY => 7,
            Outcome::Verdict(_) => 8,
            Outcome::SkippedRan => 9,
            Outcome::Pass => 10,
        };
        (
            rank,
            if let Outcome::Verdict(c) = self {
                Some(c)
            } else {
                None
            },
        )
    }
}

impl Ord for Outcome {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Outcome {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// JSON names an outcome by its kebab-case word (`"new"`, `"wrong-failure"`), as a value and as
/// a key of `counts`.
impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.label().replace(' ', "-"))
    }
}

/// A case worth reporting (everything but an unlisted pass).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CaseResult {
    pub(crate) suite: String,
    pub(crate) name: String,
    pub(crate) outcome: Outcome,
    /// The registry entry involved, and its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entry: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entry_file: Option<PathBuf>,
    /// Whether the case passed in this run (for listed cases).
    pub(crate) passed: bool,
    pub(crate) message: String,
    /// First lines of the failure text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
}

impl CaseResult {
    /// A result no registry entry is involved in (an empty run, a test missing from the run).
    pub(crate) fn unlisted(
        suite: String,
        name: String,
        outcome: Outcome,
        message: impl Into<String>,
    ) -> Self {
        CaseResult {
            suite,
            name,
            outcome,
            entry: None,
            entry_file: None,
            passed: false,
            message: message.into(),
            text: None,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct SuiteSummary {
    pub(crate) file: PathBuf,
    pub(crate) name: String,
    pub(crate) clients: BTreeSet<String>,
    /// Tests of the suite (as `hive history` and `hive diff` count them), and how they went.
    pub(crate) cases: usize,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    /// Client launch and shared-client lifecycle cases, not tests: counted apart.
    pub(crate) lifecycle: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct HiveReport {
    pub(crate) dir: PathBuf,
    pub(crate) suites: Vec<SuiteSummary>,
    /// Every non-pass outcome, in suite-file order then name order.
    pub(crate) results: Vec<CaseResult>,
    /// Names of passing cases (kept only when asked, e.g. for JUnit).
    #[serde(skip)]
    pub(crate) passes: Vec<(String, String)>,
    pub(crate) counts: BTreeMap<Outcome, usize>,
    pub(crate) allow_missing: bool,
    pub(crate) upstream: BTreeMap<String, String>,
    /// What the run records of its sources (hive commit, client versions, build arguments).
    pub(crate) sources: RunSources,
    /// Each `[upstream]` pin against the run.
    pub(crate) pins: Vec<PinCheck>,
    /// Pins the run does not match: "hive: the run used X, the registry pins Y".
    pub(crate) pin_mismatches: Vec<String>,
    /// `--require-pins`: a pin mismatch fails the check.
    pub(crate) require_pins: bool,
    /// `--verbose`: the text lists every excused case, not one line per registry entry.
    #[serde(skip)]
    pub verbose: bool,
}

impl HiveReport {
    pub(crate) fn failed(&self) -> bool {
        self.results
            .iter()
            .any(|r| r.outcome.is_error(self.allow_missing))
            || (self.require_pins && !self.pin_mismatches.is_empty())
    }

    pub(crate) fn exit_code(&self) -> u8 {
        u8::from(self.failed())
    }
}
