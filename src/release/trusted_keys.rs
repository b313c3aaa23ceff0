//! The public keys a verification trusts: `--public-key` files, or every `*.pub` of the keys
//! folder. Each signature picks its key by key id, so an old and a new key can both be trusted
//! during a rotation.

use std::path::{Path, PathBuf};

use super::keys::{KeyId, PublicKey};
use super::policy::{KeyPolicy, Policy};
use crate::error::{Error, Result};

/// The public keys a verification trusts, chosen per signature by key id (key rotation).
#[derive(Clone, Debug, Default)]
pub struct TrustedKeys {
    keys: Vec<(PublicKey, PathBuf)>,
    /// The keys folder they came from, if any: it must not lie inside what is verified.
    dir: Option<PathBuf>,
    /// Keys revoked by a statement in `keys/revoked/`: never trusted, even with a `.pub` here.
    revoked: Vec<super::revocation::Revocation>,
    /// The keys folder's `policy.toml` (threshold, validity, names); the default without one.
    policy: Policy,
    /// The time trust is judged at (Unix seconds): a key past its `valid_until` is not used.
    now: u64,
}

impl TrustedKeys {
    pub fn load_files(paths: &[PathBuf]) -> Result<Self> {
        let mut keys = TrustedKeys {
            now: crate::util::unix_now(),
            ..TrustedKeys::default()
        };
        for path in paths {
            // A key given inline (`-P RWQ…`, as minisign takes it) rather than a file.
            let inline = path
                .to_str()
                .filter(|s| !path.exists() && s.len() == 56 && s.starts_with("RW"));
            let key = match inline {
                Some(text) => PublicKey::from_base64(text)
                    .map_err(|e| Error::input("--public-key", None, e))?,
                None => PublicKey::from_file(path)?,
            };
            keys.add(key, path.clone())?;
        }
        Ok(keys)
    }

    /// Every `*.pub` in `dir`, in name order, with the folder's revocations and policy.
    pub fn load_dir(dir: &Path) -> Result<Self> {
        let mut keys = TrustedKeys {
            dir: Some(dir.to_path_buf()),
            policy: Policy::load(dir)?,
            now: crate::util::unix_now(),
            ..TrustedKeys::default()
        };
        for path in super::keys::public_key_files(dir)? {
            keys.add(PublicKey::from_file(&path)?, path)?;
        }
        let all: Vec<PublicKey> = keys.keys.iter().map(|(k, _)| k.clone()).collect();
        keys.revoked = super::revocation::load(dir, &all, keys.policy.threshold)?;
        Ok(keys)
    }

    /// Also trusts the keys that succeed these ones through the rotations of `keys_dir`
    /// (`verify --follow-rotations`: a pinned old key leads to its successors), and applies that
    /// folder's revocations, which only remove trust. A forked chain is an error.
    pub fn follow_rotations(mut self, keys_dir: &Path) -> Result<Self> {
        let rotations = super::rotation::load(keys_dir)?;
        let pinned: Vec<PublicKey> = self.keys.iter().map(|(k, _)| k.clone()).collect();
        for key in &pinned {
            for r in super::rotation::successors(key, &rotations)? {
                self.add(r.new.clone(), r.file.clone())?;
            }
        }
        let all: Vec<PublicKey> = self.keys.iter().map(|(k, _)| k.clone()).collect();
        // The folder's policy only removes trust (a threshold, an end date): it applies too.
        self.policy = Policy::load(keys_dir)?;
        self.revoked = super::revocation::load(keys_dir, &all, self.policy.threshold)?;
        Ok(self)
    }

    /// The same keys with a threshold of 1: `sign --cosign` checks a release that still lacks
    /// the signature it is about to add.
    pub fn below_threshold_allowed(mut self) -> Self {
        self.policy.threshold = 1;
        self
    }

