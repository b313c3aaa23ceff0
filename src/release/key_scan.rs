//! Finding a minisign secret key committed by mistake, in whatever shape it was pasted: a key
//! file, `MINISIGN_SECRET_KEY=<base64>` in a `.env`, a YAML or JSON value, after `export`,
//! without its `=` padding, wrapped at 76 columns, in Latin-1, UTF-16 or behind a BOM, in a file
//! of any size.
//!
//! Every secret key's base64 starts with one of two fixed prefixes (`Ed`, the KDF, `B2`):
//! `RWRTY0Iy` when encrypted, `RWQAAEIy` when not. The scanner looks for the prefix in the bytes
//! (or in their UTF-16 form), gathers the next 211 base64 characters across line breaks and
//! indentation, and asks `keys::secret_key_line` whether they are a key. A look-alike (right
//! prefix, inconsistent key) does not count.
//!
//! A key re-encoded the usual ways is found too: the key file (or its key line) base64-encoded
//! once more (`base64 minisign.key` into a CI variable), wrapped or not, and JSON-escaped. Those
//! prefixes and the file's `untrusted comment:` have fixed base64 forms at each of the three
//! alignments; around such a match the base64 run is decoded and scanned again. The same goes
//! for hex (`xxd -p minisign.key`, either case, wrapped), of the text or of the key's raw bytes.
//! Within a key line, JSON's `\/` and `\u002F`, and URL encoding's `%2B`, `%2F` (a key in a
//! query string or form body) read as the characters they stand for.

use std::io::Read;

use regex::bytes::Regex;

use crate::minisign::keys::{secret_key_line, SecretKeyProtection};

/// Base64 characters of a 158-byte key without its padding.
const KEY_CHARS: usize = 211;

/// Bytes kept between chunks: a wrapped, indented key in UTF-16 fits with room to spare.
const OVERLAP: usize = 4096;

const CHUNK: usize = 1 << 20;

/// Compiled once per process: `check` scans every file of a checkout with it.
fn prefixes() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    // UTF-16 big-endian text holds the little-endian pattern one byte in.
    RE.get_or_init(|| {
        Regex::new(
            r"(?-u)RWRTY0Iy|RWQAAEIy|R\x00W\x00(?:R\x00T\x00Y\x000\x00|Q\x00A\x00A\x00E\x00)I\x00y",
        )
        .expect("static regex")
    })
}

/// What a key (or key file) looks like once base64-encoded again: the prefixes and the key file's
/// first words, at each of the three byte alignments (only the characters those bytes fix).
fn encoded_prefixes() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(encoded_prefixes_regex)
}

fn encoded_prefixes_regex() -> Regex {
    use base64::Engine as _;
    let mut alternatives = Vec::new();
    for pattern in [&b"RWRTY0Iy"[..], b"RWQAAEIy", b"untrusted comment:"] {
        for k in 0..3usize {
            let mut bytes = vec![0u8; k];
            bytes.extend_from_slice(pattern);
            bytes.extend_from_slice(&[0, 0]);
            let enc = base64::engine::general_purpose::STANDARD.encode(&bytes);
            let (from, to) = ((k * 8).div_ceil(6), (k + pattern.len()) * 8 / 6);
            alternatives.push(regex::escape(&enc[from..to]));
        }
    }
    Regex::new(&format!("(?-u){}", alternatives.join("|"))).expect("static regex")
}

/// The most bytes of a re-encoded run decoded around a match: a key file is 316 bytes, 428 in
/// base64, with room for wrapping and a comment of any usual length.
const ENCODED_RUN: usize = 2048;

