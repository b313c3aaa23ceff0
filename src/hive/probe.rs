//! A `hive bisect` probe judged: did the run reach the candidate commit, and only then, did the
//! test pass or fail there. A run is valid when its results artifact holds a suite that ran the
//! test, and the run records the candidate (the client's `clientVersions` entry, or hive's
//! `hive.json`, names the commit: `pins::names_commit` decides). A test that failed for
//! infrastructure (`classify::infra_cause` decides) says nothing about the commit either. An
//! invalid probe is kept with why — never counted as a pass or a failure.

use std::io::Read;
use std::path::Path;

use regex::Regex;

use super::bisect::ProbeResult;
use super::classify::infra_cause;
use super::pins::{hive_commit_of, names_commit, RunSources};
use super::suite::{read_suite_one_core, HiveCase, SuiteSources, SuiteVisitor};

/// What the commits of a bisection are commits of.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "name")]
pub enum Subject {
    /// A client, by its name in hive (`ethrex`, `reth`): its `clientVersions` entry must name the
    /// candidate.
    Client(String),
    /// hive itself: `hive.json`'s `sourceCommit` must be the candidate.
    Hive,
}

/// Which cases a probe looks at.
#[derive(Clone, Debug)]
pub(crate) struct ProbeTarget {
    /// Matched against a case's name without its client suffix.
    pub(crate) test: Regex,
    /// Matched against the suite's name; every suite when absent.
    pub(crate) suite: Option<Regex>,
    pub(crate) subject: Subject,
}

/// The most bytes read out of one artifact (its entries decompressed): a zip bomb stops here.
const MAX_UNZIPPED: u64 = 8 << 30;
/// The most entries of one artifact looked at.
const MAX_ENTRIES: usize = 100_000;

/// What the suite files of a run showed; one file's part is taken only once its suite's name
/// is known to match (a suite object's keys come in any order).
#[derive(Default)]
struct Seen {
    suite: Option<String>,
    sources: RunSources,
    ran: usize,
    failed: Vec<String>,
    infra: Vec<String>,
}

impl Seen {
    fn take(&mut self, file: Seen, target: &ProbeTarget) {
        let name = file.suite.as_deref().unwrap_or_default();
        if target.suite.as_ref().is_some_and(|s| !s.is_match(name)) {
            return;
        }
        for (client, version) in file.sources.client_versions {
            self.sources
                .client_versions
                .entry(client)
                .or_insert(version);
        }
        self.ran += file.ran;
        self.failed.extend(file.failed);
        self.infra.extend(file.infra);
    }
}

impl SuiteVisitor for (&ProbeTarget, &mut Seen) {
    fn suite_name(&mut self, name: &str) {
        self.1.suite = Some(name.to_string());
    }

    fn case(&mut self, case: HiveCase<'_>) {
        let (test, _) = super::classify::split_client(&case.name);
        if !self.0.test.is_match(test) {
            return;
        }
        if let Some(why) = infra_cause(&case) {
            if self.1.infra.len() < 8 {
                self.1.infra.push(format!("{}: {why}", bounded(&case.name)));
            }
            return;
        }
        self.1.ran += 1;
        if !case.pass && self.1.failed.len() < 8 {
            self.1.failed.push(bounded(&case.name));
        }
    }

    fn test_details_log(&mut self, _path: &str) {}

    fn sources(&mut self, sources: &SuiteSources) {
        self.1.sources.add(sources);
    }
}

/// A value from a run (its artifact, its steps), at most 200 characters: the renderers escape
/// it.
pub(crate) fn bounded(s: &str) -> String {
    s.chars().take(200).collect()
}

/// An entry's base name and depth (`/`-separated, as zip names are).
fn base_and_depth(name: &str) -> (&str, usize) {
    let trimmed = name.trim_end_matches('/');
    let depth = trimmed.matches('/').count();
    (trimmed.rsplit('/').next().unwrap_or(trimmed), depth)
}

