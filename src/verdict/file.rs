//! One file of a release folder judged: its signatures (checked before its bytes are needed),
//! then its bytes against the signed list's digest and its signatures. What it still needs (its
//! bytes) it says instead of reading them.

use std::path::{Path, PathBuf};

use super::evidence::{ByteNeed, Evidence, FileBytes, Needs};
use super::report::Verdict;
use super::VerifyOptions;
use crate::minisign::hash::Digests;
use crate::trust::signer::{
    check_signature_set, verify_signature_set, Cause, Rejected, SignatureFiles, SignedName,
};
use crate::trust::TrustedKeys;

/// One file to check.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub(crate) path: PathBuf,
    pub(crate) name: String,
    /// The signature to check, when one exists or is required.
    pub(crate) signature: Option<PathBuf>,
    /// Whether a missing signature is a failure (not when a verified list covers the file).
    pub(crate) require_signature: bool,
    /// The checksum list that names the file and did not verify: a missing signature of the
    /// file's own is then the list's failure, said so.
    pub(crate) failed_list: Option<PathBuf>,
    /// The digest the verified checksum list gives it.
    pub(crate) expected: Option<crate::minisign::checksums::Listed>,
    /// Why the file cannot be trusted even before it is read, e.g. a path leaving the release.
    pub(crate) preset_failure: Option<Rejected>,
}

impl Job {
    /// A file checked against its own `.minisig`, which must exist.
    pub(crate) fn signed_file(path: PathBuf, name: String) -> Job {
        Job {
            signature: Some(crate::minisign::names::signature_path(&path)),
            require_signature: true,
            failed_list: None,
            expected: None,
            preset_failure: None,
            path,
            name,
        }
    }

    /// A file that fails before anything of it is read.
    pub(crate) fn failing(path: &Path, why: Rejected) -> Job {
        Job {
            path: path.to_path_buf(),
            name: path.display().to_string(),
            signature: None,
            require_signature: false,
            failed_list: None,
            expected: None,
            preset_failure: Some(why),
        }
    }

    /// Whether the file's bytes are only compared with the list (no signature of it is checked
    /// over them): GitHub's SHA-256 is then all the check needs.
    fn signature_unneeded(&self, ev: &Evidence) -> bool {
        self.expected.is_some_and(|e| !e.is_sha512())
            && self
                .signature
                .as_ref()
                .is_none_or(|s| !ev.exists(s) || ev.unread.contains(s))
    }
}

/// The logs every counted signature must be in: `--require-log`'s and the keys folder's
/// `require_log`, each in full (a flag adds a requirement; it never lifts the policy's
/// witnesses).
pub(crate) fn log_requirements<'a>(
    opts: &'a VerifyOptions,
    keys: &'a TrustedKeys,
) -> Vec<&'a crate::trust::log::LogRequirement> {
    opts.log.iter().chain(&keys.policy().log).collect()
}

/// The verdict on one file from `ev`, or `None` when it needs the file's bytes (added to
/// `needs`).
pub(crate) fn judge(
    job: &Job,
    ev: &Evidence,
    (keys, opts): (&TrustedKeys, &VerifyOptions),
    needs: &mut Needs,
) -> Option<Verdict> {
    let out = Verdict::new();
    if let Some(preset) = &job.preset_failure {
        return Some(out.rejected(preset.clone()));
    }
    let file_name = job
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let mut out = out;
    let name = SignedName::new(&file_name, ev.resolved.get(&job.path).cloned());
    let files = SignatureFiles(&ev.texts);
    let set = match &job.signature {
        Some(sig_path) if !ev.exists(sig_path) && job.failed_list.is_some() => {
            let list = job.failed_list.as_deref().unwrap_or(sig_path);
            return Some(out.rejected((
                Cause::Unsigned,
                format!(
                    "not verified: {} did not verify, and there is no {}",
                    list.display(),
                    sig_path.display()
                ),
            )));
        }
        Some(sig_path) if job.require_signature || ev.exists(sig_path) => {
            // The threshold applies to the signatures that trust the file; an artifact's own
            // signature beside a verified checksum list is an extra check (it must verify).
            let need = if job.expected.is_some() {
                1
            } else {
                keys.threshold()
            };
            let paths = (job.path.as_path(), sig_path.as_path());
            let checks = (&opts.checks(), &files);
            match check_signature_set(paths, &name, (keys, need), checks, &mut out.judged) {
                Ok(set) => Some((sig_path, set, need)),
                Err(rejected) => return Some(out.rejected(rejected)),
            }
        }
        _ => None,
    };
    if set.is_none() && job.expected.is_none() {
        return Some(out.fail("no signature and no checksum cover this file"));
    }
    // The log holds checksum lists' signatures: a file trusted by its own signature alone would
    // let an unlogged signature through.
    if !log_requirements(opts, keys).is_empty() && job.expected.is_none() {
        let key = set
            .as_ref()
            .and_then(|(_, s, _)| s.first())
            .map(|(_, c)| c.key.key_id.to_string())
            .unwrap_or_default();
        return Some(out.rejected((
            Cause::Unlogged,
            format!(
                "signature by key {key} is not in the log: --require-log trusts a file only through a logged checksum list (verify the release folder, which holds {})",
                opts.checksums_name.as_deref().unwrap_or("SHA256SUMS")
            ),
        )));
    }
    let legacy = set
        .as_ref()
        .is_some_and(|(_, s, _)| s.iter().any(|(_, c)| !c.sig.is_prehashed()));
    let want = ByteNeed {
        whole: legacy,
        sha512: job.expected.is_some_and(|e| e.is_sha512()),
    };
    let (digests, whole) = match file_bytes(job, ev, want, needs)? {
        Ok(read) => read,
        Err(rejected) => return Some(out.rejected(rejected)),
    };
    if let Some(expected) = job.expected {
        match listed_digest(expected, &digests) {
            Ok(label) => out.checked.push(label),
            Err(rejected) => return Some(out.rejected(rejected)),
        }
    }
    if let Some((main, set, need)) = set {
        let bytes = (&digests, whole);
        if let Err(e) = verify_signature_set(&set, main, bytes, (keys, need), &mut out.judged) {
            return Some(out.fail(e));
        }
        out.checked.insert(0, "signature");
    }
    Some(out)
}

