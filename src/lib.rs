//! release-warden: release integrity and known issues for maintainers.
//!
//! The library returns values and errors and never prints; `src/main.rs` renders them.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod audit;
pub mod check;
pub mod error;
pub mod fsutil;
pub mod github;
pub mod hive;
pub mod known_issues;
pub mod release;
pub mod report;

pub use error::{Error, Result};
