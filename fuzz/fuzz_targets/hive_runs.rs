//! `hive diff` and `hive history` over two runs whose suite files are arbitrary bytes (split on
//! a `\0` byte): an error or a report, never a panic, whatever the names and duplicates.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::hive::diff;
use release_warden::hive::{history, HistoryOptions};
use release_warden::known_issues::Registry;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let mut parts = data.splitn(2, |b| *b == 0);
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    for (run, part) in [(&old, parts.next()), (&new, parts.next())] {
        std::fs::create_dir_all(run).unwrap();
        std::fs::write(run.join("1-suite.json"), part.unwrap_or_default()).unwrap();
    }
    let _ = diff(&old, &new);
    let registry = Registry::default();
    let _ = history(&[old, new], &registry, &HistoryOptions::default());
});
