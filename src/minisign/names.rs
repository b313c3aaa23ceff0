//! How release files are named: a signature is `<artifact>.minisig`, the checksum list is
//! `SHA256SUMS`, and signatures, hidden files and warden's temp files are never artifacts.

use std::path::{Path, PathBuf};

use crate::files::atomic::TEMP_PREFIX;

/// What minisign appends to an artifact's name for its signature.
pub(crate) const SIGNATURE_SUFFIX: &str = ".minisig";

/// The suffix of a log proof beside the signature it proves (`SHA256SUMS.log-proof` for
/// `SHA256SUMS.minisig`, `SHA256SUMS.<KEYID>.log-proof` for a co-signature).
pub(crate) const PROOF_SUFFIX: &str = ".log-proof";

/// The checksum list `warden sign` writes and `warden verify` reads by default.
pub(crate) const CHECKSUMS_NAME: &str = "SHA256SUMS";

/// `<artifact>.minisig`, next to the artifact.
pub(crate) fn signature_path(artifact: &Path) -> PathBuf {
    let mut s = artifact.as_os_str().to_os_string();
    s.push(SIGNATURE_SUFFIX);
    PathBuf::from(s)
}

/// `<file>.<KEYID>.minisig`, a co-signature of `file` by the key `id` (`SHA256SUMS.minisig` stays
/// the first signature, so `minisign -V` keeps working).
pub(crate) fn cosignature_path(file: &Path, id: crate::minisign::keys::KeyId) -> PathBuf {
    let mut s = file.as_os_str().to_os_string();
    s.push(format!(".{id}{SIGNATURE_SUFFIX}"));
    PathBuf::from(s)
}

/// For a co-signature's name `<file>.<KEYID>.minisig`: the file's name and the key id.
pub(crate) fn cosigned_file(name: &str) -> Option<(&str, crate::minisign::keys::KeyId)> {
    let stem = name.strip_suffix(SIGNATURE_SUFFIX)?;
    let (file, id) = stem.rsplit_once('.')?;
    let id = crate::minisign::keys::KeyId::from_shown(id)?;
    (!file.is_empty()).then_some((file, id))
}

/// Whether `name` is a signature of the file `file`: its first (`file.minisig`) or a
/// co-signature (`file.<KEYID>.minisig`).
pub(crate) fn signs(name: &str, file: &str) -> bool {
    name.strip_suffix(SIGNATURE_SUFFIX) == Some(file)
        || cosigned_file(name).is_some_and(|(f, _)| f == file)
}

/// What a regular file of a release is, by its name, for the reason it is not verified.
pub(crate) fn file_kind(name: &str) -> &'static str {
    if name.starts_with(TEMP_PREFIX) {
        "a temp file of an interrupted `warden sign`"
    } else if name.starts_with('.') {
        "a hidden file"
    } else if name.ends_with(SIGNATURE_SUFFIX) {
        "a signature of no listed file"
    } else {
        "a file"
    }
}

/// Files that are never artifacts: signatures and their log proofs, warden's temp files, hidden
/// files.
pub(crate) fn is_release_candidate(name: &str) -> bool {
    !name.ends_with(SIGNATURE_SUFFIX)
        && !name.ends_with(PROOF_SUFFIX)
        && !name.starts_with('.')
        && !name.starts_with(TEMP_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_sit_next_to_their_artifact() {
        assert_eq!(
            signature_path(Path::new("dist/a.tar.gz")),
            PathBuf::from("dist/a.tar.gz.minisig")
        );
        assert!(is_release_candidate("a.tar.gz"));
        for not in ["a.minisig", ".hidden", ".warden-x.tmp"] {
            assert!(!is_release_candidate(not), "{not}");
        }
        let id = crate::minisign::keys::KeyId::from_hex("8A1C53B2E07E2B8A").unwrap();
        let cosig = cosignature_path(Path::new("dist/SHA256SUMS"), id);
        assert_eq!(
            cosig,
            PathBuf::from("dist/SHA256SUMS.8A1C53B2E07E2B8A.minisig")
        );
        assert_eq!(
            cosigned_file("SHA256SUMS.8A1C53B2E07E2B8A.minisig"),
            Some(("SHA256SUMS", id))
        );
        // Only the id as shown (upper case) names a co-signature.
        assert_eq!(cosigned_file("SHA256SUMS.8a1c53b2e07e2b8a.minisig"), None);
        assert_eq!(cosigned_file("app.tar.minisig"), None);
    }
}
