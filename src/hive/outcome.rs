//! What a hive run came to: each reported case's outcome, a summary per suite file, and the
//! report `warden hive check` renders.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use super::pins::{PinCheck, RunSources};
use super::verdict::TestClass;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Outcome {
    /// Not listed, failed: `new`, as `hive history` calls a failure the registry does not know.
    New,
    /// Listed `fail` with a signature, failed for another reason.
    WrongFailure,
    /// Listed `fail`, passed: `fixed` (the entry should go).
    Fixed,
    /// Listed (or expected), absent from the run.
    Missing,
    /// `client launch` failed, a `multiTestContext` case failed, or a timeout.
    Infra,
    /// A suite with no real cases, or no suite file at all.
    EmptyRun,
    /// Listed `fail`, failed as expected: `expected`.
    Expected,
    /// Listed `flaky`.
    Flaky,
    /// Listed `skip` but run anyway.
    SkippedRan,
    Pass,
}

impl Outcome {
    pub(crate) fn is_error(self, allow_missing: bool) -> bool {
        match self {
            Outcome::New
            | Outcome::WrongFailure
            | Outcome::Fixed
            | Outcome::Infra
            | Outcome::EmptyRun => true,
            Outcome::Missing => !allow_missing,
            _ => false,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            // The verdict words `hive history`, the PR summary and `update` use.
            Outcome::New => TestClass::New.label(),
            Outcome::WrongFailure => "wrong failure",
            Outcome::Fixed => TestClass::Fixed.label(),
            Outcome::Missing => "missing",
            Outcome::Infra => "infra",
            Outcome::EmptyRun => "empty run",
            Outcome::Expected => super::verdict::EXPECTED,
            Outcome::Flaky => TestClass::Flaky.label(),
            Outcome::SkippedRan => "skipped but ran",
            Outcome::Pass => "pass",
        }
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
