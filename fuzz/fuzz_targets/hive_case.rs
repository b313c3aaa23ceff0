//! The fast case scanner against serde_json: whatever it takes, serde_json reads the same.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    release_warden::hive::fuzz_case_scanner(data);
});
