//! The `.minisig` file: untrusted comment, signature line, trusted comment, global signature.
//!
//! Parsed here rather than with the minisign crate, whose parser trims the trusted comment and
//! so rejects valid signatures made by the minisign CLI (reference note §4.2).

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use ed25519_dalek::{Signature as Ed25519Signature, Signer};

use crate::error::ParseError;
use crate::minisign::comment::TrustedComment;
use crate::minisign::keys::{KeyId, PublicKey, SecretKey};

const UNTRUSTED_PREFIX: &str = "untrusted comment: ";
const TRUSTED_PREFIX: &str = "trusted comment: ";
/// What the minisign CLI writes as the untrusted comment.
pub(crate) const DEFAULT_UNTRUSTED_COMMENT: &str = "signature from minisign secret key";

/// The signature algorithm stored in the first two bytes of the signature line.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SignatureAlgorithm {
    /// `ED`: Ed25519 over the BLAKE2b-512 of the file (minisign's default since 0.10).
    Prehashed,
    /// `Ed`: Ed25519 over the whole file (needs it all in memory; signify-compatible).
    Legacy,
    /// Anything else: never verifies.
    Unknown([u8; 2]),
}

impl SignatureAlgorithm {
    fn from_bytes(b: [u8; 2]) -> Self {
        match &b {
            b"ED" => SignatureAlgorithm::Prehashed,
            b"Ed" => SignatureAlgorithm::Legacy,
            _ => SignatureAlgorithm::Unknown(b),
        }
    }

    fn to_bytes(self) -> [u8; 2] {
        match self {
            SignatureAlgorithm::Prehashed => *b"ED",
            SignatureAlgorithm::Legacy => *b"Ed",
            SignatureAlgorithm::Unknown(b) => b,
        }
    }
}

/// A parsed `.minisig` file.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SignatureFile {
    pub(crate) untrusted_comment: String,
    pub(crate) algorithm: SignatureAlgorithm,
    pub(crate) key_id: KeyId,
    pub(crate) signature: [u8; 64],
    pub(crate) trusted_comment: TrustedComment,
    pub(crate) global_signature: [u8; 64],
}

/// Why a signature does not verify.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub(crate) enum SignatureError {
    #[error("signature algorithm {0:?} is not supported")]
    UnknownAlgorithm([u8; 2]),
    #[error("signed by key {signed}, but the trusted key is {trusted}")]
    KeyMismatch { signed: KeyId, trusted: KeyId },
    #[error("the file's signature does not match its contents (altered file or signature)")]
    Data,
    #[error("the trusted comment's signature does not verify (altered trusted comment)")]
    Comment,
}

fn decode_fixed<const N: usize>(
    line_no: usize,
    encoded: &str,
    what: &str,
) -> Result<[u8; N], ParseError> {
    let expected_chars = N.div_ceil(3) * 4;
    if encoded.len() != expected_chars {
        return Err(ParseError::at(
            line_no,
            format!(
                "expected {expected_chars} base64 characters ({what}), found {}",
                encoded.chars().count()
            ),
        ));
    }
    let bytes = BASE64.decode(encoded).map_err(|_| {
        ParseError::at(
            line_no,
            format!("expected {expected_chars} base64 characters ({what}): not valid base64"),
        )
    })?;
    bytes
        .try_into()
        .map_err(|_| ParseError::at(line_no, format!("{what}: does not decode to {N} bytes")))
}

