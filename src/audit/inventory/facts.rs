//! What one repository says about its signing keys, read during its audit: the public keys it
//! commits and their state, the jobs that sign and the secrets they read, where those secrets
//! are stored, and the key ids in its recent releases' signatures. Kept as data (and saved with
//! an interrupted run, for `--resume`); the inventory joins the repositories.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::github::api::ApiSource;
use crate::github::memo::Memo;
use crate::github::releases;
use crate::github::settings::Settings;
use crate::minisign::keys::{public_key_files, KeyId, PublicKey};
use crate::minisign::names::{CHECKSUMS_NAME, SIGNATURE_SUFFIX};
use crate::trust::keys::TrustedKeys;

/// The most requests the inventory adds to one repository's audit (the keys beside `.github/`
/// and the releases' signatures the audit did not read).
pub(crate) const EXTRA_REQUESTS: u64 = 3;

/// An organisation secret, as the organisation's listing says: who can read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OrgSecret {
    pub(crate) visibility: String,
    /// Repositories that can read it (every one of the listing its visibility reaches).
    pub(crate) readers: Vec<String>,
}

/// One repository's key facts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct RepoFacts {
    pub(crate) repository: String,
    pub(crate) committed: Vec<CommittedKey>,
    pub(crate) jobs: Vec<JobFacts>,
    /// Where the signing secrets can live: `None` when the settings could not be read.
    pub(crate) stores: Option<SecretStores>,
    pub(crate) releases: Vec<ReleaseFacts>,
    /// Why the releases could not be read (all or some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) releases_unread: Option<String>,
    /// Public keys outside `keys/` over the request budget: named, not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) keys_not_fetched: Vec<String>,
}

/// A public key file of the repository, and what its keys folder says of the key.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct CommittedKey {
    /// Relative to the repository root (`keys/minisign.pub`, `.github/minisign.pub`).
    pub(crate) path: String,
    /// The file's text: `RW…` (id and key).
    pub(crate) public_key: String,
    /// In `keys/`, whose statements apply to it (a `.pub` elsewhere is only a file).
    pub(crate) in_keys_folder: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) revoked_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) valid_until: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expires_at: Option<u64>,
    /// The key a rotation statement of the folder hands over to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rotated_to: Option<String>,
}

impl CommittedKey {
    pub(crate) fn key(&self) -> Option<PublicKey> {
        PublicKey::from_base64(&self.public_key).ok()
    }
}

/// A job that holds a signing key.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct JobFacts {
    pub(crate) workflow: String,
    pub(crate) job: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<String>,
    /// The secrets the audit shows to be keys (upper case, as GitHub stores names).
    pub(crate) secrets: BTreeSet<String>,
    /// The committed keys (by `path`) the workflow names: a key file, its `RW…` text or id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) names: Vec<String>,
}

/// The secret names the repository's jobs can read, by where they are stored.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct SecretStores {
    pub(crate) repository: BTreeSet<String>,
    pub(crate) environments: BTreeMap<String, BTreeSet<String>>,
    pub(crate) organization: BTreeSet<String>,
}

/// One release, and the signatures of its checksum list (or of its first signed file).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct ReleaseFacts {
    pub(crate) tag: String,
    pub(crate) signatures: Vec<SignatureFacts>,
    /// A signed release whose signatures were not read (the request budget, or a read failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unread: Option<String>,
}

/// A signature asset: its key id, and, when read with the file it signs, what verifies it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct SignatureFacts {
    pub(crate) file: String,
    #[serde(with = "key_id_text")]
    pub(crate) key_id: KeyId,
    /// The `.minisig` text, when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) signature: Option<String>,
    /// BLAKE2b-512 of the signed file (hex), when read: a prehashed signature verifies over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prehash: Option<String>,
}

mod key_id_text {
    use crate::minisign::keys::KeyId;

    pub(crate) fn serialize<S: serde::Serializer>(id: &KeyId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<KeyId, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        KeyId::from_shown(&text).ok_or_else(|| serde::de::Error::custom("not a key id"))
    }
}

