//! GitHub's GraphQL answers to `audit --org` (trees, rulesets, blob texts), as hostile as any API
//! answer: turned into REST answers without a panic, and a blob primed only when its text hashes
//! to its id.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    release_warden::github::fuzz_graphql_answer(data);
});
