//! One test case as read from a suite file: its shape for serde_json (`RawCase`), and the fast
//! path, a scanner for what hive writes (compact JSON, names and keys without escapes) that
//! builds the case straight from the bytes. It accepts only what serde_json accepts, into the
//! same value with the same length; anything else (an escape in a kept string, a duplicate field,
//! a wrong type, a number it does not read, the end of the buffer) is `None`, and the caller
//! parses that case with serde_json, which decides and reports it. Every byte is still checked:
//! ignored values as serde_json's own skip checks them (strings for control characters and
//! escapes, numbers for their grammar), kept strings and keys for UTF-8.

use std::borrow::Cow;

use serde::Deserialize;

#[derive(Deserialize, Debug, PartialEq, Eq)]
pub(super) struct RawLog {
    pub(super) begin: u64,
    pub(super) end: u64,
}

#[derive(Deserialize, Debug, PartialEq, Eq)]
pub(super) struct RawResult<'a> {
    /// Missing or null counts as a failure (as ethrex's checker does).
    #[serde(default)]
    pub(super) pass: Option<bool>,
    #[serde(default)]
    pub(super) timeout: Option<bool>,
    #[serde(default, borrow)]
    pub(super) details: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) log: Option<RawLog>,
}

/// A test case as serde_json reads it; the scanner builds the same value faster when it can.
#[derive(Deserialize, Debug, PartialEq, Eq)]
pub(super) struct RawCase<'a> {
    #[serde(borrow)]
    pub(super) name: Cow<'a, str>,
    #[serde(rename = "summaryResult", borrow)]
    pub(super) summary: RawResult<'a>,
    #[serde(rename = "multiTestContext", default)]
    pub(super) multi_test_context: Option<bool>,
}

/// Deeper ignored values are left to serde_json (which has no limit of its own for them).
const MAX_DEPTH: u32 = 64;

/// The case at the front of `b` (after whitespace) and the bytes it used, or `None`.
pub(super) fn case(b: &[u8]) -> Option<(RawCase<'_>, usize)> {
    let mut s = Scan { b, i: 0 };
    let case = s.case()?;
    Some((case, s.i))
}

/// The length of the string at the front of `b` (after whitespace) when it has no escape, or
/// `None`: a member's key (the test id), which is skipped.
pub(super) fn plain_key(b: &[u8]) -> Option<usize> {
    let mut s = Scan { b, i: 0 };
    s.plain_str()?;
    Some(s.i)
}

