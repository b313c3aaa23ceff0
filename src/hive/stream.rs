//! One run, case by case: every suite file of a results directory streamed through the suite
//! reader, each case handed over with its suite name, and each file's details log opened (inside
//! the results directory only) when the file ends, so that failure text can be read for the
//! failures a caller kept. `hive diff` and `hive history` read runs this way.

use std::fs::{self, File};
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::pins::{self, RunSources};
use super::suite::{read_suite_one_core, HiveCase, SuiteError, SuiteSources, SuiteVisitor};
use crate::error::{Error, Reason, Result};

/// Files in a results directory that are not suite files (hiveview skips the same).
const NOT_SUITES: [&str; 3] = ["hive.json", "errorReport.json", "containerErrorReport.json"];
/// The most failure text read for one case.
const TEXT_BYTES: u64 = 64 * 1024;

/// The details log a suite file names, opened only if it is a regular file inside the results
/// directory: the name comes from the suite file, and the text read from it can end up in a
/// public PR comment. A log that is absent (not downloaded with the results) is no error.
pub(crate) fn open_details_log(
    dir: &Path,
    name: &str,
) -> std::result::Result<Option<File>, Reason> {
    if !crate::files::paths::is_plain_relative(name) {
        return Err(
            format!("testDetailsLog {name:?} is not a path inside the results directory").into(),
        );
    }
    let path = dir.join(name);
    let (Ok(real), Ok(root)) = (fs::canonicalize(&path), fs::canonicalize(dir)) else {
        return Ok(None);
    };
    if !real.starts_with(&root) {
        return Err(format!(
            "testDetailsLog {name:?} resolves to {}, outside the results directory",
            real.display()
        )
        .into());
    }
    crate::files::guarded::open_regular(&real)
        .map(Some)
        .map_err(|e| format!("testDetailsLog {name:?}: {e}").into())
}

pub(crate) fn read_slice(f: &mut File, begin: u64, end: u64) -> Option<String> {
    let len = (end - begin).min(TEXT_BYTES);
    f.seek(SeekFrom::Start(begin)).ok()?;
    let mut buf = Vec::with_capacity(len as usize);
    f.take(len).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Suite files of a results directory: top-level `*.json`, minus hive's own files. A `*.json`
/// entry that is not a regular file inside the directory (a link out of it, a FIFO, a folder)
/// is bad input, never skipped: a run that silently loses a suite file loses its failures.
/// Why `dir` holds no run, and where the run may be: hive writes suite files into
/// `workspace/logs` (its `--results-root`), so a folder whose `logs/` has them is named.
pub(crate) fn no_suites_hint(dir: &Path) -> String {
    let logs = dir.join("logs");
    let has_run = suite_files(&logs).is_ok_and(|f| !f.is_empty());
    if has_run {
        format!(
            "no hive suite file (*.json) in {}, but {} has some: pass that folder (hive's --results-root)",
            dir.display(),
            logs.display()
        )
    } else {
        format!(
            "no hive suite file (*.json) in {}: did hive write no results, or is this the wrong folder? (hive writes them to workspace/logs)",
            dir.display()
        )
    }
}

pub(crate) fn suite_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let root = fs::canonicalize(dir).map_err(|e| Error::io("reading", dir, e))?;
    if !root.is_dir() {
        // A run is its folder: the suite files, hive.json's pins and the details logs together.
        let folder = crate::files::paths::parent_dir(dir);
        return Err(Error::Usage(format!(
            "{}: a file; a hive run is read from its results folder (the one holding every suite file): pass {}",
            dir.display(),
            folder.display()
        )));
    }
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| Error::io("reading", dir, e))? {
        let entry = entry.map_err(|e| Error::io("reading", dir, e))?;
        let path = entry.path();
        let is_suite = path.extension().is_some_and(|x| x == "json")
            && !path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| NOT_SUITES.contains(&n));
        if !is_suite {
            continue;
        }
        let refuse = |why: &str| Error::input(path.display().to_string(), None, why.to_string());
        let kind = entry
            .file_type()
            .map_err(|e| Error::io("reading", &path, e))?;
        if kind.is_symlink() {
            let real = fs::canonicalize(&path)
                .map_err(|_| refuse("a link to nothing, not a suite file"))?;
            if !real.starts_with(&root) {
                return Err(refuse(
                    "a link out of the results directory: not read as a suite file",
                ));
            }
            if !fs::metadata(&real).is_ok_and(|m| m.is_file()) {
                return Err(refuse(
                    "a link to something other than a file, not a suite file",
                ));
            }
        } else if kind.is_dir() {
            return Err(refuse("a folder, not a suite file"));
        } else if !kind.is_file() {
            return Err(refuse("a FIFO, socket or device, not a suite file"));
        }
        files.push(path);
    }
    files.sort();
    Ok(files)
}

