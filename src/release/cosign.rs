//! `warden sign --cosign DIR`: a further key signs a release that is already signed. The
//! release is verified first, as `warden verify` would (below the threshold allowed: that is
//! what the co-signature is for); then this key's signature of `SHA256SUMS`, binding the same
//! tag, commit and repository, is written as `SHA256SUMS.<KEYID>.minisig`.

use std::path::PathBuf;

use serde::Serialize;

use super::folder_reader::verify;
use crate::error::{Error, Result};
use crate::files::guarded;
use crate::minisign::comment::{ReleaseMeta, TrustedComment};
use crate::minisign::hash::hash_bytes;
use crate::minisign::keys::{KeyId, SecretKey};
use crate::minisign::names::cosignature_path;
use crate::minisign::signature::SignatureFile;
use crate::trust::keys::TrustedKeys;
use crate::verdict::report::{ArtifactResult, ArtifactStatus};
use crate::verdict::{VerifyOptions, VerifyReport};

/// What `sign --cosign` did.
#[derive(Clone, Debug, Serialize)]
pub struct CosignReport {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: KeyId,
    /// The key's name in the policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    pub(crate) checksums: PathBuf,
    pub(crate) signature: PathBuf,
    /// Distinct keys that have signed now, this one included, and how many the policy asks for.
    pub(crate) signers: usize,
    pub(crate) required: usize,
}

/// Co-signs the release in `opts.inputs[0]` (a folder with a signed checksum list) with `key`.
/// Refused, with nothing written, when the key is not usable here (unknown, revoked, expired),
/// when it signed already, or when the release does not verify.
pub fn cosign(
    opts: &VerifyOptions,
    key: &SecretKey,
    keys: &TrustedKeys,
    (timestamp, run): (u64, Option<crate::minisign::run::RunBinding>),
) -> Result<CosignReport> {
    let dir = match opts.inputs.as_slice() {
        [dir] if dir.is_dir() => dir,
        _ => {
            return Err(Error::Usage(
                "--cosign names one release folder (the one `warden sign` wrote SHA256SUMS in)"
                    .into(),
            ))
        }
    };
    let public = key.public_key();
    let id = public.key_id;
    refuse_key(&public, keys, run.as_ref())?;
    let list_name = opts
        .checksums_name
        .clone()
        .unwrap_or_else(|| crate::minisign::names::CHECKSUMS_NAME.to_string());
    let sums = dir.join(&list_name);
    if std::fs::symlink_metadata(&sums).is_err() {
        return Err(Error::Usage(format!(
            "{}: no such file: co-signing adds a signature to a signed checksum list",
            sums.display()
        )));
    }
    let report = verify(opts, &keys.clone().below_threshold_allowed())?;
    if report.exit_code() != 0 {
        return Err(Error::Refused(format!(
            "{} does not verify, so it is not co-signed: {}",
            dir.display(),
            first_failure(&report)
        )));
    }
    let list = report
        .results
        .iter()
        .find(|r| std::path::Path::new(&r.name) == sums)
        .ok_or_else(|| Error::Refused(format!("{} was not verified", sums.display())))?;
    refuse_same_signer(&public, keys, list)?;
    let counted = list.signers.iter().filter(|s| s.counted).count();
    let target = cosignature_path(&sums, id);
    let text = guarded::read_text_inside(dir, &sums, 256 << 20)
        .map_err(|e| Error::io("reading", &sums, e))?;
    let meta = ReleaseMeta {
        tag: list.tag.clone(),
        commit: list.commit.clone(),
        repo: list.repo.clone(),
        dry_run: false,
        // The run this co-signature is made in, when it is made in one.
        run,
    };
    let comment = TrustedComment::for_release(timestamp, &list_name, None, &meta)
        .map_err(|e| Error::Usage(e.into()))?;
    let prehash = hash_bytes(text.as_bytes()).blake2b512;
    let sig = SignatureFile::sign_prehashed(key, &prehash, comment);
    sig.verify_comment(&public)
        .and_then(|()| sig.verify_data(&public, &prehash))
        .map_err(|e| {
            Error::Refused(format!(
                "internal error: fresh signature does not verify: {e}"
            ))
        })?;
    // Refuses to replace: a co-signature already there (of this id) is never overwritten.
    crate::files::atomic::write_atomic(&target, sig.to_string().as_bytes(), 0o644, false)?;
    Ok(CosignReport {
        key_id: id,
        name: keys.policy().key(id).and_then(|p| p.name.clone()),
        checksums: sums,
        signature: target,
        signers: counted + 1,
        required: keys.threshold(),
    })
}

/// Why `public` may not co-sign: revoked, past its end, not the folder's key under its id, or
/// (under `require_run`) not made in a run that meets the policy.
fn refuse_key(
    public: &crate::minisign::keys::PublicKey,
    keys: &TrustedKeys,
    run: Option<&crate::minisign::run::RunBinding>,
) -> Result<()> {
    let id = public.key_id;
    if let Some(r) = keys.revoked_key(public) {
        return Err(Error::Refused(format!(
            "key {id} is revoked ({}; {}): it cannot co-sign; nothing written",
            crate::markup::text_value(&r.reason),
            r.file.display()
        )));
    }
    if let Some(p) = keys.expired(id) {
        return Err(Error::Refused(format!(
            "key {id} was trusted until {} ({}): it cannot co-sign; nothing written",
            p.valid_until.as_deref().unwrap_or_default(),
            keys.policy().origin()
        )));
    }
    if keys.find(id).is_none_or(|(k, _)| k != public) {
        return Err(Error::Refused(format!(
            "key {id} is not a trusted key of the keys folder (trusted: {}): add its .pub first; nothing written",
            keys.ids()
        )));
    }
    // Every counted signature meets the run policy: a co-signature under `require_run` is made
    // in a run of its own (and binds it), like the first.
    let policy = keys.policy();
    if let Some(why) = policy.run.offline_problem(run, &policy.origin()) {
        return Err(Error::Refused(format!(
            "key {id} cannot co-sign here: {why}; nothing written"
        )));
    }
    Ok(())
}

/// A co-signature by a key that signed already, or by a key of the same lineage as a signer (a
/// key and its successors are one signer), would not count: refused.
fn refuse_same_signer(
    public: &crate::minisign::keys::PublicKey,
    keys: &TrustedKeys,
    list: &ArtifactResult,
) -> Result<()> {
    let sums = &list.name;
    for s in list.signers.iter().filter(|s| s.counted) {
        if s.key_id == public.key_id {
            return Err(Error::Refused(format!(
                "key {} signed {sums} already: a second signature by one key counts once; nothing written",
                public.key_id
            )));
        }
        let Some((signer, _)) = keys.find(s.key_id) else {
            continue;
        };
        if let Some(why) = keys.lineages().one_signer(signer, public) {
            return Err(Error::Refused(format!(
                "key {} signed {sums} already, and {why}: a co-signature by key {} would not count; nothing written",
                s.key_id, public.key_id
            )));
        }
    }
    Ok(())
}

/// The first failure of a verification, for the refusal.
fn first_failure(report: &VerifyReport) -> String {
    report
        .results
        .iter()
        .find(|r| r.status != ArtifactStatus::Ok)
        .map_or("nothing verified".into(), |r| {
            format!("{}: {}", r.name, r.reason.as_deref().unwrap_or("failed"))
        })
}
