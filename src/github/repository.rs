//! Which repository a command is about: named (`--repo`, else `GITHUB_REPOSITORY`), else the
//! GitHub origin remote of the checkout.

use std::path::Path;

use crate::files::guarded::{read_small_file, SMALL_FILE_CAP};

/// Where the repository itself is read (what a finding about the whole repository points at).
pub(crate) fn repository_route(repo: &str) -> String {
    super::routes::repository(repo)
}

/// The repository as the API shows it to the token: what an audit needs of it.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct RepositoryView {
    pub(crate) default_branch: Option<String>,
}

/// `GET /repos/OWNER/NAME`: a 404 means no such repository, or none the token can see.
pub(crate) async fn read_repository<S: super::api::ApiSource>(
    api: &S,
    repo: &str,
) -> Result<RepositoryView, super::api::ApiError> {
    let route = repository_route(repo);
    match api.get(&route, super::api::Shape::Object).await {
        super::api::Fetched::Ok(v) => serde_json::from_value(v).map_err(|e| super::api::ApiError {
            route: route.clone(),
            status: 0,
            message: format!("unexpected response: {e}"),
            permission: None,
        }),
        failed => Err(super::api::ApiError::from_fetched(&route, failed)),
    }
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
