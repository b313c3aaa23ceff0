//! `warden hive check`, `diff` and `history` on real and generated runs.

mod bisect;
mod check;
mod diff;
mod history;
mod html;
mod verdicts;
