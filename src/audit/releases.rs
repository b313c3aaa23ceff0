//! The release check of the settings audit: are the published releases actually signed? For the latest N releases: `SHA256SUMS` and
//! `SHA256SUMS.minisig` are assets, and the one judgement of a published release
//! (`release::published::judge`, also `verify --release`'s) accepts them: the signature verifies
//! against the repository's `keys/` and binds the release's tag, this repository and the commit
//! the tag names. Only those two small files are downloaded. Every read goes through
//! `github::releases` over the `ApiSource`, so snapshots record and replay it.

use crate::audit::findings::{Finding, Location};
use crate::audit::rules::unverifiable;
use crate::audit::rules::{
    immutable_releases_disabled, release_asset_replaced, release_binding_mismatch, release_mutable,
    release_signature_invalid, release_signed_by_revoked_key, release_signed_outside_pipeline,
    release_unsigned,
};
use crate::audit::severity::Severity;
use crate::github::api::ApiSource;
use crate::github::releases::{self, Release};
use crate::release::binding::Expected;
use crate::release::names::{CHECKSUMS_NAME, SIGNATURE_SUFFIX};
use crate::release::published::{self, Rejection};
use crate::release::trusted_keys::TrustedKeys;

/// The most a checksum list may hold here (its signature: 64 KiB).
const SUMS_CAP: u64 = 16 << 20;

/// The findings about the latest `count` releases of `repo`, judged with `keys` (the
/// repository's `keys/`; `None` when it has none).
pub(crate) async fn judge<S: ApiSource>(
    source: &S,
    repo: &str,
    keys: Option<&TrustedKeys>,
    (count, deep): (usize, bool),
) -> Vec<Finding> {
    if count == 0 {
        return Vec::new();
    }
    let list = match releases::latest(source, repo, count).await {
        Ok(list) => list,
        Err(failed) => {
            return vec![unverifiable::finding(
                Severity::High,
                Location::api(&releases::releases_route(repo, count)),
                format!("the releases of {repo} could not be read: {failed}"),
                "Give the token `contents: read` on the repository.",
            )]
        }
    };
    let mut out = Vec::new();
    for release in &list {
        out.extend(one_release(source, repo, keys, release, deep).await);
    }
    // The latest release was published immutable: the repository had immutability on.
    let latest_immutable = list.first().map(|r| r.immutable == Some(true));
    if latest_immutable == Some(false) && !releases::org_enforces_immutable(source, repo).await {
        out.push(immutable_releases_disabled::finding(
            Location::api(&releases::org_immutable_route(repo)),
            repo,
        ));
    }
    out
}

async fn one_release<S: ApiSource>(
    source: &S,
    repo: &str,
    keys: Option<&TrustedKeys>,
    release: &Release,
    deep: bool,
) -> Vec<Finding> {
    let tag = release.tag.as_str();
    let at = Location::api(&releases::release_route(repo, tag));
    let unverifiable = |message: String| {
        unverifiable::finding(
            Severity::High,
            at.clone(),
            message,
            "Give the token `contents: read` on the repository.",
        )
    };
    let mut out = Vec::new();
    if release.immutable == Some(false) {
        out.push(release_mutable::finding(&at, tag));
    }
    let sig_name = format!("{CHECKSUMS_NAME}{SIGNATURE_SUFFIX}");
    let (Some(sums_asset), Some(sig_asset)) =
        (release.asset(CHECKSUMS_NAME), release.asset(&sig_name))
    else {
        out.push(release_unsigned::finding(
            &at,
            tag,
            (CHECKSUMS_NAME, &sig_name),
        ));
        return out;
    };
    let Some(keys) = keys else {
        out.push(unverifiable::finding(
            Severity::High,
            at.clone(),
            format!("release {tag} is signed, but the repository has no keys/*.pub to verify it against"),
            "Commit the public key in keys/ (`warden keygen` writes it there).",
        ));
        return out;
    };
    let sums = releases::asset_bytes(source, repo, sums_asset, SUMS_CAP).await;
    let sig = releases::asset_bytes(source, repo, sig_asset, 64 << 10).await;
    let (sums, sig) = match (sums, sig) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            out.push(unverifiable(format!(
                "the signature of release {tag} could not be downloaded: {e}"
            )));
            return out;
        }
    };
    let cosignatures = match cosignatures(source, repo, release).await {
        Ok(c) => c,
        Err(e) => {
            out.push(unverifiable(format!(
                "a co-signature of release {tag} could not be downloaded: {e}"
            )));
            return out;
        }
    };
    let sig = String::from_utf8_lossy(&sig).into_owned();
    if let Some(finding) = signed_only_by_revoked(&at, tag, keys, &sig, &cosignatures) {
        out.push(finding);
        return out;
    }
    // The judgement needs the commit the tag names now: what cannot be read is not a pass.
    let commit = releases::tag_commit(source, repo, tag).await;
    let expected = Expected {
        tag: Some(tag),
        repo: Some(repo),
        commit: commit.as_deref().ok(),
    };
    let verdict = published::judge(&sig, &sums, CHECKSUMS_NAME, keys, &expected);
    if let Err(Rejection::Invalid(why)) = &verdict {
        out.push(release_signature_invalid::invalid(
            &at,
            (tag, &sig_name),
            why,
        ));
        return out;
    }
    if let Some(why) = below_threshold(keys, &sig, &sums, &cosignatures) {
        out.push(release_signature_invalid::invalid(
            &at,
            (tag, &sig_name),
            &why,
        ));
        return out;
    }
    out.extend(replaced_by_digest(&at, release, &sums));
    out.extend(provenance(source, repo, (release, &at, deep), keys, &sig).await);
    if deep {
        if let Some(why) = assets_match(source, repo, release, &sums).await {
            out.push(release_signature_invalid::assets_differ(
                &at,
                (tag, CHECKSUMS_NAME),
                &why,
            ));
        }
    }
    match (verdict, commit) {
        (Err(Rejection::Binding(mismatch)), _) => out.push(release_binding_mismatch::finding(
            &at,
            tag,
            &mismatch.as_release_finding(),
        )),
        (_, Err(e)) => out.push(unverifiable(format!(
            "the commit that tag {tag} names could not be read, so the signature's commit: cannot be checked: {e}"
        ))),
        _ => {}
    }
    out
}