/// The committed public keys of the checkout at `root`: `keys/*.pub` with the folder's state,
/// then `.github/**/*.pub`, `*.pub` at the root, and the files a workflow names (`named`).
pub(crate) fn committed_keys(
    root: &Path,
    keys: Option<&TrustedKeys>,
    named: &[String],
) -> Vec<CommittedKey> {
    let mut out = Vec::new();
    let folder = root.join("keys");
    let rotations = crate::trust::lineage::load(&folder).unwrap_or_default();
    for file in public_key_files(&folder).unwrap_or_default() {
        let Ok(key) = PublicKey::from_file(&file) else {
            continue;
        };
        let policy = keys.and_then(|k| k.policy().key(key.key_id));
        out.push(CommittedKey {
            path: rel(root, &file),
            public_key: key.to_base64(),
            in_keys_folder: true,
            revoked_at: keys
                .and_then(|k| k.revoked_key(&key))
                .map(|r| r.revoked_at.clone()),
            valid_until: policy.and_then(|p| p.valid_until.clone()),
            expires_at: policy.and_then(|p| p.expires_at),
            rotated_to: rotations
                .iter()
                .find(|r| r.old == key)
                .map(|r| r.new.to_base64()),
        });
    }
    let mut others: Vec<std::path::PathBuf> = public_key_files(root).unwrap_or_default();
    others.extend(
        walkdir::WalkDir::new(root.join(".github"))
            .max_depth(4)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_type().is_file()
                    && e.file_name()
                        .to_str()
                        .is_some_and(crate::minisign::keys::is_public_key_file)
            })
            .map(|e| e.into_path()),
    );
    others.extend(named.iter().map(|p| root.join(p)));
    others.sort();
    others.dedup();
    for file in others {
        if let Ok(key) = PublicKey::from_file(&file) {
            out.push(CommittedKey {
                path: rel(root, &file),
                public_key: key.to_base64(),
                in_keys_folder: false,
                revoked_at: None,
                valid_until: None,
                expires_at: None,
                rotated_to: None,
            });
        }
    }
    out
}

