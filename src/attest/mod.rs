//! GitHub's own statements about a release, as Sigstore bundles: an immutable release's release
//! attestation (its tag, commit and every asset's digest, signed by GitHub) and build provenance
//! (`actions/attest-build-provenance`: the run that built an asset, in a certificate issued to
//! that run). A leaf, like `minisign`: bundles read (`bundle`), verified offline against pinned
//! roots (`roots`, `verify`, on `ring`: `crypto`), and what each says, typed (`claims`). Whether
//! they agree with a release and its minisign signatures is the verdict's (`verdict::witnesses`).

pub(crate) mod bundle;
pub(crate) mod claims;
mod crypto;
pub(crate) mod roots;
pub(crate) mod verify;

pub use roots::TrustRoots;
