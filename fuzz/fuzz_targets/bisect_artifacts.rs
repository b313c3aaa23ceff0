//! A `hive bisect` probe's results artifact, hostile: the bytes as the zip GitHub served, and as
//! the one suite file of a well-formed zip. Never a panic, a loop or an unbounded allocation;
//! whatever it holds is a pass, a failure or an invalid probe.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    release_warden::hive::fuzz_probe_artifact(data);
});
