//! The workflow corpus (`tests/fixtures/workflow-corpus/`): every case's findings must be exactly
//! its `expect` file. The scores of issue 12 are printed: exposed signing jobs found by the right
//! secret, and correct job-level flags.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;

/// `rule job secrets` per finding, sorted.
fn findings(case: &Path) -> Vec<String> {
    let out = run(warden(case).args(["audit", "--offline", "--format", "json"]));
    assert!(
        out.code == 0 || out.code == 1,
        "{}: {}",
        case.display(),
        out.stderr
    );
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let mut lines: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut secrets: Vec<&str> = f["secrets"]
                .as_array()
                .map(|s| s.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            secrets.sort();
            let secrets = if secrets.is_empty() {
                "-".to_string()
            } else {
                secrets.join(",")
            };
            format!(
                "{} {} {}",
                f["id"].as_str().unwrap(),
                f["location"]["job"].as_str().unwrap_or("-"),
                secrets
            )
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn every_corpus_case_has_exactly_its_expected_findings() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/workflow-corpus");
    let mut cases: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut wrong = BTreeMap::new();
    // Issue 12's scores, over `signing-secret-outside-environment` (and its unverifiable twin).
    let (mut exposed, mut found_right, mut flagged, mut flagged_right) = (0, 0, 0, 0);
    let outside = |l: &String| l.starts_with("signing-secret-outside-environment ");
    for case in &cases {
        let mut expected: Vec<String> = std::fs::read_to_string(case.join("expect"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        expected.sort();
        let got = findings(case);
        exposed += expected.iter().filter(|l| outside(l)).count();
        found_right += expected
            .iter()
            .filter(|l| outside(l) && got.contains(l))
            .count();
        flagged += got.iter().filter(|l| outside(l)).count();
        flagged_right += got
            .iter()
            .filter(|l| outside(l) && expected.contains(l))
            .count();
        if got != expected {
            wrong.insert(
                case.file_name().unwrap().to_string_lossy().into_owned(),
                (expected, got),
            );
        }
    }
    println!(
        "corpus: {} cases; exposed signing jobs found by the right secret {found_right}/{exposed}; correct flags {flagged_right}/{flagged}",
        cases.len()
    );
    assert!(
        wrong.is_empty(),
        "cases that differ (expected, got): {wrong:#?}"
    );
}