    /// How many distinct usable keys must sign.
    pub fn threshold(&self) -> usize {
        self.policy.threshold
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The key's policy when its trust has ended (`valid_until` is past).
    pub fn expired(&self, id: KeyId) -> Option<&KeyPolicy> {
        self.policy.expired(id, self.now)
    }

    /// Every key id a signature may carry and be judged by: the keys, and the revoked ones.
    pub fn known_ids(&self) -> Vec<KeyId> {
        let mut ids: Vec<KeyId> = self.keys.iter().map(|(k, _)| k.key_id).collect();
        ids.extend(self.revoked.iter().map(|r| r.key_id));
        ids.sort();
        ids.dedup();
        ids
    }

    /// The keys a signature counts for: trusted, not revoked, not past their `valid_until`.
    pub fn usable(&self) -> impl Iterator<Item = (&PublicKey, &Path)> {
        self.trusted()
            .filter(|(k, _)| self.expired(k.key_id).is_none())
    }

    /// Why the folder cannot be used as it is: a policy naming a key the folder does not hold,
    /// a threshold above the keys that can sign.
    pub fn inconsistencies(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let origin = self.policy.origin();
        for k in &self.policy.keys {
            if !self.keys.iter().any(|(key, _)| key.key_id == k.key_id) {
                problems.push(format!(
                    "{origin} names key {}, which has no .pub file in the folder",
                    k.key_id
                ));
            }
        }
        // Without a policy, a folder whose keys are all revoked is said by `keys list` as such.
        let usable = self.usable().count();
        if self.policy.file.is_some() && self.policy.threshold > usable {
            problems.push(format!(
                "{origin}: threshold {} is above the {usable} usable key{} (trusted, not revoked, not expired): no release can be signed",
                self.policy.threshold,
                if usable == 1 { "" } else { "s" }
            ));
        }
        problems
    }

    /// Also applies the `policy.toml` of `dir` (the repository's, read through the API, named
    /// `origin` in messages) on top of this folder's: see [`Policy::with_stricter`]. Its rules
    /// about keys not trusted here are left out (their signatures do not count anyway). Nothing
    /// changes when `dir` has no policy.
    pub fn apply_policy_from(mut self, dir: &Path, origin: &str) -> Result<Self> {
        let mut theirs = Policy::load(dir)?;
        if theirs.file.is_none() {
            return Ok(self);
        }
        theirs
            .keys
            .retain(|k| self.keys.iter().any(|(key, _)| key.key_id == k.key_id));
        self.policy = self.policy.with_stricter(theirs, origin)?;
        Ok(self)
    }

    /// Also honours the revocations of `keys_dir` (say, the repository's, read through the API),
    /// which only remove trust: a statement that does not verify is an error.
    pub fn apply_revocations(self, keys_dir: &Path) -> Result<Self> {
        self.apply_statements(&keys_dir.join(super::revocation::REVOKED_DIR))
    }

    /// Also honours the revocation statements of the folder `dir` (`--revocations DIR`); none
    /// when it does not exist.
    pub fn apply_statements(mut self, dir: &Path) -> Result<Self> {
        let all: Vec<PublicKey> = self.keys.iter().map(|(k, _)| k.clone()).collect();
        for r in super::revocation::load_statements(dir, &all, self.policy.threshold)? {
            if self.revoked(r.key_id).is_none() {
                self.revoked.push(r);
            }
        }
        Ok(self)
    }

    /// The revocation of the key with this id, if the keys folder has one.
    pub fn revoked(&self, id: KeyId) -> Option<&super::revocation::Revocation> {
        self.revoked.iter().find(|r| r.key_id == id)
    }

    /// Every revocation of the keys folder.
    pub fn revocations(&self) -> &[super::revocation::Revocation] {
        &self.revoked
    }

    /// The trusted keys (not revoked), with their files.
    pub fn trusted(&self) -> impl Iterator<Item = (&PublicKey, &Path)> {
        self.keys
            .iter()
            .filter(|(k, _)| self.revoked(k.key_id).is_none())
            .map(|(k, p)| (k, p.as_path()))
    }

    fn add(&mut self, key: PublicKey, path: PathBuf) -> Result<()> {
        if let Some((other, other_path)) = self.keys.iter().find(|(k, _)| k.key_id == key.key_id) {
            if *other == key {
                return Ok(());
            }
            return Err(Error::input(
                path.display().to_string(),
                None,
                format!(
                    "key id {} is also used by a different key in {}",
                    key.key_id,
                    other_path.display()
                ),
            ));
        }
        self.keys.push((key, path));
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.trusted().next().is_none()
    }

    /// The usable key with this id (never a revoked or expired one), and its file.
    pub fn find(&self, id: KeyId) -> Option<(&PublicKey, &Path)> {
        self.usable().find(|(k, _)| k.key_id == id)
    }

    /// Where the trust comes from: the keys folder and every key file.
    pub fn sources(&self) -> impl Iterator<Item = &Path> {
        self.dir
            .iter()
            .map(PathBuf::as_path)
            .chain(self.keys.iter().map(|(_, p)| p.as_path()))
    }

    pub fn ids(&self) -> String {
        self.usable()
            .map(|(k, _)| k.key_id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The keys folder as `warden keys list` shows it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct KeysReport {
    pub keys_dir: PathBuf,
    pub trusted: Vec<ListedKey>,
    pub revoked: Vec<super::revocation::Revocation>,
    /// Rotations: (old, new, when, statement).
    pub rotations: Vec<ListedRotation>,
    /// Distinct usable keys a release needs (1 without a policy).
    pub threshold: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<PathBuf>,
    /// Why the folder cannot be used as it is: a statement or policy that does not read or
    /// verify, a policy naming a missing key, a threshold no set of keys can meet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ListedRotation {
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub old: KeyId,
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub new: KeyId,
    pub rotated_at: String,
    pub file: PathBuf,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ListedKey {
    #[serde(serialize_with = "crate::release::keys::serialize_key_id")]
    pub key_id: KeyId,
    pub file: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<String>,
    /// Past its `valid_until`: listed, but its signatures do not count.
    pub expired: bool,
}

/// Lists `keys_dir`: its keys, revocations, rotations and policy, and every inconsistency.
pub fn list(keys_dir: &Path) -> KeysReport {
    let mut report = KeysReport {
        keys_dir: keys_dir.to_path_buf(),
        trusted: Vec::new(),
        revoked: Vec::new(),
        rotations: Vec::new(),
        threshold: 1,
        policy: None,
        problems: Vec::new(),
    };
    match super::rotation::load(keys_dir) {
        Ok(rotations) => {
            // A key with two successors forks the chain: said once per key.
            let mut forks = std::collections::BTreeSet::new();
            for r in &rotations {
                if let Err(e) = super::rotation::successors(&r.old, &rotations) {
                    if forks.insert(e.to_string()) {
                        report.problems.push(e.to_string());
                    }
                }
            }
            report.rotations = rotations
                .into_iter()
                .map(|r| ListedRotation {
                    old: r.old.key_id,
                    new: r.new.key_id,
                    rotated_at: r.rotated_at,
                    file: r.file,
                })
                .collect()
        }
        Err(e) => report.problems.push(e.to_string()),
    }
    match TrustedKeys::load_dir(keys_dir) {
        Ok(keys) => {
            report.trusted = keys
                .trusted()
                .map(|(k, p)| {
                    let policy = keys.policy().key(k.key_id);
                    ListedKey {
                        key_id: k.key_id,
                        file: p.to_path_buf(),
                        name: policy.and_then(|p| p.name.clone()),
                        role: policy.and_then(|p| p.role.clone()),
                        valid_until: policy.and_then(|p| p.valid_until.clone()),
                        expired: keys.expired(k.key_id).is_some(),
                    }
                })
                .collect();
            report.revoked = keys.revocations().to_vec();
            report.threshold = keys.threshold();
            report.policy = keys.policy().file.clone();
            report.problems.extend(keys.inconsistencies());
        }
        Err(e) => report.problems.push(e.to_string()),
    }
    report
}
