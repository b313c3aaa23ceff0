//! Streaming reader for hive suite files (`<unix>-<hex>.json`).
//!
//! A suite file is one JSON object whose `testCases` map can hold tens of thousands of cases
//! (tens to hundreds of MB). The reader walks only the two outer levels itself (the suite object's
//! keys and the `testCases` map's keys) over a buffer it refills from the file, and hands each
//! value to serde_json, which parses one case at a time from the buffer. Memory is bounded by the
//! largest single case, not by the file. Unknown fields are ignored, `clientInfo: null` and legacy
//! inline `details` are accepted, and `summaryResult.log` offsets are returned for the caller to
//! resolve against `testDetailsLog`, for failures only.

use std::borrow::Cow;
use std::io::{self, Read};

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::case_scan::RawCase;

/// One test case, as much of it as checking needs. Borrowed from the read buffer while it is
/// visited; `into_owned` keeps it past that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiveCase<'a> {
    pub(crate) name: Cow<'a, str>,
    pub(crate) pass: bool,
    pub(crate) timeout: bool,
    pub(crate) multi_test_context: bool,
    /// Inline failure text (legacy files, `--dev` runs).
    pub(crate) details: Option<Cow<'a, str>>,
    /// Byte range of the failure text in the suite's `testDetailsLog`.
    pub(crate) log: Option<(u64, u64)>,
}

/// The most failure text a case keeps (the report shows less): a case waiting for the end of
/// its file holds a prefix, never the whole of a huge `details` string.
pub(crate) const DETAILS_KEPT: usize = 64 * 1024;

/// The first `max` bytes of `s`, cut at a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl HiveCase<'_> {
    pub(crate) fn into_owned(self) -> HiveCase<'static> {
        HiveCase {
            name: Cow::Owned(self.name.into_owned()),
            pass: self.pass,
            timeout: self.timeout,
            multi_test_context: self.multi_test_context,
            details: self
                .details
                .map(|d| Cow::Owned(prefix(&d, DETAILS_KEPT).to_string())),
            log: self.log,
        }
    }
}

/// What the reader reports, in file order.
pub trait SuiteVisitor {
    fn suite_name(&mut self, name: &str);
    fn case(&mut self, case: HiveCase<'_>);
    fn test_details_log(&mut self, path: &str);
    /// What the run records of its sources: `clientVersions` and `runMetadata.hiveCommand`.
    fn sources(&mut self, _sources: &SuiteSources) {}
}

/// The parts of a suite object that say what the run was built from (for pinned upstreams).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SuiteSources {
    /// `clientVersions`: client name → the version it reported.
    pub(crate) client_versions: Vec<(String, String)>,
    /// `runMetadata.hiveCommand`: the hive command line (hive #1305 and later).
    pub(crate) hive_command: Vec<String>,
}

/// Strings of a JSON value read leniently: third-party producers write other shapes.
fn strings(v: &serde_json::Value) -> impl Iterator<Item = &str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str())
}

/// A parse failure with the byte offset where it happened (hive writes one-line files, so a
/// line number would say little).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("byte {offset}: {message}")]
    Syntax { offset: u64, message: String },
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The buffer of a split reading (there are two: one parsed while the other is read): parts of
/// about a megabyte are worth a core each, and peak memory stays under 16 MiB.
const INITIAL_BUFFER: usize = 3 << 19;

/// The largest single JSON value (a test case with its inline `details`) read whole. Results come
/// from a pull request's run: one 300 MB `details` string took 825 MB.
const MAX_VALUE: usize = 64 << 20;

struct Cursor<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes discarded before `buf[0]`, for error offsets.
    consumed: u64,
    eof: bool,
}

impl<R: Read> Cursor<R> {
    fn offset(&self) -> u64 {
        self.consumed + self.start as u64
    }

    fn error(&self, message: impl Into<String>) -> SuiteError {
        SuiteError::Syntax {
            offset: self.offset(),
            message: message.into(),
        }
    }

    /// Reads more input, keeping the unread part; grows the buffer when it is full of unread data.
    fn refill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.consumed += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            // Doubling, but never past the cap of one value (which is refused when reached).
            let grown = (self.buf.len() * 2).min(MAX_VALUE).max(self.buf.len() + 1);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Adds bytes read elsewhere after the unread part (compacting first, growing if needed).
    fn append(&mut self, bytes: &[u8]) {
        self.buf.copy_within(self.start..self.end, 0);
        self.consumed += self.start as u64;
        self.end -= self.start;
        self.start = 0;
        self.buf.truncate(self.end);
        self.buf.extend_from_slice(bytes);
        self.end = self.buf.len();
        let room = self.buf.len().max(INITIAL_BUFFER);
        self.buf.resize(room, 0);
    }

