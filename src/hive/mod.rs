//! hive results: a streaming suite-file reader (`suite`), the classifier that judges every case
//! against the known-issues registry (`classify`), what a run came to (`outcome`), and what
//! changed between two runs (`diff`).

pub mod classify;
pub mod diff;
pub mod history;
pub mod outcome;
pub mod pins;
pub mod stream;
pub mod suite;
