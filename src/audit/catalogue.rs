//! The signing catalogue (`src/audit/signing.toml`, compiled in): which commands and actions sign,
//! which only verify, and which secret names are keys (or never are). Loaded once.

use crate::error::Reason;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};
use serde::Deserialize;

#[derive(Deserialize)]
struct Raw {
    tool: Vec<RawTool>,
    verify: Vec<RawTool>,
    action: Vec<RawAction>,
    names: RawNames,
    convention: Vec<RawConvention>,
    key_files: RawKeyFiles,
    store: Vec<RawStore>,
}

#[derive(Deserialize)]
struct RawStore {
    label: String,
    run: String,
    #[serde(default)]
    uses: Vec<String>,
}

/// A secret store outside GitHub that a job can read its key from.
pub(crate) struct Store {
    pub(crate) label: String,
    run: Regex,
    uses: Vec<String>,
}

#[derive(Deserialize)]
struct RawConvention {
    tool: String,
    vars: Vec<String>,
    runs: Option<String>,
}

#[derive(Deserialize)]
struct RawKeyFiles {
    paths: String,
    not: String,
}

/// Environment variables a tool reads its key from by convention.
pub(crate) struct Convention {
    pub(crate) tool: String,
    vars: RegexSet,
    /// The same names under a prefix of the project's (`MYAPP_AZURE_CLIENT_SECRET`,
    /// `MAS_CSC_LINK`): how a secret is named when it is mapped into the variable.
    prefixed: RegexSet,
    /// What the job must run for the variables to mean this tool's key.
    runs: Option<Regex>,
}

impl Convention {
    /// Whether `var` (any spelling) is one of the tool's key variables.
    pub(crate) fn reads(&self, var: &str) -> bool {
        self.vars.is_match(&Catalogue::normal(var))
    }

    /// Whether a secret's name is one of the tool's key variables, under a prefix or not.
    pub(crate) fn names(&self, secret: &str) -> bool {
        self.prefixed.is_match(&Catalogue::normal(secret))
    }

    /// Whether a job whose steps run `job_text` (scripts and `uses:`) runs the tool, when the
    /// convention asks.
    pub(crate) fn applies(&self, job_text: &str) -> bool {
        self.runs.as_ref().is_none_or(|r| r.is_match(job_text))
    }
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
    pub(crate) label: String,
    pub(crate) run: Regex,
}

/// An action that signs: `uses` is `owner/repo` (lower case).
pub(crate) struct Action {
    pub(crate) uses: String,
    /// The `with:`/`env:` names that carry the key (lower case); `None`: all of them.
    pub(crate) inputs: Option<Vec<String>>,
}

pub(crate) struct Catalogue {
    pub(crate) tools: Vec<Tool>,
    pub(crate) verify: Vec<Tool>,
    pub(crate) actions: Vec<Action>,
    strong: RegexSet,
    not_keys: RegexSet,
    not_keys_unless_strong: RegexSet,
    pub(crate) conventions: Vec<Convention>,
    key_files: Regex,
    not_key_files: Regex,
    stores: Vec<Store>,
}