    /// The next non-whitespace byte, without consuming it.
    fn peek(&mut self) -> Result<Option<u8>, SuiteError> {
        loop {
            while self.start < self.end {
                let b = self.buf[self.start];
                if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    self.start += 1;
                } else {
                    return Ok(Some(b));
                }
            }
            if !self.refill()? {
                return Ok(None);
            }
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), SuiteError> {
        match self.peek()? {
            Some(b) if b == byte => {
                self.start += 1;
                Ok(())
            }
            Some(b) => Err(self.error(format!("expected {what}, found {:?}", b as char))),
            None => Err(self.error(format!("unexpected end of file, expected {what}"))),
        }
    }

    /// Parses one JSON value at the cursor with serde_json, refilling until it is complete.
    fn value<T>(
        &mut self,
        mut parse: impl FnMut(&[u8]) -> Result<(T, usize), serde_json::Error>,
    ) -> Result<T, SuiteError> {
        self.peek()?;
        loop {
            match parse(&self.buf[self.start..self.end]) {
                Ok((v, used)) => {
                    self.start += used;
                    return Ok(v);
                }
                Err(e) if e.is_eof() => {
                    if self.end - self.start >= MAX_VALUE {
                        return Err(self.error(format!(
                            "a single value larger than {} MiB (a test case's details?): refused",
                            MAX_VALUE >> 20
                        )));
                    }
                    if !self.refill()? {
                        return Err(self.error(
                            "unexpected end of file inside a value (truncated suite file?)",
                        ));
                    }
                }
                Err(e) => {
                    return Err(SuiteError::Syntax {
                        offset: self.offset() + e.column() as u64,
                        message: e.to_string(),
                    })
                }
            }
        }
    }
}

/// Parses one value of type T from the front of `bytes`, returning it and the bytes it used.
fn one<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<(T, usize), serde_json::Error> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    match stream.next() {
        Some(Ok(v)) => Ok((v, stream.byte_offset())),
        Some(Err(e)) => Err(e),
        // Only whitespace left: serde_json's own EOF error, so the caller refills.
        None => {
            Err(serde_json::from_slice::<IgnoredAny>(b"").expect_err("empty input is an EOF error"))
        }
    }
}

/// The test case at the front of `bytes`: the fast scanner when it can, serde_json otherwise
/// (which then decides, and reports, exactly as before).
fn case_value(bytes: &[u8]) -> Result<(RawCase<'_>, usize), serde_json::Error> {
    #[cfg(test)]
    if tests::SERDE_ONLY.with(|only| only.get()) {
        return one::<RawCase>(bytes);
    }
    match super::case_scan::case(bytes) {
        Some(found) => Ok(found),
        None => one::<RawCase>(bytes),
    }
}

/// A member's key (the test id, not kept) at the front of `bytes`: its length.
fn key_value(bytes: &[u8]) -> Result<usize, serde_json::Error> {
    #[cfg(test)]
    if tests::SERDE_ONLY.with(|only| only.get()) {
        return one::<IgnoredAny>(bytes).map(|(_, used)| used);
    }
    match super::case_scan::plain_key(bytes) {
        Some(used) => Ok(used),
        None => one::<IgnoredAny>(bytes).map(|(_, used)| used),
    }
}

/// Reads a suite file, calling `visitor` for the suite name, every case and the details log path.
/// Its cases are parsed on both cores (`hive check` reads one run).
pub fn read_suite(
    reader: impl Read + Send,
    visitor: &mut (impl SuiteVisitor + Send),
) -> Result<(), SuiteError> {
    read_suite_with(reader, visitor, INITIAL_BUFFER, read_cases_split)
}

/// [`read_suite`] on one core, with a 256 KiB buffer (larger ones were no faster): for callers that already read several
/// runs at once on both cores (`hive history`, `hive diff`).
pub(crate) fn read_suite_one_core(
    reader: impl Read,
    visitor: &mut impl SuiteVisitor,
) -> Result<(), SuiteError> {
    read_suite_with(reader, visitor, 256 << 10, |c, visitor| {
        if opens_cases(c)? {
            read_cases_one_by_one(c, visitor)?;
        }
        Ok(())
    })
}

