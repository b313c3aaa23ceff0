//! What a witness server reads from the network (`warden log witness --serve`: an
//! `add-checkpoint` body, decided against its state) and what `warden log cosign` reads from a
//! witness (a cosignature line merged into the checkpoint). Never a panic, a loop or an unbounded
//! allocation, and a parsed request writes back the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    release_warden::log::fuzz_witness_request(data);
});
