//! GitHub: the REST client and the answers it gives (`api`), the one session that connects
//! (`session`), every route warden uses (`routes`), the settings writes of `--apply`
//! (`changes`), snapshots of answers (`snapshot`), the sticky PR comment (`comments`), which
//! repository a command is about (`repository`), an organisation's repositories and their files
//! (`org`), published releases (`releases`), the repository settings the audit judges
//! (`settings`), and the Actions runner's environment (`actions`). What the rest of warden gets
//! are typed answers and [`api::ApiError`]; routes and raw JSON stay here.

pub mod actions;
pub mod api;
pub(crate) mod changes;
pub mod comments;
mod git_object;
pub(crate) mod org;
pub mod releases;
pub mod repository;
mod routes;
pub mod runs;
pub mod session;
pub(crate) mod settings;
pub(crate) mod snapshot;