/// The index of the first `"`, `\` or control character of `b`: a word at a time, by
/// Mycroft's test for a zero byte (as serde_json scans strings).
fn special(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    let mut at = 0;
    while let Some(word) = b.get(at..at + 8) {
        let x = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let ctrl = x.wrapping_sub(ONES * 0x20) & !x;
        let q = x ^ (ONES * u64::from(b'"'));
        let quote = q.wrapping_sub(ONES) & !q;
        let s = x ^ (ONES * u64::from(b'\\'));
        let slash = s.wrapping_sub(ONES) & !s;
        let hit = (ctrl | quote | slash) & (ONES << 7);
        if hit != 0 {
            return Some(at + hit.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    b[at..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| at + p)
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    /// The next byte after whitespace (as serde_json skips it), not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        while let Some(&c) = self.b.get(self.i) {
            if matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            } else {
                return Some(c);
            }
        }
        None
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string without escapes: its raw bytes (not yet checked for UTF-8).
    #[inline]
    fn plain_str(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        let end = start + special(&self.b[start..])?;
        (self.b[end] == b'"').then(|| {
            self.i = end + 1;
            &self.b[start..end]
        })
    }

    /// A kept string: no escapes, valid UTF-8 (checked with SIMD: names are most of the text).
    fn text(&mut self) -> Option<&'a str> {
        simdutf8::basic::from_utf8(self.plain_str()?).ok()
    }

    /// An ignored string: escapes checked as serde_json's skip checks them, UTF-8 not at all.
    fn skip_str(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let at = self.i + special(&self.b[self.i..])?;
            match self.b[at] {
                b'"' => {
                    self.i = at + 1;
                    return Some(());
                }
                b'\\' => match *self.b.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i = at + 2,
                    b'u' => {
                        let hex = self.b.get(at + 2..at + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        self.i = at + 6;
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    /// An ignored number, by JSON's grammar; one that may go on past the buffer is `None`.
    fn skip_number(&mut self) -> Option<()> {
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match *self.b.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        (self.i < self.b.len()).then_some(())
    }

    /// A `u64` as serde_json reads one: digits, no sign, fraction or exponent, no leading zero.
    /// Nineteen digits at most, which always fit.
    fn unsigned(&mut self) -> Option<u64> {
        self.peek()?;
        let start = self.i;
        let mut value: u64 = 0;
        while let Some(&d) = self.b.get(self.i).filter(|d| d.is_ascii_digit()) {
            if self.i - start == 19 {
                return None;
            }
            value = value * 10 + u64::from(d - b'0');
            self.i += 1;
        }
        let n = self.i - start;
        let next = *self.b.get(self.i)?;
        if n == 0 || (n > 1 && self.b[start] == b'0') || matches!(next, b'.' | b'e' | b'E') {
            return None;
        }
        Some(value)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        (self.b.get(self.i..self.i + word.len())? == word).then(|| self.i += word.len())
    }

    /// `true`, `false` or `null`, as an `Option<bool>`.
    fn optional_bool(&mut self) -> Option<Option<bool>> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| Some(true)),
            b'f' => self.literal(b"false").map(|()| Some(false)),
            b'n' => self.literal(b"null").map(|()| None),
            _ => None,
        }
    }

    fn skip_value(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_str(),
            b'{' => {
                self.enter(depth)?;
                self.members(|s, _| s.skip_value(depth - 1))
            }
            b'[' => {
                self.enter(depth)?;
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.skip_value(depth - 1)?;
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => None,
        }
    }

    /// Past an opening bracket, when the depth allows one more level.
    fn enter(&mut self, depth: u32) -> Option<()> {
        if depth == 0 {
            return None;
        }
        self.i += 1;
        Some(())
    }

    /// The members of an object whose `{` was consumed: `member` reads each value, given its
    /// key (raw bytes, no escapes). An empty object is fine; a trailing comma is not.
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = if self.peek()? == b'"' {
                // A key of an ignored object is skipped like any string; `member` is told an
                // escaped one by an empty key, which no field has.
                let start = self.i;
                match self.plain_str() {
                    Some(k) => k,
                    None => {
                        self.i = start;
                        self.skip_str()?;
                        &[]
                    }
                }
            } else {
                return None;
            };
            self.eat(b':')?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn case(&mut self) -> Option<RawCase<'a>> {
        self.eat(b'{')?;
        let mut name = None;
        let mut summary = None;
        let mut multi: Option<Option<bool>> = None;
        self.struct_members(|s, key| match key {
            b"name" => set(&mut name, Cow::Borrowed(s.text()?)),
            b"summaryResult" => {
                let r = s.result()?;
                set(&mut summary, r)
            }
            b"multiTestContext" => {
                let m = s.optional_bool()?;
                set(&mut multi, m)
            }
            _ => s.skip_value(MAX_DEPTH),
        })?;
        Some(RawCase {
            name: name?,
            summary: summary?,
            multi_test_context: multi.flatten(),
        })
    }

    fn result(&mut self) -> Option<RawResult<'a>> {
        self.eat(b'{')?;
        let (mut pass, mut timeout, mut details, mut log) = (None, None, None, None);
        self.struct_members(|s, key| match key {
            b"pass" => {
                let v = s.optional_bool()?;
                set(&mut pass, v)
            }
            b"timeout" => {
                let v = s.optional_bool()?;
                set(&mut timeout, v)
            }
            b"details" => {
                let v = match s.peek()? {
                    b'n' => s.literal(b"null").map(|()| None)?,
                    _ => Some(Cow::Borrowed(s.text()?)),
                };
                set(&mut details, v)
            }
            b"log" => {
                let v = match s.peek()? {
                    b'n' => s.literal(b"null").map(|()| None)?,
                    _ => Some(s.log()?),
                };
                set(&mut log, v)
            }
            _ => s.skip_value(MAX_DEPTH),
        })?;
        Some(RawResult {
            pass: pass.flatten(),
            timeout: timeout.flatten(),
            details: details.flatten(),
            log: log.flatten(),
        })
    }

    fn log(&mut self) -> Option<RawLog> {
        self.eat(b'{')?;
        let (mut begin, mut end) = (None, None);
        self.struct_members(|s, key| match key {
            b"begin" => {
                let v = s.unsigned()?;
                set(&mut begin, v)
            }
            b"end" => {
                let v = s.unsigned()?;
                set(&mut end, v)
            }
            _ => s.skip_value(MAX_DEPTH),
        })?;
        Some(RawLog {
            begin: begin?,
            end: end?,
        })
    }

    /// The members of one of our structs: keys must be plain UTF-8 (serde_json decodes them
    /// before matching a field name).
    fn struct_members(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>,
    ) -> Option<()> {
        self.members(|s, key| {
            if key.is_empty() || !(key.is_ascii() || simdutf8::basic::from_utf8(key).is_ok()) {
                // Escaped (reported empty), truly empty, or not UTF-8: serde_json decides.
                return None;
            }
            member(s, key)
        })
    }
}

