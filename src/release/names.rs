//! How release files are named: a signature is `<artifact>.minisig`, the checksum list is
//! `SHA256SUMS`, and signatures, hidden files and warden's temp files are never artifacts.

use std::path::{Path, PathBuf};

use crate::files::atomic::TEMP_PREFIX;

/// What minisign appends to an artifact's name for its signature.
pub(crate) const SIGNATURE_SUFFIX: &str = ".minisig";

/// The checksum list `warden sign` writes and `warden verify` reads by default.
pub(crate) const CHECKSUMS_NAME: &str = "SHA256SUMS";

/// `<artifact>.minisig`, next to the artifact.
pub(crate) fn signature_path(artifact: &Path) -> PathBuf {
    let mut s = artifact.as_os_str().to_os_string();
    s.push(SIGNATURE_SUFFIX);
    PathBuf::from(s)
}

/// Files that are never artifacts: signatures, warden's temp files, hidden files.
pub(crate) fn is_release_candidate(name: &str) -> bool {
    !name.ends_with(SIGNATURE_SUFFIX) && !name.starts_with('.') && !name.starts_with(TEMP_PREFIX)
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
    }
}
