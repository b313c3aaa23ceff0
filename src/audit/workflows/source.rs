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

pub(crate) struct Source {
    /// Relative to the repository root.
    pub(crate) rel: PathBuf,
    /// The document for positions; `None` when the locator (tree-sitter) cannot read a file the
    /// YAML parser could. Then positions fall back to the job's line: a location that cannot be
    /// found never costs the analysis.
    doc: Option<Document>,
    text: String,
    /// Byte offset of each line's start: a position costs a search, not a scan of the file.
    line_starts: Vec<usize>,
}

impl Source {
    pub(crate) fn new(rel: PathBuf, text: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source {
            rel,
            doc: Document::new(text).ok(),
            text: text.to_string(),
            line_starts,
        }
    }

    /// 1-based (line, column) of a byte offset.
    pub(crate) fn point(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let col = self
            .text
            .get(start..offset)
            .map_or(0, |l| l.chars().count())
            + 1;
        (line, col)
    }

    /// Where a route is when the document cannot say: the line of its job's key (`jobs.<id>`,
    /// the first indented `<id>:` after `jobs:`), else the document start.
    fn fallback(&self, route: &Route) -> (usize, usize) {
        let components = serde_json::to_value(route).unwrap_or_default();
        let keys: Vec<&str> = components["route"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["Key"].as_str())
            .collect();
        let (Some(&"jobs"), Some(id)) = (keys.first(), keys.get(1)) else {
            return (1, 1);
        };
        let mut in_jobs = false;
        for (i, line) in self.text.lines().enumerate() {
            let indented = line.starts_with([' ', '\t']);
            if !indented {
                in_jobs = line.trim_end() == "jobs:";
                continue;
            }
            let trimmed = line.trim_start();
            let bare = trimmed.strip_prefix(id).and_then(|r| r.strip_prefix(':'));
            let quoted = trimmed
                .strip_prefix(['"', '\''])
                .and_then(|r| r.strip_prefix(id))
                .and_then(|r| r.strip_prefix(['"', '\'']))
                .and_then(|r| r.strip_prefix(':'));
            if in_jobs && (bare.is_some() || quoted.is_some()) {
                return (i + 1, line.len() - trimmed.len() + 1);
            }
        }
        (1, 1)
    }

    /// Position of a key (`jobs.build`, `on`), else of its job, else of the document start.
    pub(crate) fn key(&self, route: &Route) -> (usize, usize) {
        self.doc
            .as_ref()
            .and_then(|doc| doc.query_key_only(route).ok())
            .map(|f| {
                (
                    f.location.point_span.0 .0 + 1,
                    f.location.point_span.0 .1 + 1,
                )
            })
            .unwrap_or_else(|| self.fallback(route))
    }

    /// Position of a key, or of a sequence item (a step) where there is no key.
    pub(crate) fn at(&self, route: &Route) -> (usize, usize) {
        let Some(doc) = &self.doc else {
            return self.fallback(route);
        };
        match doc.query_key_only(route) {
            Ok(f) => (
                f.location.point_span.0 .0 + 1,
                f.location.point_span.0 .1 + 1,
            ),
            Err(_) => self
                .span(route)
                .map_or_else(|| self.fallback(route), |(start, _)| self.point(start)),
        }
    }

    /// Byte range of a value.
    pub(crate) fn span(&self, route: &Route) -> Option<(usize, usize)> {
        self.doc
            .as_ref()?
            .query_pretty(route)
            .ok()
            .map(|f| f.location.byte_span)
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