/// The base64 run around `at` (back and forward over base64, line breaks, indentation and JSON
/// `\n`), decoded at each alignment its start could have; each decoding is scanned for a key.
fn decoded_key(bytes: &[u8], at: usize) -> Option<(usize, SecretKeyProtection)> {
    use base64::Engine as _;
    let in_run = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'+' | b'/' | b'=' | b' ' | b'\t' | b'\r' | b'\n' | b'\\')
    };
    let mut start = at;
    while start > 0 && at - start < ENCODED_RUN && in_run(bytes[start - 1]) {
        start -= 1;
    }
    let end = (at..bytes.len().min(at + ENCODED_RUN))
        .find(|&i| !in_run(bytes[i]))
        .unwrap_or(bytes.len().min(at + ENCODED_RUN));
    // The run's base64 characters, JSON `\n` escapes and whitespace left out.
    let mut run = Vec::with_capacity(end - start);
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'\\' if matches!(bytes.get(i + 1), Some(b'n' | b'r')) => i += 1,
            b'=' | b' ' | b'\t' | b'\r' | b'\n' | b'\\' => {}
            b => run.push(b),
        }
        i += 1;
    }
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone)
            .with_decode_allow_trailing_bits(true),
    );
    (0..4).find_map(|skip| {
        let chars = run.get(skip..)?;
        let usable = chars.len() - chars.len() % 4;
        let decoded = engine.decode(&chars[..usable]).ok()?;
        // One level only: the decoded text is scanned as plain text.
        find_plain(&decoded)
    })
}

/// A key in plain (not re-encoded) form in `bytes`.
fn find_plain(bytes: &[u8]) -> Option<(usize, SecretKeyProtection)> {
    for m in prefixes().find_iter(bytes) {
        let stride = if m.len() > 8 { 2 } else { 1 };
        if let Some(protection) = gather(bytes, m.start(), stride).and_then(|l| secret_key_line(&l))
        {
            return Some((
                bytes[..m.start()].iter().filter(|b| **b == b'\n').count() + 1,
                protection,
            ));
        }
    }
    None
}

/// The 211 base64 characters from `at` on (a UTF-16 match reads every other byte), skipping line
/// breaks, indentation and a JSON `\n`, and reading JSON and URL escapes of `+` and `/`; `None`
/// when they stop short.
fn gather(bytes: &[u8], at: usize, stride: usize) -> Option<String> {
    let mut key = String::with_capacity(KEY_CHARS + 1);
    let mut i = at;
    while key.len() < KEY_CHARS {
        let (c, used) = key_char(|k| bytes.get(i + k * stride).copied())?;
        key.extend(c.map(char::from));
        i += used * stride;
    }
    key.push('=');
    Some(key)
}

/// The key character at the start of `at(0), at(1), …` (`None` for a line break or indentation)
/// and how many units it took; `None` when no key character is there.
fn key_char(at: impl Fn(usize) -> Option<u8>) -> Option<(Option<u8>, usize)> {
    let base64 = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let hex_byte = |from: usize, digits: usize| -> Option<u8> {
        let text: Vec<u8> = (from..from + digits).map(&at).collect::<Option<_>>()?;
        u8::from_str_radix(std::str::from_utf8(&text).ok()?, 16).ok()
    };
    Some(match at(0)? {
        b if base64(b) => (Some(b), 1),
        b' ' | b'\t' | b'\r' | b'\n' => (None, 1),
        b'\\' => match at(1)? {
            b'n' | b'r' => (None, 2),
            b'/' => (Some(b'/'), 2),
            // `\u002F`, `\u002B`: JSON writers that escape every non-alphanumeric.
            b'u' if at(2)? == b'0' && at(3)? == b'0' => {
                let c = hex_byte(4, 2).filter(|&c| base64(c))?;
                (Some(c), 6)
            }
            _ => return None,
        },
        b'%' => match hex_byte(1, 2)? {
            c @ (b'+' | b'/') => (Some(c), 3),
            b'\r' | b'\n' => (None, 3),
            _ => return None,
        },
        _ => return None,
    })
}

