//! The signing catalogue (`src/audit/signing.toml`, compiled in): which commands and actions sign,
//! which only verify, and which secret names are keys (or never are). Loaded once.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};
use serde::Deserialize;

#[derive(Deserialize)]
struct Raw {
    tool: Vec<RawTool>,
    verify: Vec<RawTool>,
    action: Vec<RawAction>,
    names: RawNames,
}

#[derive(Deserialize)]
struct RawNames {
    strong: Vec<String>,
    not_keys: Vec<String>,
    not_keys_unless_strong: Vec<String>,
}

#[derive(Deserialize)]
struct RawTool {
    label: String,
    run: String,
}

#[derive(Deserialize)]
struct RawAction {
    uses: String,
    /// For people reading `signing.toml` (required there); messages name the action by `uses`.
    #[allow(dead_code)]
    label: String,
    inputs: Option<Vec<String>>,
}

/// A command matched in `run:` scripts.
pub(crate) struct Tool {
    pub label: String,
    pub run: Regex,
}

/// An action that signs: `uses` is `owner/repo` (lower case).
pub(crate) struct Action {
    pub uses: String,
    /// The `with:`/`env:` names that carry the key (lower case); `None`: all of them.
    pub inputs: Option<Vec<String>>,
}

pub(crate) struct Catalogue {
    pub tools: Vec<Tool>,
    pub verify: Vec<Tool>,
    pub actions: Vec<Action>,
    strong: RegexSet,
    not_keys: RegexSet,
    not_keys_unless_strong: RegexSet,
}

/// What a secret's name says about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameClass {
    /// A signing key or its passphrase, by a curated name.
    Key,
    /// A storage or API credential, or something that names a key without holding it.
    NotKey,
    Unknown,
}

/// The source of the catalogue, for the README and for extension by pull request.
pub(crate) const SOURCE: &str = include_str!("signing.toml");

impl Catalogue {
    /// The compiled-in catalogue.
    pub(crate) fn get() -> &'static Catalogue {
        static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
        CATALOGUE.get_or_init(|| Catalogue::parse(SOURCE).expect("src/audit/signing.toml is valid"))
    }

    fn parse(text: &str) -> Result<Catalogue, String> {
        let raw: Raw = toml::from_str(text).map_err(|e| e.to_string())?;
        let tool = |t: RawTool| -> Result<Tool, String> {
            Ok(Tool {
                run: Regex::new(&t.run).map_err(|e| format!("{}: {e}", t.label))?,
                label: t.label,
            })
        };
        Ok(Catalogue {
            tools: raw.tool.into_iter().map(tool).collect::<Result<_, _>>()?,
            verify: raw.verify.into_iter().map(tool).collect::<Result<_, _>>()?,
            actions: raw
                .action
                .into_iter()
                .map(|a| Action {
                    uses: a.uses.to_ascii_lowercase(),
                    inputs: a
                        .inputs
                        .map(|i| i.iter().map(|s| s.to_ascii_lowercase()).collect()),
                })
                .collect(),
            strong: RegexSet::new(&raw.names.strong).map_err(|e| e.to_string())?,
            not_keys: RegexSet::new(&raw.names.not_keys).map_err(|e| e.to_string())?,
            not_keys_unless_strong: RegexSet::new(&raw.names.not_keys_unless_strong)
                .map_err(|e| e.to_string())?,
        })
    }

    /// A name as the patterns see it: upper case, `-` as `_`.
    pub(crate) fn normal(name: &str) -> String {
        name.to_ascii_uppercase().replace('-', "_")
    }

    pub(crate) fn classify(&self, name: &str) -> NameClass {
        let n = Self::normal(name);
        if self.not_keys.is_match(&n) {
            NameClass::NotKey
        } else if self.strong.is_match(&n) {
            NameClass::Key
        } else if self.not_keys_unless_strong.is_match(&n) {
            NameClass::NotKey
        } else {
            NameClass::Unknown
        }
    }

    /// The signing command a script runs, if any (the first in catalogue order).
    pub(crate) fn signing_tool(&self, script: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.run.is_match(script))
    }

    pub(crate) fn verifies(&self, script: &str) -> bool {
        self.verify.iter().any(|t| t.run.is_match(script))
    }

    /// The signing action a `uses:` names, if any.
    pub(crate) fn signing_action(&self, uses: &str) -> Option<&Action> {
        let repo = uses
            .split('@')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        self.actions
            .iter()
            .find(|a| repo == a.uses || repo.starts_with(&format!("{}/", a.uses)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_field_test() {
        let c = Catalogue::get();
        for key in [
            "MINISIGN_SECRET_KEY",
            "minisign_password",
            "GPG_PRIVATE_KEY",
            "GPG_KEY",
            "gpg-private-key",
            "TAURI_PRIVATE_KEY",
            "TAURI_SIGNING_PRIVATE_KEY",
            "MACOS_SIGN_P12",
            "PROD_MACOS_CERTIFICATE",
            "PROD_MACOS_SPARKLE_KEY",
            "DEVELOPER_ID_CERTIFICATE_BASE64",
            "STSIGTOOL_PRIVATE_KEY",
            "APT_GPG_KEYRING_BASE64",
            "SIGNPATH_API_TOKEN",
            "AZURE_TRUSTED_SIGNING_CLIENT_SECRET",
            "COSIGN_PASSWORD",
            "GPG_PASSPHRASE",
            "ANDROID_KEYSTORE_BASE64",
        ] {
            assert_eq!(c.classify(key), NameClass::Key, "{key}");
        }
        for not in [
            "S3_RELEASES_SECRET_KEY",
            "CF_R2_UPLOAD_SECRET_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GPG_FINGERPRINT",
            "GPG_KEY_ID",
            "APPLE_SIGNING_IDENTITY",
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "APPLE_PASSWORD",
        ] {
            assert_eq!(c.classify(not), NameClass::NotKey, "{not}");
        }
        assert_eq!(c.classify("RELEASE_TOKEN"), NameClass::NotKey);
        assert_eq!(c.classify("SSH_PRIVATE_KEY"), NameClass::NotKey);
        assert_eq!(c.classify("SSH_SIGNING_KEY"), NameClass::Key);
        assert_eq!(c.classify("OSSRH_PASSWORD"), NameClass::NotKey);
        assert_eq!(c.classify("MAVEN_GPG_PASSPHRASE"), NameClass::Key);
        for unknown in ["SIGNING_KEYS", "RELEASE_KEY", "APP_SECRET"] {
            assert_eq!(c.classify(unknown), NameClass::Unknown, "{unknown}");
        }
    }

    #[test]
    fn tools_and_actions() {
        let c = Catalogue::get();
        let tool = |s: &str| c.signing_tool(s).map(|t| t.label.as_str());
        assert_eq!(tool("minisign -Sm dist/x -s k.key"), Some("minisign -S"));
        assert_eq!(
            tool("echo \"$K\" | gpg --batch --import"),
            Some("gpg --import")
        );
        assert_eq!(tool("gpg --armor --detach-sign x"), Some("gpg --sign"));
        assert_eq!(tool("gpg -abs x"), Some("gpg --sign"));
        assert_eq!(tool("gpg --verify x.sig"), None);
        assert_eq!(tool("minisign -Vm x -p k.pub"), None);
        assert!(c.verifies("ssh-keygen -Y verify -f allowed_signers"));
        assert_eq!(
            c.signing_action("crazy-max/ghaction-import-gpg@v6")
                .map(|a| a.uses.as_str()),
            Some("crazy-max/ghaction-import-gpg")
        );
        assert!(c.signing_action("actions/checkout@v4").is_none());
    }
}
