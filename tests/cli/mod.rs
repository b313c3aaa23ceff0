//! The binary as a whole: help, `check`, `--root`, README examples, bad input, attacks, faults,
//! whole outputs, and the code's layout.

mod action;
mod attacks;
mod bad_corpus;
mod bad_input;
mod check;
mod faults;
mod first_hour;
mod formats;
mod fuzz_regressions;
mod help;
mod install;
mod layout;
mod quick_starts;
mod readme;
mod root;
mod whole_output;
