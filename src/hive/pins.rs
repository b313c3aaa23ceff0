//! Pinned upstreams: what a run says it was built from, against the registry's `[upstream]` table.
//!
//! A run records its hive commit in `hive.json` (`sourceCommit`), each client's version in the
//! suite files' `clientVersions`, and (hive #1305 and later) the hive command line in
//! `runMetadata.hiveCommand`, whose `--sim.buildarg branch=<ref>` is the execution-apis ref the
//! rpc-compat simulator cloned. A pin the run does not record is reported as such, never as a
//! match.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::suite::SuiteSources;

/// What one run records about where it came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct RunSources {
    /// `hive.json` `sourceCommit` (or `hiveVersion.commit`), lower-case hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hive: Option<String>,
    /// Client name → the version it reported (`clientVersions`).
    pub(crate) client_versions: BTreeMap<String, String>,
    /// `--sim.buildarg NAME=VALUE` of the hive command line.
    pub(crate) sim_buildargs: BTreeMap<String, String>,
    /// When the run started: the smallest Unix time of its suite files' names (`<unix>-….json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) started: Option<u64>,
    /// What the run's records say of themselves that a reader should know: suite files that
    /// disagree, values cut short, too many clients.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
}

/// The most clients, build arguments and notes a run's records are read for, and the longest
/// value kept (a version string is a line, not a file).
const MAX_CLIENTS: usize = 64;
const MAX_VALUE: usize = 128;
const MAX_NOTES: usize = 8;

/// A value from a suite file, bounded: at most [`MAX_VALUE`] characters, control characters
/// replaced (the renderers escape what is left).
fn bounded(v: &str) -> String {
    let mut out: String = v
        .chars()
        .take(MAX_VALUE)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    if v.chars().count() > MAX_VALUE {
        out.push('…');
    }
    out
}

/// The pin name whose run value is the rpc-compat simulator's `branch` build argument.
const EXECUTION_APIS: &str = "execution-apis";

fn hex_commit(c: &str) -> Option<String> {
    (!c.is_empty() && c.len() <= 64 && c.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| c.to_ascii_lowercase())
}

/// The hive commit of a run: `sourceCommit` (or `hiveVersion.commit`) of the results' `hive.json`.
pub(crate) fn hive_commit(dir: &Path) -> Option<String> {
    let text =
        crate::files::guarded::read_text_inside(dir, &dir.join("hive.json"), 1 << 20).ok()?;
    hive_commit_of(&text)
}

/// The hive commit a `hive.json`'s text records (`sourceCommit`, or `hiveVersion.commit`).
pub(crate) fn hive_commit_of(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let commit = [&v["sourceCommit"], &v["hiveVersion"]["commit"]]
        .into_iter()
        .find_map(|c| c.as_str().and_then(hex_commit));
    commit
}

impl RunSources {
    /// Adds what one suite file records.
    pub(crate) fn add(&mut self, s: &SuiteSources) {
        for (client, version) in &s.client_versions {
            let (client, version) = (bounded(client), bounded(version));
            match self.client_versions.get(&client) {
                Some(first) if *first != version => self.note(format!(
                    "clientVersions of {client} differ between its suite files ({first}, {version}): the first is used"
                )),
                Some(_) => {}
                None if self.client_versions.len() >= MAX_CLIENTS => self.note(format!(
                    "more than {MAX_CLIENTS} clients in clientVersions: the rest are not read"
                )),
                None => {
                    self.client_versions.insert(client, version);
                }
            }
        }
        let mut args = s.hive_command.iter();
        while let Some(arg) = args.next() {
            let value = match arg.strip_prefix("--sim.buildarg") {
                Some("") => args.next().map(String::as_str),
                Some(rest) => rest.strip_prefix('='),
                None => None,
            };
            if let Some((k, v)) = value.and_then(|kv| kv.split_once('=')) {
                if self.sim_buildargs.len() < MAX_CLIENTS {
                    self.sim_buildargs
                        .entry(bounded(k))
                        .or_insert_with(|| bounded(v));
                }
            }
        }
    }

    /// A note about the run's records, once each, at most [`MAX_NOTES`].
    pub(crate) fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES && !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// What the run records for the pin called `name`.
    fn value(&self, name: &str) -> Option<&str> {
        match name {
            "hive" => self.hive.as_deref(),
            EXECUTION_APIS => self.sim_buildargs.get("branch").map(String::as_str),
            client => self.client_versions.get(client).map(String::as_str),
        }
    }
}

/// Whether a run's value is the pinned one: commits may be abbreviated on either side (7 hex
/// digits at least); a client version matches when it contains the pinned text
/// (`reth/v1.4.8-2d1c4a7/x86_64-unknown-linux-gnu` matches `v1.4.8` and `2d1c4a7`).
fn matches(name: &str, run: &str, pin: &str) -> bool {
    if let (Some(run), Some(pin)) = (hex_commit(run), hex_commit(pin)) {
        let n = run.len().min(pin.len());
        if n >= 7 {
            return run[..n] == pin[..n];
        }
    }
    match name {
        "hive" | EXECUTION_APIS => run == pin,
        _ => !pin.is_empty() && (run.contains(pin) || names_commit(run, pin)),
    }
}

