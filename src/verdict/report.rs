//! What a verdict says: a line per file (its status, what was checked, what its signatures
//! bind, who signed and whether each counted), the entries passed over, warnings and notes.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::minisign::keys::KeyId;
use crate::trust::signer::{Cause, Judged, Rejected, SignerEntry};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ArtifactStatus {
    /// Signature and/or checksum verified.
    Ok,
    /// A verification failed: altered, swapped, unsigned, untrusted key, wrong tag, dry-run.
    Failed,
    /// The input could not be read or parsed.
    Error,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ArtifactResult {
    pub(crate) name: String,
    pub(crate) status: ArtifactStatus,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_display"
    )]
    pub(crate) key_id: Option<KeyId>,
    /// The trusted key file that holds `key_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) key_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) repo: Option<String>,
    /// The trusted comment's `file:` and `path:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    /// The trusted comment's `timestamp:` (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) timestamp: Option<u64>,
    /// The workflow run the (first) signature binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<crate::minisign::run::RunBinding>,
    /// What was checked: "signature", "sha256" or both.
    pub(crate) checked: Vec<&'static str>,
    /// Every signature found (the first, and co-signatures `<file>.<KEYID>.minisig`), and
    /// whether it counted toward the threshold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) signers: Vec<SignerEntry>,
    /// The keys folder's threshold, when it asks for more than one signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) required_signatures: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// The signature's trusted comment in full, when it is not warden's own (someone else's
    /// release: what it binds is shown as written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trusted_comment: Option<String>,
    /// The trusted comment binds no file and no release (accepted, as minisign accepts it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) binds_nothing: bool,
    /// The trusted comment binds no file name.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) binds_no_file: bool,
    /// What a witness that verified says (a release attestation, build provenance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) says: Option<String>,
    /// Why it failed, as a type (`Cause::None` when it verified).
    #[serde(skip)]
    pub(crate) cause: Cause,
}

/// One witness of a release and what it says (issue 48): the minisign signature (a project's
/// key), GitHub's release attestation, GitHub's build provenance.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Witness {
    /// `minisign`, `release-attestation` or `provenance`.
    pub(crate) witness: &'static str,
    pub(crate) status: ArtifactStatus,
    /// Who vouches: a key; GitHub's release signer; the workflow GitHub certified.
    pub(crate) signer: String,
    /// The root the attestation verified under, and the time it proves it was signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) root: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) signed_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) repo: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub(crate) git_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) workflow: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run_id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) attempt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<String>,
    /// The release's files it speaks for (build provenance).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) files: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

impl Witness {
    pub(crate) fn new(witness: &'static str, signer: String) -> Witness {
        Witness {
            witness,
            status: ArtifactStatus::Ok,
            signer,
            root: None,
            signed_at: None,
            repo: None,
            tag: None,
            commit: None,
            git_ref: None,
            workflow: None,
            run_id: None,
            attempt: None,
            environment: None,
            files: Vec::new(),
            reason: None,
        }
    }

    fn kind_word(kind: crate::attest::claims::Kind) -> &'static str {
        match kind {
            crate::attest::claims::Kind::ReleaseAttestation => "release-attestation",
            crate::attest::claims::Kind::Provenance => "provenance",
        }
    }

    /// A verified attestation, before what it says is filled in.
    pub(crate) fn attestation(a: &crate::attest::verify::Attestation) -> Witness {
        let mut w = Witness::new(Self::kind_word(a.kind), a.signer.clone());
        w.root = Some(a.root.clone());
        w.signed_at = a.signed_at.clone();
        w
    }

    /// An attestation that did not verify.
    pub(crate) fn failed(kind: Option<crate::attest::claims::Kind>, why: String) -> Witness {
        let mut w = Witness::new(kind.map_or("attestation", Self::kind_word), String::new());
        w.status = ArtifactStatus::Failed;
        w.reason = Some(why);
        w
    }

    /// What the witness is, in words.
    pub(crate) fn noun(&self) -> &'static str {
        match self.witness {
            "minisign" => "the minisign signature",
            "release-attestation" => "GitHub's release attestation",
            "provenance" => "GitHub's build provenance",
            _ => "an attestation",
        }
    }
}

fn opt_display<S: serde::Serializer>(
    v: &Option<KeyId>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(id) => s.collect_str(id),
        None => s.serialize_none(),
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifyReport {
    pub(crate) results: Vec<ArtifactResult>,
    /// Entries that were not verified, each with the reason; never dropped silently.
    pub(crate) skipped: Vec<SkippedEntry>,
    pub warnings: Vec<String>,
    /// Facts, not cautions (what a published release is).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
    /// The release's witnesses and what each says, when attestations were read (issue 48).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) witnesses: Vec<Witness>,
}

/// A path `verify` passed over, and why.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SkippedEntry {
    pub(crate) name: String,
    pub(crate) reason: String,
}