/// Every asset whose digest GitHub computed at upload differs from the signed list: found
/// without a download.
fn replaced_by_digest(at: &Location, release: &Release, sums: &[u8]) -> Vec<Finding> {
    let Some(list) = std::str::from_utf8(sums)
        .ok()
        .and_then(|t| crate::release::checksums::ChecksumFile::parse(t).ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, listed) in list.entries() {
        let listed = crate::util::to_hex(listed);
        let Some(digest) = release.asset(name).and_then(|a| a.digest.as_deref()) else {
            continue;
        };
        if digest != listed {
            out.push(release_asset_replaced::digest(
                at,
                &release.tag,
                name,
                (digest, &listed),
            ));
        }
    }
    out
}

/// The pipeline provenance of the list's first signature: the run it binds against GitHub's
/// records (`release-signed-outside-pipeline`), and the uploads of the signed files
/// (`release-asset-replaced`; with `--deep`, of every asset). No binding is a finding only where
/// the policy requires one.
async fn provenance<S: ApiSource>(
    source: &S,
    repo: &str,
    (release, at, deep): (&Release, &Location, bool),
    keys: &TrustedKeys,
    signature: &str,
) -> Vec<Finding> {
    use crate::release::provenance::{judge_run, judge_uploads, Signed};
    let tag = release.tag.as_str();
    let policy = &keys.policy().run;
    let Ok(sig) = crate::release::signature::SignatureFile::parse(signature) else {
        return Vec::new();
    };
    let comment = &sig.trusted_comment;
    let binding = match comment.run() {
        Ok(Some(b)) => b,
        Ok(None) if policy.is_set() => {
            return vec![release_signed_outside_pipeline::unbound(at, tag)]
        }
        Ok(None) => return Vec::new(),
        Err(why) => {
            return vec![release_signed_outside_pipeline::finding(
                at,
                tag,
                "a malformed run binding",
                &[why],
            )]
        }
    };
    let environment = binding
        .environment
        .as_deref()
        .or(policy.environment.as_deref());
    let evidence = match crate::github::runs::evidence(source, repo, &binding, environment).await {
        Ok(e) => e,
        Err(e) => {
            return vec![unverifiable::finding(
                Severity::High,
                at.clone(),
                format!("the run release {tag}'s signature names could not be read: {e}"),
                "Give the token `actions: read` and `deployments: read` on the repository.",
            )]
        }
    };
    let field = |k: &'static str| comment.value(k).ok().flatten();
    let signed = Signed {
        binding: &binding,
        timestamp: field("timestamp").and_then(|t| t.parse().ok()),
        commit: field("commit"),
        repo,
        tag,
    };
    let mut out = Vec::new();
    let problems = judge_run(&signed, &evidence, policy);
    if !problems.is_empty() {
        out.push(release_signed_outside_pipeline::finding(
            at,
            tag,
            &binding.to_string(),
            &problems,
        ));
    }
    if let Some(run) = &evidence.run {
        let signed_files: Vec<_> = release
            .assets
            .iter()
            // The signed files; with --deep, every asset.
            .filter(|a| {
                deep || crate::release::verify::is_signed_list_file(&a.name, CHECKSUMS_NAME)
            })
            .filter_map(|a| a.upload())
            .collect();
        for why in judge_uploads(run, &signed_files) {
            out.push(release_asset_replaced::upload(at, tag, &why));
        }
    }
    out
}