fn rel(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// The signing jobs of the audit, each with the committed keys its workflow names.
pub(crate) fn jobs(
    root: &Path,
    signing_jobs: &[crate::audit::workflows::SigningJob],
    committed: &[CommittedKey],
) -> Vec<JobFacts> {
    let mut texts: BTreeMap<&Path, String> = BTreeMap::new();
    signing_jobs
        .iter()
        .map(|j| {
            let text = texts.entry(j.workflow.as_path()).or_insert_with(|| {
                let path = crate::files::paths::under_root(root, &j.workflow);
                crate::files::guarded::read_text_inside(root, &path, 1 << 20).unwrap_or_default()
            });
            let names = committed
                .iter()
                .filter(|c| names_key(text, c))
                .map(|c| c.path.clone())
                .collect();
            JobFacts {
                workflow: j.workflow.display().to_string(),
                job: j.job.clone(),
                environment: j.environment.clone(),
                secrets: j.secrets.iter().map(|s| s.to_ascii_uppercase()).collect(),
                names,
            }
        })
        .collect()
}

/// Whether a workflow's text names a committed key: its file (as a whole path word), its
/// `RW…` text, or its id.
fn names_key(text: &str, key: &CommittedKey) -> bool {
    let file = key.path.rsplit('/').next().unwrap_or(&key.path);
    let id = key.key().map(|k| k.key_id.to_string()).unwrap_or_default();
    text.lines().any(|line| {
        crate::audit::keys::mentions(line, file)
            || line.contains(&key.public_key)
            || (!id.is_empty() && crate::audit::keys::mentions(line, &id))
    })
}

/// Where the repository's secrets are stored, from what the settings audit read.
pub(crate) fn stores(settings: &Settings) -> Option<SecretStores> {
    let names = |list: &crate::github::settings::SecretList| -> BTreeSet<String> {
        list.names()
            .iter()
            .map(|n| n.to_ascii_uppercase())
            .collect()
    };
    let repository = names(settings.repo_secrets.ok()?);
    let organization = settings.org_secrets.ok().map(names).unwrap_or_default();
    let environments = settings
        .signing_environments
        .iter()
        .filter_map(|e| Some((e.name.clone(), names(e.secrets.ok()?))))
        .collect();
    Some(SecretStores {
        repository,
        environments,
        organization,
    })
}

/// The releases' signatures: the latest `count` releases, newest first. Reads the audit made
/// are free (`memo`); beyond them, at most `budget` more.
pub(crate) async fn releases<S: ApiSource>(
    memo: &Memo<'_, S>,
    repo: &str,
    count: usize,
    budget: u64,
) -> (Vec<ReleaseFacts>, Option<String>) {
    if count == 0 {
        return (Vec::new(), None);
    }
    let budget = Budget {
        start: memo.passed_on(),
        most: budget,
    };
    let list = match releases::latest(memo, repo, count).await {
        Ok(list) => list,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut out = Vec::new();
    let mut unread = None;
    for release in list.iter().filter(|r| !r.draft) {
        let facts = release_facts(memo, repo, release, &budget).await;
        if facts.unread.is_some() {
            unread = facts.unread.clone();
        }
        out.push(facts);
    }
    (out, unread)
}

/// The reads the inventory may add: those past `start`, at most `most`.
struct Budget {
    start: u64,
    most: u64,
}

impl Budget {
    /// Whether reading `route` (at `cap`) is free or still within the budget.
    fn allows<S: ApiSource>(&self, memo: &Memo<'_, S>, route: &str, cap: u64) -> bool {
        memo.has_bytes(route, cap) || memo.passed_on() - self.start < self.most
    }
}

/// One release's signatures: the checksum list's (else the first signed file's), each with its
/// key id, and its text and the signed list's digest when they could be read.
async fn release_facts<S: ApiSource>(
    memo: &Memo<'_, S>,
    repo: &str,
    release: &releases::Release,
    budget: &Budget,
) -> ReleaseFacts {
    let mut facts = ReleaseFacts {
        tag: release.tag.clone(),
        signatures: Vec::new(),
        unread: None,
    };
    let signed_file = if release.assets.iter().any(|a| a.name == CHECKSUMS_NAME) {
        Some(CHECKSUMS_NAME.to_string())
    } else {
        release
            .assets
            .iter()
            .find_map(|a| a.name.strip_suffix(SIGNATURE_SUFFIX).map(str::to_string))
    };
    let Some(signed_file) = signed_file else {
        return facts;
    };
    // The signed file, when it is the list: the signature can then be checked by key bytes.
    let list = release
        .assets
        .iter()
        .find(|a| a.name == signed_file && a.name == CHECKSUMS_NAME);
    for sig in release
        .assets
        .iter()
        .filter(|a| crate::minisign::names::signs(&a.name, &signed_file))
    {
        let from_name = crate::minisign::names::cosigned_file(&sig.name).map(|(_, id)| id);
        let route = releases::asset_route(repo, sig.id);
        if !budget.allows(memo, &route, crate::published::SIGNATURE_CAP) {
            match from_name {
                Some(key_id) => facts.signatures.push(SignatureFacts {
                    file: sig.name.clone(),
                    key_id,
                    signature: None,
                    prehash: None,
                }),
                None => {
                    facts.unread = Some(format!(
                        "{} not read: the inventory reads at most {} files the audit did not",
                        sig.name, budget.most
                    ))
                }
            }
            continue;
        }
        let read = releases::asset_bytes(memo, repo, sig, crate::published::SIGNATURE_CAP).await;
        let parsed = read
            .map_err(|e| e.to_string())
            .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8".to_string()))
            .and_then(|t| {
                crate::minisign::signature::SignatureFile::parse(&t)
                    .map(|p| (t, p.key_id))
                    .map_err(|e| e.to_string())
            });
        let (text, key_id) = match parsed {
            Ok(p) => p,
            Err(why) => {
                facts.unread = Some(format!("{}: not a minisign signature ({why})", sig.name));
                continue;
            }
        };
        let mut prehash = None;
        if let Some(t) = list {
            let route = releases::asset_route(repo, t.id);
            if budget.allows(memo, &route, crate::published::LIST_CAP) {
                prehash = releases::asset_bytes(memo, repo, t, crate::published::LIST_CAP)
                    .await
                    .ok()
                    .map(|b| {
                        crate::util::to_hex(&crate::minisign::hash::hash_bytes(&b).blake2b512)
                    });
            }
        }
        facts.signatures.push(SignatureFacts {
            file: sig.name.clone(),
            key_id,
            signature: Some(text),
            prehash,
        });
    }
    facts
}
