//! GitHub: the REST client and the answers it gives (`api`), the one session that connects
//! (`session`), every route warden uses (`routes`), snapshots of answers (`snapshot`), the
//! sticky PR comment (`comments`), which repository a command is about (`repository`), an
//! organisation's repositories and their files (`org`), and the Actions runner's environment
//! (`actions`).

pub mod actions;
pub mod api;
pub mod comments;
pub mod org;
pub mod releases;
pub mod repository;
pub mod routes;
pub mod session;
pub mod snapshot;
