//! Every REST route warden uses, built in one place: path segments that come from data (the
//! repository, an environment name) are percent-encoded, so a name with `/` or `?` stays one
//! segment. Routes are relative (`repos/o/r/…`): octocrab sends the token only to its base URL.

/// A path segment, percent-encoded except for RFC 3986's unreserved characters.
pub(super) fn encode_segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `repos/OWNER/NAME`, each part encoded.
fn repo_path(repo: &str) -> String {
    match repo.split_once('/') {
        Some((owner, name)) => format!("repos/{}/{}", encode_segment(owner), encode_segment(name)),
        None => format!("repos/{}", encode_segment(repo)),
    }
}

/// A route without its query string.
pub(super) fn path_of(route: &str) -> &str {
    route.split('?').next().unwrap_or(route)
}

/// The repository itself (what a finding about the whole repository points at).
pub(super) fn repository(repo: &str) -> String {
    repo_path(repo)
}

/// Tag rulesets, the repository's and those of its organization and enterprise.
pub(super) fn rulesets(repo: &str) -> String {
    format!(
        "{}/rulesets?targets=tag&includes_parents=true&per_page=100",
        repo_path(repo)
    )
}

pub(super) fn ruleset(repo: &str, id: u64) -> String {
    format!("{}/rulesets/{id}?includes_parents=true", repo_path(repo))
}

/// Where a ruleset is created (POST) or replaced (PUT, with its id).
pub(super) fn ruleset_write(repo: &str, id: Option<u64>) -> String {
    match id {
        Some(id) => format!("{}/rulesets/{id}", repo_path(repo)),
        None => format!("{}/rulesets", repo_path(repo)),
    }
}

/// Legacy tag protection (GHES ≤ 3.19).
pub(super) fn legacy_tag_protection(repo: &str) -> String {
    format!("{}/tags/protection", repo_path(repo))
}

pub(super) fn environments(repo: &str) -> String {
    format!("{}/environments?per_page=100", repo_path(repo))
}

pub(super) fn environment(repo: &str, name: &str) -> String {
    format!("{}/environments/{}", repo_path(repo), encode_segment(name))
}

pub(super) fn environment_secrets(repo: &str, name: &str) -> String {
    format!("{}/secrets?per_page=100", environment(repo, name))
}

pub(super) fn deployment_policies(repo: &str, name: &str) -> String {
    format!(
        "{}/deployment-branch-policies?per_page=100",
        environment(repo, name)
    )
}

/// Where a deployment policy is created (POST).
pub(super) fn deployment_policy_create(repo: &str, name: &str) -> String {
    format!("{}/deployment-branch-policies", environment(repo, name))
}

pub(super) fn repo_secrets(repo: &str) -> String {
    format!("{}/actions/secrets?per_page=100", repo_path(repo))
}

pub(super) fn org_secrets(repo: &str) -> String {
    format!(
        "{}/actions/organization-secrets?per_page=100",
        repo_path(repo)
    )
}

/// The organisation's immutable-releases policy (`enforced_repositories`: all, none, selected).
pub(super) fn org_immutable_releases(org: &str) -> String {
    format!("orgs/{}/settings/immutable-releases", encode_segment(org))
}

/// The repositories an organisation's `selected` immutable-releases policy covers.
pub(super) fn org_immutable_releases_repositories(org: &str) -> String {
    format!(
        "orgs/{}/settings/immutable-releases/repositories?per_page=100",
        encode_segment(org)
    )
}

/// An organisation's repositories (all types; archived and forks are filtered by the caller).
pub(super) fn org_repositories(org: &str) -> String {
    format!("orgs/{}/repos?type=all&per_page=100", encode_segment(org))
}

/// A git tree by SHA, or `HEAD` (the default branch's); with `recursive=1`, every entry below.
pub(super) fn git_tree(repo: &str, tree: &str, recursive: bool) -> String {
    format!(
        "{}/git/trees/{}{}",
        repo_path(repo),
        encode_segment(tree),
        if recursive { "?recursive=1" } else { "" }
    )
}

/// A git blob by SHA (base64 content).
pub(super) fn git_blob(repo: &str, sha: &str) -> String {
    format!("{}/git/blobs/{}", repo_path(repo), encode_segment(sha))
}

/// An organisation's Actions secrets, with their visibility (`all`, `private`, `selected`).
pub(super) fn org_actions_secrets(org: &str) -> String {
    format!("orgs/{}/actions/secrets?per_page=100", encode_segment(org))
}

/// The repositories a `selected` organisation secret is visible to.
pub(super) fn org_secret_repositories(org: &str, name: &str) -> String {
    format!(
        "orgs/{}/actions/secrets/{}/repositories?per_page=100",
        encode_segment(org),
        encode_segment(name)
    )
}

/// The latest `count` releases (one page).
pub(super) fn releases(repo: &str, count: usize) -> String {
    format!(
        "{}/releases?per_page={}",
        repo_path(repo),
        count.clamp(1, 100)
    )
}

/// A release by its tag.
pub(super) fn release_by_tag(repo: &str, tag: &str) -> String {
    format!("{}/releases/tags/{}", repo_path(repo), encode_segment(tag))
}

/// Every asset of a release (paginated).
pub(super) fn release_assets(repo: &str, id: u64) -> String {
    format!("{}/releases/{id}/assets?per_page=100", repo_path(repo))
}

