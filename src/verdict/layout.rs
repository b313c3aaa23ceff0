//! Which layout a release follows, found from its files' names alone (a folder's entries, or a
//! published release's asset list): a signed checksum list under one of the names projects give
//! it (`SHA256SUMS`, mise's `SHASUMS256.txt`, goreleaser's `checksums.txt` and
//! `<project>_<version>_checksums.txt`, `SHA512SUMS`, …), or a signature beside each file. The
//! one answer both readers and the verdict take, so what is read first is what is judged.

/// Checksum-list names, in the order one is preferred when several are signed (SHA-256 first:
/// GitHub's digests are SHA-256, so a published release's assets need no download to be
/// checked).
const LIST_NAMES: [&str; 15] = [
    "SHA256SUMS",
    "SHA256SUMS.txt",
    "SHASUMS256.txt",
    "sha256sums.txt",
    "SHA2-256SUMS",
    "checksums.txt",
    "CHECKSUMS",
    "CHECKSUMS.txt",
    "checksums.sha256",
    "SHA512SUMS",
    "SHA512SUMS.txt",
    "SHASUMS512.txt",
    "sha512sums.txt",
    "SHA2-512SUMS",
    "sha512sum.txt",
];

/// The first list names, for a message.
pub(crate) fn list_names_shown() -> String {
    LIST_NAMES[..6].join(", ")
}

/// Where a name stands among checksum-list names (lower is preferred); `None`: not a list's name.
/// goreleaser's `<project>_<version>_checksums.txt` (and `…_checksums_sha256.txt`,
/// `…_SHA256SUMS`) come after the fixed names.
pub(crate) fn list_rank(name: &str) -> Option<usize> {
    if let Some(i) = LIST_NAMES.iter().position(|n| *n == name) {
        return Some(i);
    }
    let suffixed = ["_checksums.txt", "_checksums_sha256.txt", "_SHA256SUMS"]
        .iter()
        .position(|s| name.len() > s.len() && name.ends_with(s) && !name.contains('/'));
    suffixed.map(|i| LIST_NAMES.len() + i)
}

/// The names a signature of `file` may have, preferred first: minisign's `.minisig`, and the
/// `.sig` cargo-binstall and others use (read as minisign only when it is one).
pub(crate) fn signature_names(file: &str) -> [String; 2] {
    [format!("{file}.minisig"), format!("{file}.sig")]
}

/// A per-file checksum's suffixes (`app.tar.gz.sha256`): a list of one file, signed beside it
/// (`app.tar.gz.sha256.minisig`) where a project signs its checksums rather than its files.
const SIDECAR_SUFFIXES: [&str; 4] = [".sha256", ".sha256sum", ".sha512", ".sha512sum"];

/// The file a per-file checksum named `name` is the checksum of.
pub(crate) fn sidecar_subject(name: &str) -> Option<&str> {
    SIDECAR_SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .filter(|subject| !subject.is_empty() && !subject.ends_with('/'))
}

/// The names a per-file checksum of `file` may have, preferred first.
pub(crate) fn sidecar_names(file: &str) -> impl Iterator<Item = String> + '_ {
    SIDECAR_SUFFIXES.iter().map(move |s| format!("{file}{s}"))
}

/// What a release's names say of its layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The checksum list it is verified against (`None`: a signature beside each file).
    pub(crate) list: Option<String>,
    /// Other signed checksum lists beside it: the release's signers' files, not used.
    pub(crate) other_lists: Vec<String>,
}

impl Layout {
    /// What the verdict says of the choice, when there was one to make.
    pub(crate) fn note(&self) -> Option<String> {
        let list = self.list.as_ref()?;
        if self.other_lists.is_empty() {
            return None;
        }
        Some(format!(
            "checked against {list}; {} {} signed too, and not used (--checksums NAME picks one)",
            self.other_lists.join(", "),
            if self.other_lists.len() == 1 {
                "is"
            } else {
                "are"
            }
        ))
    }
}

/// The layout of a release whose files are `names`: the list `explicit` names (`--checksums`),
/// else the preferred signed list among them, else a list without its signature (it fails, and
/// says why: its signature was deleted), else a signature beside each file. `signed(name)` says
/// whether a signature of `name` is there.
pub(crate) fn choose<'n>(
    names: impl IntoIterator<Item = &'n str>,
    explicit: Option<&str>,
    signed: impl Fn(&str) -> bool,
) -> Layout {
    if let Some(list) = explicit {
        return Layout {
            list: Some(list.to_string()),
            other_lists: Vec::new(),
        };
    }
    let mut lists: Vec<(usize, &str)> = names
        .into_iter()
        .filter_map(|n| Some((list_rank(n)?, n)))
        .collect();
    lists.sort();
    lists.dedup();
    let unsigned_first = lists.first().map(|(_, n)| n.to_string());
    let mut names = lists
        .into_iter()
        .filter(|(_, n)| signed(n))
        .map(|(_, n)| n.to_string());
    match names.next() {
        Some(list) => Layout {
            list: Some(list),
            other_lists: names.collect(),
        },
        None => Layout {
            list: unsigned_first,
            other_lists: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(names: &[&str]) -> Layout {
        let all: Vec<&str> = names.to_vec();
        choose(all.iter().copied(), None, |n| {
            signature_names(n).iter().any(|s| all.contains(&s.as_str()))
        })
    }

    #[test]
    fn the_preferred_signed_list_is_used_and_the_others_named() {
        let mise = layout(&[
            "SHASUMS256.txt",
            "SHASUMS256.txt.minisig",
            "SHASUMS512.txt",
            "SHASUMS512.txt.minisig",
            "mise-v1-linux-x64",
        ]);
        assert_eq!(mise.list.as_deref(), Some("SHASUMS256.txt"));
        assert_eq!(
            mise.note().unwrap(),
            "checked against SHASUMS256.txt; SHASUMS512.txt is signed too, and not used (--checksums NAME picks one)"
        );
        let goreleaser = layout(&[
            "kes_0.22.0_checksums.txt",
            "kes_0.22.0_checksums.txt.sig",
            "kes",
        ]);
        assert_eq!(goreleaser.list.as_deref(), Some("kes_0.22.0_checksums.txt"));
        // A signature beside each file.
        let zig = layout(&["zig.tar.xz", "zig.tar.xz.minisig"]);
        assert_eq!(zig, Layout::default());
        // A list whose signature is gone is still the list (and fails, saying so).
        let stripped = layout(&["SHA256SUMS", "app", "app.minisig"]);
        assert_eq!(stripped.list.as_deref(), Some("SHA256SUMS"));
        assert_eq!(list_rank("SHA256SUMS"), Some(0));
        assert_eq!(list_rank("_checksums.txt"), None);
        assert_eq!(list_rank("app.tar.gz"), None);
        // A per-file checksum is a list of one file; a list named like one is still a list.
        assert_eq!(sidecar_subject("app.tar.gz.sha256"), Some("app.tar.gz"));
        assert_eq!(sidecar_subject("app.sha512sum"), Some("app"));
        assert_eq!(sidecar_subject(".sha256"), None);
        assert_eq!(sidecar_subject("app.tar.gz"), None);
        assert!(list_rank("checksums.sha256").is_some());
    }
}
