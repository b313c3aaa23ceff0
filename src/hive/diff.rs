//! `warden hive diff OLD NEW`: what changed between two hive runs. New failures, fixed tests,
//! failures whose text changed (the first differing lines), and tests added or removed upstream.
//! Each run is streamed suite file by suite file; what is kept is one entry per test.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::classify::first_lines;
use super::stream::{failure_text, stream_run, RunVisitor};
use super::suite::HiveCase;
use crate::error::{Error, Result};

/// One test of a run: passed, or failed with the first lines of its failure text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TestRun {
    pass: bool,
    text: Option<String>,
}

/// `suite/test (client)` → how it ran.
type Run = BTreeMap<(String, String), TestRun>;

/// Collects a run: passes at once, failures when their file's details log is open.
#[derive(Default)]
struct Collect {
    run: Run,
    failed: Vec<(String, HiveCase<'static>)>,
}

/// A test that appears more than once in a run (in two suite files, or twice in one) failed if
/// any of its runs failed, as `hive check` counts it: a pass never hides a failure.
impl RunVisitor for Collect {
    fn case(&mut self, suite: &str, case: HiveCase<'_>) {
        if case.pass {
            let key = (suite.to_string(), case.name.into_owned());
            self.run.entry(key).or_insert(TestRun {
                pass: true,
                text: None,
            });
        } else {
            self.failed.push((suite.to_string(), case.into_owned()));
        }
    }

    fn file_end(&mut self, mut log: Option<&mut File>) {
        for (suite, case) in std::mem::take(&mut self.failed) {
            let text = failure_text(&case, log.as_deref_mut()).map(|t| first_lines(&t));
            let run = self
                .run
                .entry((suite, case.name.into_owned()))
                .or_insert(TestRun {
                    pass: false,
                    text: None,
                });
            // The first failure's text is kept; a later pass or failure does not replace it.
            if run.pass || run.text.is_none() {
                run.text = text;
            }
            run.pass = false;
        }
    }
}

/// Every test of the run in `dir` (`which`: OLD or NEW, for the error). A run without a suite
/// file is an error: hive wrote nothing (it crashed, or this is the wrong folder), and comparing
/// against nothing would report every test as removed, or none as failing.
fn read_run(dir: &Path, which: &str) -> Result<Run> {
    if super::stream::suite_files(dir)?.is_empty() {
        return Err(Error::Usage(format!(
            "{which}: {}",
            super::stream::no_suites_hint(dir)
        )));
    }
    let mut c = Collect::default();
    stream_run(dir, &mut c)?;
    Ok(c.run)
}

/// A test that changed between the runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Change {
    pub(crate) suite: String,
    pub(crate) test: String,
    /// The failure text (new failures), or the first differing lines, old then new (changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) old_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) new_text: Option<String>,
    /// For tests added or removed upstream: whether they passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) passed: Option<bool>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct HiveDiff {
    pub(crate) old: PathBuf,
    pub(crate) new: PathBuf,
    /// Failed in NEW, and passed (or did not run) in OLD.
    pub(crate) new_failures: Vec<Change>,
    /// Failed in OLD, passed in NEW.
    pub(crate) fixed: Vec<Change>,
    /// Failed in both, with a different failure text.
    pub(crate) changed: Vec<Change>,
    /// In NEW only (added upstream).
    pub(crate) added: Vec<Change>,
    /// In OLD only (removed upstream).
    pub(crate) removed: Vec<Change>,
}

impl HiveDiff {
    /// 1 when NEW has a failure OLD did not.
    pub(crate) fn exit_code(&self) -> u8 {
        u8::from(!self.new_failures.is_empty())
    }
}

/// The first line where two failure texts differ, from each.
fn first_difference(old: &str, new: &str) -> (String, String) {
    let (mut o, mut n) = (old.lines(), new.lines());
    loop {
        match (o.next(), n.next()) {
            (Some(a), Some(b)) if a == b => continue,
            (a, b) => {
                return (
                    a.unwrap_or_default().to_string(),
                    b.unwrap_or_default().to_string(),
                )
            }
        }
    }
}

/// Compares the run in `old` with the run in `new`.
pub fn diff(old: &Path, new: &Path) -> Result<HiveDiff> {
    let (before, after) = (read_run(old, "OLD")?, read_run(new, "NEW")?);
    let mut out = HiveDiff {
        old: old.to_path_buf(),
        new: new.to_path_buf(),
        ..HiveDiff::default()
    };
    let change = |(suite, test): &(String, String)| Change {
        suite: suite.clone(),
        test: test.clone(),
        old_text: None,
        new_text: None,
        passed: None,
    };
    for (key, now) in &after {
        match before.get(key) {
            None => {
                out.added.push(Change {
                    passed: Some(now.pass),
                    ..change(key)
                });
                if !now.pass {
                    out.new_failures.push(Change {
                        new_text: now.text.clone(),
                        ..change(key)
                    });
                }
            }
            Some(was) if was.pass && !now.pass => out.new_failures.push(Change {
                new_text: now.text.clone(),
                ..change(key)
            }),
            Some(was) if !was.pass && now.pass => out.fixed.push(change(key)),
            Some(was) if !was.pass && !now.pass && was.text != now.text => {
                let (o, n) = first_difference(
                    was.text.as_deref().unwrap_or_default(),
                    now.text.as_deref().unwrap_or_default(),
                );
                out.changed.push(Change {
                    old_text: Some(o),
                    new_text: Some(n),
                    ..change(key)
                });
            }
            Some(_) => {}
        }
    }
    for (key, was) in &before {
        if !after.contains_key(key) {
            out.removed.push(Change {
                passed: Some(was.pass),
                ..change(key)
            });
        }
    }
    Ok(out)
}
