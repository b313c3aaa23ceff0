//! The trusted roots attestations are verified against, pinned: GitHub's own Sigstore instance
//! (release attestations, and provenance of private repositories) and the public-good instance
//! (provenance of public repositories), both as the pinned `sigstore-trust-root` crate carries
//! them. Nothing is fetched at verify time (no TUF): `--trusted-root FILE` replaces GitHub's.

use std::path::Path;

use sigstore_trust_root::{
    TrustedRoot, SIGSTORE_GITHUB_TRUSTED_ROOT, SIGSTORE_PRODUCTION_TRUSTED_ROOT,
};
use sigstore_verify::Verifier;

use crate::error::{Error, Result};

/// The most a trusted-root file may be (GitHub's is 32 KiB).
const ROOT_CAP: u64 = 4 << 20;

/// One trusted root, ready to verify with, and what to call it in a message.
pub(crate) struct Root {
    pub(crate) verifier: Verifier,
    pub(crate) label: String,
}

/// The roots a verification uses.
pub struct TrustRoots {
    pub(crate) github: Root,
    pub(crate) public_good: Root,
}

impl std::fmt::Debug for TrustRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustRoots")
            .field("github", &self.github.label)
            .field("public_good", &self.public_good.label)
            .finish()
    }
}

fn root(json: &str, label: &str, origin: &str) -> Result<Root> {
    super::crypto::install();
    let bad = |e: String| {
        Error::input(
            origin,
            None,
            format!("not a usable Sigstore trusted root: {e}"),
        )
    };
    let parsed = TrustedRoot::from_json(json).map_err(|e| bad(e.to_string()))?;
    let verifier = Verifier::new(&parsed).map_err(|e| bad(e.to_string()))?;
    Ok(Root {
        verifier,
        label: label.to_string(),
    })
}

impl TrustRoots {
    /// The roots warden carries: GitHub's and the public-good instance's.
    pub fn embedded() -> Result<TrustRoots> {
        Ok(TrustRoots {
            github: root(
                SIGSTORE_GITHUB_TRUSTED_ROOT,
                "GitHub's trusted root",
                "the embedded GitHub trusted root",
            )?,
            public_good: root(
                SIGSTORE_PRODUCTION_TRUSTED_ROOT,
                "the public-good trusted root",
                "the embedded public-good trusted root",
            )?,
        })
    }

    /// The embedded roots, built once per process (the audit judges many releases).
    pub(crate) fn shared() -> Result<std::sync::Arc<TrustRoots>> {
        static SHARED: std::sync::OnceLock<std::sync::Arc<TrustRoots>> = std::sync::OnceLock::new();
        if let Some(r) = SHARED.get() {
            return Ok(r.clone());
        }
        let built = std::sync::Arc::new(TrustRoots::embedded()?);
        Ok(SHARED.get_or_init(|| built).clone())
    }

    /// The embedded roots with GitHub's replaced by the trusted root in `file`
    /// (`--trusted-root`): a GitHub Enterprise instance's, or a test's.
    pub fn with_github_root(file: &Path) -> Result<TrustRoots> {
        let text = crate::files::guarded::read_small_file(file, ROOT_CAP, "a trusted root")?;
        let shown = file.display().to_string();
        let github = root(&text, &format!("the trusted root {shown}"), &shown)?;
        Ok(TrustRoots {
            github,
            ..TrustRoots::embedded()?
        })
    }
}