/// [`read_suite`], a large buffer of cases parsed on both cores (`split`) or every case in turn
/// (the reference the split reading is tested against).
fn read_suite_with<R: Read, V: SuiteVisitor>(
    reader: R,
    visitor: &mut V,
    buffer: usize,
    cases: impl FnOnce(&mut Cursor<R>, &mut V) -> Result<(), SuiteError>,
) -> Result<(), SuiteError> {
    let mut c = Cursor {
        reader,
        buf: vec![0; buffer],
        start: 0,
        end: 0,
        consumed: 0,
        eof: false,
    };
    c.expect(b'{', "a JSON object (a hive suite file)")?;
    if c.peek()? == Some(b'}') {
        return Ok(());
    }
    // A second `name` would rename the suite after its first cases were classified.
    let mut seen: Vec<&'static str> = Vec::new();
    let mut cases = Some(cases);
    loop {
        let key: String = c.value(|b| one::<Cow<str>>(b).map(|(k, n)| (k.into_owned(), n)))?;
        if let Some(field) = ["name", "testDetailsLog", "testCases"]
            .into_iter()
            .find(|f| *f == key)
        {
            if seen.contains(&field) {
                return Err(c.error(format!("duplicate field `{field}` in the suite object")));
            }
            seen.push(field);
        }
        c.expect(b':', "':'")?;
        match key.as_str() {
            "name" => {
                let name: String =
                    c.value(|b| one::<Cow<str>>(b).map(|(k, n)| (k.into_owned(), n)))?;
                visitor.suite_name(&name);
            }
            "testDetailsLog" => {
                let path: Option<String> = c.value(|b| {
                    one::<Option<Cow<str>>>(b).map(|(k, n)| (k.map(Cow::into_owned), n))
                })?;
                if let Some(p) = path.filter(|p| !p.is_empty()) {
                    visitor.test_details_log(&p);
                }
            }
            "testCases" if c.peek()? == Some(b'{') => match cases.take() {
                Some(read) => read(&mut c, visitor)?,
                None => return Err(c.error("duplicate field `testCases` in the suite object")),
            },
            "clientVersions" | "runMetadata" => {
                let v: serde_json::Value = c.value(|b| one::<serde_json::Value>(b))?;
                let sources = match key.as_str() {
                    "clientVersions" => SuiteSources {
                        client_versions: v
                            .as_object()
                            .into_iter()
                            .flatten()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                            .collect(),
                        ..SuiteSources::default()
                    },
                    _ => SuiteSources {
                        hive_command: strings(&v["hiveCommand"]).map(str::to_string).collect(),
                        ..SuiteSources::default()
                    },
                };
                visitor.sources(&sources);
            }
            _ => {
                c.value(|b| one::<IgnoredAny>(b))?;
            }
        }
        match c.peek()? {
            Some(b',') => c.start += 1,
            Some(b'}') => {
                c.start += 1;
                break;
            }
            Some(b) => {
                return Err(c.error(format!(
                    "expected ',' or '}}' after a suite field, found {:?}",
                    b as char
                )))
            }
            None => return Err(c.error("unexpected end of file (truncated suite file?)")),
        }
    }
    match c.peek()? {
        None => Ok(()),
        Some(_) => Err(c.error("unexpected data after the suite object")),
    }
}

/// Buffers of cases smaller than this are parsed on one core.
const SPLIT_MIN: usize = 256 << 10;

