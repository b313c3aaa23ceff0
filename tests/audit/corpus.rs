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

/// One job's label in `tests/fixtures/labelled-corpus/<case>/labels.toml`.
#[derive(serde::Deserialize)]
struct Labelled {
    workflow: String,
    job: String,
    label: String,
    #[serde(default)]
    keys: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Labels {
    #[serde(default)]
    job: Vec<Labelled>,
}

/// The findings that say a job's key is reachable without an environment's protection.
const EXPOSING: [&str; 4] = [
    "signing-secret-outside-environment",
    "signing-secrets-inherit",
    "signing-secret-to-remote-workflow",
    "secrets-context-to-untrusted-code",
];

/// What warden said about one labelled job: the secrets of the findings that expose it, whether
/// an `unverifiable` finding names its expression environment, and every key finding at it.
#[derive(Default)]
struct Said {
    exposing: Option<Vec<String>>,
    expression: bool,
    about_keys: Vec<String>,
}

/// The findings of `doc` per (workflow file name, job).
fn said_per_job(doc: &serde_json::Value) -> BTreeMap<(String, String), Said> {
    let mut said: BTreeMap<(String, String), Said> = BTreeMap::new();
    for f in doc["findings"].as_array().unwrap() {
        let loc = &f["location"];
        let Some(job) = loc["job"].as_str() else {
            continue;
        };
        let file = Path::new(loc["path"].as_str().unwrap_or_default())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = f["id"].as_str().unwrap();
        let secrets: Vec<String> = f["secrets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect();
        let entry = said.entry((file, job.to_string())).or_default();
        let message = f["message"].as_str().unwrap_or_default();
        if EXPOSING.contains(&id) {
            entry
                .exposing
                .get_or_insert_with(Vec::new)
                .extend(secrets.clone());
        }
        // An expression environment, or one a `type: environment` input chooses.
        if id == "unverifiable"
            && (message.contains("its environment is the expression")
                || message.contains("the `type: environment` input"))
        {
            entry.expression = true;
        }
        // A finding about the job's key: a signing rule, or one that names the secrets it holds.
        if id.starts_with("signing-") || EXPOSING.contains(&id) || !secrets.is_empty() {
            entry
                .about_keys
                .push(format!("{id} ({})", secrets.join(", ")));
        }
    }
    said
}

/// The labelled corpus (repositories' workflows modelled on public ones and labelled by hand),
/// every label scored: an `exposed` job needs a finding that exposes it by the right secret, an
/// `expression` job the `unverifiable` finding that names its environment's expression; a
/// `protected` job may not be called exposed, and a `not-signing` job may get no finding about a
/// key. Recall and precision are printed; the floors are issue 36's, on corpora never seen.
#[test]
fn labelled_corpus_recall_and_precision() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/labelled-corpus");
    let mut cases: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("labels.toml").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() >= 74, "{} cases", cases.len());
    let (mut found, mut missed, mut forbidden) = (0usize, Vec::new(), Vec::new());
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for case in &cases {
        let labels: Labels =
            toml::from_str(&std::fs::read_to_string(case.join("labels.toml")).unwrap()).unwrap();
        let out =
            run(warden(case).args(["audit", "--offline", "--allow-empty", "--format", "json"]));
        assert!(
            out.code == 0 || out.code == 1,
            "{}: {}",
            case.display(),
            out.stderr
        );
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let said = said_per_job(&doc);
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let nothing = Said::default();
        for l in &labels.job {
            *counts.entry(l.label.clone()).or_default() += 1;
            let s = said
                .get(&(l.workflow.clone(), l.job.clone()))
                .unwrap_or(&nothing);
            let at = format!("{name}: {}/{} ({})", l.workflow, l.job, l.label);
            let right_secret = |secrets: &Vec<String>| {
                secrets.is_empty()
                    || l.keys
                        .iter()
                        .any(|k| k.contains('(') || secrets.contains(k))
            };
            match l.label.as_str() {
                "exposed" => match &s.exposing {
                    Some(secrets) if right_secret(secrets) => found += 1,
                    _ => missed.push(format!("{at}: keys {}", l.keys.join(", "))),
                },
                "expression" if s.expression => found += 1,
                "expression" => missed.push(format!("{at}: keys {}", l.keys.join(", "))),
                "protected" | "not-signing" => {}
                other => panic!("{at}: unknown label {other}"),
            }
            if l.label != "exposed" && s.exposing.is_some() {
                forbidden.push(format!("{at}: called exposed"));
            } else if l.label == "not-signing" && !s.about_keys.is_empty() {
                forbidden.push(format!("{at}: {}", s.about_keys.join("; ")));
            }
        }
        // A job warden exposes that nobody labelled is a false alarm too.
        for ((file, job), s) in &said {
            let labelled = labels
                .job
                .iter()
                .any(|l| (&l.workflow, &l.job) == (file, job));
            if s.exposing.is_some() && !labelled {
                forbidden.push(format!("{name}: {file}/{job} (unlabelled): called exposed"));
            }
        }
    }
    let required = found + missed.len();
    let recall = found as f64 / required as f64;
    let precision = found as f64 / (found + forbidden.len()) as f64;
    println!(
        "labelled corpus: {} cases, labels {counts:?}; required findings {found}/{required} (recall {:.1}%), {} forbidden (precision {:.1}%)",
        cases.len(),
        recall * 100.0,
        forbidden.len(),
        precision * 100.0
    );
    for m in &missed {
        println!("  missed {m}");
    }
    for f in &forbidden {
        println!("  forbidden {f}");
    }
    assert!(recall >= 0.95, "recall {recall:.3}: {missed:#?}");
    assert!(
        forbidden.is_empty(),
        "findings a label forbids: {forbidden:#?}"
    );
}
