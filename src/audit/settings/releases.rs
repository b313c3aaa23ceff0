//! Are the published releases actually signed? For the latest N releases: `SHA256SUMS` and
//! `SHA256SUMS.minisig` are assets, the signature verifies against the repository's `keys/`, and
//! binds the release's tag, this repository and the commit the tag names. Only those two small
//! files are downloaded. Every read goes through the `ApiSource`, so snapshots record and replay
//! it.

use base64::Engine as _;
use serde_json::Value;

use crate::audit::findings::{Finding, Location, Subject};
use crate::audit::rule::Rule;
use crate::audit::severity::Severity;
use crate::github::api::{ApiSource, Fetched, Shape};
use crate::github::routes;
use crate::release::names::{CHECKSUMS_NAME, SIGNATURE_SUFFIX};
use crate::release::trusted_keys::TrustedKeys;
use crate::release::verify::verify_bytes;

/// The most a checksum list may hold here (its signature: 64 KiB).
const SUMS_CAP: u64 = 16 << 20;

fn bytes(f: Fetched) -> Result<Vec<u8>, String> {
    match f {
        Fetched::Ok(v) => base64::engine::general_purpose::STANDARD
            .decode(v["base64"].as_str().unwrap_or_default())
            .map_err(|_| "not base64".to_string()),
        Fetched::Failed {
            status, message, ..
        } => Err(format!("{status} {message}")),
    }
}

fn asset_id(release: &Value, name: &str) -> Option<u64> {
    release["assets"]
        .as_array()?
        .iter()
        .find(|a| a["name"].as_str() == Some(name))?["id"]
        .as_u64()
}

/// The findings about the latest `count` releases of `repo`, judged with `keys` (the
/// repository's `keys/`; `None` when it has none).
pub async fn judge<S: ApiSource>(
    source: &S,
    repo: &str,
    keys: Option<&TrustedKeys>,
    (count, deep): (usize, bool),
) -> Vec<Finding> {
    if count == 0 {
        return Vec::new();
    }
    let route = routes::releases(repo, count);
    let list = match source.get(&route, Shape::Object).await {
        Fetched::Ok(Value::Array(list)) => list,
        Fetched::Ok(_) => Vec::new(),
        failed => {
            return vec![Finding::unverifiable(
                Severity::High,
                Location::api(&route),
                format!(
                    "the releases of {repo} could not be read: {}",
                    describe(&failed)
                ),
                "Give the token `contents: read` on the repository.",
            )]
        }
    };
    let mut out = Vec::new();
    for release in list.iter().take(count) {
        out.extend(one_release(source, repo, keys, release, deep).await);
    }
    // The latest release was published immutable: the repository had immutability on.
    let latest_immutable = list.first().map(|r| r["immutable"].as_bool() == Some(true));
    if latest_immutable == Some(false) && !org_enforces(source, repo).await {
        out.push(
            Finding::new(
                Rule::ImmutableReleasesDisabled,
                Location::api(&routes::org_immutable_releases(owner(repo))),
                format!("immutable releases are not enforced for {repo}: its organisation does not enforce them, and its latest release was published mutable"),
                "Enable release immutability in the repository's settings (Releases), or enforce it for the organisation; it applies to releases published afterwards.",
            )
            .about(Subject {
                repository: Some(repo.to_string()),
                ..Subject::default()
            }),
        );
    }
    out
}

fn owner(repo: &str) -> &str {
    repo.split('/').next().unwrap_or(repo)
}

