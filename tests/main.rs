//! warden's integration tests: one binary (one link of the library), a module per area, and the
//! helpers in `common` once. Most tests run the real `warden` binary; fixtures are under
//! `tests/fixtures/` with their provenance notes.

mod common;

mod audit;
mod cli;
mod hive;
mod known_issues;
mod log;
mod release;
