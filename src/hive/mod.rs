//! hive results: a streaming suite-file reader (`suite`; `case_scan` reads one case, fast), the
//! classifier that judges every case against the known-issues registry (`classify`), what a run
//! came to (`outcome`), what changed between two runs (`diff`), a test's history over many runs
//! (`history`, `stream`), the pinned upstream (`pins`), the registry edits those runs propose
//! (`registry_update`), and `hive bisect`: its decisions (`bisect`), a probe run judged
//! (`probe`) and the bisection driven through GitHub Actions (`bisect_run`).

pub(crate) mod bisect;
pub(crate) mod bisect_run;
mod case_scan;
pub(crate) mod classify;
pub(crate) mod diff;
pub(crate) mod history;
pub(crate) mod outcome;
pub(crate) mod pins;
pub(crate) mod probe;
pub(crate) mod registry_update;
pub(crate) mod stream;
pub(crate) mod suite;
pub(crate) mod verdict;

pub use bisect_run::{bisect, BisectFinding, BisectOptions, BisectReport};
pub use classify::{classify_run, ClassifyOptions};
pub use diff::diff;
pub use history::{history, HistoryOptions};
pub use probe::Subject;
pub use registry_update::{plan as plan_update, UpdateOptions};
pub use suite::{read_suite, HiveCase, SuiteVisitor};

/// For the fuzz target `hive_case` only: panics if the fast case scanner takes `bytes` as
/// something serde_json reads differently.
#[doc(hidden)]
pub fn fuzz_case_scanner(bytes: &[u8]) {
    case_scan::agrees_with_serde(bytes);
}

/// For the fuzz target `bisect_artifacts` only: `bytes` judged as a probe's results artifact,
/// and as the suite file inside one.
#[doc(hidden)]
pub fn fuzz_probe_artifact(bytes: &[u8]) {
    probe::fuzz_artifact(bytes);
}
