//! hive results: a streaming suite-file reader and the checker that classifies every case
//! against the known-issues registry.

pub mod check;
pub mod suite;