/// A case as the visitor sees it, from its parsed form.
fn case_of(raw: RawCase<'_>) -> HiveCase<'_> {
    HiveCase {
        name: raw.name,
        pass: raw.summary.pass == Some(true),
        timeout: raw.summary.timeout == Some(true),
        multi_test_context: raw.multi_test_context == Some(true),
        // Failure text is kept only where it may be shown: failures.
        details: if raw.summary.pass == Some(true) {
            None
        } else {
            raw.summary.details
        },
        log: raw.summary.log.map(|l| (l.begin, l.end)),
    }
}

/// Cases parsed from a slice of `testCases` members, and where parsing stopped: at `next` (a
/// member start: the first incomplete member, or the stop asked for), or past the object's `}`
/// (`closed`).
struct Members<'b> {
    cases: Vec<HiveCase<'b>>,
    next: usize,
    closed: bool,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// Parses the members of `b` from its start (a member) up to `stop` or the end of the slice;
/// `None` on anything but valid members (the caller then reads case by case, which says what).
fn parse_members(b: &[u8], stop: Option<usize>) -> Option<Members<'_>> {
    let mut out = Members {
        cases: Vec::new(),
        next: 0,
        closed: false,
    };
    let mut i = 0;
    loop {
        out.next = i;
        let key = skip_ws(b, i);
        if stop.is_some_and(|s| i >= s) || key >= b.len() {
            return Some(out);
        }
        let used = match key_value(&b[key..]) {
            Ok(used) => used,
            Err(e) if e.is_eof() => return Some(out),
            Err(_) => return None,
        };
        let colon = skip_ws(b, key + used);
        match b.get(colon) {
            None => return Some(out),
            Some(b':') => {}
            Some(_) => return None,
        }
        let v = skip_ws(b, colon + 1);
        let (case, used) = match case_value(&b[v..]) {
            Ok(x) => x,
            Err(e) if e.is_eof() => return Some(out),
            Err(_) => return None,
        };
        let sep = skip_ws(b, v + used);
        match b.get(sep) {
            None => return Some(out),
            Some(b',') => {
                out.cases.push(case_of(case));
                i = sep + 1;
            }
            Some(b'}') => {
                out.cases.push(case_of(case));
                out.next = sep + 1;
                out.closed = true;
                return Some(out);
            }
            Some(_) => return None,
        }
    }
}

/// A member start near the middle of `b`: a `"<digits>":{"name":"` right after a `,`. Hive's
/// encoder writes compact JSON in field order; an unescaped quote after a `,` is a key, and only
/// test cases are objects whose first field is `name`. A wrong guess only makes a half fail to
/// parse, and the reading falls back to one case at a time.
fn split_point(b: &[u8]) -> Option<usize> {
    let mid = b.len() / 100 * SPLIT_AT_PERCENT;
    let found = mid + memchr::memmem::find(&b[mid..], b"\":{\"name\":\"")?;
    let mut q = found;
    while q > 0 && b[q - 1].is_ascii_digit() {
        q -= 1;
    }
    (q < found && q >= 2 && b[q - 1] == b'"' && b[q - 2] == b',').then_some(q - 1)
}

/// The `testCases` object. With `split`, a large buffer of cases is cut near its middle at a
/// member and both halves are parsed at once, one per core; while this buffer's cases are
/// visited, the second core reads the file on into a spare buffer, which becomes the next one.
/// Anything unusual (no cut, a half that does not parse, a member over the cap, a truncated file)
/// is read case by case from the buffer's start, which reports it exactly as the one-core reading
/// does.
fn read_cases_split<R: Read + Send, V: SuiteVisitor + Send>(
    c: &mut Cursor<R>,
    visitor: &mut V,
) -> Result<(), SuiteError> {
    if !opens_cases(c)? {
        return Ok(());
    }
    // Inside the pool, each join runs its first half here and offers the second to the other
    // worker, which waits spinning a moment before it sleeps: a thread started for each buffer
    // began up to a millisecond late on this VM's idle second core.
    rayon::scope(|_| split_loop(c, visitor))
}

/// What the splitting loop does after a buffer read on one core.
enum Step {
    /// Read on.
    Again,
    /// The object closed.
    Done,
    /// Something odd: the one-case-at-a-time reading takes over from here.
    OneByOne,
}

/// A buffer too small to split (the end of the file, or one large case), parsed on one core.
fn one_core_step<R: Read + Send, V: SuiteVisitor + Send>(
    c: &mut Cursor<R>,
    visitor: &mut V,
) -> Result<Step, SuiteError> {
    let base = c.start;
    let b = &c.buf[base..c.end];
    let Some(members) = parse_members(b, None) else {
        return Ok(Step::OneByOne);
    };
    if members.cases.is_empty() && !members.closed {
        // One member does not fit yet: more input, within the cap of one value.
        if b.len() >= MAX_VALUE || !c.refill()? {
            return Ok(Step::OneByOne);
        }
        return Ok(Step::Again);
    }
    let (next, closed) = (members.next, members.closed);
    for case in members.cases {
        visitor.case(case);
    }
    c.start = base + next;
    Ok(if closed { Step::Done } else { Step::Again })
}

