//! One file per command: parse → one library call → emit.

pub mod audit;
pub mod check;
pub mod completions;
pub mod hive;
pub mod keygen;
pub mod known_issues;
pub mod sign;
pub mod verify;
