//! Trust: the only place that answers "who signed this, and does it count". `signer` judges
//! signatures (one, or a file's set against the threshold); `keys` are the keys a verification
//! trusts, found by id and proved by their bytes; `policy` and `run_policy` what a keys folder
//! asks; `revocation`, `rotation` and `lineage` the statements about keys (a key and its
//! successors are one signer); `statement` how a statement is read and signed; `binding` what a
//! signature must bind; `log` who a verifier trusts for a transparency log (witnesses by their
//! keys' bytes).

pub(crate) mod binding;
pub(crate) mod keys;
pub(crate) mod lineage;
pub(crate) mod log;
pub(crate) mod policy;
pub(crate) mod revocation;
pub(crate) mod rotation;
pub(crate) mod run_policy;
pub(crate) mod signer;
pub(crate) mod statement;

pub use keys::{list as list_keys, TrustedKeys};
pub use log::{parse_vkey, parse_witness_vkey, LogRequirement, LogTrust, VerifierKeyArg};
pub use policy::AttestRequirement;
pub use revocation::{install as install_revocation, revoke, RevokeOptions};
pub use rotation::{rotate, RotateOptions};