/// One asset's bytes (with `Accept: application/octet-stream`).
pub(super) fn release_asset(repo: &str, id: u64) -> String {
    format!("{}/releases/assets/{id}", repo_path(repo))
}

/// The commit a ref names, peeled (an annotated tag's commit).
pub(super) fn commit_of(repo: &str, git_ref: &str) -> String {
    format!("{}/commits/{}", repo_path(repo), encode_segment(git_ref))
}

/// A file or folder of the default branch (`keys`, `keys/x.pub`).
pub(super) fn contents(repo: &str, path: &str) -> String {
    let encoded: Vec<String> = path.split('/').map(encode_segment).collect();
    format!("{}/contents/{}", repo_path(repo), encoded.join("/"))
}

/// Who the token belongs to (a user token; an installation token gets 403).
pub(super) fn authenticated_user() -> String {
    "/user".into()
}

pub(super) fn issue_comments(repo: &str, pr: u64) -> String {
    format!("{}/issues/{pr}/comments?per_page=100", repo_path(repo))
}

/// Where a comment is created on issue or pull request `pr` (POST).
pub(super) fn issue_comment_create(repo: &str, pr: u64) -> String {
    format!("{}/issues/{pr}/comments", repo_path(repo))
}

pub(super) fn issue_comment(repo: &str, id: u64) -> String {
    format!("{}/issues/comments/{id}", repo_path(repo))
}

/// One attempt of a workflow run (its times and what it ran).
pub(super) fn workflow_run_attempt(repo: &str, run: u64, attempt: u32) -> String {
    format!("{}/actions/runs/{run}/attempts/{attempt}", repo_path(repo))
}

/// The commits after `base` up to `head` (`base...head`), oldest first, 100 a page.
pub(super) fn compare(repo: &str, base: &str, head: &str) -> String {
    format!(
        "{}/compare/{}...{}?per_page=100",
        repo_path(repo),
        encode_segment(base),
        encode_segment(head)
    )
}

/// A workflow, by its file name.
pub(super) fn workflow(repo: &str, workflow: &str) -> String {
    format!(
        "{}/actions/workflows/{}",
        repo_path(repo),
        encode_segment(workflow)
    )
}

/// Where a workflow is dispatched (POST), by its file name.
pub(super) fn workflow_dispatches(repo: &str, workflow: &str) -> String {
    format!(
        "{}/actions/workflows/{}/dispatches",
        repo_path(repo),
        encode_segment(workflow)
    )
}

/// The first page of a workflow's `workflow_dispatch` runs created at or after `since`.
pub(super) fn dispatched_runs(repo: &str, workflow: &str, since: &str) -> String {
    format!(
        "{}/actions/workflows/{}/runs?event=workflow_dispatch&created=%3E%3D{}&per_page=100",
        repo_path(repo),
        encode_segment(workflow),
        encode_segment(since)
    )
}

/// One workflow run (its latest attempt).
pub(super) fn workflow_run(repo: &str, run: u64) -> String {
    format!("{}/actions/runs/{run}", repo_path(repo))
}

/// The jobs of a run's latest attempt, with their steps.
pub(super) fn run_jobs(repo: &str, run: u64) -> String {
    format!("{}/actions/runs/{run}/jobs?per_page=100", repo_path(repo))
}

/// The artifacts a run uploaded.
pub(super) fn run_artifacts(repo: &str, run: u64) -> String {
    format!(
        "{}/actions/runs/{run}/artifacts?per_page=100",
        repo_path(repo)
    )
}

/// An artifact's zip archive (a redirect to blob storage).
pub(super) fn artifact_zip(repo: &str, id: u64) -> String {
    format!("{}/actions/artifacts/{id}/zip", repo_path(repo))
}

/// The deployments to `environment` of commit `sha`.
pub(super) fn deployments(repo: &str, environment: &str, sha: &str) -> String {
    format!(
        "{}/deployments?environment={}&sha={}&per_page=100",
        repo_path(repo),
        encode_segment(environment),
        encode_segment(sha)
    )
}

pub(super) fn deployment_statuses(repo: &str, id: u64) -> String {
    format!("{}/deployments/{id}/statuses?per_page=100", repo_path(repo))
}

/// GitHub's attestations of an artifact, by its SHA-256 (release attestations and build
/// provenance together; one page of 100 is more than a release carries).
pub(super) fn attestations(repo: &str, sha256_hex: &str) -> String {
    format!(
        "{}/attestations/sha256:{}?per_page=100",
        repo_path(repo),
        encode_segment(sha256_hex)
    )
}

/// The route a snapshot keeps the answer of an absolute URL under (another host: a bundle in
/// blob storage), without its query (a signed, expiring token).
pub(super) fn external(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = path_of(rest);
    let segments: Vec<String> = path.split('/').map(encode_segment).collect();
    format!("external/{}", segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_in_paths_is_encoded() {
        assert_eq!(encode_segment("release"), "release");
        assert_eq!(encode_segment("prod/eu"), "prod%2Feu");
        assert_eq!(
            environment("o/r", "prod/eu?x"),
            "repos/o/r/environments/prod%2Feu%3Fx"
        );
        assert_eq!(
            environment_secrets("o/r", "release"),
            "repos/o/r/environments/release/secrets?per_page=100"
        );
        assert_eq!(path_of(&rulesets("o/r")), "repos/o/r/rulesets");
        assert_eq!(ruleset_write("o/r", Some(7)), "repos/o/r/rulesets/7");
    }
}
