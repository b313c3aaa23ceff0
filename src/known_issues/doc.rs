//! The known-issues doc (`docs/known_issues.md` by default): generated deterministically from the
//! registry by `warden known-issues render`, and checked for freshness by `render --check` and
//! `warden check`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::schema::{IssueStatus, Registry};
use crate::error::{Error, Result};
use crate::files::{atomic, guarded, paths};
use crate::markup::markdown_code as code;

/// What `warden known-issues render` did: checked the doc (`--check`) or wrote it.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum DocOutcome {
    UpToDate { path: PathBuf },
    OutOfDate { path: PathBuf },
    Wrote { path: PathBuf, entries: usize },
}

/// `warden known-issues render [--check]`: the doc at `path` checked against the registry, or
/// written (`confine`: the folder a path from the registry must stay in).
pub fn render(
    registry: &Registry,
    path: PathBuf,
    confine: Option<&Path>,
    check: bool,
) -> Result<DocOutcome> {
    if check {
        let inside = confine.unwrap_or_else(|| paths::parent_dir(&path));
        return Ok(if is_current(registry, inside, &path) {
            DocOutcome::UpToDate { path }
        } else {
            DocOutcome::OutOfDate { path }
        });
    }
    write_doc(registry, &path, confine)?;
    Ok(DocOutcome::Wrote {
        path,
        entries: registry.entries.len(),
    })
}

/// Where the doc lives: the registry's `doc` setting, under the repository root.
pub fn doc_path(registry: &Registry, root: &Path) -> PathBuf {
    paths::under_root(root, &registry.settings.doc)
}

/// Whether the file at `path` is exactly what `render_doc` generates now (a missing or
/// unreadable file is not). The doc is in the pull request: it is read only as a regular file
/// inside `root`, and never past the size of the doc it should equal.
pub(crate) fn is_current(registry: &Registry, root: &Path, path: &Path) -> bool {
    let expected = render_doc(registry);
    guarded::read_bytes_inside(root, path, expected.len() as u64)
        .is_ok_and(|d| d == expected.as_bytes())
}

/// Writes the doc to `path` atomically, creating its folder. With `root`, the path comes from the
/// registry: the nearest existing folder on the way must resolve inside `root` (a committed link
/// `docs -> /etc` would otherwise take the write elsewhere).
pub(crate) fn write_doc(registry: &Registry, path: &Path, root: Option<&Path>) -> Result<()> {
    if let Some(root) = root {
        let existing = path
            .ancestors()
            .skip(1)
            .find(|a| a.as_os_str().is_empty() || a.exists());
        let inside = match existing {
            Some(a) => {
                let a = if a.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    a
                };
                std::fs::canonicalize(a)
                    .ok()
                    .zip(std::fs::canonicalize(root).ok())
                    .is_some_and(|(a, r)| a.starts_with(r))
            }
            None => false,
        };
        if !inside {
            return Err(Error::Refused(format!(
                "{}: resolves outside the repository: refusing to write the doc there",
                path.display()
            )));
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
    }
    atomic::write_atomic(path, render_doc(registry).as_bytes(), 0o644, true)
}

/// One entry's section of the doc.
fn entry_section(out: &mut String, e: &super::schema::Entry, registry: &Registry) {
    let d = &e.data;
    let _ = writeln!(out, "\n---\n\n<a id=\"{}\"></a>\n### {}\n", e.id, d.title);
    let mut meta = vec![
        format!("**Id:** {}", code(&e.id)),
        format!(
            "**Status:** {}",
            match d.status {
                IssueStatus::Permanent => "permanent (not temporary)",
                IssueStatus::Fixed =>
                    "fixed (its tests pass: close the issue and remove the entry)",
                other => other.name(),
            }
        ),
    ];
    if let Some(a) = &d.added {
        meta.push(format!("**Added:** {a}"));
    }
    if let Some(r) = &d.review_by {
        meta.push(format!("**Review by:** {}", r.get_ref()));
    }
    let _ = writeln!(out, "{}\n", meta.join(" · "));
    if !d.locations.is_empty() {
        let items: Vec<String> = d
            .locations
            .iter()
            .map(|l| {
                let mut s = code(l.path.get_ref());
                if let Some(sym) = &l.symbol {
                    s.push_str(&format!(" ({})", code(sym.get_ref())));
                }
                if let Some(n) = &l.note {
                    s.push_str(&format!(": {n}"));
                }
                s
            })
            .collect();
        let _ = writeln!(out, "**Where:** {}\n", items.join("; "));
    }
    let _ = writeln!(out, "**Why:** {}\n", d.why.trim());
    if !d.coverage.is_empty() {
        let items: Vec<String> = d
            .coverage
            .iter()
            .map(|c| format!("{} in {}", code(c.test.get_ref()), code(c.path.get_ref())))
            .collect();
        let _ = writeln!(out, "**Coverage:** {}\n", items.join("; "));
    }
    let _ = writeln!(out, "**Removal:** {}\n", d.removal.trim());
    if !d.links.is_empty() {
        let links: Vec<String> = d.links.iter().map(|l| format!("<{l}>")).collect();
        let _ = writeln!(out, "**Links:** {}\n", links.join(", "));
    }
    if !d.exclude.is_empty() {
        let _ = writeln!(out, "**Excluded tests ({}):**\n", d.exclude.len());
        out.push_str("| suite | test | match | clients | expect | failure signature |\n|---|---|---|---|---|---|\n");
        for x in &d.exclude {
            let clients = e.clients(x, &registry.settings).join(", ");
            let expect = format!("{:?}", x.expect).to_lowercase();
            let sig = x
                .signature
                .as_ref()
                .map_or(String::new(), |s| code(s.get_ref()));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                code(&x.suite),
                code(x.test.get_ref()),
                x.match_kind.name(),
                clients,
                expect,
                sig
            );
        }
    }
}

/// The generated `docs/known_issues.md`.
pub fn render_doc(registry: &Registry) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!-- Generated by `warden known-issues render` from {}/. Edit those files, not this one. -->\n",
        registry.dir.file_name().map_or("known_issues".into(), |n| n.to_string_lossy())
    );
    out.push_str("# Known issues\n\n");
    if registry.entries.is_empty() {
        out.push_str("No known issues.\n");
        return out;
    }
    if !registry.settings.upstream.is_empty() {
        let pins: Vec<String> = registry
            .settings
            .upstream
            .iter()
            .map(|(k, v)| format!("{k} {}", code(v)))
            .collect();
        let _ = writeln!(out, "Pinned upstream: {}.\n", pins.join(", "));
    }
    let _ = writeln!(
        out,
        "{} known issue{}:\n",
        registry.entries.len(),
        if registry.entries.len() == 1 { "" } else { "s" }
    );
    for e in &registry.entries {
        let _ = writeln!(out, "- [{}](#{})", e.data.title, e.id);
    }
    for e in &registry.entries {
        entry_section(&mut out, e, registry);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}
