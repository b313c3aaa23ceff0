//! Which secrets are signing keys. Each job's keys are judged by what the secrets do
//! (`workflows::flow`) and by the catalogue's names (`catalogue`); `--secret NAME` adds names and
//! `--only-secret NAME` replaces all of that with a list. The settings audit asks `is_signing`
//! about stored secrets: a name given, a curated name, or one the workflows showed to be a key.

use std::collections::BTreeSet;

use super::catalogue::{Catalogue, NameClass};

/// A signing action a repository names in `.github/warden.toml` (`[[action]]`): its `uses`, and
/// the inputs that carry the key. (`label` is accepted, as older files have it; messages name
/// the action by its `uses`.)
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraAction {
    pub(crate) uses: String,
    #[serde(default, rename = "label")]
    _label: Option<String>,
    pub(crate) inputs: Option<Vec<String>>,
}

#[derive(Clone, Debug, Default)]
pub struct SigningSecrets {
    /// `--secret NAME`: signing keys in addition to what warden finds.
    pub extra: Vec<String>,
    /// `--only-secret NAME`: the only signing keys (nothing is judged by flow or name).
    pub only: Vec<String>,
    /// Keys the workflow audit found (normalised names), for the settings audit.
    pub found: BTreeSet<String>,
    /// In a reusable workflow: its secret names (normalised) that receive a caller's key, and
    /// which key from where.
    pub passed: std::collections::BTreeMap<String, String>,
    /// Signing actions from `.github/warden.toml`, besides the catalogue's.
    pub actions: Vec<ExtraAction>,
}

impl SigningSecrets {
    /// Whether the name was given on the command line (case-insensitive, `-` as `_`).
    pub(crate) fn names(&self, name: &str) -> bool {
        let n = Catalogue::normal(name);
        self.extra
            .iter()
            .chain(&self.only)
            .any(|g| Catalogue::normal(g) == n)
    }

    /// The caller's key a (reusable workflow's) secret receives, if any.
    pub(crate) fn passed_from(&self, name: &str) -> Option<&str> {
        self.passed
            .get(&Catalogue::normal(name))
            .map(String::as_str)
    }

    /// Whether only the given names count.
    pub(crate) fn only_given(&self) -> bool {
        !self.only.is_empty()
    }

    /// Whether a stored secret of this name is a signing key.
    pub(crate) fn is_signing(&self, name: &str) -> bool {
        if self.only_given() || self.names(name) {
            return self.names(name);
        }
        self.found.contains(&Catalogue::normal(name))
            || Catalogue::get().classify(name) == NameClass::Key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_names_add_to_or_replace_the_catalogue() {
        let s = SigningSecrets::default();
        assert!(s.is_signing("MINISIGN_SECRET_KEY") && s.is_signing("gpg-private-key"));
        assert!(!s.is_signing("GITHUB_TOKEN") && !s.is_signing("S3_SECRET_KEY"));
        let more = SigningSecrets {
            extra: vec!["release-key".into()],
            ..Default::default()
        };
        assert!(more.is_signing("RELEASE_KEY") && more.is_signing("MINISIGN_SECRET_KEY"));
        let only = SigningSecrets {
            only: vec!["RELEASE_KEY".into()],
            ..Default::default()
        };
        assert!(only.is_signing("RELEASE_KEY") && !only.is_signing("MINISIGN_SECRET_KEY"));
        let found = SigningSecrets {
            found: ["APP_KEY".to_string()].into(),
            ..Default::default()
        };
        assert!(found.is_signing("app-key"));
    }
}