/// Whether the repository's organisation enforces immutable releases for it (`all`, or
/// `selected` with this repository). A user account, or a policy that cannot be read, does not.
async fn org_enforces<S: ApiSource>(source: &S, repo: &str) -> bool {
    let org = owner(repo);
    let policy = match source
        .get(&routes::org_immutable_releases(org), Shape::Object)
        .await
    {
        Fetched::Ok(v) => v["enforced_repositories"]
            .as_str()
            .unwrap_or("none")
            .to_string(),
        Fetched::Failed { .. } => return false,
    };
    match policy.as_str() {
        "all" => true,
        "selected" => matches!(
            source
                .get(&routes::org_immutable_releases_repositories(org), Shape::Items("repositories"))
                .await,
            Fetched::Ok(v) if v["repositories"].as_array().is_some_and(|list| list
                .iter()
                .any(|r| r["full_name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(repo))))
        ),
        _ => false,
    }
}

fn describe(f: &Fetched) -> String {
    match f {
        Fetched::Failed {
            status, message, ..
        } => format!("{status} {message}"),
        Fetched::Ok(_) => "unexpected answer".into(),
    }
}

async fn one_release<S: ApiSource>(
    source: &S,
    repo: &str,
    keys: Option<&TrustedKeys>,
    release: &Value,
    deep: bool,
) -> Vec<Finding> {
    let tag = release["tag_name"].as_str().unwrap_or_default();
    let at = Location::api(&routes::release_by_tag(repo, tag));
    let finding = |rule: Rule, message: String, fix: &str| {
        Finding::new(rule, at.clone(), message, fix).about(Subject {
            repository: Some(repo.to_string()),
            ..Subject::default()
        })
    };
    let mut out = Vec::new();
    if release["immutable"].as_bool() == Some(false) {
        out.push(finding(
            Rule::ReleaseMutable,
            format!("release {tag} is not immutable: its assets and tag can still be changed"),
            "Enable immutable releases for the repository (or the organisation); releases published from then on cannot change.",
        ));
    }
    let sig_name = format!("{CHECKSUMS_NAME}{SIGNATURE_SUFFIX}");
    let (Some(sums_id), Some(sig_id)) = (
        asset_id(release, CHECKSUMS_NAME),
        asset_id(release, &sig_name),
    ) else {
        out.push(finding(
            Rule::ReleaseUnsigned,
            format!("release {tag} has no {CHECKSUMS_NAME} and {sig_name} among its assets"),
            "Sign the release in its workflow (`warden sign dist/`) and upload SHA256SUMS and SHA256SUMS.minisig with the artifacts.",
        ));
        return out;
    };
    let Some(keys) = keys else {
        out.push(Finding::unverifiable(
            Severity::High,
            at.clone(),
            format!("release {tag} is signed, but the repository has no keys/*.pub to verify it against"),
            "Commit the public key in keys/ (`warden keygen` writes it there).",
        ));
        return out;
    };
    let sums = bytes(
        source
            .get_bytes(&routes::release_asset(repo, sums_id), SUMS_CAP)
            .await,
    );
    let sig = bytes(
        source
            .get_bytes(&routes::release_asset(repo, sig_id), 64 << 10)
            .await,
    );
    let (sums, sig) = match (sums, sig) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            out.push(Finding::unverifiable(
                Severity::High,
                at.clone(),
                format!("the signature of release {tag} could not be downloaded: {e}"),
                "Give the token `contents: read` on the repository.",
            ));
            return out;
        }
    };
    let signed = match verify_bytes(&String::from_utf8_lossy(&sig), &sums, CHECKSUMS_NAME, keys) {
        Ok(s) => s,
        Err(why) => {
            out.push(finding(
                Rule::ReleaseSignatureInvalid,
                format!("the {sig_name} of release {tag} does not verify against keys/: {why}"),
                "Re-sign the release with the key in keys/, and find out how this signature got there.",
            ));
            return out;
        }
    };
    if deep {
        if let Some(why) = assets_match(source, repo, release, &sums).await {
            out.push(finding(
                Rule::ReleaseSignatureInvalid,
                format!("release {tag} does not match its signed {CHECKSUMS_NAME}: {why}"),
                "Re-upload the artifacts the list was signed for, or sign the release again; find out how the assets changed.",
            ));
        }
    }
    out.extend(binding(source, repo, tag, &signed).await.map(|why| {
        finding(
            Rule::ReleaseBindingMismatch,
            format!("release {tag} is signed for {why}"),
            "Sign each release in its own tag's workflow (`warden sign --tag \"$TAG\" --repo \"$GITHUB_REPOSITORY\" --commit \"$GITHUB_SHA\"`), and never move a release tag.",
        )
    }));
    out
}

/// `--deep`: every asset is listed in the signed list with its digest (or is a signature or the
/// list itself), and every listed file is an asset. Assets are hashed as they stream.
async fn assets_match<S: ApiSource>(
    source: &S,
    repo: &str,
    release: &Value,
    sums: &[u8],
) -> Option<String> {
    let text = std::str::from_utf8(sums).ok()?;
    let list = match crate::release::checksums::ChecksumFile::parse(text) {
        Ok(l) => l,
        Err(e) => return Some(format!("{CHECKSUMS_NAME} does not parse: {e}")),
    };
    let listed: std::collections::BTreeMap<&str, String> = list
        .entries()
        .map(|(n, d)| (n, crate::release::checksums::to_hex(d)))
        .collect();
    let assets = release["assets"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = assets.iter().filter_map(|a| a["name"].as_str()).collect();
    if let Some(missing) = listed.keys().find(|n| !names.contains(n)) {
        return Some(format!("{missing} is listed but is not an asset"));
    }
    for a in &assets {
        let (Some(name), Some(id)) = (a["name"].as_str(), a["id"].as_u64()) else {
            continue;
        };
        let Some(expected) = listed.get(name) else {
            let signature = name.strip_suffix(SIGNATURE_SUFFIX);
            if name == CHECKSUMS_NAME
                || signature.is_some_and(|n| n == CHECKSUMS_NAME || listed.contains_key(n))
            {
                continue;
            }
            return Some(format!("the asset {name} is not listed"));
        };
        match source.get_sha256(&routes::release_asset(repo, id)).await {
            Fetched::Ok(v) if v["sha256"].as_str() == Some(expected.as_str()) => {}
            Fetched::Ok(v) => {
                return Some(format!(
                    "{name} has SHA-256 {}, the list says {expected}",
                    v["sha256"].as_str().unwrap_or("?")
                ))
            }
            failed => {
                return Some(format!(
                    "{name} could not be downloaded: {}",
                    describe(&failed)
                ))
            }
        }
    }
    None
}

/// What the signature binds that this release is not, if anything.
async fn binding<S: ApiSource>(
    source: &S,
    repo: &str,
    tag: &str,
    signed: &crate::release::verify::SignedRelease,
) -> Option<String> {
    match signed.tag.as_deref() {
        Some(t) if t == tag => {}
        Some(t) => return Some(format!("tag {t}, not {tag}")),
        None => return Some(format!("no tag (no tag: field), not {tag}")),
    }
    match signed.repo.as_deref() {
        Some(r) if r.eq_ignore_ascii_case(repo) => {}
        Some(r) => return Some(format!("repository {r}, not {repo}")),
        None => return Some(format!("no repository (no repo: field), not {repo}")),
    }
    let commit = signed.commit.as_deref()?;
    match source
        .get(&routes::commit_of(repo, tag), Shape::Object)
        .await
    {
        Fetched::Ok(v) => {
            let now = v["sha"].as_str().unwrap_or_default();
            (!now.eq_ignore_ascii_case(commit)).then(|| {
                format!("commit {commit}, but the tag now names {now} (moved or recreated after signing)")
            })
        }
        Fetched::Failed { .. } => None,
    }
}