/// What a secret's name says about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameClass {
    /// A signing key or its passphrase, by a curated name.
    Key,
    /// Something that names a key without holding it, or another service's credential.
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

    fn parse(text: &str) -> Result<Catalogue, Reason> {
        let raw: Raw = toml::from_str(text).map_err(|e| e.to_string())?;
        let tool = |t: RawTool| -> Result<Tool, Reason> {
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
            conventions: raw
                .convention
                .into_iter()
                .map(|c| {
                    let anchored: Vec<String> =
                        c.vars.iter().map(|v| format!("^(?:{v})$")).collect();
                    let prefixed: Vec<String> =
                        c.vars.iter().map(|v| format!("(?:^|_)(?:{v})$")).collect();
                    Ok(Convention {
                        vars: RegexSet::new(&anchored).map_err(|e| format!("{}: {e}", c.tool))?,
                        prefixed: RegexSet::new(&prefixed)
                            .map_err(|e| format!("{}: {e}", c.tool))?,
                        runs: c
                            .runs
                            .map(|r| Regex::new(&r))
                            .transpose()
                            .map_err(|e| format!("{}: {e}", c.tool))?,
                        tool: c.tool,
                    })
                })
                .collect::<Result<_, Reason>>()?,
            key_files: Regex::new(&raw.key_files.paths).map_err(|e| e.to_string())?,
            not_key_files: Regex::new(&raw.key_files.not).map_err(|e| e.to_string())?,
            stores: raw
                .store
                .into_iter()
                .map(|s| {
                    Ok(Store {
                        run: Regex::new(&s.run).map_err(|e| format!("{}: {e}", s.label))?,
                        uses: s.uses.iter().map(|u| u.to_ascii_lowercase()).collect(),
                        label: s.label,
                    })
                })
                .collect::<Result<_, Reason>>()?,
        })
    }

    /// The convention whose tool reads `var`, if any.
    pub(crate) fn convention(&self, var: &str) -> Option<&Convention> {
        self.conventions.iter().find(|c| c.reads(var))
    }

    /// The tool whose key variable a secret is named after (under any prefix), if any.
    pub(crate) fn convention_named(&self, secret: &str) -> Option<&Convention> {
        self.conventions.iter().find(|c| c.names(secret))
    }

    /// The secret store a script reads from, as a finding names it ("AWS Secrets Manager
    /// `/release/gpg-key`"), if any.
    pub(crate) fn store_read(&self, script: &str) -> Option<String> {
        self.stores.iter().find_map(|s| {
            let c = s.run.captures(script)?;
            Some(match c.get(1) {
                Some(id) => format!("{} `{}`", s.label, id.as_str()),
                None => s.label.clone(),
            })
        })
    }

    /// The secret store an action (`uses:`) reads from, if any.
    pub(crate) fn store_action(&self, uses: &str) -> Option<&str> {
        let repo = action_repo(uses);
        self.stores
            .iter()
            .find(|s| s.uses.contains(&repo))
            .map(|s| s.label.as_str())
    }

    /// Whether `path` is a file a build tool signs with (`release.jks`, `key.properties`).
    pub(crate) fn key_file(&self, path: &str) -> bool {
        self.key_files.is_match(path) && !self.not_key_files.is_match(path)
    }

    /// A name as the patterns see it: upper case, `-` as `_`.
    ///
    /// Words are split the ways names are written (`-`, `_`, camelCase: `signingKey` is
    /// `SIGNING_KEY`), plurals of key words made singular (`CERTS`, `KEYS`), and compounds
    /// written apart joined (`KEY_STORE` is `KEYSTORE`), so one pattern covers every spelling.
    pub(crate) fn normal(name: &str) -> String {
        let mut words: Vec<String> = Vec::new();
        let mut word = String::new();
        let mut previous: Option<char> = None;
        for c in name.chars() {
            if c == '-' || c == '_' || c == '.' || c == ' ' {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            } else {
                // A lower-case letter then an upper-case one starts a word (`signingKey`).
                if c.is_ascii_uppercase() && previous.is_some_and(|p| p.is_ascii_lowercase()) {
                    words.push(std::mem::take(&mut word));
                }
                word.push(c.to_ascii_uppercase());
            }
            previous = Some(c);
        }
        if !word.is_empty() {
            words.push(word);
        }
        for w in &mut words {
            // Plurals of the words the patterns look for.
            if let Some(one) = w.strip_suffix('S') {
                if [
                    "KEY",
                    "CERT",
                    "CERTIFICATE",
                    "PASSWORD",
                    "SECRET",
                    "SIGNATURE",
                    "CRED",
                ]
                .contains(&one)
                {
                    *w = one.to_string();
                }
            }
        }
        let mut out: Vec<String> = Vec::with_capacity(words.len());
        for w in words {
            // Compounds some names write apart.
            let joined = match (out.last().map(String::as_str), w.as_str()) {
                (Some("KEY"), "STORE") => Some("KEYSTORE"),
                (Some("KEY"), "CHAIN") => Some("KEYCHAIN"),
                (Some("KEY"), "RING") => Some("KEYRING"),
                (Some("PASS"), "PHRASE") => Some("PASSPHRASE"),
                (Some("PASS"), "WORD") => Some("PASSWORD"),
                (Some("PRIV"), "KEY") => Some("PRIVATE_KEY"),
                _ => None,
            };
            match joined {
                Some(j) => {
                    out.pop();
                    out.push(j.to_string());
                }
                None => out.push(w),
            }
        }
        out.join("_")
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

    /// Whether the name identifies rather than holds (`GPG_KEY_ID`, `APPLE_ID`): not a key even
    /// where a tool takes its key. `classify` says what the name alone says.
    pub(crate) fn never_key(&self, name: &str) -> bool {
        self.not_keys.is_match(&Self::normal(name))
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
        let repo = action_repo(uses);
        let exact = self
            .actions
            .iter()
            .find(|a| repo == a.uses || repo.starts_with(&format!("{}/", a.uses)));
        // A fork under another owner keeps the repository's name (and its inputs).
        let name = |r: &str| r.split('/').nth(1).map(str::to_string);
        exact.or_else(|| {
            let wanted = name(&repo)?;
            self.actions
                .iter()
                .find(|a| name(&a.uses).as_deref() == Some(wanted.as_str()))
        })
    }
}

