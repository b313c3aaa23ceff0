//! GitHub: the REST client and the answers it gives (`api`), the one session that connects
//! (`session`), every route warden uses (`routes`), the settings writes of `--apply`
//! (`changes`), snapshots of answers (`snapshot`), the sticky PR comment (`comments`), which
//! repository a command is about (`repository`), an organisation's repositories and their files
//! (`org`, with `graphql` answering many repositories' reads in one query), published releases (`releases`), the repository settings the audit judges
//! (`settings`), and the Actions runner's environment (`actions`). What the rest of warden gets
//! are typed answers and [`api::ApiError`]; routes and raw JSON stay here.

pub(crate) mod actions;
pub(crate) mod api;
pub(crate) mod attestations;
pub(crate) mod changes;
pub(crate) mod comments;
mod git_object;
pub(crate) mod graphql;
pub(crate) mod memo;
pub(crate) mod org;
pub(crate) mod records;
pub(crate) mod releases;
pub(crate) mod repository;
mod routes;
pub(crate) mod runs;
pub(crate) mod session;
pub(crate) mod settings;
pub(crate) mod snapshot;
pub(crate) mod workflow_runs;

pub use actions::ActionsEnv;
pub use api::{
    api_base, ApiSource, Fetched, LiveApi, ResponseCache, RetryPolicy, Shape, Token, WaitNotice,
    Waiting, DEFAULT_RATE_LIMIT_WAIT,
};
pub use comments::{post, Posted, Upsert};
pub use releases::{download_deadline, download_within, repo_keys, Asset, ReleaseSource};
pub use repository::repository_name;
pub use session::{Endpoint, Session};

/// For the fuzz target `graphql_answers` only: an arbitrary answer to the organisation audit's
/// GraphQL queries, turned into REST answers as the audit primes them.
#[doc(hidden)]
pub fn fuzz_graphql_answer(data: &[u8]) {
    graphql::fuzz_answer(data);
}
