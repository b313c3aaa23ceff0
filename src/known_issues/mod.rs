//! The known-issues registry: `known_issues/<id>.toml`, one file per issue, plus
//! `known_issues/registry.toml` for registry-wide settings. It is the single source of truth for
//! the generated doc (`doc`), the excluded-test lists (`exclusions`) and the hive result checker
//! (`matcher`, used by `hive::classify`). `schema` loads it strictly, `lint` checks it against
//! the repository, and `diagnostic` is the problem both report.

pub(crate) mod diagnostic;
pub mod doc;
pub mod exclusions;
pub mod import;
pub mod lint;
pub(crate) mod matcher;
pub mod schema;

pub use lint::lint;
pub use schema::Registry;
