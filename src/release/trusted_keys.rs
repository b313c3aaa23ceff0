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

    /// The key with this id, and the file it was loaded from.
    pub fn find(&self, id: KeyId) -> Option<(&PublicKey, &Path)> {
        self.keys
            .iter()
            .find(|(k, _)| k.key_id == id)
            .map(|(k, p)| (k, p.as_path()))
    }

    /// Where the trust comes from: the keys folder and every key file.
    pub fn sources(&self) -> impl Iterator<Item = &Path> {
        self.dir
            .iter()
            .map(PathBuf::as_path)
            .chain(self.keys.iter().map(|(_, p)| p.as_path()))
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
pub(crate) fn public_key_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io("reading", dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pub") && !p.is_dir())
        .collect();
    files.sort();
    Ok(files)
}
