//! A workflow file as the rules read it: its YAML document (for positions and spans) and where
//! in it the signing secrets are referenced.

use std::path::PathBuf;

use regex::Regex;
use yamlpath::{Document, Route};

use crate::audit::findings::Location;
use crate::audit::secrets::SigningSecrets;

/// `secrets.NAME` and `secrets['NAME']` in expressions.
pub fn secret_refs() -> Regex {
    Regex::new(
        r#"secrets\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\])"#,
    )
    .expect("valid regex")
}

pub struct Source {
    /// Relative to the repository root.
    pub rel: PathBuf,
    pub doc: Document,
    /// Byte offset of each line's start: a position costs a search, not a scan of the file.
    line_starts: Vec<usize>,
}

impl Source {
    pub fn new(rel: PathBuf, doc: Document) -> Self {
        let line_starts = std::iter::once(0)
            .chain(doc.source().match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source {
            rel,
            doc,
            line_starts,
        }
    }

    /// 1-based (line, column) of a byte offset.
    pub fn point(&self, offset: usize) -> (usize, usize) {
        let text = self.doc.source();
        let offset = offset.min(text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let col = text.get(start..offset).map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// Position of a key (`jobs.build`, `on`), else of the document start.
    pub fn key(&self, route: &Route) -> (usize, usize) {
        self.doc
            .query_key_only(route)
            .map(|f| {
                (
                    f.location.point_span.0 .0 + 1,
                    f.location.point_span.0 .1 + 1,
                )
            })
            .unwrap_or((1, 1))
    }

    /// Byte range of a value.
    pub fn span(&self, route: &Route) -> Option<(usize, usize)> {
        self.doc
            .query_pretty(route)
            .ok()
            .map(|f| f.location.byte_span)
    }

    /// The whole document's byte range.
    pub fn whole(&self) -> (usize, usize) {
        (0, self.doc.source().len())
    }

    pub fn loc(&self, (line, column): (usize, usize), job: Option<&str>) -> Location {
        Location::Workflow {
            path: self.rel.clone(),
            line,
            column,
            job: job.map(str::to_string),
        }
    }

    /// Signing secrets referenced in a byte range (comments skipped): name → first offset.
    pub fn signing_refs(
        &self,
        (start, end): (usize, usize),
        secrets: &SigningSecrets,
        re: &Regex,
    ) -> Vec<(String, usize)> {
        let text = &self.doc.source()[start..end];
        let mut out: Vec<(String, usize)> = Vec::new();
        for c in re.captures_iter(text) {
            let m = c.get(0).map_or(0, |m| m.start()) + start;
            if self.doc.offset_inside_comment(m) {
                continue;
            }
            let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            if secrets.is_signing(name) && !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_string(), m));
            }
        }
        out
    }
}
