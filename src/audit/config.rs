//! The repository's audit configuration, `.github/warden.toml`: extra signing-secret names and
//! signing actions, and suppressions with a reason. A suppression that matches nothing, or whose
//! `until` date has passed, is itself a finding; suppressed findings stay in JSON and SARIF.
//!
//! ```toml
//! secrets = ["RELEASE_KEY"]        # or: only_secrets = [...] to replace what warden finds
//!
//! [[action]]
//! uses = "my-org/sign-action"
//! inputs = ["key", "passphrase"]
//!
//! [[ignore]]
//! rule = "signing-job-unpinned-action"
//! path = ".github/workflows/release.yml"
//! job = "sign"
//! reason = "the action is ours and tags are protected"
//! until = 2027-06-30
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::findings::{Finding, Location, Suppression};
use super::rules::{suppression_expired, suppression_unmatched};
use super::secrets::ExtraAction;
use crate::error::{Error, Result};

/// Where the configuration lives, under the repository root.
pub(crate) const CONFIG_FILE: &str = ".github/warden.toml";

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditConfig {
    /// More signing-secret names (as `--secret`).
    #[serde(default)]
    pub(crate) secrets: Vec<String>,
    /// The only signing-secret names (as `--only-secret`): replaces what warden finds.
    #[serde(default)]
    pub(crate) only_secrets: Vec<String>,
    /// More signing actions (as in `src/audit/signing.toml`).
    #[serde(default, rename = "action")]
    pub(crate) actions: Vec<ExtraAction>,
    #[serde(default, rename = "ignore")]
    pub(crate) ignores: Vec<Spanned<Ignore>>,
    #[serde(skip)]
    pub(crate) path: PathBuf,
    #[serde(skip)]
    text: String,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ignore {
    pub(crate) rule: String,
    pub(crate) path: String,
    pub(crate) job: Option<String>,
    pub(crate) reason: String,
    pub(crate) until: Option<toml::value::Datetime>,
}

impl AuditConfig {
    /// The configuration of the repository at `root`: none when the file does not exist; a
    /// malformed file is bad input, named with its line.
    pub(crate) fn load(root: &Path) -> Result<AuditConfig> {
        let path = crate::files::paths::under_root(root, CONFIG_FILE);
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(AuditConfig::default());
        }
        let text = crate::files::guarded::read_text_inside(root, &path, 1 << 20)
            .map_err(|e| Error::io("reading", &path, e))?;
        let mut config: AuditConfig = toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
            Error::input(
                path.display().to_string(),
                line,
                e.message().trim().to_string(),
            )
        })?;
        for ignore in &config.ignores {
            let i = ignore.get_ref();
            if super::rules::by_id(&i.rule).is_none() {
                return Err(Error::input(
                    path.display().to_string(),
                    Some(line_of(&text, ignore.span().start)),
                    format!("ignore: unknown rule {:?}", i.rule),
                ));
            }
            if i.reason.trim().is_empty() {
                return Err(Error::input(
                    path.display().to_string(),
                    Some(line_of(&text, ignore.span().start)),
                    "ignore: a suppression needs a reason",
                ));
            }
        }
        config.path = PathBuf::from(CONFIG_FILE);
        config.text = text;
        Ok(config)
    }

    /// Splits `findings` into the active ones and the suppressed ones, and adds a finding for
    /// each suppression that has expired (`today` as `YYYY-MM-DD`) or matched nothing.
    pub(crate) fn apply(
        &self,
        findings: Vec<Finding>,
        today: &str,
    ) -> (Vec<Finding>, Vec<(Finding, Suppression)>) {
        let mut active = Vec::new();
        let mut suppressed = Vec::new();
        let mut used = vec![false; self.ignores.len()];
        // Each (rule, key id)'s fingerprints, to tell a `key:ID` suppression what to name instead.
        let mut by_id: BTreeMap<(&str, String), BTreeSet<String>> = BTreeMap::new();
        for f in &findings {
            if let Location::Key {
                key,
                fingerprint: Some(fp),
            } = &f.location
            {
                by_id
                    .entry((f.rule.id(), format!("key:{key}")))
                    .or_default()
                    .insert(format!("key:{fp}"));
            }
        }
        let expired = |i: &Ignore| {
            i.until
                .as_ref()
                .is_some_and(|u| u.to_string().as_str() < today)
        };
        for f in findings {
            let hit = self
                .ignores
                .iter()
                .enumerate()
                .find(|(_, i)| matches(i.get_ref(), &f));
            match hit {
                Some((n, i)) if !expired(i.get_ref()) => {
                    used[n] = true;
                    let i = i.get_ref();
                    suppressed.push((
                        f,
                        Suppression {
                            reason: i.reason.clone(),
                            until: i.until.as_ref().map(ToString::to_string),
                        },
                    ));
                }
                Some((n, _)) => {
                    used[n] = true;
                    active.push(f);
                }
                None => active.push(f),
            }
        }
        for (n, ignore) in self.ignores.iter().enumerate() {
            let i = ignore.get_ref();
            let at = Location::Workflow {
                path: self.path.clone(),
                line: line_of(&self.text, ignore.span().start),
                column: 1,
                job: None,
            };
            if expired(i) {
                let until = i.until.as_ref().map(ToString::to_string);
                active.push(suppression_expired::finding(
                    at,
                    &i.rule,
                    &i.path,
                    until.as_deref().unwrap_or_default(),
                ));
            } else if !used[n] {
                let mut f = suppression_unmatched::finding(at, &i.rule, &i.path, i.job.as_deref());
                if let Some(fps) = by_id.get(&(i.rule.as_str(), i.path.clone())) {
                    let fps: Vec<&str> = fps.iter().map(String::as_str).collect();
                    f.remediation = format!("A key is named by its bytes, not its id (an id can be copied): write `path = \"{}\"`{}.", fps[0], if fps.len() > 1 { format!(" (the id is carried by {} different keys: {})", fps.len(), fps.join(", ")) } else { String::new() });
                }
                active.push(f);
            }
        }
        (active, suppressed)
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.matches('\n').count() + 1)
}

/// Whether a suppression covers a finding: same rule, same file (or API resource), and the job
/// when one is named.
fn matches(i: &Ignore, f: &Finding) -> bool {
    if f.rule.id() != i.rule {
        return false;
    }
    match &f.location {
        Location::Workflow { path, job, .. } => {
            Path::new(i.path.trim_start_matches("./")) == path.as_path()
                && i.job
                    .as_ref()
                    .is_none_or(|j| job.as_deref() == Some(j.as_str()))
        }
        Location::Api { resource } => i.path.trim_start_matches('/') == resource.as_str(),
        // `path = "key:sha256:…"` (the key's bytes) in the configuration of the inventory's
        // checkout; `key:ID` only for a key known by its id alone, so that one suppression never
        // hides two keys that share an id.
        Location::Key { .. } => f.location.key_handle().as_deref() == Some(i.path.as_str()),
    }
}