/// The co-signatures among the release's assets (`SHA256SUMS.<KEYID>.minisig`): (name, text).
async fn cosignatures<S: ApiSource>(
    source: &S,
    repo: &str,
    release: &Release,
) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for asset in &release.assets {
        let is_cosignature = crate::release::names::cosigned_file(&asset.name)
            .is_some_and(|(file, _)| file == CHECKSUMS_NAME);
        if !is_cosignature {
            continue;
        }
        let bytes = releases::asset_bytes(source, repo, asset, 64 << 10)
            .await
            .map_err(|e| e.to_string())?;
        out.push((
            asset.name.clone(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    Ok(out)
}

/// `release-signed-by-revoked-key` when every signature of the list (the first and the
/// co-signatures) is by a key `keys/revoked/` revokes.
fn signed_only_by_revoked(
    at: &Location,
    tag: &str,
    keys: &TrustedKeys,
    signature: &str,
    cosignatures: &[(String, String)],
) -> Option<Finding> {
    let mut revoked = Vec::new();
    for text in std::iter::once(signature).chain(cosignatures.iter().map(|(_, t)| t.as_str())) {
        let id = crate::release::signature::SignatureFile::parse(text)
            .ok()?
            .key_id;
        let r = keys.revoked(id)?;
        revoked.push((id, r.revoked_at.clone(), r.reason.clone()));
    }
    Some(release_signed_by_revoked_key::release(at, tag, &revoked))
}

/// Why the list's valid signatures (distinct usable keys) are fewer than `keys/policy.toml`
/// asks for; `None` when they are enough (the first signature verified already).
fn below_threshold(
    keys: &TrustedKeys,
    signature: &str,
    sums: &[u8],
    cosignatures: &[(String, String)],
) -> Option<String> {
    let need = keys.threshold();
    let mut signers = std::collections::BTreeSet::new();
    for text in std::iter::once(signature).chain(cosignatures.iter().map(|(_, t)| t.as_str())) {
        if crate::release::verify::verify_bytes(text, sums, CHECKSUMS_NAME, keys).is_ok() {
            if let Ok(sig) = crate::release::signature::SignatureFile::parse(text) {
                signers.insert(sig.key_id);
            }
        }
    }
    (signers.len() < need).then(|| {
        format!(
            "{} of {need} required signatures (keys/policy.toml)",
            signers.len()
        )
    })
}

/// `--deep`: every asset is listed in the signed list with its digest (or is a signature or the
/// list itself), and every listed file is an asset. Assets are hashed as they stream.
async fn assets_match<S: ApiSource>(
    source: &S,
    repo: &str,
    release: &Release,
    sums: &[u8],
) -> Option<String> {
    let text = std::str::from_utf8(sums).ok()?;
    let list = match crate::release::checksums::ChecksumFile::parse(text) {
        Ok(l) => l,
        Err(e) => return Some(format!("{CHECKSUMS_NAME} does not parse: {e}")),
    };
    let listed: std::collections::BTreeMap<&str, String> = list
        .entries()
        .map(|(n, d)| (n, crate::util::to_hex(d)))
        .collect();
    if let Some(missing) = listed.keys().find(|n| release.asset(n).is_none()) {
        return Some(format!("{missing} is listed but is not an asset"));
    }
    for asset in &release.assets {
        let name = asset.name.as_str();
        let Some(expected) = listed.get(name) else {
            let signature = name.strip_suffix(SIGNATURE_SUFFIX);
            let cosigned = crate::release::names::cosigned_file(name).map(|(f, _)| f);
            if name == CHECKSUMS_NAME
                || cosigned.is_some_and(|f| f == CHECKSUMS_NAME || listed.contains_key(f))
                || signature.is_some_and(|n| n == CHECKSUMS_NAME || listed.contains_key(n))
            {
                continue;
            }
            return Some(format!("the asset {name} is not listed"));
        };
        // GitHub's digest was compared with the list already: no download needed.
        if asset.digest.is_some() {
            continue;
        }
        match releases::asset_sha256(source, repo, asset).await {
            Ok(sha) if &sha == expected => {}
            Ok(sha) => {
                return Some(format!(
                    "{name} has SHA-256 {sha}, the list says {expected}"
                ))
            }
            Err(failed) => return Some(format!("{name} could not be downloaded: {failed}")),
        }
    }
    None
}
