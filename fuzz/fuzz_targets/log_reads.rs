//! What a transparency log served by someone else makes warden read: a checkpoint note with its
//! signatures and cosignatures, hash tiles, entry bundles and their entries, a proof beside a
//! signature (`verify --require-log --log URL`, `log verify`, `log witness`, `log monitor`).
//! Never a panic, a loop or an unbounded allocation. The seed corpus is a valid one-entry log.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    release_warden::log::fuzz_log_reads(data);
});
