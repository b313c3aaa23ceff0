//! The verdict: the judgement of a release folder (on disk, or a published release's assets)
//! and of a published release, from the evidence its readers gathered, with no I/O of its own.
//! A judgement says what it still needs (`evidence::Needs`: a file's bytes, a log's checkpoint
//! or proof, a run's records); the readers (`release::folder_reader`, `published`,
//! `release::log_reader`) fetch exactly that and ask again. Trust (who signed, does it count) is
//! `trust`'s; formats are `minisign`'s and `log`'s.
//!
//! - `folder`: a release folder or files, against the signed checksum list and the signatures;
//! - `file`: one file of it;
//! - `logged`: `--require-log`, from the log's records;
//! - `release`: a published release, with GitHub's records held against it (`provenance`);
//! - `witnesses`: GitHub's release attestation and build provenance, held against the release
//!   and its minisign signatures;
//! - `evidence` and `report`: what goes in and what comes out.

pub(crate) mod evidence;
pub(crate) mod file;
pub(crate) mod folder;
pub(crate) mod layout;
pub(crate) mod logged;
pub(crate) mod provenance;
pub(crate) mod release;
pub(crate) mod report;
#[cfg(test)]
pub(crate) mod testkit;
pub(crate) mod witnesses;

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::trust::binding::{Expected, ReleaseIdentity};
use crate::trust::signer::Checks;

pub use report::VerifyReport;

#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    pub inputs: Vec<PathBuf>,
    pub expect_tag: Option<String>,
    /// Require `repo:` equal to this (`OWNER/NAME`, without case).
    pub expect_repo: Option<String>,
    /// Require `commit:` (a full SHA) to begin with this (12 to 40 hex digits).
    pub expect_commit: Option<String>,
    /// A published release (`verify --release`): its tag, repository and the commit the tag
    /// names, all required in addition to the caller's `expect_*`, never instead of them.
    pub release: Option<ReleaseIdentity>,
    pub allow_legacy: bool,
    pub allow_dry_run: bool,
    /// Entries of a release directory that its checksum list does not name are skipped (and
    /// named) instead of failing the run.
    pub allow_unlisted: bool,
    /// A release directory without a checksum list is verified file by file.
    pub allow_no_checksums: bool,
    /// `--only`: in a release directory, verify just the listed files whose names match one of
    /// these globs (the others are named as skipped).
    pub only: Option<Only>,
    /// The checksum list of a release folder (`--checksums NAME`); `None`: found by its name
    /// (`verdict::layout`).
    pub checksums_name: Option<String>,
    /// `-x FILE`: the signature of the one file verified, where it is not `<file>.minisig`.
    pub signature_file: Option<PathBuf>,
    /// Bytes hashed so far, for a progress display.
    pub progress: Option<crate::minisign::hash::Progress>,
    /// `--require-log`: every counted signature of the checksum list must be in this log.
    pub log: Option<crate::trust::log::LogRequirement>,
    /// GitHub's attestations of the release: where they are read from and what is required.
    pub attest: AttestOptions,
}

/// How GitHub's attestations take part in a verification (issue 48).
#[derive(Clone, Debug, Default)]
pub struct AttestOptions {
    /// The roots bundles are verified against; `None`: no attestation is read or judged.
    pub roots: Option<std::sync::Arc<crate::attest::TrustRoots>>,
    /// `--attestations FILE…`: bundles downloaded beside the release (no network).
    pub files: Vec<PathBuf>,
    /// `--require-attestation`, added to the keys folder's `require_attestation`.
    pub require: Option<crate::trust::policy::AttestRequirement>,
    /// A published release: ask GitHub about one asset only (the audit: its release
    /// attestation covers every asset), not each.
    pub one_asset: bool,
}

impl VerifyOptions {
    /// What every signature must hold, from these options.
    pub(crate) fn checks(&self) -> Checks<'_> {
        Checks {
            allow_legacy: self.allow_legacy,
            allow_dry_run: self.allow_dry_run,
            expected: Expected {
                tag: self.expect_tag.as_deref(),
                repo: self.expect_repo.as_deref(),
                commit: self.expect_commit.as_deref(),
            },
            release: self.release.as_ref(),
        }
    }
}

/// The `--only` patterns, as given and compiled: each must match a listed file (a pattern that
/// matches none fails the run).
#[derive(Clone, Debug)]
pub struct Only {
    patterns: Vec<String>,
    set: globset::GlobSet,
}

impl Only {
    /// The patterns compiled; `None` when there are none.
    pub fn new(patterns: &[String]) -> Result<Option<Only>> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut set = globset::GlobSetBuilder::new();
        for p in patterns {
            let glob =
                globset::Glob::new(p).map_err(|e| Error::Usage(format!("--only {p:?}: {e}")))?;
            set.add(glob);
        }
        let set = set
            .build()
            .map_err(|e| Error::Usage(format!("--only: {e}")))?;
        Ok(Some(Only {
            patterns: patterns.to_vec(),
            set,
        }))
    }

    pub(crate) fn is_match(&self, name: &str) -> bool {
        self.set.is_match(name)
    }
}
