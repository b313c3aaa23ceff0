//! One bundle verified offline: its signature, certificate chain and timestamp against a pinned
//! root, at the time the bundle proves (never "now": every certificate has long expired), by
//! the Sigstore project's verifier. Which root and which identity a bundle must have is decided
//! here, from what it claims to be, and never relaxed by it:
//! - a release attestation: GitHub's root only, and the certificate GitHub's release signer
//!   (`https://dotcom.releases.github.com`): GitHub's CA also certifies any Actions workflow, so
//!   chaining to the root alone proves nothing;
//! - build provenance: a certificate GitHub Actions' OIDC issuer asked for, under GitHub's root
//!   (private repositories; trust from its timestamp authority) or the public-good one (public
//!   repositories; its transparency log and certificate timestamps checked in full).

use sigstore_types::{
    Artifact, ArtifactDigest, Bundle, HashAlgorithm, SignatureContent, Statement,
};
use sigstore_verify::{Error, IdentityMatcher, VerificationPolicy, VerificationResult};

use super::bundle::RawBundle;
use super::claims::{self, BuildClaims, Kind, ReleaseClaims, Subject};
use super::roots::{Root, TrustRoots};

/// The identity of the certificates GitHub signs release attestations with.
pub(crate) const RELEASE_SIGNER: &str = "https://dotcom.releases.github.com";
/// GitHub Actions' OIDC issuer (an enterprise's is this with `/<slug>`).
pub(crate) const ACTIONS_ISSUER: &str = "https://token.actions.githubusercontent.com";

/// A verified attestation: who signed it, under which root, when, and what it says.
#[derive(Clone, Debug)]
pub(crate) struct Attestation {
    pub(crate) kind: Kind,
    pub(crate) origin: String,
    /// The certificate's identity (its SAN).
    pub(crate) signer: String,
    /// The root it verified under.
    pub(crate) root: String,
    /// The time its timestamp or log entry proves (RFC 3339).
    pub(crate) signed_at: Option<String>,
    pub(crate) subjects: Vec<Subject>,
    pub(crate) release: Option<ReleaseClaims>,
    pub(crate) build: Option<BuildClaims>,
}

/// What verifying one bundle came to.
#[derive(Clone, Debug)]
pub(crate) enum Verified {
    Attestation(Box<Attestation>),
    /// A statement of another kind (an SBOM, a custom predicate): not a witness here.
    Other {
        origin: String,
        predicate_type: String,
    },
    /// Not a bundle, or it does not verify: why (with the kind it claimed, when it said).
    Failed {
        origin: String,
        kind: Option<Kind>,
        why: String,
    },
}

/// Verifies `raw` against `roots`.
pub(crate) fn verify(roots: &TrustRoots, raw: &RawBundle) -> Verified {
    super::crypto::install();
    let failed = |kind: Option<Kind>, why: String| Verified::Failed {
        origin: raw.origin.clone(),
        kind,
        why,
    };
    let bundle = match Bundle::from_json(&raw.json) {
        Ok(b) => b,
        Err(e) => return failed(None, format!("not a Sigstore bundle: {e}")),
    };
    let SignatureContent::DsseEnvelope(envelope) = &bundle.content else {
        return failed(
            None,
            "a message signature, not an attestation (no in-toto statement)".into(),
        );
    };
    // Read before verifying only to choose what it must then prove.
    let statement: Statement = match serde_json::from_slice(envelope.payload.as_bytes()) {
        Ok(s) => s,
        Err(e) => {
            return failed(
                None,
                format!("its payload is not an in-toto statement: {e}"),
            )
        }
    };
    let Some(kind) = Kind::of(&statement.predicate_type) else {
        return Verified::Other {
            origin: raw.origin.clone(),
            predicate_type: statement.predicate_type.clone(),
        };
    };
    let subjects = claims::subjects(&statement);
    let Some(artifact) = subject_artifact(&subjects) else {
        return failed(
            Some(kind),
            "no subject with a SHA-256 or SHA-512 digest".into(),
        );
    };
    let checked = check_kind(roots, kind, &artifact, &bundle);
    let (result, root) = match checked {
        Ok(ok) => ok,
        Err(why) => return failed(Some(kind), why),
    };
    let signer = result
        .identity()
        .map(|s| s.as_str().to_string())
        .unwrap_or_default();
    let mut attestation = Attestation {
        kind,
        origin: raw.origin.clone(),
        signer,
        root: root.label.clone(),
        signed_at: result.verified_timestamps().first().map(|t| t.to_string()),
        release: None,
        build: None,
        subjects,
    };
    match kind {
        Kind::ReleaseAttestation => {
            attestation.release = Some(claims::release_claims(&statement, &attestation.subjects))
        }
        Kind::Provenance => {
            let issuer = result.issuer().unwrap_or_default();
            let from_actions = issuer
                .strip_prefix(ACTIONS_ISSUER)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
            if !from_actions {
                return failed(
                    Some(kind),
                    format!(
                        "its certificate was issued to a workload of {}, not to a GitHub Actions run ({ACTIONS_ISSUER})",
                        if issuer.is_empty() { "no OIDC issuer" } else { issuer }
                    ),
                );
            }
            let ci = result.certificate().map(|c| &c.ci_claims);
            attestation.build = ci.map(claims::build_claims);
        }
    }
    Verified::Attestation(Box::new(attestation))
}