/// Whether a recorded value (a commit, or a client version such as
/// `reth/v1.4.8-2d1c4a7/x86_64-unknown-linux-gnu`) names `commit`: a run of at least 7 hex
/// digits in it, standing alone, is a prefix of the commit (or the commit of it).
pub(crate) fn names_commit(recorded: &str, commit: &str) -> bool {
    let Some(commit) = hex_commit(commit) else {
        return false;
    };
    recorded
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(hex_commit)
        .any(|token| {
            let n = token.len().min(commit.len());
            n >= 7 && token[..n] == commit[..n]
        })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PinStatus {
    Matched,
    Mismatch,
    /// The run does not record this source: not checked.
    NotRecorded,
}

/// One `[upstream]` pin against a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct PinCheck {
    pub(crate) name: String,
    pub(crate) pinned: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<String>,
    pub(crate) status: PinStatus,
}

impl PinCheck {
    /// "hive: the run used X, the registry pins Y", for a mismatch.
    pub(crate) fn mismatch_message(&self) -> Option<String> {
        (self.status == PinStatus::Mismatch).then(|| {
            format!(
                "{}: the run used {}, the registry pins {}",
                self.name,
                self.run.as_deref().unwrap_or_default(),
                self.pinned
            )
        })
    }
}

/// Every pin of `upstream` against what the run recorded.
pub(crate) fn check(upstream: &BTreeMap<String, String>, run: &RunSources) -> Vec<PinCheck> {
    upstream
        .iter()
        .map(|(name, pinned)| {
            let value = run.value(name);
            PinCheck {
                name: name.clone(),
                pinned: pinned.clone(),
                run: value.map(str::to_string),
                status: match value {
                    None => PinStatus::NotRecorded,
                    Some(v) if matches(name, v, pinned) => PinStatus::Matched,
                    Some(_) => PinStatus::Mismatch,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_args_in_both_spellings_and_client_versions() {
        let mut run = RunSources::default();
        run.add(&SuiteSources {
            client_versions: vec![("reth".into(), "reth/v1.4.8-2d1c4a7/x86_64".into())],
            hive_command: [
                "./hive",
                "--sim.buildarg",
                "branch=033ca6e6",
                "--sim.buildarg=x=1",
            ]
            .map(String::from)
            .to_vec(),
        });
        run.hive = Some("a74a5a70aa".into());
        let pins: BTreeMap<String, String> = [
            ("hive", "A74A5A70"),
            ("execution-apis", "0000000"),
            ("reth", "v1.4.8"),
            ("geth", "v1.15.0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let got: Vec<(String, PinStatus)> = check(&pins, &run)
            .into_iter()
            .map(|p| (p.name, p.status))
            .collect();
        assert_eq!(
            got,
            vec![
                ("execution-apis".into(), PinStatus::Mismatch),
                ("geth".into(), PinStatus::NotRecorded),
                ("hive".into(), PinStatus::Matched),
                ("reth".into(), PinStatus::Matched),
            ]
        );
        assert_eq!(run.sim_buildargs.get("x").map(String::as_str), Some("1"));
    }

    #[test]
    fn short_commits_do_not_match_by_accident() {
        assert!(!matches("hive", "abc", "abcdef0"));
        assert!(matches("hive", "abcdef0123", "ABCDEF0"));
        assert!(!matches("hive", "abcdef1123", "abcdef0"));
    }

    #[test]
    fn a_version_names_the_commit_it_was_built_from() {
        let full = "2d1c4a7e5f60718293a4b5c6d7e8f90112233445";
        let version = "reth/v1.4.8-2d1c4a7/x86_64-unknown-linux-gnu";
        assert!(names_commit(version, full));
        assert!(matches("reth", version, full));
        // Too short, not standing alone, or another commit.
        assert!(!names_commit("reth/v1.4.8-2d1c4a/x86_64", full));
        assert!(!names_commit("reth/v1.4.8-x2d1c4a7e", full));
        assert!(!names_commit("reth/v1.4.8-2d1c4a8/x86_64", full));
        assert!(!names_commit(version, "not a commit"));
        // Real shapes of hive's clientVersions (erigon's runs of 2023, lighthouse's of 2026).
        assert!(names_commit(
            "2.47.0-dev-caf9915f",
            "caf9915f0123456789abcdef0123456789abcdef"
        ));
        assert!(names_commit(
            "8.1.3-7d631de3",
            "7d631de3aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        ));
        assert!(!names_commit(
            "0.0.0",
            "0000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        ));
    }
}
