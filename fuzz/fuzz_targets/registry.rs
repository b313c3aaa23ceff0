//! Registry loading and lint on arbitrary TOML entries.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::known_issues::{lint, Registry};

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let ki = dir.path().join("known_issues");
    std::fs::create_dir(&ki).unwrap();
    std::fs::write(ki.join("fuzzed-entry.toml"), data).unwrap();
    let (registry, problems) = Registry::load(&ki);
    let _ = lint(&registry, dir.path(), problems, false);
    let _ = release_warden::known_issues::render_doc(&registry);
});
