//! hive results: a streaming suite-file reader (`suite`), the classifier that judges every case
//! against the known-issues registry (`classify`), and what a run came to (`outcome`).

pub mod classify;
pub mod outcome;
pub mod suite;
