//! `known-issues update`: the registry editor on an arbitrary entry (TOML bytes) and a run in
//! which two tests fail and one passes. It plans edits or refuses the registry; every file it
//! would write is one the registry then loads.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::hive::{history, HistoryOptions};
use release_warden::hive::{plan_update as plan, UpdateOptions};
use release_warden::known_issues::Registry;

const RUN: &str = r#"{"name": "rpc-compat", "testCases": {
  "1": {"name": "eth_call/a (ethrex)", "summaryResult": {"pass": false, "details": "boom 1"}},
  "2": {"name": "eth_call/b (ethrex)", "summaryResult": {"pass": true}},
  "3": {"name": "eth_getLogs/c (ethrex)", "summaryResult": {"pass": false, "details": "bad 0x1f"}}}}"#;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let ki = dir.path().join("known_issues");
    let run = dir.path().join("run");
    std::fs::create_dir_all(&ki).unwrap();
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(ki.join("fuzzed-entry.toml"), data).unwrap();
    std::fs::write(run.join("1.json"), RUN).unwrap();
    let (registry, problems) = Registry::load(&ki);
    if !problems.is_empty() {
        return;
    }
    let Ok(h) = history(&[run], &registry, &HistoryOptions::default()) else {
        return;
    };
    let opts = UpdateOptions {
        today: "2026-12-02".into(),
        ..UpdateOptions::default()
    };
    if let Ok(mut update) = plan(&registry, &h, &opts) {
        let _ = update.diff();
        if update.write().is_ok() {
            let (_, problems) = Registry::load(&ki);
            // Drafts are refused by lint, not by the loader: what was written loads.
            assert!(problems.is_empty(), "{problems:?}");
        }
    }
});