/// What a streaming reader is told.
pub(crate) trait RunVisitor {
    /// One case of the suite `suite`.
    fn case(&mut self, suite: &str, case: HiveCase<'_>);
    /// The end of a suite file, with its details log when it names one that exists.
    fn file_end(&mut self, _details_log: Option<&mut File>) {}
}

struct Cases<'v, V> {
    visitor: &'v mut V,
    suite: Option<String>,
    /// Cases before the suite name (hive writes the name first; other producers may not).
    waiting: Vec<HiveCase<'static>>,
    details_log: Option<String>,
    sources: Vec<SuiteSources>,
}

impl<V: RunVisitor> SuiteVisitor for Cases<'_, V> {
    fn suite_name(&mut self, name: &str) {
        self.suite = Some(name.to_string());
    }
    fn case(&mut self, case: HiveCase<'_>) {
        match &self.suite {
            Some(suite) => self.visitor.case(suite, case),
            None => self.waiting.push(case.into_owned()),
        }
    }
    fn test_details_log(&mut self, path: &str) {
        self.details_log = Some(path.to_string());
    }
    fn sources(&mut self, sources: &SuiteSources) {
        self.sources.push(sources.clone());
    }
}

/// The failure text of a case: inline `details`, or its slice of the details log.
pub(crate) fn failure_text(case: &HiveCase<'_>, log: Option<&mut File>) -> Option<String> {
    match (&case.details, case.log, log) {
        (Some(d), _, _) if !d.is_empty() => Some(d.to_string()),
        (_, Some((begin, end)), Some(f)) if end > begin => read_slice(f, begin, end),
        _ => None,
    }
}

/// Streams every case of the run in `dir` to `visitor`; returns what the run records of its
/// sources (hive commit, client versions, build arguments).
pub(crate) fn stream_run(dir: &Path, visitor: &mut impl RunVisitor) -> Result<RunSources> {
    let mut sources = RunSources {
        hive: pins::hive_commit(dir),
        ..RunSources::default()
    };
    for file in suite_files(dir)? {
        // `<unix>-<id>.json`: when hive wrote it.
        let written = file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.split_once('-'))
            .and_then(|(t, _)| t.parse::<u64>().ok());
        sources.started = match (sources.started, written) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let reader = crate::files::guarded::open_regular(&file)
            .map_err(|e| Error::io("reading", &file, e))?;
        let bad = |why: String| Error::input(file.display().to_string(), None, why);
        let mut cases = Cases {
            visitor: &mut *visitor,
            suite: None,
            waiting: Vec::new(),
            details_log: None,
            sources: Vec::new(),
        };
        read_suite_one_core(BufReader::with_capacity(0, reader), &mut cases).map_err(
            |e| match e {
                SuiteError::Io(e) => Error::io("reading", &file, e),
                e => bad(format!("not a hive suite file: {e}")),
            },
        )?;
        let Some(suite) = cases.suite.take() else {
            return Err(bad("not a hive suite file: no \"name\"".into()));
        };
        for case in std::mem::take(&mut cases.waiting) {
            cases.visitor.case(&suite, case);
        }
        for s in &cases.sources {
            sources.add(s);
        }
        let mut log = match cases.details_log.as_deref() {
            None | Some("") => None,
            Some(name) => open_details_log(dir, name).map_err(|e| bad(e.into()))?,
        };
        visitor.file_end(log.as_mut());
    }
    Ok(sources)
}