/// The file's digest against the one its list gives: the check made (`sha256`, `sha512`), or the
/// mismatch with both values.
fn listed_digest(
    expected: crate::minisign::checksums::Listed,
    digests: &Digests,
) -> Result<&'static str, Rejected> {
    use crate::minisign::checksums::Listed;
    let (algorithm, found, label) = match (expected, digests.sha512) {
        (Listed::Sha512(_), Some(d)) => ("SHA-512", Listed::Sha512(d), "sha512"),
        _ => ("SHA-256", Listed::Sha256(digests.sha256), "sha256"),
    };
    if expected != found {
        return Err((
            Cause::Mismatch,
            format!(
                "{algorithm} mismatch: {} listed, {} found",
                expected.hex(),
                found.hex()
            ),
        ));
    }
    Ok(label)
}

/// A file's digests, and its bytes when they were kept.
type FileRead<'e> = (Digests, Option<&'e [u8]>);

/// What the file's bytes are (its digests, and the bytes themselves for a legacy signature),
/// as its reader read them; `None` when they are still to be read (added to `needs`).
fn file_bytes<'e>(
    job: &Job,
    ev: &'e Evidence,
    want: ByteNeed,
    needs: &mut Needs,
) -> Option<Result<FileRead<'e>, Rejected>> {
    let legacy = want.whole;
    if ev.is_published() && !ev.is_asset(&job.path) {
        return Some(Err((
            Cause::Missing,
            format!(
                "missing: {} is not an asset of the release",
                job.path.display()
            ),
        )));
    }
    let unread = || {
        Err((
            Cause::Unverifiable,
            format!(
                "{}: its bytes were not read and GitHub gives no digest of it",
                job.path.display()
            ),
        ))
    };
    match ev.bytes.get(&job.path) {
        Some(FileBytes::Read(d, whole))
            if (!legacy || whole.is_some()) && (!want.sha512 || d.sha512.is_some()) =>
        {
            Some(Ok((*d, whole.as_deref())))
        }
        Some(FileBytes::Sha256Only(sha256)) if !legacy && job.signature_unneeded(ev) => Some(Ok((
            Digests {
                sha256: *sha256,
                blake2b512: [0; 64],
                size: 0,
                sha512: None,
            },
            None,
        ))),
        Some(FileBytes::Failed(why)) => Some(Err(why.clone())),
        Some(FileBytes::NotRead) => Some(unread()),
        _ => {
            needs.bytes.insert(job.path.clone(), want);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::evidence::InputKind;
    use crate::verdict::testkit::Signer;

    fn evidence(sig: Option<String>) -> Evidence {
        let mut ev = Evidence {
            inputs: vec![(PathBuf::from("app"), InputKind::File)],
            ..Evidence::default()
        };
        ev.present.insert(PathBuf::from("app"));
        if let Some(sig) = sig {
            ev.present.insert(PathBuf::from("app.minisig"));
            ev.texts.insert(PathBuf::from("app.minisig"), Ok(sig));
        }
        ev
    }

    /// A file's signature is judged before its bytes are asked for: a missing or foreign one
    /// fails without a read.
    #[test]
    fn a_file_is_read_only_when_its_signature_could_count() {
        let (s, thief) = (Signer::new(), Signer::new());
        let keys = s.keys();
        let opts = VerifyOptions::default();
        let job = Job::signed_file(PathBuf::from("app"), "app".into());
        let mut needs = Needs::default();
        let missing = judge(&job, &evidence(None), (&keys, &opts), &mut needs).unwrap();
        assert_eq!(missing.cause, Cause::Unsigned);
        let foreign = thief
            .sign(b"x", "timestamp:1\tfile:app\thashed")
            .to_string();
        let v = judge(&job, &evidence(Some(foreign)), (&keys, &opts), &mut needs).unwrap();
        assert_eq!(v.cause, Cause::Invalid);
        assert!(needs.is_empty());
        let good = s.sign(b"x", "timestamp:1\tfile:app\thashed").to_string();
        let ev = evidence(Some(good));
        assert!(judge(&job, &ev, (&keys, &opts), &mut needs).is_none());
        assert_eq!(
            needs.bytes.get(Path::new("app")),
            Some(&ByteNeed::default())
        );
        let mut read = ev.clone();
        crate::verdict::testkit::read(&mut read, Path::new("app"), b"x");
        let v = judge(&job, &read, (&keys, &opts), &mut Needs::default()).unwrap();
        assert_eq!((v.cause, v.checked), (Cause::None, vec!["signature"]));
    }
}
