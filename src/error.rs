//! One error type for the library. Every variant names where the problem is; main adds only
//! the `warden:` prefix and maps every error to exit code 2 ("bad input or usage").

use std::io;
use std::path::{Path, PathBuf};

/// Everything that stops a command before it can give an answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input that does not have the expected shape: a key, signature or checksum file.
    /// `origin` is a path or a label such as `$MINISIGN_SECRET_KEY` or `<stdin>`.
    #[error("{origin}{}: {message}", line.map(|l| format!(": line {l}")).unwrap_or_default())]
    Input {
        origin: String,
        line: Option<usize>,
        message: String,
    },
    /// An I/O failure on a named file.
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The command was asked to do something it refuses to do (overwrite a signature, write a
    /// secret key into a git work tree, sign with a key that does not match the public key).
    #[error("{0}")]
    Refused(String),
    /// Arguments that do not fit together.
    #[error("{0}")]
    Usage(String),
    /// GitHub refused or failed a request that the command cannot do without.
    #[error("{0}")]
    Api(String),
}

impl Error {
    pub(crate) fn input(
        origin: impl Into<String>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        Error::Input {
            origin: origin.into(),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn io(action: &'static str, path: impl AsRef<Path>, source: io::Error) -> Self {
        Error::Io {
            action,
            path: path.as_ref().to_path_buf(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a value, a record or a read is not what it must be, in words: the error of the small
/// checks whose callers only say it (a trusted comment's field, a checksum line, a run binding,
/// the shape of an API answer, a read that failed). A type of its own, so that a reason is never
/// taken for data, and `?` turns a message into one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Reason(String);

impl From<String> for Reason {
    fn from(s: String) -> Self {
        Reason(s)
    }
}

/// A reason reads as its words (tests compare it with them).
impl PartialEq<&str> for Reason {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Reason {
    fn eq(&self, other: &String) -> bool {
        self.0 == *other
    }
}

impl From<Reason> for String {
    fn from(r: Reason) -> Self {
        r.0
    }
}

impl From<&str> for Reason {
    fn from(s: &str) -> Self {
        Reason(s.to_string())
    }
}

/// A parse failure inside a text format, before the caller adds the file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ParseError {
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
}

impl ParseError {
    pub(crate) fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            line: Some(line),
            message: message.into(),
        }
    }

    pub(crate) fn whole(message: impl Into<String>) -> Self {
        ParseError {
            line: None,
            message: message.into(),
        }
    }

    /// Attach the file (or label) the text came from.
    pub fn in_origin(self, origin: impl Into<String>) -> Error {
        Error::Input {
            origin: origin.into(),
            line: self.line,
            message: self.message,
        }
    }
}
