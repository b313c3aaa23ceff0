//! Which repository a command is about: named (`--repo`, else `GITHUB_REPOSITORY`), else the
//! GitHub origin remote of the checkout.

use std::path::Path;

use crate::files::guarded::{read_small_file, SMALL_FILE_CAP};

/// Where the repository itself is read (what a finding about the whole repository points at).
pub(crate) fn repository_route(repo: &str) -> String {
    super::routes::repository(repo)
}

/// `named` when it has the `OWNER/NAME` shape, else the GitHub origin remote in `root/.git/config`.
pub fn repository_name(named: Option<&str>, root: &Path) -> Option<String> {
    if let Some(r) = named.filter(|r| r.contains('/')) {
        return Some(r.to_string());
    }
    let config = read_small_file(&root.join(".git/config"), SMALL_FILE_CAP, "a git config").ok()?;
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line == "[remote \"origin\"]";
        } else if in_origin {
            if let Some(url) = line
                .strip_prefix("url")
                .map(|l| l.trim_start().trim_start_matches('=').trim())
            {
                let path = url
                    .split_once("github.com")
                    .map(|(_, p)| p.trim_start_matches([':', '/']))?;
                let path = path.trim_end_matches('/').trim_end_matches(".git");
                return path.contains('/').then(|| path.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_else_the_origin_remote() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(repository_name(Some("o/r"), dir.path()), Some("o/r".into()));
        assert_eq!(repository_name(Some("noslash"), dir.path()), None);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[remote \"origin\"]\n\turl = git@github.com:lambdaclass/ethrex.git\n",
        )
        .unwrap();
        assert_eq!(
            repository_name(None, dir.path()),
            Some("lambdaclass/ethrex".into())
        );
    }
}
