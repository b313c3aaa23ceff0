//! The known-issues registry: `known_issues/<id>.toml`, one file per issue, plus
//! `known_issues/registry.toml` for registry-wide settings. It is the single source of truth for
//! the generated `docs/known_issues.md`, the excluded-test lists and the hive result checker.

pub mod exclusions;
pub mod lint;
pub mod matcher;
pub mod render;
pub mod schema;
pub mod summary;

pub use lint::{lint, Diagnostic};
pub use schema::{Entry, Exclusion, Expect, MatchKind, Registry, Settings, Status};

/// File name of the registry-wide settings inside the registry folder.
pub const SETTINGS_FILE: &str = "registry.toml";
/// The folder warden reads by default.
pub const DEFAULT_DIR: &str = "known_issues";
