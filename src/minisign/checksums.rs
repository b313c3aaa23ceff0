//! `SHA256SUMS` in the GNU coreutils format that `sha256sum -c` reads.
//!
//! Written: `<64 lowercase hex><space><space><name>\n`, sorted by name; a name containing `\`,
//! LF or CR makes the line start with `\` and those characters are escaped as `\\`, `\n`, `\r`
//! (coreutils 9.1). Read: the same, plus `*` (binary mode), upper-case hex, blank lines, BSD
//! `SHA256 (name) = hex` lines, and SHA-512 lists (`sha512sum`'s 128 hex digits, `SHA512 (…)`):
//! one algorithm per list. Names that escape the release directory (absolute, `..`, NUL) are
//! rejected, as is a raw CR (a CRLF file was not written by warden and is treated as malformed).

use crate::error::Reason;
use crate::util::to_hex;
use std::collections::BTreeMap;
use std::fmt;

use crate::error::ParseError;

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ChecksumFile {
    /// Relative name (`/`-separated) → its digest. Sorted by name, as the file is written.
    entries: BTreeMap<String, Listed>,
}

/// A listed file's digest, in its list's algorithm.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Listed {
    Sha256([u8; 32]),
    Sha512([u8; 64]),
}

impl Listed {
    /// Its SHA-256, when the list is a SHA-256 list (GitHub's digests are SHA-256).
    pub(crate) fn sha256(&self) -> Option<&[u8; 32]> {
        match self {
            Listed::Sha256(d) => Some(d),
            Listed::Sha512(_) => None,
        }
    }

    pub(crate) fn is_sha512(&self) -> bool {
        matches!(self, Listed::Sha512(_))
    }

    pub(crate) fn hex(&self) -> String {
        match self {
            Listed::Sha256(d) => to_hex(d),
            Listed::Sha512(d) => to_hex(d),
        }
    }

    fn algorithm(&self) -> &'static str {
        match self {
            Listed::Sha256(_) => "SHA-256",
            Listed::Sha512(_) => "SHA-512",
        }
    }
}

/// A name is safe when it stays inside the directory of the checksum file.
pub fn check_relative_name(name: &str) -> Result<(), Reason> {
    if name.is_empty() {
        return Err("missing file name".into());
    }
    if name.contains('\0') {
        return Err("file name contains a NUL byte".into());
    }
    if name.starts_with('/') {
        return Err(format!(
            "{name:?} is an absolute path; names must be relative to the checksum file"
        )
        .into());
    }
    if name.split('/').any(|c| c == "..") {
        return Err(format!(
            "{name:?} contains \"..\"; names must stay inside the release directory"
        )
        .into());
    }
    Ok(())
}

/// `./a/./b` → `a/b`: the same file under one name (found by the checksums fuzzer, which showed
/// that stripping a single `./` did not round-trip). Empty components (`a//b`) are refused.
fn normalize(name: &str) -> Result<String, Reason> {
    let parts: Vec<&str> = name.split('/').filter(|c| *c != ".").collect();
    if parts.is_empty() || parts.iter().any(|c| c.is_empty()) {
        return Err(format!("{name:?} is not a file name (empty path component)").into());
    }
    Ok(parts.join("/"))
}