/// What a `uses:` names, as the catalogue compares it: `owner/repo[/path]`, lower case, without
/// the `@ref`.
pub(crate) fn action_repo(uses: &str) -> String {
    uses.split('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
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
        // A service's prefix does not hide a key's name; an identifier stays one.
        assert_eq!(c.classify("CF_PROD_PGP_KEY"), NameClass::Key);
        assert_eq!(c.classify("WINDOWS_SIGN_TOTP_SECRET"), NameClass::Key);
        assert_eq!(c.classify("QINIU_SECRET_KEY"), NameClass::NotKey);
        assert_eq!(c.classify("GPG_OWNERTRUST"), NameClass::NotKey);
        assert!(c.never_key("GPG_KEY_ID") && c.never_key("APPLE_ID"));
        assert!(!c.never_key("MAVEN_CENTRAL_PRIVATE_KEY") && !c.never_key("CF_PROD_PGP_KEY"));
        // Spellings of the same names.
        for (written, normal) in [
            ("signingInMemoryKey", "SIGNING_IN_MEMORY_KEY"),
            ("ANDROID_KEY_STORE", "ANDROID_KEYSTORE"),
            ("MAC_CERTS", "MAC_CERT"),
            ("WIN_CSC_LINK", "WIN_CSC_LINK"),
            ("gpg-pass-phrase", "GPG_PASSPHRASE"),
            ("minisign_key", "MINISIGN_KEY"),
        ] {
            assert_eq!(Catalogue::normal(written), normal);
        }
        for key in ["ANDROID_KEY_STORE", "MAC_CERTS_PASSWORD", "WIN_CERTS"] {
            assert_eq!(c.classify(key), NameClass::Key, "{key}");
        }
        for not in [
            "TLS_PRIVATE_KEY",
            "CA_CERT",
            "KUBE_CONFIG",
            "COSIGN_PUBLIC_KEY",
            "CACHIX_AUTH_TOKEN",
        ] {
            assert_eq!(c.classify(not), NameClass::NotKey, "{not}");
        }
        for unknown in ["RELEASE_KEY", "APP_SECRET"] {
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
        assert_eq!(tool("gpg --import-ownertrust trust.txt"), None);
        assert_eq!(tool("git tag -s v1.2.3 -m v1.2.3"), Some("git tag -s"));
        assert_eq!(
            c.store_read("aws secretsmanager get-secret-value --secret-id /release/gpg --query S")
                .as_deref(),
            Some("AWS Secrets Manager `/release/gpg`")
        );
        assert_eq!(
            c.store_read("cosign sign --key awskms:///alias/release img")
                .as_deref(),
            Some("a cloud KMS key `awskms:///alias/release`")
        );
        assert_eq!(
            c.store_read("aws secretsmanager get-secret-value \\\n  --secret-id k --query S")
                .as_deref(),
            Some("AWS Secrets Manager `k`")
        );
        assert_eq!(c.store_read("aws s3 cp x s3://b/"), None);
        assert_eq!(
            c.store_action("hashicorp/vault-action@v3"),
            Some("HashiCorp Vault")
        );
        assert_eq!(tool("git tag v1.2.3"), None);
        assert_eq!(tool("signify -S -s key.sec -m SHA256"), Some("signify -S"));
        assert_eq!(tool("signify -V -p key.pub -m SHA256"), None);
        assert_eq!(
            tool("sign code azure-key-vault *.nupkg --azure-key-vault-url x"),
            Some("sign code")
        );
        assert_eq!(
            tool("productbuild --sign \"$ID\" out.pkg"),
            Some("productsign")
        );
        assert_eq!(
            tool("smctl sign --keypair-alias k -i app.exe"),
            Some("smctl sign")
        );
        assert_eq!(tool("gpg --batch --import\n"), Some("gpg --import"));
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