/// Sets a field once: a second occurrence is serde's "duplicate field" error, left to it.
fn set<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

/// The case at the front of `bytes` as serde_json alone reads it, and the bytes it used.
fn case_by_serde(bytes: &[u8]) -> Result<(RawCase<'_>, usize), serde_json::Error> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<RawCase>();
    match stream.next() {
        Some(Ok(case)) => Ok((case, stream.byte_offset())),
        Some(Err(e)) => Err(e),
        None => serde_json::from_slice::<RawCase>(b"").map(|c| (c, 0)),
    }
}

/// Whether the scanner took `bytes`; panics if it took them as something serde_json does not
/// read the same way (the property the tests and the fuzz target `hive_case` check).
pub(super) fn agrees_with_serde(bytes: &[u8]) -> bool {
    let Some(found) = case(bytes) else {
        return false;
    };
    let serde = case_by_serde(bytes).map_err(|e| e.to_string());
    assert_eq!(
        serde,
        Ok(found),
        "the scanner and serde_json differ on {:?}",
        String::from_utf8_lossy(bytes)
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases as hive writes them, and shapes it may: the scanner takes each of them.
    const SEEDS: &[&str] = &[
        r#"{"name":"eth_getBalance (ethrex)","description":"a test","start":"2026-08-01T10:00:00.1Z","end":"2026-08-01T10:00:01Z","summaryResult":{"pass":true,"log":{"begin":0,"end":180}},"clientInfo":{"c0ffee42":{"id":"c0ffee42","ip":"172.17.0.3","name":"ethrex","instantiatedAt":"2026-08-01T10:00:00Z","logFile":"ethrex/client-c0ffee42.log","wasInstantiated":true}}}"#,
        r#"{"name":"t (reth)","summaryResult":{"pass":false,"timeout":true,"details":"boom: line one","log":null},"multiTestContext":true}"#,
        r#" { "name" : "t" , "summaryResult" : { "pass" : null , "details" : null } , "multiTestContext" : null , "x" : [ 1 , -2.5e+3 , 0 , 0.25E-1 , [ ] , { } , "a\"b\\c\u00E9\n" , true , false , null ] }"#,
        r#"{"summaryResult":{"log":{"end":18446744073709551,"begin":0,"more":{"k":[{}]}},"pass":true},"name":"été - café (erigon)","clientInfo":null}"#,
        r#"{"name":"","summaryResult":{}}"#,
    ];

    /// What a change does to a seed: every cut, every byte replaced or inserted by one that
    /// matters to JSON.
    fn variants(seed: &[u8]) -> Vec<Vec<u8>> {
        const BYTES: &[u8] = b"\"\\/{}[]:,0-1.eE+ntfu\x01\x1f\x7f\xc3\xff \n";
        let mut out = Vec::new();
        for at in 0..=seed.len() {
            out.push(seed[..at].to_vec());
            for &b in BYTES {
                if at < seed.len() {
                    let mut v = seed.to_vec();
                    v[at] = b;
                    out.push(v);
                }
                let mut v = seed.to_vec();
                v.insert(at, b);
                out.push(v);
            }
        }
        out
    }

    /// Whatever the scanner accepts, serde_json accepts as the same case with the same length;
    /// what it declines, serde_json decides (and may accept: the scanner is allowed to decline).
    #[test]
    fn what_the_scanner_accepts_serde_reads_the_same() {
        let mut declined = 0;
        let mut total = 0;
        for seed in SEEDS {
            let seed = seed.as_bytes();
            let (case, used) = case(seed).expect("the scanner takes every seed");
            assert_eq!(
                case_by_serde(seed).map_err(|e| e.to_string()),
                Ok((case, used))
            );
            for v in variants(seed) {
                total += 1;
                if !agrees_with_serde(&v) {
                    declined += 1;
                }
            }
        }
        // Most single-byte changes break the JSON, some do not; both kinds occur.
        assert!(
            declined > total / 3 && declined < total,
            "{declined} of {total}"
        );
    }

    /// A duplicate field, a wrong type, an escaped key or name, a number too long to read here:
    /// left to serde_json, which reports or reads them.
    #[test]
    fn it_declines_what_it_does_not_read() {
        for text in [
            r#"{"name":"a","name":"b","summaryResult":{}}"#,
            r#"{"name":"a","summaryResult":{"pass":true,"pass":true}}"#,
            r#"{"name":"a","summaryResult":{"pass":1}}"#,
            r#"{"name":"a\"b","summaryResult":{}}"#,
            r#"{"na\u006de":"a","summaryResult":{}}"#,
            r#"{"name":"a","summaryResult":{"log":{"begin":12345678901234567890,"end":1}}}"#,
            r#"{"name":"a","summaryResult":{"log":{"begin":1.0,"end":1}}}"#,
            r#"{"name":"a","summaryResult":{"log":[1,2]}}"#,
            r#"["a",{}]"#,
            r#"{"name":"a"}"#,
            r#"{"name":"a","summaryResult":{}"#,
        ] {
            assert_eq!(case(text.as_bytes()), None, "{text}");
        }
        let deep = format!(
            r#"{{"name":"a","summaryResult":{{}},"x":{}{}}}"#,
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(case(deep.as_bytes()), None);
        assert!(case_by_serde(deep.as_bytes()).is_ok());
    }

    #[test]
    fn a_key_is_skipped_as_serde_skips_it() {
        for text in [
            r#""123":"#,
            r#""":"#,
            r#""a\"b":"#,
            "\"\x01\":",
            r#""abc"#,
            "12:",
        ] {
            let serde = serde_json::Deserializer::from_slice(text.as_bytes())
                .into_iter::<serde::de::IgnoredAny>()
                .next()
                .and_then(|r| r.ok());
            if let Some(n) = plain_key(text.as_bytes()) {
                assert!(serde.is_some(), "{text}");
                assert_eq!(&text.as_bytes()[n..n + 1], b":", "{text}");
            }
        }
        assert_eq!(plain_key(br#""123":{"#), Some(5));
    }
}