impl VerifyReport {
    /// Names results and reasons after the release's assets instead of `dir`, a temporary
    /// folder that is gone once the command ends.
    pub(crate) fn strip_folder(&mut self, dir: &Path) {
        self.rename_folder(dir, "");
    }

    /// Says `dir/` (a temporary folder) as `name` in every line of the report.
    pub(crate) fn rename_folder(&mut self, dir: &Path, name: &str) {
        let prefix = format!("{}/", dir.display());
        let rename = |s: &mut String| *s = s.replace(&prefix, name);
        for r in &mut self.results {
            rename(&mut r.name);
            if let Some(reason) = r.reason.as_mut() {
                rename(reason);
            }
        }
        for s in &mut self.skipped {
            rename(&mut s.name);
        }
        self.warnings.iter_mut().for_each(rename);
        self.notes.iter_mut().for_each(rename);
        for w in &mut self.witnesses {
            w.files.iter_mut().for_each(rename);
            if let Some(reason) = w.reason.as_mut() {
                rename(reason);
            }
        }
    }

    /// Adds the result of a check made outside the folder (a release's provenance): `name`,
    /// what was checked, and the failure if any.
    pub(crate) fn add_check(
        &mut self,
        name: String,
        what: &'static str,
        failure: Option<Rejected>,
    ) {
        let v = Verdict::new();
        let mut v = match failure {
            Some(rejected) => v.rejected(rejected),
            None => v,
        };
        v.checked.push(what);
        self.results.push(v.into_result(name));
    }

    pub(crate) fn skip(&mut self, path: &Path, reason: String) {
        self.skipped.push(SkippedEntry {
            name: path.display().to_string(),
            reason,
        });
    }

    pub(crate) fn count(&self, status: ArtifactStatus) -> usize {
        self.results.iter().filter(|r| r.status == status).count()
    }

    /// 0 all verified, 1 a verification failed, 2 an input could not be read or parsed.
    pub fn exit_code(&self) -> u8 {
        if self.count(ArtifactStatus::Error) > 0 {
            2
        } else if self.count(ArtifactStatus::Failed) > 0 || self.results.is_empty() {
            1
        } else {
            0
        }
    }
}

/// A file's verdict as it is being made: its status and reason, what was checked, and what
/// its signatures say.
pub(crate) struct Verdict {
    pub(crate) status: ArtifactStatus,
    pub(crate) reason: Option<String>,
    pub(crate) cause: Cause,
    pub(crate) checked: Vec<&'static str>,
    pub(crate) judged: Judged,
}

impl Verdict {
    pub(crate) fn new() -> Self {
        Verdict {
            status: ArtifactStatus::Ok,
            reason: None,
            cause: Cause::None,
            checked: Vec::new(),
            judged: Judged::default(),
        }
    }
    pub(crate) fn fail(self, reason: impl Into<String>) -> Self {
        self.rejected((Cause::Invalid, reason.into()))
    }
    pub(crate) fn error(self, reason: impl Into<String>) -> Self {
        self.rejected((Cause::Unreadable, reason.into()))
    }
    /// The file fails for `cause` (an unreadable input is an error, not a failed check).
    pub(crate) fn rejected(mut self, (cause, why): Rejected) -> Self {
        self.status = if cause == Cause::Unreadable {
            ArtifactStatus::Error
        } else {
            ArtifactStatus::Failed
        };
        self.reason = Some(why);
        self.cause = cause;
        self
    }
    pub(crate) fn into_result(self, name: String) -> ArtifactResult {
        let j = self.judged;
        ArtifactResult {
            name,
            status: self.status,
            key_id: j.key_id,
            key_file: j.key_file,
            tag: j.tag,
            commit: j.commit,
            repo: j.repo,
            file: j.file,
            path: j.path,
            timestamp: j.timestamp,
            run: j.run,
            checked: self.checked,
            signers: j.signers,
            required_signatures: j.required_signatures,
            reason: self.reason,
            trusted_comment: j.comment,
            binds_nothing: j.unbound,
            binds_no_file: j.no_file && j.key_id.is_some(),
            says: None,
            cause: self.cause,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 all verified, 1 a check failed (or nothing verified), 2 an input could not be read.
    #[test]
    fn the_exit_code_is_the_worst_line_s() {
        let mut report = VerifyReport::default();
        assert_eq!(report.exit_code(), 1);
        report.add_check("a".into(), "signature", None);
        assert_eq!(report.exit_code(), 0);
        report.add_check("b".into(), "signature", Some((Cause::Mismatch, "x".into())));
        assert_eq!(report.exit_code(), 1);
        report.add_check(
            "c".into(),
            "signature",
            Some((Cause::Unreadable, "y".into())),
        );
        assert_eq!(report.exit_code(), 2);
        report.rename_folder(Path::new("/tmp/x"), "o/r:");
        assert_eq!(report.results[1].reason.as_deref(), Some("x"));
    }
}
