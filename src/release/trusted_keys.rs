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
        let mut keys = TrustedKeys::default();
        for path in public_key_files(dir)? {
            keys.add(PublicKey::from_file(&path)?, path)?;
        }
        Ok(keys)
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
        self.keys.is_empty()
    }

    pub fn find(&self, id: KeyId) -> Option<&PublicKey> {
        self.keys
            .iter()
            .find(|(k, _)| k.key_id == id)
            .map(|(k, _)| k)
    }

    pub fn ids(&self) -> String {
        self.keys
            .iter()
            .map(|(k, _)| k.key_id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `*.pub` files of a directory, sorted.
pub fn public_key_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io("reading", dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pub") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}
