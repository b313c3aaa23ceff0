//! API answers as a snapshot replays them: an organisation's listing, its trees and blobs, the
//! settings reads and a release with its assets, each an arbitrary JSON document. The org audit
//! and `verify --release --snapshot` must never panic, write outside their folders, or pass
//! what they could not read.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::audit::{run_org, OrgRequest, OrgSource};
use release_warden::github::ReleaseSource;
use release_warden::published::{verify_release, ReleaseRequest};
use release_warden::{trust::TrustedKeys, verdict::VerifyOptions};

/// The routes the answers are written to, in input order (parts split on a `\0` byte).
const ROUTES: &[&str] = &[
    "orgs/o/repos",
    "repos/o/r/git/trees/HEAD",
    "repos/o/r/git/trees/1111111111111111111111111111111111111111",
    "repos/o/r/git/blobs/2222222222222222222222222222222222222222",
    "repos/o/r/rulesets",
    "repos/o/r/environments",
    "repos/o/r/actions/secrets",
    "orgs/o/actions/secrets",
    "repos/o/r/releases",
    "repos/o/r/releases/tags/v1",
    "repos/o/r/commits/v1",
    "repos/o/r/releases/1/assets",
    "repos/o/r/releases/assets/1",
];

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap");
    for (route, part) in ROUTES.iter().zip(data.split(|b| *b == 0)) {
        let file = snap.join(format!("{route}.json"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, part).unwrap();
    }
    let req = OrgRequest {
        org: "o".into(),
        include_archived: true,
        include_forks: true,
        matching: Vec::new(),
        only: None,
        jobs: 1,
        secrets: Default::default(),
        fallback_tag_patterns: vec!["v*".into()],
        fail_on: release_warden::audit::Severity::Medium,
        releases: 1,
        deep: false,
        reserve: 0,
        resume: None,
        progress: None,
        // The key inventory reads the same answers (and builds its table from them).
        inventory: true,
    };
    if let Ok(report) = run_org(&OrgSource::Snapshot(snap.clone()), &req, None) {
        let _ = release_warden::audit::inventory(&report, 1, 0, dir.path());
    }
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // This repository's own public key, given inline: a release signed by anyone else fails.
    let keys = TrustedKeys::load_files(&["RWRUu7bcibEdmPKr00AxCGY6ZYq+ZKNsDTVy74H20o0IY6QvRTasZLMW".into()])
        .unwrap();
    let req = ReleaseRequest {
        repo: "o/r".into(),
        tag: "v1".into(),
        out: Some(out.join("release")),
        from: ReleaseSource::Snapshot(snap),
        opts: VerifyOptions {
            checksums_name: None,
            ..VerifyOptions::default()
        },
        progress: None,
    };
    if let Ok(report) = verify_release(&req, keys) {
        // Nothing it could not read passes.
        assert_ne!(report.exit_code(), 0, "{report:?}");
    }
    // Downloads land in the output folder only.
    assert!(std::fs::read_dir(dir.path()).unwrap().count() <= 2);
});
