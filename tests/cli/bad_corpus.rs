//! The bad-input corpus in tests/fixtures/bad: every case exits with its documented code, names
//! the file and line, never panics (RUST_BACKTRACE=1), and leaves no temp file.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad")
}

fn run_case(file: &str, kind: &str) -> (Run, tempfile::TempDir) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let bytes = fs::read(corpus().join(file)).unwrap();
    let out = match kind {
        "pub" => {
            fs::write(dir.join(file), &bytes).unwrap();
            write(&dir.join("dist/a.bin"), b"a");
            run(warden(dir).args(["verify", "dist", "--public-key", file]))
        }
        "key" => {
            fs::write(dir.join(file), &bytes).unwrap();
            write(&dir.join("dist/a.bin"), b"a");
            run(warden(dir).args(["sign", "dist", "--secret-key", file]))
        }
        "minisig" => {
            let (pk, _) = keypair(dir, "k");
            write(&dir.join("dist/small.bin"), b"small");
            fs::write(dir.join("dist/small.bin.minisig"), &bytes).unwrap();
            run(warden(dir)
                .args(["verify", "dist/small.bin", "--public-key"])
                .arg(&pk))
        }
        "sums" => {
            write(&dir.join("dist/a.bin"), b"a");
            verify_signed_checksums(dir, "dist", &bytes)
        }
        "registry" => {
            write(&dir.join("known_issues/bad.toml"), &bytes);
            run(warden(dir).args(["known-issues", "lint"]))
        }
        "hive" => {
            write(
                &dir.join("known_issues/registry.toml"),
                b"clients = [\"x\"]\n",
            );
            write(&dir.join("results/1-suite.json"), &bytes);
            run(warden(dir).args(["hive", "check", "results", "--registry", "known_issues"]))
        }
        "workflow" => {
            write(&dir.join(".github/workflows/bad.yml"), &bytes);
            run(warden(dir).args(["audit", "--offline"]))
        }
        other => panic!("unknown kind {other}"),
    };
    (out, t)
}

#[test]
fn every_bad_input_fails_clearly() {
    let manifest = fs::read_to_string(corpus().join("cases.tsv")).unwrap();
    let mut seen = 0;
    for line in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        let [file, kind, code, words] = cols[..] else {
            panic!("bad manifest line {line:?}")
        };
        let (out, dir) = run_case(file, kind);
        assert_eq!(
            out.code,
            code.parse::<i32>().unwrap(),
            "{file}: exit code\n{}",
            out.all()
        );
        assert!(
            out.all().contains(words),
            "{file}: expected {words:?} in\n{}",
            out.all()
        );
        let temps: Vec<PathBuf> = walkdir::WalkDir::new(dir.path())
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".warden-"))
            .map(|e| e.into_path())
            .collect();
        assert!(temps.is_empty(), "{file}: temp files left: {temps:?}");
        seen += 1;
    }
    let files = fs::read_dir(corpus()).unwrap().filter(|e| {
        let n = e
            .as_ref()
            .unwrap()
            .file_name()
            .to_string_lossy()
            .into_owned();
        n != "cases.tsv" && n != "README.md"
    });
    assert_eq!(
        seen,
        files.count(),
        "every corpus file has a case in cases.tsv"
    );
}
