//! The offline workflow audit on arbitrary YAML.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::audit::workflow_checks;
use release_warden::audit::audit_workflows;
use release_warden::audit::SigningSecrets;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join(".github/workflows");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(wf.join("fuzzed.yml"), data).unwrap();
    let _ = audit_workflows(dir.path(), &SigningSecrets::default(), &workflow_checks());
});
