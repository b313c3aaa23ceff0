//! What a settings rule's check is given ([`SettingsView`]: everything `github::settings` read,
//! with the repository, its release tags, signing jobs and signing secrets), and the permissions
//! the reads need. Rules live in `audit/rules/` and come in as [`SettingsCheck`]s, so this
//! folder never names one.

use crate::audit::findings::Finding;
use crate::audit::secrets::SigningSecrets;
use crate::audit::tags::ReleaseTags;
use crate::audit::workflows::signing_job::SigningJob;
use crate::github::settings::{Read, SecretList, Settings};

/// Reading rulesets and legacy tag protection.
pub(crate) const RULESET_PERMISSION: &str =
    "Administration: read (fine-grained) or `repo` (classic)";
/// Reading environments and their deployment policies.
pub(crate) const ENV_PERMISSION: &str = "Actions: read (fine-grained) or `repo` (classic)";
/// Reading repository and organization secrets.
pub(crate) const SECRETS_PERMISSION: &str = "Secrets: read (fine-grained) or `repo` (classic)";
/// Reading an environment's secrets.
pub(crate) const ENV_SECRETS_PERMISSION: &str =
    "Environments: read (fine-grained) or `repo` (classic)";

/// The settings of one repository as its rules see them.
#[derive(Clone, Copy)]
pub struct SettingsView<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) repo: &'a str,
    pub(crate) tags: &'a ReleaseTags,
    pub(crate) jobs: &'a [SigningJob],
    pub(crate) secrets: &'a SigningSecrets,
}

impl SettingsView<'_> {
    /// The signing secrets among the names of `list` (none when it could not be read: that is
    /// `unverifiable`'s to say).
    pub(crate) fn signing_secrets_in(&self, list: &Read<SecretList>) -> Vec<String> {
        list.ok()
            .map(|l| l.names())
            .unwrap_or_default()
            .into_iter()
            .filter(|n| self.secrets.is_signing(n))
            .collect()
    }
}

/// A check of the settings.
pub(crate) type SettingsCheck = fn(&SettingsView) -> Vec<Finding>;