impl SignatureFile {
    /// Parses the four lines. CRLF is tolerated (as by the minisign CLI); the trusted comment is
    /// kept byte for byte.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
        let mut next = |n: usize, what: &str| {
            lines.next().filter(|l| !l.is_empty()).ok_or_else(|| {
                ParseError::at(
                    n,
                    format!("missing: expected {what} (truncated signature file)"),
                )
            })
        };
        let l1 = next(1, "\"untrusted comment: …\"")?;
        let untrusted = l1.strip_prefix(UNTRUSTED_PREFIX).ok_or_else(|| {
            ParseError::at(
                1,
                "expected \"untrusted comment: …\" (not a minisign signature)",
            )
        })?;
        // A CR inside a comment would not survive a round trip (CRLF endings are stripped).
        if untrusted.contains('\r') {
            return Err(ParseError::at(
                1,
                "the untrusted comment contains a carriage return",
            ));
        }
        let l2 = next(2, "the base64 signature line")?;
        let sig: [u8; 74] = decode_fixed(2, l2, "signature")?;
        let l3 = next(3, "\"trusted comment: …\"")?;
        let trusted = l3
            .strip_prefix(TRUSTED_PREFIX)
            .ok_or_else(|| ParseError::at(3, "expected \"trusted comment: …\""))?;
        let trusted_comment = TrustedComment::parse(trusted).map_err(|m| ParseError::at(3, m))?;
        let l4 = next(4, "the base64 global signature line")?;
        let global_signature: [u8; 64] = decode_fixed(4, l4, "global signature")?;
        for (i, rest) in lines.enumerate() {
            if !rest.trim().is_empty() {
                return Err(ParseError::at(
                    i + 5,
                    "unexpected text after the global signature",
                ));
            }
        }
        let mut key_id = [0u8; 8];
        key_id.copy_from_slice(&sig[2..10]);
        let mut signature = [0u8; 64];
        signature.copy_from_slice(&sig[10..74]);
        Ok(SignatureFile {
            untrusted_comment: untrusted.to_string(),
            algorithm: SignatureAlgorithm::from_bytes([sig[0], sig[1]]),
            key_id: KeyId(key_id),
            signature,
            trusted_comment,
            global_signature,
        })
    }

    /// Signs a BLAKE2b-512 prehash and binds the trusted comment. Ed25519 is deterministic, so
    /// for the same key, file and comment this is byte-identical to `minisign -S -t`.
    pub(crate) fn sign_prehashed(
        key: &SecretKey,
        prehash: &[u8; 64],
        trusted_comment: TrustedComment,
    ) -> Self {
        let signing = key.signing_key();
        let signature = signing.sign(prehash).to_bytes();
        let global_signature = signing
            .sign(&global_message(&signature, &trusted_comment))
            .to_bytes();
        SignatureFile {
            untrusted_comment: DEFAULT_UNTRUSTED_COMMENT.to_string(),
            algorithm: SignatureAlgorithm::Prehashed,
            key_id: key.key_id,
            signature,
            trusted_comment,
            global_signature,
        }
    }

    pub(crate) fn is_prehashed(&self) -> bool {
        self.algorithm == SignatureAlgorithm::Prehashed
    }

    /// Checks the global signature (trusted comment). Cheap: done before reading any data.
    pub(crate) fn verify_comment(&self, key: &PublicKey) -> Result<(), SignatureError> {
        self.check_key(key)?;
        let global = Ed25519Signature::from_bytes(&self.global_signature);
        key.key
            .verify_strict(
                &global_message(&self.signature, &self.trusted_comment),
                &global,
            )
            .map_err(|_| SignatureError::Comment)
    }

    /// Checks the file signature against the message: the BLAKE2b-512 prehash for `ED`
    /// signatures, the whole file for legacy `Ed` ones.
    pub(crate) fn verify_data(
        &self,
        key: &PublicKey,
        message: &[u8],
    ) -> Result<(), SignatureError> {
        self.check_key(key)?;
        if let SignatureAlgorithm::Unknown(b) = self.algorithm {
            return Err(SignatureError::UnknownAlgorithm(b));
        }
        let sig = Ed25519Signature::from_bytes(&self.signature);
        // verify_strict rejects non-canonical and small-order encodings, as libsodium does.
        key.key
            .verify_strict(message, &sig)
            .map_err(|_| SignatureError::Data)
    }

    fn check_key(&self, key: &PublicKey) -> Result<(), SignatureError> {
        if self.key_id != key.key_id {
            return Err(SignatureError::KeyMismatch {
                signed: self.key_id,
                trusted: key.key_id,
            });
        }
        Ok(())
    }
}

fn global_message(signature: &[u8; 64], comment: &TrustedComment) -> Vec<u8> {
    let mut m = Vec::with_capacity(64 + comment.as_str().len());
    m.extend_from_slice(signature);
    m.extend_from_slice(comment.as_str().as_bytes());
    m
}