/// Judges a run's results artifact (a zip at `zip`) for `candidate`: `Ok` with what the probe
/// showed (an invalid result says why), `Err` only for a local failure to read the file.
pub(crate) fn judge_artifact(
    zip: &Path,
    target: &ProbeTarget,
    candidate: &str,
) -> std::io::Result<ProbeResult> {
    let file = std::fs::File::open(zip)?;
    let mut archive = match zip::ZipArchive::new(file) {
        Ok(a) => a,
        Err(e) => {
            return Ok(ProbeResult::Invalid(format!(
                "the results artifact is not a readable zip ({})",
                bounded(&e.to_string())
            )))
        }
    };
    // hive writes its suite files at the top of its results folder: the shallowest `.json`
    // files but `hive.json` are the suites, wherever the artifact put that folder.
    let names: Vec<(usize, String)> = (0..archive.len().min(MAX_ENTRIES))
        .filter_map(|i| Some((i, archive.name_for_index(i)?.ok()?.to_string())))
        .filter(|(_, n)| n.ends_with(".json"))
        .collect();
    let suites_depth = names
        .iter()
        .filter(|(_, n)| base_and_depth(n).0 != "hive.json")
        .map(|(_, n)| base_and_depth(n).1)
        .min();
    let mut seen = Seen::default();
    let mut budget = MAX_UNZIPPED;
    let mut suites = 0;
    for (i, name) in &names {
        let (base, depth) = base_and_depth(name);
        let mut entry = match archive.by_index(*i) {
            Ok(e) => e,
            Err(e) => {
                return Ok(ProbeResult::Invalid(format!(
                    "{} in the results artifact cannot be read ({})",
                    bounded(name),
                    bounded(&e.to_string())
                )))
            }
        };
        if base == "hive.json" {
            let mut text = String::new();
            let _ = (&mut entry).take(1 << 20).read_to_string(&mut text);
            seen.sources.hive = hive_commit_of(&text);
            continue;
        }
        if Some(depth) != suites_depth {
            continue;
        }
        suites += 1;
        let mut limited = (&mut entry).take(budget);
        let mut file = Seen::default();
        let read = read_suite_one_core(&mut limited, &mut (target, &mut file));
        budget = limited.limit();
        seen.take(file, target);
        if let Err(e) = read {
            return Ok(ProbeResult::Invalid(format!(
                "{} in the results artifact is not a hive suite file ({})",
                bounded(name),
                bounded(&e.to_string())
            )));
        }
        if budget == 0 {
            return Ok(ProbeResult::Invalid(format!(
                "the results artifact holds more than {MAX_UNZIPPED} bytes of suite files"
            )));
        }
    }
    if suites == 0 {
        return Ok(ProbeResult::Invalid(
            "the results artifact holds no hive suite file".into(),
        ));
    }
    Ok(judge(&seen, target, candidate))
}

