//! release-warden: release integrity and known issues for maintainers.
//!
//! The library returns values and errors and never prints; the `warden` binary
//! (`src/bin/warden/`) parses flags, reads the environment once, calls one library function per
//! command and emits its report.
//!
//! - `release`: minisign keys and signatures, `SHA256SUMS`, keygen / sign / verify, the one place
//!   trust is decided (`release::trust`) and the one verdict of a published release.
//! - `published`: a published release read through `github` and judged: `verify --release` and
//!   the audit's release check take this one path.
//! - `audit`: workflow and settings audits, findings, the fix plan.
//! - `github`: the API session, routes, snapshots, the PR comment, the Actions runner.
//! - `known_issues`: the registry, its lint, matcher, exclusions and doc.
//! - `hive`: the streaming suite reader and the classifier.
//! - `repo_check`: `warden check`.
//! - `report`: one `Report` trait and its renderers; `markup`: escaping for what interprets text.
//! - `files`: atomic writes, guarded reads, path rules; `yaml`: YAML from a pull request, parsed
//!   within a budget (workflows and imported registries); `error`: the one error type; `util`:
//!   hex, a parallel map, today's date (a leaf).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod attest;
pub mod audit;
pub mod error;
pub mod files;
pub mod github;
pub mod hive;
pub mod known_issues;
pub mod log;
pub mod log_monitor;
pub mod markup;
pub mod minisign;
pub mod published;
pub mod release;
pub mod repo_check;
pub mod report;
pub mod trust;
pub mod util;
pub mod verdict;
mod yaml;

pub use error::{Error, Result};