impl SignatureFile {
    /// The signature line (algorithm, key id, signature) as base64, as in the file.
    pub(crate) fn signature_line(&self) -> String {
        let mut sig = Vec::with_capacity(74);
        sig.extend_from_slice(&self.algorithm.to_bytes());
        sig.extend_from_slice(&self.key_id.0);
        sig.extend_from_slice(&self.signature);
        BASE64.encode(sig)
    }

    /// The signed part of the file (signature line, trusted comment, global signature): what
    /// a transparency log entry records.
    pub(crate) fn signed_lines(&self) -> String {
        format!(
            "{}\n{TRUSTED_PREFIX}{}\n{}\n",
            self.signature_line(),
            self.trusted_comment,
            BASE64.encode(self.global_signature)
        )
    }

    /// Parses the three signed lines back, under a fixed untrusted comment.
    pub(crate) fn from_signed_lines(lines: &str) -> Result<Self, ParseError> {
        Self::parse(&format!(
            "{UNTRUSTED_PREFIX}{DEFAULT_UNTRUSTED_COMMENT}\n{lines}"
        ))
    }
}

impl fmt::Display for SignatureFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{UNTRUSTED_PREFIX}{}", self.untrusted_comment)?;
        writeln!(f, "{}", self.signature_line())?;
        writeln!(f, "{TRUSTED_PREFIX}{}", self.trusted_comment)?;
        writeln!(f, "{}", BASE64.encode(self.global_signature))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // From the reference note §1.3 (a minisign 0.11 signature of an unpublished key).
    const EXAMPLE: &str = "untrusted comment: signature from minisign secret key\nRUREnz4yL9yHHa2yEenbUP/rmIpW1wqr37gvHh/ReNk7/cMZY6HpsbQ7P1fJNpsKjUwyTNQQpsbdyJoLntO/5Izy1zHs9SLZPQo=\ntrusted comment: timestamp:1795996306\tfile:small.bin\thashed\n7YdodJFCYdxip5rD+pFDj+ynBb338ZifWtTCCBulsBxufJgXELLHjfAM9Z/88eCyWNrokQa59hMSWhZ2S3NJDQ==\n";

    #[test]
    fn minisign_cli_signature_round_trips() {
        let sig = SignatureFile::parse(EXAMPLE).unwrap();
        assert!(sig.is_prehashed());
        assert_eq!(
            sig.trusted_comment.value("file").unwrap(),
            Some("small.bin")
        );
        assert_eq!(sig.to_string(), EXAMPLE);
        assert_eq!(
            SignatureFile::parse(&EXAMPLE.replace('\n', "\r\n")).unwrap(),
            sig
        );
    }

    #[test]
    fn carriage_return_inside_the_untrusted_comment_is_rejected() {
        // Found by the minisign_formats fuzzer: such a comment lost one CR per parse/print cycle.
        let bad = EXAMPLE.replace(
            "untrusted comment: signature from minisign secret key",
            "untrusted comment: a\r\r",
        );
        let err = SignatureFile::parse(&bad).unwrap_err();
        assert_eq!(err.line, Some(1));
        assert!(err.message.contains("carriage return"), "{err}");
        // CRLF line endings are still fine.
        assert!(SignatureFile::parse(&EXAMPLE.replace('\n', "\r\n")).is_ok());
    }

    #[test]
    fn truncated_and_garbled_signatures_name_the_line() {
        let lines: Vec<&str> = EXAMPLE.lines().collect();
        assert_eq!(SignatureFile::parse("").unwrap_err().line, Some(1));
        assert_eq!(
            SignatureFile::parse(&lines[..2].join("\n"))
                .unwrap_err()
                .line,
            Some(3)
        );
        assert_eq!(
            SignatureFile::parse(&lines[..3].join("\n"))
                .unwrap_err()
                .line,
            Some(4)
        );
        let garbled = EXAMPLE.replace("RUREnz4y", "RURE!z4y");
        let err = SignatureFile::parse(&garbled).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(
            err.message.contains("expected 100 base64 characters"),
            "{err}"
        );
        let short = EXAMPLE.replace("7YdodJFCYdxip5rD", "7Ydo");
        assert_eq!(SignatureFile::parse(&short).unwrap_err().line, Some(4));
        let extra = format!("{EXAMPLE}junk\n");
        assert_eq!(SignatureFile::parse(&extra).unwrap_err().line, Some(5));
    }
}
