//! `--baseline FILE` and `--resume FILE`: an arbitrary JSON document loads or is refused with
//! an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::audit::Baseline;
use release_warden::audit::Resume;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.json");
    std::fs::write(&file, data).unwrap();
    if let Ok(b) = Baseline::load(&file) {
        let _ = b.lists_unreadable("o/r", "x");
    }
    let _ = Resume::load(&file, "o");
});