fn unescape(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next()? {
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn needs_escape(name: &str) -> bool {
    name.contains(['\\', '\n', '\r'])
}

fn escape(name: &str) -> String {
    name.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

impl ChecksumFile {
    /// Builds the file from (name, digest) pairs. Names must be relative and unique.
    pub(crate) fn new(
        entries: impl IntoIterator<Item = (String, [u8; 32])>,
    ) -> Result<Self, Reason> {
        let mut map = BTreeMap::new();
        for (name, digest) in entries {
            check_relative_name(&name)?;
            if map.insert(name.clone(), Listed::Sha256(digest)).is_some() {
                return Err(format!("{name:?} is listed twice").into());
            }
        }
        Ok(ChecksumFile { entries: map })
    }

    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut entries = BTreeMap::new();
        let body = text.strip_suffix('\n').unwrap_or(text);
        if body.is_empty() {
            return Err(ParseError::whole(
                "empty checksum file: expected lines of \"<sha256>  <file name>\"",
            ));
        }
        for (i, line) in body.split('\n').enumerate() {
            let n = i + 1;
            if line.contains('\r') {
                return Err(ParseError::at(
                    n,
                    "contains a carriage return (CRLF line endings are not accepted)",
                ));
            }
            if line.trim().is_empty() {
                continue;
            }
            let (name, digest) = parse_line(line).map_err(|m| ParseError::at(n, m))?;
            if let Some(first) = entries.values().next() {
                let first: &Listed = first;
                if first.algorithm() != digest.algorithm() {
                    return Err(ParseError::at(
                        n,
                        format!(
                            "a {} line in a {} list: one algorithm per list",
                            digest.algorithm(),
                            first.algorithm()
                        ),
                    ));
                }
            }
            check_relative_name(&name).map_err(|m| ParseError::at(n, m))?;
            let name = normalize(&name).map_err(|m| ParseError::at(n, m))?;
            if entries.insert(name.clone(), digest).is_some() {
                return Err(ParseError::at(n, format!("{name:?} is listed twice")));
            }
        }
        // Blank lines only is as empty as an empty file (found by the checksums fuzzer).
        if entries.is_empty() {
            return Err(ParseError::whole(
                "no checksum lines: expected lines of \"<sha256>  <file name>\"",
            ));
        }
        Ok(ChecksumFile { entries })
    }

    /// A per-file checksum (`app.tar.gz.sha256`) of `subject`: a list of one file, which many
    /// projects write as the bare digest (`sha256sum app | cut -d' ' -f1`) or with the path the
    /// file had when it was hashed (`dist/app`). Either is `subject`'s digest: the sidecar's own
    /// name binds it to `subject`. Anything else parses as a list (and must name `subject`).
    pub(crate) fn parse_sidecar(text: &str, subject: &str) -> Result<Self, ParseError> {
        let body = text.trim_end_matches(['\n', '\r']).trim();
        if let Some(digest) = listed(body) {
            let entries = BTreeMap::from([(subject.to_string(), digest)]);
            return Ok(ChecksumFile { entries });
        }
        let mut list = Self::parse(text)?;
        if list.entries.len() == 1 {
            if let Some((name, digest)) = list.entries.pop_first() {
                let base = name.rsplit('/').next().unwrap_or_default();
                let key = if base == subject { subject } else { &name };
                list.entries.insert(key.to_string(), digest);
            }
        }
        Ok(list)
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, &Listed)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The listed names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

const EXPECTED_LINE: &str = "expected \"<64 hex digits>  <file name>\"";

/// A digest of 64 (SHA-256) or 128 (SHA-512) hex digits.
fn listed(hex: &str) -> Option<Listed> {
    match hex.len() {
        64 => crate::util::from_hex::<32>(hex).map(Listed::Sha256),
        128 => crate::util::from_hex::<64>(hex).map(Listed::Sha512),
        _ => None,
    }
}

fn parse_line(line: &str) -> Result<(String, Listed), Reason> {
    let (escaped, rest) = match line.strip_prefix('\\') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let tagged = rest
        .strip_prefix("SHA256 (")
        .or_else(|| rest.strip_prefix("SHA512 ("));
    let (raw_name, hex) = if let Some(tagged) = tagged {
        // BSD tag format: SHA256 (name) = hex
        let (name, hex) = tagged.rsplit_once(") = ").ok_or_else(|| {
            format!("{EXPECTED_LINE} or \"SHA256 (<file name>) = <64 hex digits>\"")
        })?;
        (name, hex)
    } else {
        let end = rest.find([' ', '*']).filter(|i| *i >= 64).ok_or_else(|| {
            if rest.len() < 64 {
                format!("{EXPECTED_LINE}: line too short")
            } else {
                format!("{EXPECTED_LINE}: missing file name")
            }
        })?;
        let hex = &rest[..end];
        let after = &rest[end..];
        let name = after
            .strip_prefix("  ")
            .or_else(|| after.strip_prefix(" *"))
            .ok_or_else(|| {
                if after.trim().is_empty() {
                    format!("{EXPECTED_LINE}: missing file name")
                } else {
                    format!(
                        "{EXPECTED_LINE}: the digest must be followed by two spaces (or \" *\")"
                    )
                }
            })?;
        (name, hex)
    };
    let digest = listed(hex).ok_or_else(|| {
        format!("{EXPECTED_LINE}: {hex:?} is not 64 (SHA-256) or 128 (SHA-512) hex digits")
    })?;
    let name = if escaped {
        unescape(raw_name)
            .ok_or_else(|| "invalid escape in file name (only \\\\, \\n and \\r)".to_string())?
    } else {
        raw_name.to_string()
    };
    if name.is_empty() {
        return Err(format!("{EXPECTED_LINE}: missing file name").into());
    }
    Ok((name, digest))
}

impl fmt::Display for ChecksumFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, digest) in &self.entries {
            if needs_escape(name) {
                writeln!(f, "\\{}  {}", digest.hex(), escape(name))?;
            } else {
                writeln!(f, "{}  {}", digest.hex(), name)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY_SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn a_per_file_checksum_is_its_file_s_digest() {
        let one = |text: &str| {
            ChecksumFile::parse_sidecar(text, "app.tar.gz")
                .map(|l| l.names().map(str::to_string).collect::<Vec<_>>())
                .map_err(|e| e.to_string())
        };
        let named = Ok(vec!["app.tar.gz".to_string()]);
        assert_eq!(one(&format!("{EMPTY_SHA}\n")), named);
        assert_eq!(one(&format!("{}\r\n", EMPTY_SHA.to_uppercase())), named);
        assert_eq!(one(&format!("{EMPTY_SHA}  app.tar.gz\n")), named);
        assert_eq!(one(&format!("{EMPTY_SHA} *dist/app.tar.gz\n")), named);
        // Another file's name stays that name (and the file beside it is not listed).
        assert_eq!(
            one(&format!("{EMPTY_SHA}  other.tar.gz\n")),
            Ok(vec!["other.tar.gz".to_string()])
        );
        assert_eq!(
            one(&format!("{EMPTY_SHA}  a\n{EMPTY_SHA}  app.tar.gz\n")),
            Ok(vec!["a".to_string(), "app.tar.gz".to_string()])
        );
        assert!(one("not a digest\n").is_err());
    }

    fn digest() -> [u8; 32] {
        crate::util::from_hex(EMPTY_SHA).unwrap()
    }

    #[test]
    fn writes_sorted_gnu_lines_with_escapes() {
        let file = ChecksumFile::new([
            ("b.tar.gz".to_string(), digest()),
            ("a b.txt".to_string(), digest()),
            ("back\\slash".to_string(), digest()),
            ("new\nline".to_string(), digest()),
        ])
        .unwrap();
        let text = file.to_string();
        assert_eq!(
            text,
            format!(
                "{EMPTY_SHA}  a b.txt\n{EMPTY_SHA}  b.tar.gz\n\\{EMPTY_SHA}  back\\\\slash\n\\{EMPTY_SHA}  new\\nline\n"
            )
        );
        assert_eq!(ChecksumFile::parse(&text).unwrap(), file);
    }

    #[test]
    fn reads_binary_mode_bsd_tags_and_uppercase() {
        let text = format!(
            "{} *a\nSHA256 (b) = {EMPTY_SHA}\n./c  {EMPTY_SHA}\n",
            EMPTY_SHA.to_uppercase()
        );
        let err = ChecksumFile::parse(&text).unwrap_err();
        assert_eq!(err.line, Some(3)); // name before hash is not a format
        let text = format!(
            "{} *a\nSHA256 (b) = {EMPTY_SHA}\n{EMPTY_SHA}  ./c\n\n",
            EMPTY_SHA.to_uppercase()
        );
        let file = ChecksumFile::parse(&text).unwrap();
        let names: Vec<_> = file.entries().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    /// SHA-512 lists (`sha512sum`, `sha512sum --tag`) read as such; one algorithm per list.
    #[test]
    fn sha512_lists_and_one_algorithm_per_list() {
        let h512 = "ab".repeat(64);
        let file =
            ChecksumFile::parse(&format!("{h512}  a\nSHA512 (b) = {h512}\n{h512} *./c\n")).unwrap();
        let all: Vec<(&str, bool)> = file.entries().map(|(n, d)| (n, d.is_sha512())).collect();
        assert_eq!(all, [("a", true), ("b", true), ("c", true)]);
        assert_eq!(ChecksumFile::parse(&file.to_string()).unwrap(), file);
        let mixed = ChecksumFile::parse(&format!("{EMPTY_SHA}  a\n{h512}  b\n")).unwrap_err();
        assert_eq!(
            mixed.to_string(),
            "line 2: a SHA-512 line in a SHA-256 list: one algorithm per list"
        );
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let cases = [
            (
                format!("{EMPTY_SHA}  ok\nzz{}  bad\n", &EMPTY_SHA[2..]),
                2,
                "is not 64 (SHA-256) or 128 (SHA-512) hex digits",
            ),
            (format!("{EMPTY_SHA}\n"), 1, "missing file name"),
            (format!("{EMPTY_SHA}  ../x\n"), 1, "\"..\""),
            (format!("{EMPTY_SHA}  /etc/passwd\n"), 1, "absolute"),
            (format!("{EMPTY_SHA}  a\r\n"), 1, "carriage return"),
            (format!("{EMPTY_SHA}  a\0b\n"), 1, "NUL"),
            (format!("{EMPTY_SHA}  a\n{EMPTY_SHA}  a\n"), 2, "twice"),
            (format!("{EMPTY_SHA} a\n"), 1, "two spaces"),
            (format!("\\{EMPTY_SHA}  a\\qb\n"), 1, "escape"),
        ];
        for (text, line, words) in cases {
            let err = ChecksumFile::parse(&text).unwrap_err();
            assert_eq!(err.line, Some(line), "{text:?}: {err}");
            assert!(err.message.contains(words), "{text:?}: {err}");
        }
        assert!(ChecksumFile::parse("").is_err());
        assert!(ChecksumFile::parse("  ").is_err(), "blank lines only");
        let dotted = ChecksumFile::parse(&format!("{EMPTY_SHA}  ././a/./b\n")).unwrap();
        assert_eq!(dotted.entries().next().unwrap().0, "a/b");
        assert_eq!(ChecksumFile::parse(&dotted.to_string()).unwrap(), dotted);
        assert!(ChecksumFile::parse(&format!("{EMPTY_SHA}  a//b\n")).is_err());
        assert!(ChecksumFile::parse(&format!("{EMPTY_SHA}  ./\n")).is_err());
        assert!(
            ChecksumFile::parse(&format!("{EMPTY_SHA}  ./a\n{EMPTY_SHA}  a\n")).is_err(),
            "the same file twice"
        );
        assert!(ChecksumFile::parse("\n\n").is_err());
    }
}
