//! The public keys a verification trusts: `--public-key` files, or every `*.pub` of the keys
//! folder. Each signature picks its key by key id, so an old and a new key can both be trusted
//! during a rotation.

use std::fs;
use std::path::{Path, PathBuf};

use super::keys::{KeyId, PublicKey};
use crate::error::{Error, Result};

/// The public keys a verification trusts, chosen per signature by key id (key rotation).
#[derive(Clone, Debug, Default)]
pub struct TrustedKeys {
    keys: Vec<(PublicKey, PathBuf)>,
    /// The keys folder they came from, if any: it must not lie inside what is verified.
    dir: Option<PathBuf>,
    /// Keys revoked by a statement in `keys/revoked/`: never trusted, even with a `.pub` here.
    revoked: Vec<super::revocation::Revocation>,
}

impl TrustedKeys {
    pub fn load_files(paths: &[PathBuf]) -> Result<Self> {
        let mut keys = TrustedKeys::default();
        for path in paths {
            keys.add(PublicKey::from_file(path)?, path.clone())?;
        }
        Ok(keys)
    }

    /// Every `*.pub` in `dir`, in name order.
    pub fn load_dir(dir: &Path) -> Result<Self> {
        let mut keys = TrustedKeys {
            dir: Some(dir.to_path_buf()),
            ..TrustedKeys::default()
        };
        for path in public_key_files(dir)? {
            keys.add(PublicKey::from_file(&path)?, path)?;
        }
        let all: Vec<PublicKey> = keys.keys.iter().map(|(k, _)| k.clone()).collect();
        keys.revoked = super::revocation::load(dir, &all)?;
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
        self.revoked = super::revocation::load(keys_dir, &all)?;
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
        for r in super::revocation::load_statements(dir, &all)? {
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

    /// The trusted key with this id (never a revoked one), and the file it was loaded from.
    pub fn find(&self, id: KeyId) -> Option<(&PublicKey, &Path)> {
        self.trusted().find(|(k, _)| k.key_id == id)
    }

    /// Where the trust comes from: the keys folder and every key file.
    pub fn sources(&self) -> impl Iterator<Item = &Path> {
        self.dir
            .iter()
            .map(PathBuf::as_path)
            .chain(self.keys.iter().map(|(_, p)| p.as_path()))
    }

    pub fn ids(&self) -> String {
        self.trusted()
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
    /// Why the folder cannot be used as it is (a statement that does not verify, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
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
}

/// Lists `keys_dir`: its trusted keys and its revocations, or what makes it inconsistent.
pub fn list(keys_dir: &Path) -> KeysReport {
    let mut report = KeysReport {
        keys_dir: keys_dir.to_path_buf(),
        trusted: Vec::new(),
        revoked: Vec::new(),
        rotations: Vec::new(),
        problem: None,
    };
    match super::rotation::load(keys_dir) {
        Ok(rotations) => {
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
        Err(e) => {
            report.problem = Some(e.to_string());
            return report;
        }
    }
    match TrustedKeys::load_dir(keys_dir) {
        Ok(keys) => {
            report.trusted = keys
                .trusted()
                .map(|(k, p)| ListedKey {
                    key_id: k.key_id,
                    file: p.to_path_buf(),
                })
                .collect();
            report.revoked = keys.revocations().to_vec();
        }
        Err(e) => report.problem = Some(e.to_string()),
    }
    report
}

/// `*.pub` files of a directory, sorted.
pub(crate) fn public_key_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io("reading", dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pub") && !p.is_dir())
        .collect();
    files.sort();
    Ok(files)
}