fn split_loop<R: Read + Send, V: SuiteVisitor + Send>(
    c: &mut Cursor<R>,
    visitor: &mut V,
) -> Result<(), SuiteError> {
    let mut spare: Vec<u8> = Vec::new();
    loop {
        if c.peek()?.is_none() {
            return read_cases_one_by_one(c, visitor);
        }
        let base = c.start;
        let b = &c.buf[base..c.end];
        let cut = (b.len() >= SPLIT_MIN).then(|| split_point(b)).flatten();
        let Some(cut) = cut else {
            match one_core_step(c, visitor)? {
                Step::Again => continue,
                Step::Done => return Ok(()),
                Step::OneByOne => return read_cases_one_by_one(c, visitor),
            }
        };
        // The next buffer has the usual size, whatever one large case made of this one.
        if spare.len() != INITIAL_BUFFER {
            spare = vec![0; INITIAL_BUFFER];
        }
        let (reader, eof) = (&mut c.reader, c.eof);
        let ahead = &mut spare[AHEAD_ROOM..];
        let (first, (second, read)) = rayon::join(
            || {
                // The first half is visited while the second is parsed and the file read on.
                let first = parse_members(b, Some(cut))?;
                if first.next != cut || first.closed {
                    return None;
                }
                for case in first.cases {
                    visitor.case(case);
                }
                Some(())
            },
            || {
                let second = parse_members(&b[cut..], None);
                let read = if eof {
                    Ok((0, true))
                } else {
                    fill(reader, ahead)
                };
                (second, read)
            },
        );
        // A read that failed fails the reading: what it had read is lost, and a gap must not
        // be parsed over.
        let (got, at_end) = read?;
        c.eof |= at_end;
        let fresh = AHEAD_ROOM..AHEAD_ROOM + got;
        let parsed = match (first, second) {
            (Some(()), Some(second)) => {
                for case in second.cases {
                    visitor.case(case);
                }
                Some((cut + second.next, second.closed))
            }
            (None, _) => None,
            // The first half was visited: the one-core reading goes on from the cut.
            (Some(()), None) => {
                c.start = base + cut;
                c.append(&spare[fresh]);
                return read_cases_one_by_one(c, visitor);
            }
        };
        match parsed {
            Some((next, true)) => {
                // The object closed: what was read ahead follows it.
                c.start = base + next;
                c.append(&spare[fresh]);
                return Ok(());
            }
            Some((next, false)) if c.end - (base + next) <= AHEAD_ROOM => {
                // The unread tail (a part of a member) goes just before the new bytes, and the
                // spare buffer becomes the buffer: no copy of what was read.
                let tail = base + next..c.end;
                let at = AHEAD_ROOM - tail.len();
                spare[at..AHEAD_ROOM].copy_from_slice(&c.buf[tail.clone()]);
                c.consumed += (tail.start - at) as u64;
                std::mem::swap(&mut c.buf, &mut spare);
                c.start = at;
                c.end = fresh.end;
            }
            Some((next, false)) => {
                c.start = base + next;
                c.append(&spare[fresh]);
            }
            None => {
                c.append(&spare[fresh]);
                return read_cases_one_by_one(c, visitor);
            }
        }
    }
}

/// Where a buffer is cut: the second core also reads the file on, so it parses less.
const SPLIT_AT_PERCENT: usize = 70;

/// Past the `{` of `testCases`: whether it has members (an empty object is consumed whole).
fn opens_cases<R: Read>(c: &mut Cursor<R>) -> Result<bool, SuiteError> {
    c.expect(b'{', "'{'")?;
    if c.peek()? == Some(b'}') {
        c.start += 1;
        return Ok(false);
    }
    Ok(true)
}

/// Room kept before the bytes read ahead, for the part of a member the last buffer ended in.
const AHEAD_ROOM: usize = 64 << 10;

/// Reads into `buf` until it is full or the file ends: the bytes read, and whether it ended.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<(usize, bool)> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => return Ok((got, true)),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((got, false))
}

