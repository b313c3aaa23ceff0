//! One log entry: one release signature, checkable without trusting the log. It records the
//! signing key (id and bytes), the signed file's name and SHA-256, and the signature's signed
//! lines — the trusted comment (tag, commit, repository, run binding) with the global signature
//! over it, so anyone can check that the key holder made the entry's claims.

use std::fmt;

use crate::error::{ParseError, Reason};
use crate::minisign::{PublicKey, SignatureFile};
use crate::util::{from_hex, to_hex};

const HEADER: &str = "release-warden/log-entry/v1";
/// Entry bundles store an entry's length in two bytes.
pub(crate) const MAX_ENTRY_BYTES: usize = u16::MAX as usize;

/// A release signature as the log records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) key: PublicKey,
    pub(crate) file: String,
    pub(crate) sha256: [u8; 32],
    pub(crate) signature: SignatureFile,
}

impl Entry {
    /// The entry of `signature` (by `key`) over the file `file` whose SHA-256 is `sha256`.
    pub(crate) fn new(
        key: &PublicKey,
        file: &str,
        sha256: [u8; 32],
        signature: &SignatureFile,
    ) -> Result<Self, Reason> {
        if file.is_empty() || file.chars().any(|c| c.is_control()) {
            return Err(
                format!("{file:?}: a file name with a control character cannot be logged").into(),
            );
        }
        let entry = Entry {
            key: key.clone(),
            file: file.to_string(),
            sha256,
            signature: signature.clone(),
        };
        if entry.to_string().len() > MAX_ENTRY_BYTES {
            return Err(
                "the signature's trusted comment is too long for a log entry (64 KiB)".into(),
            );
        }
        Ok(entry)
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        self.to_string().into_bytes()
    }

    /// Parses an entry and checks what it can check alone: the key signed the trusted comment.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let text = std::str::from_utf8(bytes).map_err(|_| ParseError::whole("not UTF-8"))?;
        lines_header(text)?;
        let mut lines = text.split_inclusive('\n').skip(1);
        let mut field = |n: usize, name: &str| -> Result<&str, ParseError> {
            let line = lines
                .next()
                .and_then(|l| l.strip_suffix('\n'))
                .ok_or_else(|| ParseError::at(n, format!("missing: expected `{name} …`")))?;
            line.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(' '))
                .ok_or_else(|| ParseError::at(n, format!("expected `{name} …`")))
        };
        let key_field = field(2, "key")?;
        let (id, key) = key_field
            .split_once(' ')
            .ok_or_else(|| ParseError::at(2, "expected `key KEYID PUBLICKEY`"))?;
        let key = PublicKey::from_base64(key).map_err(|e| ParseError::at(2, e.to_string()))?;
        if key.key_id.to_string() != id {
            return Err(ParseError::at(2, "the key id does not match the key"));
        }
        let file = field(3, "file")?.to_string();
        let sha256 = from_hex::<32>(field(4, "sha256")?)
            .ok_or_else(|| ParseError::at(4, "expected 64 hex digits"))?;
        let rest: String = lines.collect();
        let signature = SignatureFile::from_signed_lines(&rest).map_err(|e| ParseError {
            line: e.line.map(|l| l + 3),
            message: e.message,
        })?;
        signature
            .verify_comment(&key)
            .map_err(|e| ParseError::whole(format!("the entry's signature: {e}")))?;
        let entry = Entry {
            key,
            file,
            sha256,
            signature,
        };
        if entry.to_bytes() != bytes {
            return Err(ParseError::whole("not in the canonical form warden writes"));
        }
        Ok(entry)
    }

    /// The leaf hash of this entry in the Merkle tree.
    pub(crate) fn leaf_hash(&self) -> tlog_tiles::Hash {
        tlog_tiles::record_hash(&self.to_bytes())
    }
}

fn lines_header(text: &str) -> Result<&str, ParseError> {
    match text.split_once('\n') {
        Some((HEADER, _)) => Ok(HEADER),
        _ => Err(ParseError::at(
            1,
            format!("expected `{HEADER}` (not a warden log entry)"),
        )),
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{HEADER}")?;
        writeln!(f, "key {} {}", self.key.key_id, self.key.to_base64())?;
        writeln!(f, "file {}", self.file)?;
        writeln!(f, "sha256 {}", to_hex(&self.sha256))?;
        write!(f, "{}", self.signature.signed_lines())
    }
}
