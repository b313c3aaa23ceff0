//! A workflow file as the rules read it: its YAML document (for positions and spans) and where
//! in it the signing secrets are referenced.

use std::path::PathBuf;

use yamlpath::{Document, Route};

use crate::audit::findings::Location;

/// A parsed workflow: its path, its text (for positions, parsed into a `Source` only while its
/// findings are made), its typed model and its YAML values.
pub(crate) type Parsed = (
    PathBuf,
    String,
    github_actions_models::workflow::Workflow,
    yaml_serde::Value,
);

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
    pub(crate) fn point(&self, offset: usize) -> (usize, usize) {
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

    /// Position of a key, or of a sequence item (a step) where there is no key.
    pub fn at(&self, route: &Route) -> (usize, usize) {
        match self.doc.query_key_only(route) {
            Ok(f) => (
                f.location.point_span.0 .0 + 1,
                f.location.point_span.0 .1 + 1,
            ),
            Err(_) => self
                .span(route)
                .map_or((1, 1), |(start, _)| self.point(start)),
        }
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

    pub(crate) fn loc(&self, (line, column): (usize, usize), job: Option<&str>) -> Location {
        Location::Workflow {
            path: self.rel.clone(),
            line,
            column,
            job: job.map(str::to_string),
        }
    }
}
