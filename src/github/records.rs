//! GitHub's records of a workflow run and of a release asset's upload, typed where they are
//! read (`github::runs`, `github::releases`): the evidence `verdict::provenance` judges.

/// A workflow run as GitHub records it (one attempt of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunRecord {
    pub(crate) id: u64,
    pub(crate) attempt: u32,
    /// The workflow file (`.github/workflows/release.yml`).
    pub(crate) path: String,
    pub(crate) head_sha: String,
    /// `owner/repo` of the code that ran (a fork's name for a fork's pull request).
    pub(crate) head_repository: String,
    pub(crate) event: String,
    /// The branch or tag the run is for.
    pub(crate) head_branch: String,
    /// Unix seconds.
    pub(crate) started_at: u64,
    pub(crate) updated_at: u64,
}

/// A deployment a job with `environment:` made, with its statuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeploymentRecord {
    pub(crate) environment: String,
    pub(crate) sha: String,
    /// Each status's `state` with its `log_url` or `target_url`.
    pub(crate) statuses: Vec<(String, String)>,
}

/// A release asset's upload, as GitHub records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UploadRecord {
    pub(crate) name: String,
    pub(crate) uploader: String,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
}

/// What GitHub says about a bound run: the run (or why it could not be read) and the
/// deployments for the bound environment and the signed commit.
#[derive(Clone, Debug)]
pub(crate) struct RunEvidence {
    /// `None` when GitHub says there is no such run (404).
    pub(crate) run: Option<RunRecord>,
    pub(crate) deployments: Vec<DeploymentRecord>,
}

/// What GitHub records of one release asset: its name, the SHA-256 it took at upload (when it
/// gives one), and who uploaded it and when (`None` when the API leaves it out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AssetRecord {
    pub(crate) name: String,
    pub(crate) digest: Option<[u8; 32]>,
    pub(crate) upload: Option<UploadRecord>,
}

/// An asset's bytes as a download hashed them (never kept), or the SHA-256 alone that a snapshot
/// recorded by an older warden keeps.
#[derive(Clone, Debug)]
pub(crate) enum AssetDigests {
    Read(crate::minisign::hash::Digests),
    Sha256Only([u8; 32]),
}