/// What a key (or key file) looks like in hex, either case, a line break allowed after the first
/// four bytes: the
/// text's prefixes and `untrusted comment:`, and the raw key's first bytes (`Ed`, KDF, `B2`).
fn hex_prefixes() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        let alternatives: Vec<String> = [
            &b"RWRTY0Iy"[..],
            b"RWQAAEIy",
            b"untrusted comment:",
            RAW_ENCRYPTED,
            RAW_UNENCRYPTED,
        ]
        .iter()
        .map(|p| {
            // The first four bytes unbroken: a literal the regex can look for fast in a file of
            // hashes. (A key file wrapped there is still found by its `untrusted comment:`.)
            let digits = hex::encode(p);
            let (head, tail) = digits.split_at(8);
            let tail: Vec<String> = tail.chars().map(String::from).collect();
            format!(r"{head}\s*{}", tail.join(r"\s*"))
        })
        .collect();
        Regex::new(&format!("(?i-u){}", alternatives.join("|"))).expect("static regex")
    })
}

/// The first bytes of a secret key, decoded: signature algorithm, KDF (scrypt or none), checksum.
const RAW_ENCRYPTED: &[u8] = b"EdScB2";
const RAW_UNENCRYPTED: &[u8] = b"Ed\0\0B2";
/// The bytes of a secret key.
const KEY_BYTES: usize = 158;

/// The hex run from `at` (line breaks and spaces between digits allowed), decoded; a key in it,
/// as text or as the key's raw bytes.
fn hex_key(bytes: &[u8], at: usize) -> Option<SecretKeyProtection> {
    use base64::Engine as _;
    let digits = zeroize::Zeroizing::new(
        bytes[at..]
            .iter()
            .take(2 * ENCODED_RUN)
            .take_while(|b| b.is_ascii_hexdigit() || b.is_ascii_whitespace())
            .filter(|b| b.is_ascii_hexdigit())
            .copied()
            .collect::<Vec<u8>>(),
    );
    let decoded = zeroize::Zeroizing::new(hex::decode(&digits[..digits.len() & !1]).ok()?);
    if decoded.starts_with(RAW_ENCRYPTED) || decoded.starts_with(RAW_UNENCRYPTED) {
        let raw = decoded.get(..KEY_BYTES)?;
        let line = zeroize::Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(raw));
        return secret_key_line(&line);
    }
    find_plain(&decoded).map(|(_, p)| p)
}

/// The first minisign secret key in `reader` (1-based line of its start) and its protection.
/// Reads in 1 MiB chunks: memory stays flat for a file of any size.
pub(crate) fn find_secret_key_in(
    mut reader: impl Read,
) -> std::io::Result<Option<(usize, SecretKeyProtection)>> {
    let re = prefixes();
    let encoded = encoded_prefixes();
    let hex = hex_prefixes();
    // Grows with what is read: a small file never costs a 1 MiB buffer.
    let mut buf: Vec<u8> = Vec::new();
    let mut lines_before = 0usize;
    loop {
        let n = reader.by_ref().take(CHUNK as u64).read_to_end(&mut buf)?;
        let eof = n < CHUNK;
        // Matches starting in the overlap are looked at again with the next chunk.
        let limit = if eof {
            buf.len()
        } else {
            buf.len().saturating_sub(OVERLAP)
        };
        for m in re.find_iter(&buf).take_while(|m| m.start() < limit) {
            let stride = if m.len() > 8 { 2 } else { 1 };
            let Some(line) = gather(&buf, m.start(), stride) else {
                continue;
            };
            if let Some(protection) = secret_key_line(&line) {
                let newlines = buf[..m.start()].iter().filter(|b| **b == b'\n').count();
                return Ok(Some((lines_before + newlines + 1, protection)));
            }
        }
        for m in encoded.find_iter(&buf).take_while(|m| m.start() < limit) {
            if let Some((_, protection)) = decoded_key(&buf, m.start()) {
                let newlines = buf[..m.start()].iter().filter(|b| **b == b'\n').count();
                return Ok(Some((lines_before + newlines + 1, protection)));
            }
        }
        for m in hex.find_iter(&buf).take_while(|m| m.start() < limit) {
            if let Some(protection) = hex_key(&buf, m.start()) {
                let newlines = buf[..m.start()].iter().filter(|b| **b == b'\n').count();
                return Ok(Some((lines_before + newlines + 1, protection)));
            }
        }
        if eof {
            return Ok(None);
        }
        lines_before += buf[..limit].iter().filter(|b| **b == b'\n').count();
        buf.drain(..limit);
    }
}

