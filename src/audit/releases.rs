//! The release check of the settings audit: are the published releases actually signed? The
//! latest N releases are read and judged by `published::judge`, the one verdict `verify
//! --release` takes too, against the repository's own `keys/`; each of its problems becomes the
//! finding of the rule its cause names. Only the list and its signatures are downloaded (every
//! asset with `--deep`). Every read goes through the `ApiSource`, so snapshots record and replay
//! it.

use crate::audit::findings::{Finding, Location};
use crate::audit::rules::release_attestation_mismatch;
use crate::audit::rules::unverifiable;
use crate::audit::rules::{
    immutable_releases_disabled, release_asset_replaced, release_binding_mismatch, release_mutable,
    release_signature_invalid, release_signed_by_revoked_key, release_signed_outside_pipeline,
    release_unsigned,
};
use crate::audit::severity::Severity;
use crate::github::api::ApiSource;
use crate::github::releases::{self, Release};
use crate::minisign::names::CHECKSUMS_NAME;
use crate::published::{self, Depth};
use crate::trust::keys::TrustedKeys;
use crate::trust::signer::Cause;
use crate::verdict::release::Problem;
use crate::verdict::VerifyOptions;

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
            "Give the token `contents: read` and `actions: read` on the repository.",
        )
    };
    let mut out = Vec::new();
    if release.immutable == Some(false) {
        out.push(release_mutable::finding(&at, tag));
    }
    let signed = crate::verdict::release::is_signed(
        release.assets.iter().map(|a| a.name.as_str()),
        CHECKSUMS_NAME,
    );
    let Some(keys) = keys.filter(|_| signed) else {
        if signed {
            out.push(unverifiable::finding(
                Severity::High,
                at.clone(),
                format!("release {tag} is signed, but the repository has no keys/*.pub to verify it against"),
                "Commit the public key in keys/ (`warden keygen` writes it there).",
            ));
        } else {
            let identity = crate::trust::binding::ReleaseIdentity {
                tag: tag.to_string(),
                repo: repo.to_string(),
                commit: None,
            };
            out.push(release_unsigned::finding(
                &at,
                tag,
                &crate::verdict::release::unsigned_problem(
                    &identity,
                    CHECKSUMS_NAME,
                    release.assets.len(),
                ),
            ));
        }
        return out;
    };
    // The verdict binds the commit the tag names now: what cannot be read is not a pass.
    let commit = match releases::tag_commit(source, repo, tag).await {
        Ok(c) => Some(c),
        Err(e) => {
            out.push(unverifiable(format!(
                "the commit that tag {tag} names could not be read, so the signature's commit: cannot be checked: {e}"
            )));
            None
        }
    };
    // GitHub's attestations of the release, found through one artifact and one other asset:
    // the release attestation lists every asset.
    let attest = crate::verdict::AttestOptions {
        roots: crate::attest::TrustRoots::shared().ok(),
        one_asset: true,
        ..Default::default()
    };
    let opts = VerifyOptions {
        checksums_name: None,
        attest,
        ..VerifyOptions::default()
    };
    let depth = if deep { Depth::Deep } else { Depth::Signatures };
    match published::judge(
        source,
        (repo, release, commit.as_deref()),
        (keys, &opts),
        &depth,
    )
    .await
    {
        Ok(verdict) => out.extend(verdict.problems.iter().filter_map(|p| finding(&at, tag, p))),
        Err(e) => out.push(unverifiable(format!(
            "release {tag} could not be read: {e}"
        ))),
    }
    out
}

/// The finding of the rule a problem's cause names.
fn finding(at: &Location, tag: &str, p: &Problem) -> Option<Finding> {
    Some(match p.cause {
        Cause::None | Cause::ListFailed => return None,
        Cause::Unsigned => release_unsigned::finding(at, tag, p),
        Cause::Revoked => release_signed_by_revoked_key::release(at, tag, p),
        Cause::Binding => release_binding_mismatch::finding(at, tag, p),
        Cause::RunPolicy | Cause::Provenance => release_signed_outside_pipeline::finding(at, tag, p),
        Cause::Replaced | Cause::Upload => release_asset_replaced::finding(at, tag, p),
        Cause::Attestation => release_attestation_mismatch::finding(at, tag, p),
        Cause::Unreadable
        | Cause::NotCounted
        | Cause::Invalid
        | Cause::Mismatch
        | Cause::Unlisted
        | Cause::Missing
        | Cause::Unlogged => release_signature_invalid::finding(at, tag, p),
        Cause::Unverifiable => unverifiable::finding(
            Severity::High,
            at.clone(),
            format!("release {tag}: {}: {}", p.subject, p.why),
            "Give the token `contents: read`, `actions: read` and `deployments: read` on the repository.",
        ),
    })
}
