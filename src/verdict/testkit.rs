//! Evidence made in memory for the verdict's unit tests: keys, signatures and lists built here,
//! no file or server anywhere.

use std::path::{Path, PathBuf};

use super::evidence::{Entry, Evidence, FileBytes, InputKind};
use crate::minisign::comment::TrustedComment;
use crate::minisign::hash::{hash_bytes, Digests};
use crate::minisign::keys::{generate, PublicKey, SecretKey, SecretKeyText};
use crate::minisign::names::file_kind;
use crate::minisign::signature::SignatureFile;
use crate::trust::TrustedKeys;

/// A fresh key pair.
pub(crate) struct Signer {
    pub(crate) secret: SecretKey,
    pub(crate) public: PublicKey,
}

impl Signer {
    pub(crate) fn new() -> Signer {
        let pair = generate(None).unwrap();
        Signer {
            secret: SecretKey::load(&SecretKeyText::new(pair.secret_box.to_string()), None)
                .unwrap(),
            public: pair.public,
        }
    }

    pub(crate) fn keys(&self) -> TrustedKeys {
        TrustedKeys::only(self.public.clone())
    }

    /// `data` signed (prehashed) with the trusted comment `comment`.
    pub(crate) fn sign(&self, data: &[u8], comment: &str) -> SignatureFile {
        SignatureFile::sign_prehashed(
            &self.secret,
            &hash_bytes(data).blake2b512,
            TrustedComment::parse(comment).unwrap(),
        )
    }
}

/// A `SHA256SUMS` of `files` (name, bytes).
pub(crate) fn list(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut text = String::new();
    for (name, bytes) in files {
        text.push_str(&format!(
            "{}  {name}\n",
            crate::util::to_hex(&hash_bytes(bytes).sha256)
        ));
    }
    text.into_bytes()
}

/// A release folder `dist/` as a reader would have read it, before any artifact's bytes: its
/// entries (`names`), the list's bytes and every signature's text.
pub(crate) fn folder(
    names: &[&str],
    list: Option<&[u8]>,
    signatures: &[(&str, String)],
) -> Evidence {
    let dir = PathBuf::from("dist");
    let mut ev = Evidence {
        inputs: vec![(dir.clone(), InputKind::Folder)],
        ..Evidence::default()
    };
    let mut entries = Vec::new();
    for name in names {
        let path = dir.join(name);
        ev.present.insert(path.clone());
        entries.push(Entry {
            path,
            name: Some(name.to_string()),
            is_dir: false,
            kind: file_kind(name),
        });
    }
    ev.entries.insert(dir.clone(), entries);
    if let Some(list) = list {
        ev.lists
            .insert(dir.join("SHA256SUMS"), Ok(Some(list.to_vec())));
    }
    for (name, text) in signatures {
        ev.texts.insert(dir.join(name), Ok(text.clone()));
    }
    ev
}

/// What a reader answers when asked for `path`'s bytes.
pub(crate) fn read(ev: &mut Evidence, path: &Path, bytes: &[u8]) {
    let digests: Digests = hash_bytes(bytes);
    ev.bytes
        .insert(path.to_path_buf(), FileBytes::Read(digests, None));
}