/// `find_secret_key_in` over text.
pub fn find_secret_key(text: &str) -> Option<(usize, SecretKeyProtection)> {
    find_secret_key_in(text.as_bytes()).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minisign::keys::{generate, Password};

    fn bare(secret_box: &str) -> String {
        secret_box.lines().nth(1).unwrap().to_string()
    }

    #[test]
    fn secret_keys_are_found_in_text_and_look_alikes_are_not() {
        let plain = generate(None).unwrap();
        let text = format!("some notes\n{}", &*plain.secret_box);
        assert_eq!(
            find_secret_key(&text),
            Some((3, SecretKeyProtection::Unencrypted))
        );
        let encrypted = generate(Some(&Password::new("pw".into()))).unwrap();
        assert_eq!(
            find_secret_key(&encrypted.secret_box),
            Some((2, SecretKeyProtection::Encrypted))
        );
        // The right shape, but zeros: the public half does not derive from the seed.
        let zeros = format!("RWQAAEIy{}", "A".repeat(204));
        assert_eq!(find_secret_key(&zeros), None);
        assert_eq!(find_secret_key(&plain.public.to_string()), None);
    }

    #[test]
    fn a_key_across_a_chunk_boundary_is_found_once_and_truncated_keys_are_not() {
        let key = bare(&generate(None).unwrap().secret_box);
        for at in [
            CHUNK - 300,
            CHUNK - 100,
            CHUNK - 8,
            CHUNK - 1,
            CHUNK,
            CHUNK + 5,
        ] {
            let mut bytes = vec![b'\n'; at];
            bytes.extend_from_slice(key.as_bytes());
            bytes.extend_from_slice(b"\ntrailer");
            assert_eq!(
                find_secret_key_in(&bytes[..]).unwrap(),
                Some((at + 1, SecretKeyProtection::Unencrypted)),
                "key at {at}"
            );
        }
        // The prefix at the very end, and a key cut short: nothing, and no panic.
        for cut in [8, 100, 210] {
            let mut bytes = vec![b'x'; CHUNK - 4];
            bytes.extend_from_slice(&key.as_bytes()[..cut]);
            assert_eq!(
                find_secret_key_in(&bytes[..]).unwrap(),
                None,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn re_encoded_keys_are_found_and_an_encoded_public_key_is_not() {
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let wrap = |s: &str, sep: &str| {
            s.as_bytes()
                .chunks(76)
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect::<Vec<_>>()
                .join(sep)
        };
        for (pair, protection) in [
            (generate(None).unwrap(), SecretKeyProtection::Unencrypted),
            (
                generate(Some(&Password::new("pw".into()))).unwrap(),
                SecretKeyProtection::Encrypted,
            ),
        ] {
            let file = pair.secret_box.as_bytes();
            let line = bare(&pair.secret_box);
            let whole = b64(file);
            let shapes = [
                // `base64 -w0 minisign.key` into a variable, and `base64` wrapped at 76.
                format!("MINISIGN_KEY_B64={whole}\n"),
                format!("key: |\n  {}\n", wrap(&whole, "\n  ")),
                // The key line alone, re-encoded, after a few bytes of other text.
                format!("k={}", b64(format!("x{line}").as_bytes())),
                format!("k={}", b64(format!("xy{line}").as_bytes())),
                // Wrapped base64 in a JSON string.
                format!("{{\"key\": \"{}\"}}", wrap(&whole, "\\n")),
            ];
            for shape in &shapes {
                assert_eq!(
                    find_secret_key(shape).map(|(_, p)| p),
                    Some(protection),
                    "{shape}"
                );
            }
            let public = format!("untrusted comment: minisign public key\n{}\n", pair.public);
            assert_eq!(find_secret_key(&b64(public.as_bytes())), None);
        }
    }

    #[test]
    fn escaped_hex_and_url_encoded_keys_are_found() {
        for (pair, protection) in [
            (generate(None).unwrap(), SecretKeyProtection::Unencrypted),
            (
                generate(Some(&Password::new("pw".into()))).unwrap(),
                SecretKeyProtection::Encrypted,
            ),
        ] {
            let file = pair.secret_box.as_bytes();
            let line = bare(&pair.secret_box);
            let raw =
                base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &line).unwrap();
            let wrap = |s: &str, width: usize| {
                s.as_bytes()
                    .chunks(width)
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let shapes = [
                // PHP's json_encode and others write `/` as `\/`; some escape `+` and `/` as `\u`.
                format!("{{\"key\": \"{}\"}}", line.replace('/', "\\/")),
                format!(
                    "{{\"key\": \"{}\"}}",
                    line.replace('+', "\\u002B").replace('/', "\\u002f")
                ),
                // In a query string or a form body.
                format!(
                    "https://example.invalid/?key={}",
                    line.replace('+', "%2B")
                        .replace('/', "%2F")
                        .replace('=', "%3D")
                ),
                format!("key={}", line.replace('+', "%2b").replace('/', "%2f")),
                // `xxd -p minisign.key` (60 digits a line), upper-case hex, and the raw bytes.
                wrap(&hex::encode(file), 60),
                hex::encode_upper(line.as_bytes()),
                format!("SIGNING_KEY_HEX={}\n", hex::encode(&raw)),
                format!("0x{}", wrap(&hex::encode_upper(&raw), 32)),
            ];
            for shape in &shapes {
                assert_eq!(
                    find_secret_key(shape).map(|(_, p)| p),
                    Some(protection),
                    "{shape}"
                );
            }
            // The public key, in each encoding, and a key's hex cut short, are not keys.
            let public = format!("untrusted comment: minisign public key\n{}\n", pair.public);
            for not_a_key in [
                hex::encode(public.as_bytes()),
                hex::encode(&raw[..150]),
                public.replace('/', "\\/").replace('+', "%2B"),
            ] {
                assert_eq!(find_secret_key(&not_a_key), None, "{not_a_key}");
            }
        }
    }

    #[test]
    fn pasted_shapes_are_found() {
        let key = bare(&generate(None).unwrap().secret_box);
        let unpadded = key.trim_end_matches('=');
        let wrapped: Vec<String> = key
            .as_bytes()
            .chunks(76)
            .map(|c| format!("    {}", String::from_utf8_lossy(c)))
            .collect();
        let shapes = [
            format!("MINISIGN_SECRET_KEY={key}\n"),
            format!("export MINISIGN_SECRET_KEY=\"{unpadded}\"\n"),
            format!("signing:\n  key: {key}\n"),
            format!("{{\"minisign\": {{\"key\": \"{unpadded}\"}}}}"),
            format!("key: |\n{}\n", wrapped.join("\n")),
            format!(
                "{{\"k\": \"{}\"}}",
                key.as_bytes()
                    .chunks(76)
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .collect::<Vec<_>>()
                    .join("\\n")
            ),
        ];
        for s in &shapes {
            assert!(find_secret_key(s).is_some(), "{s}");
        }
        // UTF-16 (both byte orders, with a BOM), Latin-1 bytes around it, and a large file.
        let utf16le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(
                format!("K={key}")
                    .encode_utf16()
                    .flat_map(|u| u.to_le_bytes()),
            )
            .collect();
        let utf16be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain(
                format!("K={key}")
                    .encode_utf16()
                    .flat_map(|u| u.to_be_bytes()),
            )
            .collect();
        let latin1: Vec<u8> = [b"caf\xe9 ".as_slice(), key.as_bytes(), b"\n"].concat();
        let large: Vec<u8> =
            [vec![b'x'; 3 * CHUNK - 10].as_slice(), b"\n", key.as_bytes()].concat();
        for bytes in [utf16le, utf16be, latin1] {
            assert!(find_secret_key_in(&bytes[..]).unwrap().is_some());
        }
        assert_eq!(
            find_secret_key_in(&large[..]).unwrap(),
            Some((2, SecretKeyProtection::Unencrypted))
        );
    }
}