/// Checks `bundle` by what it says it is: a release attestation only on GitHub's instance and
/// from GitHub's release signer; a provenance on GitHub's instance, or on the public-good one
/// when it carries a log entry.
fn check_kind<'r>(
    roots: &'r TrustRoots,
    kind: Kind,
    artifact: &Artifact<'static>,
    bundle: &Bundle,
) -> Result<(VerificationResult, &'r Root), String> {
    match kind {
        Kind::ReleaseAttestation => {
            let policy =
                github_policy().require_identity(IdentityMatcher::Uri(RELEASE_SIGNER.into()));
            check(&roots.github, artifact, bundle, &policy)
        }
        Kind::Provenance => {
            let on_github = check(&roots.github, artifact, bundle, &github_policy());
            match on_github {
                Ok(r) => Ok(r),
                // A bundle with a log entry was made on the public-good instance.
                Err(_) if !bundle.verification_material.tlog_entries.is_empty() => check(
                    &roots.public_good,
                    artifact,
                    bundle,
                    &VerificationPolicy::any_identity(),
                ),
                Err(e) => Err(e),
            }
        }
    }
}

/// GitHub's instance: trust comes from its timestamp authority; it keeps no transparency log
/// and its certificates carry no certificate timestamps.
fn github_policy() -> VerificationPolicy {
    VerificationPolicy::any_identity()
        .skip_tlog_unsafe()
        .skip_sct()
}

/// The statement's first digest, to verify the envelope with (every subject is then held by
/// the verdict, against the files it is about).
fn subject_artifact(subjects: &[Subject]) -> Option<Artifact<'static>> {
    subjects.iter().find_map(|s| {
        if let Some(d) = s.sha256 {
            return Some(Artifact::from_digest(sigstore_types::Sha256Hash::new(d)));
        }
        let d = s.sha512?;
        ArtifactDigest::new(HashAlgorithm::Sha2512, d.to_vec())
            .ok()
            .map(Artifact::from_digest)
    })
}

/// `bundle` verified under `root` with `policy`, or why not, said for a reader.
fn check<'r>(
    root: &'r Root,
    artifact: &Artifact<'static>,
    bundle: &Bundle,
    policy: &VerificationPolicy,
) -> Result<(VerificationResult, &'r Root), String> {
    root.verifier
        .verify(artifact.clone(), bundle, policy)
        .map(|r| (r, root))
        .map_err(|e| explain(&e, &root.label))
}

fn explain(e: &Error, root: &str) -> String {
    match e {
        Error::IdentityMismatch { actual, .. } => format!(
            "not signed by GitHub's release signer ({RELEASE_SIGNER}): its certificate is for {}",
            actual.as_ref().map_or("no identity", |a| a.as_str())
        ),
        Error::SignatureInvalid(_) => {
            "its signature does not verify: the statement was changed after it was signed".into()
        }
        Error::Certificate(c) => format!("its certificate does not chain to {root}: {c}"),
        Error::Timestamp(t) => format!("its signing time is not vouched for by {root}: {t}"),
        Error::TransparencyLog(t) => {
            format!("its transparency-log entry does not verify under {root}: {t}")
        }
        other => other.to_string(),
    }
}
