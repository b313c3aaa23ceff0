//! What a verified attestation says, typed: a release attestation's repository, tag, commit and
//! asset digests; build provenance's repository, commit, ref, workflow, run and environment (from
//! the certificate GitHub's Fulcio issued to the run, never from the unsigned parts of the
//! statement) and the digests of what it built.

use serde::Serialize;
use sigstore_types::Statement;

/// The in-toto predicate types of GitHub's release attestations (`release/v0.1`, `v0.2`, …).
pub(crate) const RELEASE_PREDICATE: &str = "https://in-toto.io/attestation/release/";
/// SLSA build provenance, as `actions/attest-build-provenance` writes it.
pub(crate) const PROVENANCE_PREDICATE: &str = "https://slsa.dev/provenance/v1";

/// Which of GitHub's two statements an attestation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Kind {
    /// An immutable release's release attestation, signed by GitHub's release signer.
    ReleaseAttestation,
    /// Build provenance, signed with a certificate issued to the workflow run.
    Provenance,
}

impl Kind {
    /// The kind a predicate type names; `None` for any other statement.
    pub(crate) fn of(predicate_type: &str) -> Option<Kind> {
        if predicate_type.starts_with(RELEASE_PREDICATE) {
            Some(Kind::ReleaseAttestation)
        } else if predicate_type == PROVENANCE_PREDICATE {
            Some(Kind::Provenance)
        } else {
            None
        }
    }

    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::ReleaseAttestation => "release attestation",
            Kind::Provenance => "build provenance",
        }
    }
}

/// One subject of a statement: a name and its digests (an asset, or the tag's purl with its
/// commit as `sha1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Subject {
    pub(crate) name: String,
    pub(crate) sha256: Option<[u8; 32]>,
    pub(crate) sha512: Option<[u8; 64]>,
    pub(crate) sha1: Option<String>,
}

/// What a release attestation says of the release.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ReleaseClaims {
    pub(crate) repo: Option<String>,
    pub(crate) tag: Option<String>,
    /// The commit of the tag's purl subject (`pkg:github/O/R@TAG`, digest `sha1`).
    pub(crate) commit: Option<String>,
}

/// What a provenance certificate says of the run that built the subjects (Fulcio's
/// `1.3.6.1.4.1.57264.1.*` claims).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct BuildClaims {
    /// `O/R`, from the source repository URI (.12): the repository whose workflow ran, also
    /// when a reusable workflow of another repository signed.
    pub(crate) repo: Option<String>,
    /// The source commit (.13) and ref (.14).
    pub(crate) commit: Option<String>,
    pub(crate) git_ref: Option<String>,
    /// The caller's workflow, `O/R/<path>@<ref>` (from the build config URI, .18), the form of
    /// `GITHUB_WORKFLOW_REF` and of a trusted comment's `workflow:`.
    pub(crate) workflow: Option<String>,
    /// From the run invocation URI (.21).
    pub(crate) run_id: Option<u64>,
    pub(crate) attempt: Option<u32>,
    /// The deployment environment (.23), when GitHub put it in the certificate.
    pub(crate) environment: Option<String>,
}

/// The subjects of `statement`.
pub(crate) fn subjects(statement: &Statement) -> Vec<Subject> {
    statement
        .subject
        .iter()
        .map(|s| Subject {
            name: s.name.clone(),
            sha256: s.digest.sha256.map(|h| *h.as_bytes()),
            sha512: s.digest.sha512.map(|h| *h.as_bytes()),
            sha1: s.digest.other.get("sha1").cloned(),
        })
        .collect()
}

/// What a release attestation's statement says (its predicate and the tag's purl subject).
pub(crate) fn release_claims(statement: &Statement, subjects: &[Subject]) -> ReleaseClaims {
    let text = |k: &str| {
        statement
            .predicate
            .get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    // The tag's subject: `pkg:github/O/R@TAG` in v0.2, unnamed in v0.1; its digest a `sha1`.
    let commit = subjects
        .iter()
        .filter(|s| s.sha1.is_some())
        .find(|s| s.name.starts_with("pkg:github/") || s.name.is_empty())
        .and_then(|s| s.sha1.clone());
    ReleaseClaims {
        repo: text("repository"),
        tag: text("tag"),
        commit,
    }
}

/// The claims of a provenance certificate.
pub(crate) fn build_claims(ci: &sigstore_crypto::FulcioCiClaims) -> BuildClaims {
    let run = ci.run_invocation_uri.as_deref().and_then(run_of);
    BuildClaims {
        repo: ci.source_repository_uri.as_deref().and_then(repo_of),
        commit: ci.source_repository_digest.clone(),
        git_ref: ci.source_repository_ref.clone(),
        workflow: ci.build_config_uri.as_deref().and_then(workflow_of),
        run_id: run.map(|(id, _)| id),
        attempt: run.and_then(|(_, a)| a),
        environment: ci.deployment_environment.clone(),
    }
}

/// The path of an `https://<host>/<path>` URI.
fn path_of(uri: &str) -> Option<&str> {
    let rest = uri.strip_prefix("https://")?;
    Some(&rest[rest.find('/')? + 1..])
}

/// `https://github.com/O/R` → `O/R`.
fn repo_of(uri: &str) -> Option<String> {
    let path = path_of(uri)?.trim_end_matches('/');
    let mut parts = path.split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    (parts.next().is_none() && !owner.is_empty() && !repo.is_empty())
        .then(|| format!("{owner}/{repo}"))
}

/// `https://github.com/O/R/.github/workflows/x.yml@refs/tags/v1` → `O/R/.github/workflows/x.yml@refs/tags/v1`.
fn workflow_of(uri: &str) -> Option<String> {
    let path = path_of(uri)?;
    (path.contains('@') && path.split('/').count() >= 3).then(|| path.to_string())
}

/// `https://github.com/O/R/actions/runs/<id>/attempts/<n>` → (id, n).
fn run_of(uri: &str) -> Option<(u64, Option<u32>)> {
    let path = path_of(uri)?;
    let (_, after) = path.split_once("/actions/runs/")?;
    let mut parts = after.split('/');
    let id = parts.next()?.parse().ok()?;
    let attempt = match (parts.next(), parts.next()) {
        (Some("attempts"), Some(n)) => Some(n.parse().ok()?),
        _ => None,
    };
    Some((id, attempt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_read_from_fulcio_uris() {
        assert_eq!(repo_of("https://github.com/o/r").as_deref(), Some("o/r"));
        assert_eq!(repo_of("https://github.com/o/r/x"), None);
        assert_eq!(repo_of("http://github.com/o/r"), None);
        assert_eq!(
            workflow_of("https://github.com/o/r/.github/workflows/release.yml@refs/tags/v1")
                .as_deref(),
            Some("o/r/.github/workflows/release.yml@refs/tags/v1")
        );
        assert_eq!(
            run_of("https://github.com/o/r/actions/runs/8788389601/attempts/2"),
            Some((8788389601, Some(2)))
        );
        assert_eq!(
            run_of("https://github.com/o/r/actions/runs/5"),
            Some((5, None))
        );
        assert_eq!(run_of("https://github.com/o/r/actions/runs/x"), None);
        assert_eq!(
            Kind::of("https://in-toto.io/attestation/release/v0.2"),
            Some(Kind::ReleaseAttestation)
        );
        assert_eq!(
            Kind::of("https://slsa.dev/provenance/v1"),
            Some(Kind::Provenance)
        );
        assert_eq!(Kind::of("https://spdx.dev/Document"), None);
    }
}
