//! Path questions: where a file's directory is, whether a path stays inside the directory it is
//! joined to, which git work tree holds a directory, and where a default lives under `--root`.

use std::fs;
use std::path::{Path, PathBuf};

/// The directory a path lives in (`.` for a bare file name).
pub(crate) fn parent_dir(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A non-empty relative path with no `..`, root or prefix component: it names something under
/// whatever directory it is joined to (before links are resolved).
pub(crate) fn is_plain_relative(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Where a write to `path` lands: its folder resolved (links followed), its own name kept (a
/// rename replaces a link, it does not follow it). Two paths that land on the same file compare
/// equal.
pub(crate) fn with_resolved_folder(path: &Path) -> std::io::Result<PathBuf> {
    let dir = fs::canonicalize(parent_dir(path))?;
    Ok(dir.join(path.file_name().unwrap_or_default()))
}

/// A plain relative path (`is_plain_relative`) with no `.git` component (in any case: macOS and
/// Windows file systems fold it): what a pull request may name for warden to read or write.
/// `.git/config` is inside the work tree, and holds the token `actions/checkout` persists.
pub(crate) fn is_repo_relative(path: &str) -> bool {
    is_plain_relative(path)
        && !path.chars().any(char::is_control)
        && Path::new(path)
            .components()
            .all(|c| !c.as_os_str().eq_ignore_ascii_case(".git"))
}

/// The git work tree containing `dir` (an existing directory), if any.
pub(crate) fn enclosing_git_work_tree(dir: &Path) -> Option<PathBuf> {
    let dir = fs::canonicalize(dir).ok()?;
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// A default path (`known_issues`, `keys`, the doc) under the repository root `root`: `rel` itself
/// when the root is the working directory, so messages keep the short name.
pub fn under_root(root: &Path, rel: impl AsRef<Path>) -> PathBuf {
    if root == Path::new(".") || root.as_os_str().is_empty() {
        rel.as_ref().to_path_buf()
    } else {
        root.join(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_enclosing_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
        fs::create_dir_all(dir.path().join("repo/sub")).unwrap();
        let root = fs::canonicalize(dir.path().join("repo")).unwrap();
        assert_eq!(
            enclosing_git_work_tree(&dir.path().join("repo/sub")),
            Some(root)
        );
    }

    #[test]
    fn git_internals_are_never_repository_paths() {
        for bad in [
            ".git/config",
            "a/.GIT/x",
            "../a",
            "/etc/passwd",
            "",
            "a/../../b",
            "a\nb",
        ] {
            assert!(!is_repo_relative(bad), "{bad}");
        }
        for good in [
            "src/lib.rs",
            "./docs/known_issues.md",
            ".github/workflows/x.yml",
        ] {
            assert!(is_repo_relative(good), "{good}");
        }
    }

    #[test]
    fn defaults_move_with_the_root() {
        assert_eq!(under_root(Path::new("."), "keys"), PathBuf::from("keys"));
        assert_eq!(
            under_root(Path::new("../ethrex"), "keys"),
            PathBuf::from("../ethrex/keys")
        );
    }
}