/// The members of `testCases` from the cursor on (at a member), one case at a time.
fn read_cases_one_by_one<R: Read>(
    c: &mut Cursor<R>,
    visitor: &mut impl SuiteVisitor,
) -> Result<(), SuiteError> {
    loop {
        c.value(|b| key_value(b).map(|n| ((), n)))?; // the test id: not stable across runs
        c.expect(b':', "':'")?;
        // The visitor sees each case while it is still in the buffer: no copy for passing cases.
        c.value(|b| {
            case_value(b).map(|(raw, n)| {
                visitor.case(case_of(raw));
                ((), n)
            })
        })?;
        match c.peek()? {
            Some(b',') => c.start += 1,
            Some(b'}') => {
                c.start += 1;
                return Ok(());
            }
            Some(b) => {
                return Err(c.error(format!(
                    "expected ',' or '}}' between test cases, found {:?}",
                    b as char
                )))
            }
            None => {
                return Err(
                    c.error("unexpected end of file inside testCases (truncated suite file?)")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Set on a test's thread: cases are read by serde_json alone, as before the scanner.
        pub(super) static SERDE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// What a reading reports (every visitor call, or the error): split (with the scanner), or
    /// the reference: one core, serde_json alone, one case at a time (the reader before this
    /// round's speed work).
    fn transcript(bytes: &[u8], split: bool) -> String {
        let mut c = Collect::default();
        let r = if split {
            read_suite(bytes, &mut c)
        } else {
            SERDE_ONLY.with(|only| only.set(true));
            let r = read_suite_one_core(bytes, &mut c);
            SERDE_ONLY.with(|only| only.set(false));
            r
        };
        format!(
            "{:?} {:?} {:?} {:?}",
            c.name,
            c.log,
            c.cases,
            r.map_err(|e| e.to_string())
        )
    }

    /// The split reading with the scanner reports exactly what the one-core reading with
    /// serde_json alone does (and, below, the one-core reading with the scanner): on every fixture, and
    /// on generated files with escapes, duplicate names, huge details, non-UTF-8, a member that
    /// looks like a cut inside a string, malformed and truncated members anywhere.
    #[test]
    fn split_reading_is_the_one_core_reading() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hive");
        let mut files = Vec::new();
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            if dir.is_dir() {
                for f in std::fs::read_dir(&dir).unwrap() {
                    let f = f.unwrap().path();
                    if f.extension().is_some_and(|x| x == "json") {
                        files.push(std::fs::read(f).unwrap());
                    }
                }
            }
        }
        assert!(files.len() >= 5);
        let mut cases = String::new();
        for i in 0..6000 {
            if i > 0 {
                cases.push(',');
            }
            let name = match i % 7 {
                0 => format!("t\\\"{i}\\u00e9 (ethrex)"),
                1 => "dup (ethrex)".to_string(),
                _ => format!("test {i} (ethrex)"),
            };
            let details = match i % 997 {
                0 => "x".repeat(300_000),
                1 => r#",\"9\":{\"name\":\"not a case"#.to_string(),
                _ => "d}{][".into(),
            };
            cases.push_str(&format!(
                "\"{i}\":{{\"name\":\"{name}\",\"description\":\"a, b]\",\"summaryResult\":{{\"pass\":{},\"details\":\"{details}\",\"log\":{{\"begin\":1,\"end\":2}}}},\"clientInfo\":{{\"x\":[1,2,{{\"y\":null}}]}}}}",
                i % 5 != 0
            ));
        }
        let good = format!(
            "{{\"name\":\"rpc-compat\",\"testCases\":{{{cases}}},\"testDetailsLog\":\"l.log\"}}"
        );
        assert!(good.len() > 2 * SPLIT_MIN);
        files.push(good.clone().into_bytes());
        for cut in [10, 5000, 700_000, good.len() / 2, good.len() - 3] {
            files.push(good.as_bytes()[..cut].to_vec());
        }
        for at in [400_000, 900_000, 1_200_000, good.len() - 400_000] {
            for bad in [b'\xff', b']', b'"', b','] {
                let mut v = good.clone().into_bytes();
                v[at] = bad;
                files.push(v);
            }
        }
        for f in &files {
            let reference = transcript(f, false);
            assert_eq!(transcript(f, true), reference);
            let mut c = Collect::default();
            let r = read_suite_one_core(f.as_slice(), &mut c).map_err(|e| e.to_string());
            assert_eq!(
                format!("{:?} {:?} {:?} {:?}", c.name, c.log, c.cases, r),
                reference
            );
        }
        // Reads of odd sizes (the reading ahead fills a buffer from many), then a read that
        // fails part-way: an error, never a gap parsed over.
        struct Uneven<'a> {
            rest: &'a [u8],
            step: usize,
            fail_at: Option<usize>,
        }
        impl Read for Uneven<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.fail_at.is_some_and(|f| f >= self.rest.len()) {
                    return Err(io::Error::other("the disk went away"));
                }
                self.step = self.step % 70_001 + 9_973;
                let n = self.step.min(buf.len()).min(self.rest.len());
                buf[..n].copy_from_slice(&self.rest[..n]);
                self.rest = &self.rest[n..];
                Ok(n)
            }
        }
        let uneven = |fail_at| {
            let mut c = Collect::default();
            let r = read_suite(
                Uneven {
                    rest: good.as_bytes(),
                    step: 1,
                    fail_at,
                },
                &mut c,
            );
            (c.cases.len(), r.map_err(|e| e.to_string()))
        };
        assert_eq!(
            format!("{:?}", uneven(None)),
            format!("{:?}", (6000, Ok::<(), String>(())))
        );
        let (_, failed) = uneven(Some(good.len() / 3));
        assert_eq!(failed, Err("the disk went away".to_string()));
    }

    #[test]
    fn a_duplicated_suite_name_is_an_error() {
        let text = r#"{"name":"rpc-compat","testCases":{},"name":"engine"}"#;
        let err = read_suite(text.as_bytes(), &mut Collect::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "byte 42: duplicate field `name` in the suite object"
        );
    }

    #[derive(Default)]
    struct Collect {
        name: Option<String>,
        log: Option<String>,
        cases: Vec<HiveCase<'static>>,
    }

    impl SuiteVisitor for Collect {
        fn suite_name(&mut self, name: &str) {
            self.name = Some(name.into());
        }
        fn case(&mut self, case: HiveCase<'_>) {
            self.cases.push(case.into_owned());
        }
        fn test_details_log(&mut self, path: &str) {
            self.log = Some(path.into());
        }
    }

    fn read(text: &str) -> Result<Collect, SuiteError> {
        let mut c = Collect::default();
        read_suite(text.as_bytes(), &mut c).map(|_| c)
    }

    #[test]
    fn current_format_with_log_offsets_and_multi_test_context() {
        let text = r#"{"id":0,"name":"rpc-compat","runMetadata":{"hiveCommand":["hive"]},"testCases":{"1":{"name":"client launch (ethrex)","summaryResult":{"pass":true},"clientInfo":{"a":{}}},"2":{"name":"eth_getLogs/no-topics (ethrex)","summaryResult":{"pass":false,"log":{"begin":10,"end":20}},"clientInfo":null},"3":{"name":"owner","summaryResult":{"pass":true},"multiTestContext":true,"unknown":[1,{"x":"}"}]}},"simLog":"s.log","testDetailsLog":"details/1.log"}"#;
        let c = read(text).unwrap();
        assert_eq!(c.name.as_deref(), Some("rpc-compat"));
        assert_eq!(c.log.as_deref(), Some("details/1.log"));
        assert_eq!(c.cases.len(), 3);
        assert_eq!(c.cases[1].log, Some((10, 20)));
        assert!(!c.cases[1].pass && c.cases[2].multi_test_context);
    }

    #[test]
    fn tiny_buffer_refills_across_values() {
        // Force many refills by reading one byte at a time.
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() || buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = self.0[0];
                self.0 = &self.0[1..];
                Ok(1)
            }
        }
        let text = r#" { "name" : "s\"x" , "testCases" : { "1" : { "name" : "a (c)" , "summaryResult" : { "pass" : false , "details" : "boom\nline2" } } } } "#;
        let mut c = Collect::default();
        read_suite(OneByte(text.as_bytes()), &mut c).unwrap();
        assert_eq!(c.name.as_deref(), Some("s\"x"));
        assert_eq!(c.cases[0].details.as_deref(), Some("boom\nline2"));
    }

    #[test]
    fn truncated_and_malformed_files_are_errors_with_offsets() {
        for bad in [
            r#"{"name":"x","testCases":{"1":{"name":"a","summaryResult":{"pass":tr"#,
            "[1,2]",
            r#"{"name":"x"} junk"#,
            "",
        ] {
            let err = read(bad).err().unwrap_or_else(|| panic!("{bad} parsed"));
            assert!(err.to_string().starts_with("byte "), "{err}");
        }
        assert!(
            read(r#"{"testCases":{"1":{"summaryResult":{"pass":true}}}}"#).is_err(),
            "a case without a name"
        );
    }
}