/// Whether a version carries some commit: a run of 7 or more hex digits standing alone, as
/// `names_commit` reads it.
fn names_some_commit(version: &str) -> bool {
    version
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|t| t.len() >= 7 && t.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The verdict on what a run's suites showed: whether it reached `candidate`, then the test.
fn judge(seen: &Seen, target: &ProbeTarget, candidate: &str) -> ProbeResult {
    let short: String = candidate.chars().take(12).collect();
    match &target.subject {
        Subject::Client(client) => match seen.sources.client_versions.get(client) {
            Some(version) if names_commit(version, candidate) => {}
            Some(version) if names_some_commit(version) => {
                return ProbeResult::Invalid(format!(
                    "the run did not test the candidate: clientVersions says {client} {}, not {short}",
                    bounded(version)
                ))
            }
            Some(version) => {
                return ProbeResult::Invalid(format!(
                    "clientVersions says {client} {}, which names no commit: a probe cannot show it tested the candidate (the client's version must carry its commit, as `reth/v1.4.8-2d1c4a7/…` does)",
                    bounded(version)
                ))
            }
            None => {
                return ProbeResult::Invalid(format!(
                    "the run did not test the candidate: no clientVersions entry for {client}"
                ))
            }
        },
        Subject::Hive => match &seen.sources.hive {
            Some(commit) if names_commit(commit, candidate) => {}
            Some(commit) => {
                return ProbeResult::Invalid(format!(
                    "the run did not test the candidate: hive.json says hive {}, not {short}",
                    bounded(commit)
                ))
            }
            None => {
                return ProbeResult::Invalid(
                    "the run did not test the candidate: the artifact has no hive.json naming hive's commit"
                        .into(),
                )
            }
        },
    }
    if !seen.failed.is_empty() {
        return ProbeResult::Failed;
    }
    if seen.ran > 0 {
        return ProbeResult::Passed;
    }
    match seen.infra.first() {
        Some(why) => ProbeResult::Invalid(format!(
            "the test did not run to a result: {}",
            bounded(why)
        )),
        None => ProbeResult::Invalid(format!(
            "the test did not run: no case matching /{}/{}",
            target.test.as_str(),
            target.suite.as_ref().map_or(String::new(), |s| format!(
                " in a suite matching /{}/",
                s.as_str()
            ))
        )),
    }
}

/// For the fuzz target: `bytes` as an artifact, then as the suite file of one.
pub(crate) fn fuzz_artifact(bytes: &[u8]) {
    use std::io::Write as _;
    let target = ProbeTarget {
        test: Regex::new("^eth_call/").expect("a valid regex"),
        suite: None,
        subject: Subject::Client("ethrex".into()),
    };
    let candidate = "2d1c4a7e5f60718293a4b5c6d7e8f90112233445";
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("a.zip");
    if std::fs::write(&path, bytes).is_ok() {
        let _ = judge_artifact(&path, &target, candidate);
    }
    let Ok(file) = std::fs::File::create(&path) else {
        return;
    };
    let mut zip = zip::ZipWriter::new(file);
    let written = zip
        .start_file("results/1-a.json", zip::write::SimpleFileOptions::default())
        .is_ok()
        && zip.write_all(bytes).is_ok()
        && zip.finish().is_ok();
    if written {
        let _ = judge_artifact(&path, &target, candidate);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    const CANDIDATE: &str = "2d1c4a7e5f60718293a4b5c6d7e8f90112233445";

    fn target() -> ProbeTarget {
        ProbeTarget {
            test: Regex::new("^eth_call/x$").unwrap(),
            suite: Some(Regex::new("^rpc-compat$").unwrap()),
            subject: Subject::Client("ethrex".into()),
        }
    }

    /// A zip of `files` (name, bytes), judged for the candidate.
    fn judge_zip(files: &[(&str, Vec<u8>)], target: &ProbeTarget) -> ProbeResult {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.zip");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        for (name, bytes) in files {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        judge_artifact(&path, target, CANDIDATE).unwrap()
    }

    fn suite(version: &str, case: serde_json::Value) -> Vec<u8> {
        // `testCases` before `name` and `clientVersions`: a suite's keys come in any order.
        format!(
            r#"{{"testCases": {{"1": {case}}}, "clientVersions": {{"ethrex": {}}}, "name": "rpc-compat"}}"#,
            serde_json::Value::from(version)
        )
        .into_bytes()
    }

    fn case(pass: bool, timeout: bool) -> serde_json::Value {
        serde_json::json!({"name": "eth_call/x (ethrex)", "summaryResult": {"pass": pass, "timeout": timeout}})
    }

    #[test]
    fn a_run_is_judged_only_once_it_reached_the_candidate() {
        let t = target();
        let good = "ethrex/v9.1.0-2d1c4a7/x86_64";
        assert_eq!(
            judge_zip(&[("r/1-a.json", suite(good, case(true, false)))], &t),
            ProbeResult::Passed
        );
        assert_eq!(
            judge_zip(&[("r/1-a.json", suite(good, case(false, false)))], &t),
            ProbeResult::Failed
        );
        // Another commit's image: its failure is not the candidate's.
        assert_eq!(
            judge_zip(
                &[("1-a.json", suite("ethrex/v9.1.0-9999999/x", case(false, false)))],
                &t
            ),
            ProbeResult::Invalid(
                "the run did not test the candidate: clientVersions says ethrex ethrex/v9.1.0-9999999/x, not 2d1c4a7e5f60".into()
            )
        );
        // A version without a commit cannot show which commit ran.
        assert_eq!(
            judge_zip(&[("1-a.json", suite("9.0.0", case(false, false)))], &t),
            ProbeResult::Invalid(
                "clientVersions says ethrex 9.0.0, which names no commit: a probe cannot show it tested the candidate (the client's version must carry its commit, as `reth/v1.4.8-2d1c4a7/…` does)".into()
            )
        );
        // A timeout is infrastructure: nothing about the commit.
        assert_eq!(
            judge_zip(&[("1-a.json", suite(good, case(false, true)))], &t),
            ProbeResult::Invalid(
                "the test did not run to a result: eth_call/x (ethrex): timed out (terminated by host)".into()
            )
        );
        // The test is not in the run.
        let other =
            serde_json::json!({"name": "eth_call/y (ethrex)", "summaryResult": {"pass": true}});
        assert_eq!(
            judge_zip(&[("1-a.json", suite(good, other))], &t),
            ProbeResult::Invalid(
                "the test did not run: no case matching /^eth_call/x$/ in a suite matching /^rpc-compat$/".into()
            )
        );
    }

    #[test]
    fn hostile_artifacts_are_invalid_probes_never_errors() {
        let t = target();
        let good = "ethrex/v9.1.0-2d1c4a7/x86_64";
        // Not a zip at all.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.zip");
        std::fs::write(&path, b"<html>not a zip</html>").unwrap();
        assert!(matches!(
            judge_artifact(&path, &t, CANDIDATE).unwrap(),
            ProbeResult::Invalid(why) if why.starts_with("the results artifact is not a readable zip")
        ));
        // No suite file; a suite that is not JSON; names that climb out (never extracted: read
        // in place, so a name is only a name).
        assert_eq!(
            judge_zip(&[("hive.json", b"{}".to_vec())], &t),
            ProbeResult::Invalid("the results artifact holds no hive suite file".into())
        );
        assert!(matches!(
            judge_zip(&[("../../etc/1-a.json", b"{\"name\": [".to_vec())], &t),
            ProbeResult::Invalid(why) if why.starts_with("../../etc/1-a.json in the results artifact is not a hive suite file")
        ));
        assert_eq!(
            judge_zip(
                &[("../../../tmp/1-a.json", suite(good, case(true, false)))],
                &t
            ),
            ProbeResult::Passed
        );
        // Suites deeper than the shallowest are not the run's (hive writes them at its top).
        assert_eq!(
            judge_zip(
                &[
                    ("1-a.json", suite(good, case(true, false))),
                    ("details/1-b.json", suite(good, case(false, false))),
                ],
                &t
            ),
            ProbeResult::Passed
        );
    }

    #[test]
    fn hive_commits_are_named_by_hive_json() {
        let mut t = target();
        t.subject = Subject::Hive;
        let s = suite("whatever", case(false, false));
        assert_eq!(
            judge_zip(
                &[
                    (
                        "hive.json",
                        format!(r#"{{"sourceCommit": "{}"}}"#, &CANDIDATE[..8]).into_bytes()
                    ),
                    ("1-a.json", s.clone())
                ],
                &t
            ),
            ProbeResult::Failed
        );
        assert_eq!(
            judge_zip(&[("1-a.json", s)], &t),
            ProbeResult::Invalid(
                "the run did not test the candidate: the artifact has no hive.json naming hive's commit".into()
            )
        );
    }
}
