//! A problem at a place in a registry file: what `lint` reports and what loading a registry
//! returns.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::markup::text_value;

/// A problem at a place in a file. Line and column are 1-based; 0 means "the whole file".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub(crate) path: PathBuf,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) message: String,
}

impl Diagnostic {
    pub(crate) fn new(path: &Path, line: usize, column: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    /// The GitHub Actions workflow command for this problem.
    pub(crate) fn github_annotation(&self) -> String {
        let mut props = vec![("file", self.path.display().to_string())];
        if self.line > 0 {
            props.push(("line", self.line.to_string()));
            props.push(("col", self.column.to_string()));
        }
        crate::markup::github_annotation("error", &props, &self.message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // File names and messages carry registry text: one line, never a `::` command.
        let path = self.path.display().to_string();
        let (path, message) = (text_value(&path), text_value(&self.message));
        if self.line == 0 {
            write!(f, "{path}: {message}")
        } else {
            write!(f, "{path}:{}:{}: {message}", self.line, self.column)
        }
    }
}
