//! The known-issues registry: `known_issues/<id>.toml`, one file per issue, plus
//! `known_issues/registry.toml` for registry-wide settings. It is the single source of truth for
//! the generated doc (`doc`), the excluded-test lists (`exclusions`) and the hive result checker
//! (`matcher`, used by `hive::classify`). `schema` loads it strictly, `lint` checks it against
//! the repository, and `diagnostic` is the problem both report.

pub(crate) mod diagnostic;
pub(crate) mod doc;
pub(crate) mod exclusions;
pub(crate) mod import;
pub(crate) mod lint;
pub(crate) mod matcher;
pub(crate) mod schema;

pub use doc::{doc_path, render as render_doc_file, render_doc, DocOutcome};
pub use exclusions::{read_test_list, render as render_exclusions, ExclusionFormat, Query};
pub use import::{import, init, origin_name, ImportFormat};
pub use lint::lint_registry;
pub use schema::{Expect, DEFAULT_DIR};

pub use lint::lint;
pub use schema::Registry;
