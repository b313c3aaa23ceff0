//! The public keys a verification trusts, and where their statements apply: the `*.pub` files of
//! a keys folder (or `--public-key` files, with the `revoked/` and `policy.toml` of the folder
//! each sits in), that folder's revocations and policy, and the rotations a pinned key follows.
//!
//! A key is its bytes. A key id finds a key and never proves one: one key under two ids is
//! refused (it would count as two signers), a statement whose key carries a trusted id but
//! other bytes is a look-alike's, and a revocation or rotation applies to a key only when its
//! bytes are that key's.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::minisign::keys::{KeyId, PublicKey};
use crate::trust::policy::{KeyPolicy, Policy};
use crate::trust::revocation::Revocation;

/// The public keys a verification trusts, chosen per signature by key id (key rotation).
#[derive(Clone, Debug, Default)]
pub struct TrustedKeys {
    keys: Vec<(PublicKey, PathBuf)>,
    /// The keys folders the trust comes from: they must not lie inside what is verified.
    folders: Vec<PathBuf>,
    /// Keys revoked by a statement: never trusted, even with a `.pub` here.
    revoked: Vec<Revocation>,
    /// The policy (threshold, validity, names, run requirements); the default without one.
    policy: Policy,
    /// The time trust is judged at (Unix seconds): a key past its `valid_until` is not used.
    now: u64,
    /// Statements noted and not applied (about keys not trusted here), to be said.
    notes: Vec<String>,
    /// Found where warden looks when no key is named (`./keys`, `./minisign.pub`), not named by
    /// the user: such keys may not sit beside a file being verified (they came with it).
    unnamed: bool,
    /// The rotations read with the keys: a key and its successors are one signer.
    lineages: crate::trust::lineage::Lineages,
}

impl TrustedKeys {
    /// The keys of `paths` (`.pub` files, or keys given inline as `minisign -P` takes them), with
    /// the `policy.toml` and `revoked/` of the keys folder each file sits in: the minisign habit
    /// `--public-key keys/minisign.pub` gets the revocations committed beside it.
    pub fn load_files(paths: &[PathBuf]) -> Result<Self> {
        let mut keys = TrustedKeys {
            now: crate::util::unix_now(),
            ..TrustedKeys::default()
        };
        let mut folders: Vec<PathBuf> = Vec::new();
        for path in paths {
            // A key given inline (`-P RWQ…`, as minisign takes it) rather than a file.
            let inline = path
                .to_str()
                .filter(|s| !path.exists() && s.len() == 56 && s.starts_with("RW"));
            let key = match inline {
                Some(text) => PublicKey::from_base64(text)
                    .map_err(|e| Error::input("--public-key", None, e))?,
                None => {
                    let folder = crate::files::paths::parent_dir(path).to_path_buf();
                    if is_keys_folder(&folder) && !folders.contains(&folder) {
                        folders.push(folder);
                    }
                    PublicKey::from_file(path)?
                }
            };
            keys.add(key, path.clone())?;
        }
        for folder in folders {
            keys = keys.apply_folder(&folder)?;
        }
        Ok(keys)
    }

    /// This one key, with the default policy (a signer without a keys folder).
    pub fn only(key: PublicKey) -> Self {
        let name = PathBuf::from(format!("key {}", key.key_id));
        TrustedKeys {
            keys: vec![(key, name)],
            now: crate::util::unix_now(),
            ..TrustedKeys::default()
        }
    }

    /// Every `*.pub` in `dir`, in name order, with the folder's revocations and policy.
    pub fn load_dir(dir: &Path) -> Result<Self> {
        let mut keys = TrustedKeys {
            folders: vec![dir.to_path_buf()],
            policy: Policy::load(dir)?,
            now: crate::util::unix_now(),
            ..TrustedKeys::default()
        };
        for path in crate::minisign::keys::public_key_files(dir)? {
            keys.add(PublicKey::from_file(&path)?, path)?;
        }
        keys.lineages.extend(&crate::trust::lineage::load(dir)?);
        let all = keys.all_keys();
        let (revoked, notes) =
            crate::trust::revocation::load(dir, &all, keys.policy.threshold, &keys.lineages)?;
        keys.revoked = revoked;
        keys.notes = notes;
        Ok(keys)
    }

    /// Also trusts the keys that succeed these ones through the rotations of `keys_dir`
    /// (`verify --follow-rotations`: a pinned old key leads to its successors), and applies that
    /// folder's revocations and policy, which only remove trust. A rotation is followed only
    /// from a key trusted here by its bytes, never out of a revoked key or a key past its
    /// `valid_until` (by either policy), and a forked chain is an error. A key and its successors
    /// are one signer.
    pub fn follow_rotations(mut self, keys_dir: &Path) -> Result<Self> {
        let rotations = crate::trust::lineage::load(keys_dir)?;
        self.lineages.extend(&rotations);
        let theirs = Policy::load(keys_dir)?;
        let pinned = self.all_keys();
        // Every key the chains could reach: their revocations are checked against them all (a
        // revocation only removes trust).
        let mut reach = pinned.clone();
        for key in &pinned {
            for r in crate::trust::lineage::successors(key, &rotations, |_| None)? {
                reach.push(r.new);
            }
        }
        let threshold = theirs.threshold.max(self.policy.threshold);
        let (revoked, notes) =
            crate::trust::revocation::load(keys_dir, &reach, threshold, &self.lineages)?;
        self.add_revocations(revoked);
        self.notes.extend(notes);
        for key in &pinned {
            let ended = |k: &PublicKey| self.chain_ends_at(k, &theirs);
            for r in crate::trust::lineage::successors(key, &rotations, ended)? {
                self.add(r.new.clone(), r.file.clone())?;
            }
            for r in rotations
                .iter()
                .filter(|r| r.old.key_id == key.key_id && r.old != *key)
            {
                self.notes.push(format!(
                    "{}: its old key carries the id {} but is not the key trusted under that id (a look-alike): not followed",
                    r.file.display(),
                    key.key_id
                ));
            }
        }
        let origin = keys_dir
            .join(crate::trust::policy::POLICY_FILE)
            .display()
            .to_string();
        self.apply_policy_from(keys_dir, &origin)
    }

    /// Why trust does not pass on from `key` to a successor: it is revoked, or past its
    /// `valid_until` by this policy or by `theirs` (the followed folder's).
    fn chain_ends_at(
        &self,
        key: &PublicKey,
        theirs: &Policy,
    ) -> Option<crate::trust::lineage::ChainEnd> {
        if self.is_revoked(key) {
            return Some(crate::trust::lineage::ChainEnd::Revoked);
        }
        [&self.policy, theirs]
            .into_iter()
            .find_map(|p| p.expired(key.key_id, self.now))
            .map(|p| {
                crate::trust::lineage::ChainEnd::Expired(p.valid_until.clone().unwrap_or_default())
            })
    }

    /// Also applies the `policy.toml` and `revoked/` of the keys folder `dir`; both only remove
    /// trust.
    pub fn apply_folder(mut self, dir: &Path) -> Result<Self> {
        let origin = dir
            .join(crate::trust::policy::POLICY_FILE)
            .display()
            .to_string();
        self.lineages.extend(&crate::trust::lineage::load(dir)?);
        let mut keys = self
            .apply_policy_from(dir, &origin)?
            .apply_revocations(dir)?;
        if !keys.folders.iter().any(|f| f == dir) {
            keys.folders.push(dir.to_path_buf());
        }
        Ok(keys)
    }

    /// The same keys with a threshold of 1: `sign --cosign` checks a release that still lacks
    /// the signature it is about to add.
    pub(crate) fn below_threshold_allowed(mut self) -> Self {
        self.policy.threshold = 1;
        self
    }

    /// Which keys are one signer.
    pub(crate) fn lineages(&self) -> &crate::trust::lineage::Lineages {
        &self.lineages
    }

    /// How many distinct usable keys must sign.
    pub(crate) fn threshold(&self) -> usize {
        self.policy.threshold
    }

    /// Whether the policy asks for GitHub's attestations (`require_attestation`).
    pub fn attestation_required(&self) -> bool {
        self.policy().attestation.is_some()
    }

    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// What was noted and not applied: statements about keys not trusted here.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The key's policy when its trust has ended (`valid_until` is past).
    pub(crate) fn expired(&self, id: KeyId) -> Option<&KeyPolicy> {
        self.policy.expired(id, self.now)
    }

    /// Every key id a signature may carry and be judged by: the keys, and the revoked ones.
    pub(crate) fn known_ids(&self) -> Vec<KeyId> {
        let mut ids: Vec<KeyId> = self.keys.iter().map(|(k, _)| k.key_id).collect();
        ids.extend(self.revoked.iter().map(|r| r.key_id));
        ids.sort();
        ids.dedup();
        ids
    }

    /// The keys a signature counts for: trusted, not revoked, not past their `valid_until`.
    pub(crate) fn usable(&self) -> impl Iterator<Item = (&PublicKey, &Path)> {
        self.trusted()
            .filter(|(k, _)| self.expired(k.key_id).is_none())
    }

    /// How many distinct signers the usable keys are (a key and its successors are one).
    pub(crate) fn usable_signers(&self) -> usize {
        let mut tally = crate::trust::lineage::Tally::new(&self.lineages);
        for (k, _) in self.usable() {
            let _one_signer_already = tally.count(k);
        }
        tally.len()
    }

    /// Why the folder cannot be used as it is: a policy naming a key the folder does not hold,
    /// a threshold above the keys that can sign.
    pub(crate) fn inconsistencies(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let origin = self.policy.origin();
        for k in &self.policy.keys {
            if !self.keys.iter().any(|(key, _)| key.key_id == k.key_id) {
                problems.push(format!(
                    "{origin} names key {}, which has no .pub file in the folder",
                    k.key_id
                ));
            }
        }
        // Without a policy, a folder whose keys are all revoked is said by `keys list` as such.
        let usable = self.usable_signers();
        if self.policy.file.is_some() && self.policy.threshold > usable {
            problems.push(format!(
                "{origin}: threshold {} is above the {usable} usable signer{} (trusted, not revoked, not expired; a key and its successors are one): no release can be signed",
                self.policy.threshold,
                if usable == 1 { "" } else { "s" }
            ));
        }
        problems
    }

    /// Also applies the `policy.toml` of `dir` (the repository's, read through the API, named
    /// `origin` in messages) on top of this folder's: see [`Policy::with_stricter`]. Its rules
    /// about keys not trusted here are left out (their signatures do not count anyway). Nothing
    /// changes when `dir` has no policy.
    pub(crate) fn apply_policy_from(mut self, dir: &Path, origin: &str) -> Result<Self> {
        let mut theirs = Policy::load(dir)?;
        if theirs.file.is_none() {
            return Ok(self);
        }
        theirs
            .keys
            .retain(|k| self.keys.iter().any(|(key, _)| key.key_id == k.key_id));
        self.policy = self.policy.with_stricter(theirs, origin)?;
        Ok(self)
    }

    /// Also honours the revocations of `keys_dir` (say, the repository's, read through the API),
    /// which only remove trust.
    pub(crate) fn apply_revocations(self, keys_dir: &Path) -> Result<Self> {
        self.apply_statements(&keys_dir.join(crate::trust::revocation::REVOKED_DIR))
    }

    /// Also honours the revocation statements of the folder `dir` (`--revocations DIR`); none
    /// when it does not exist. A statement about a key trusted here must verify (else an
    /// error); one about a key not trusted here that cannot be checked is noted and ignored.
    pub fn apply_statements(mut self, dir: &Path) -> Result<Self> {
        let all = self.all_keys();
        let (revoked, notes) = crate::trust::revocation::load_statements(
            dir,
            &all,
            self.policy.threshold,
            &self.lineages,
        )?;
        self.add_revocations(revoked);
        self.notes.extend(notes);
        Ok(self)
    }

    fn add_revocations(&mut self, revoked: Vec<Revocation>) {
        for r in revoked {
            if !self.is_revoked(&r.public_key) {
                self.revoked.push(r);
            }
        }
    }

    /// Every key of the folder, revoked ones included: what the project has ever signed with.
    pub fn all_keys(&self) -> Vec<PublicKey> {
        self.keys.iter().map(|(k, _)| k.clone()).collect()
    }

    /// The revocation of this key (by its bytes), if there is one.
    pub(crate) fn revoked_key(&self, key: &PublicKey) -> Option<&Revocation> {
        self.revoked.iter().find(|r| r.public_key == *key)
    }

    fn is_revoked(&self, key: &PublicKey) -> bool {
        self.revoked_key(key).is_some()
    }

    /// The revocation of a key that carries this id: a signature with the id is by the revoked
    /// key when it verifies under `public_key`.
    pub(crate) fn revocation_with_id(&self, id: KeyId) -> Option<&Revocation> {
        self.revoked.iter().find(|r| r.key_id == id)
    }

    /// Every revocation of the keys folder.
    pub(crate) fn revocations(&self) -> &[Revocation] {
        &self.revoked
    }

    /// The trusted keys (not revoked), with their files.
    pub(crate) fn trusted(&self) -> impl Iterator<Item = (&PublicKey, &Path)> {
        self.keys
            .iter()
            .filter(|(k, _)| !self.is_revoked(k))
            .map(|(k, p)| (k, p.as_path()))
    }

    /// Adds a key; one id for two keys, or one key under two ids, is refused.
    fn add(&mut self, key: PublicKey, path: PathBuf) -> Result<()> {
        let same_id = self.keys.iter().find(|(k, _)| k.key_id == key.key_id);
        let same_key = self.keys.iter().find(|(k, _)| *k == key);
        let why = match (same_id, same_key) {
            (Some(_), Some(_)) => return Ok(()),
            (Some((_, other)), None) => format!(
                "key id {} is also used by a different key in {}",
                key.key_id,
                other.display()
            ),
            (None, Some((other, file))) => format!(
                "key {} is the same key as {} in {} under another id: one key under two ids would count as two signers",
                key.key_id,
                other.key_id,
                file.display()
            ),
            (None, None) => {
                self.keys.push((key, path));
                return Ok(());
            }
        };
        Err(Error::input(path.display().to_string(), None, why))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.trusted().next().is_none()
    }

    /// The usable key with this id (never a revoked or expired one), and its file.
    pub(crate) fn find(&self, id: KeyId) -> Option<(&PublicKey, &Path)> {
        self.usable().find(|(k, _)| k.key_id == id)
    }

    /// These keys were found where warden looks when none is named, not named by the user.
    pub fn found_unnamed(mut self) -> Self {
        self.unnamed = true;
        self
    }

    pub(crate) fn unnamed(&self) -> bool {
        self.unnamed
    }

    /// Where the trust comes from: the keys folders and every key file.
    pub(crate) fn sources(&self) -> impl Iterator<Item = &Path> {
        self.folders
            .iter()
            .map(PathBuf::as_path)
            .chain(self.keys.iter().map(|(_, p)| p.as_path()))
    }

    pub(crate) fn ids(&self) -> String {
        let ids: Vec<String> = self.usable().map(|(k, _)| k.key_id.to_string()).collect();
        if ids.is_empty() {
            return "none".into();
        }
        ids.join(", ")
    }
}

/// Whether `dir` is a keys folder whose statements apply to a key file in it: it holds a
/// `policy.toml` or a `revoked/` folder.
fn is_keys_folder(dir: &Path) -> bool {
    dir.join(crate::trust::policy::POLICY_FILE).is_file()
        || dir.join(crate::trust::revocation::REVOKED_DIR).is_dir()
}

/// The keys folder as `warden keys list` shows it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct KeysReport {
    pub(crate) keys_dir: PathBuf,
    pub(crate) trusted: Vec<ListedKey>,
    pub(crate) revoked: Vec<crate::trust::revocation::Revocation>,
    /// Rotations: (old, new, when, statement).
    pub(crate) rotations: Vec<ListedRotation>,
    /// Distinct signers a release needs (1 without a policy).
    pub(crate) threshold: usize,
    /// Distinct signers the usable keys are (a key and its successors are one).
    pub(crate) usable_signers: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) policy: Option<PathBuf>,
    /// Keys that are one signer (a key and its successors), with the statements that join them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) one_signer: Vec<OneSigner>,
    /// Why the folder cannot be used as it is: a statement or policy that does not read or
    /// verify, a policy naming a missing key, a threshold no set of keys can meet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) problems: Vec<String>,
}

/// Keys of the folder that count as one signer, and the rotations that make them one.
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct OneSigner {
    #[serde(serialize_with = "serialize_key_ids")]
    pub(crate) keys: Vec<KeyId>,
    pub(crate) rotations: Vec<String>,
}

fn serialize_key_ids<S: serde::Serializer>(
    ids: &[KeyId],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(ids.iter().map(ToString::to_string))
}

#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct ListedRotation {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) old: KeyId,
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) new: KeyId,
    pub(crate) rotated_at: String,
    pub(crate) file: PathBuf,
}

#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct ListedKey {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: KeyId,
    pub(crate) file: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) valid_until: Option<String>,
    /// Past its `valid_until`: listed, but its signatures do not count.
    pub(crate) expired: bool,
}

/// Lists `keys_dir`: its keys, revocations, rotations and policy, and every inconsistency.
pub fn list(keys_dir: &Path) -> KeysReport {
    let mut report = KeysReport {
        keys_dir: keys_dir.to_path_buf(),
        trusted: Vec::new(),
        revoked: Vec::new(),
        rotations: Vec::new(),
        threshold: 1,
        usable_signers: 0,
        policy: None,
        one_signer: Vec::new(),
        problems: Vec::new(),
    };
    let rotations = crate::trust::lineage::load(keys_dir);
    let keys = TrustedKeys::load_dir(keys_dir);
    match &rotations {
        Ok(rotations) => {
            // A key with two successors forks the chain: said once per key.
            let mut forks = std::collections::BTreeSet::new();
            for r in rotations {
                if let Err(e) = crate::trust::lineage::successors(&r.old, rotations, |_| None) {
                    if forks.insert(e.to_string()) {
                        report.problems.push(e.to_string());
                    }
                }
            }
            if let Ok(keys) = &keys {
                let none = Policy::default();
                report.problems.extend(crate::trust::lineage::problems(
                    rotations,
                    &keys.all_keys(),
                    |k| keys.chain_ends_at(k, &none),
                ));
            }
            report.rotations = rotations
                .iter()
                .map(|r| ListedRotation {
                    old: r.old.key_id,
                    new: r.new.key_id,
                    rotated_at: r.rotated_at.clone(),
                    file: r.file.clone(),
                })
                .collect()
        }
        Err(e) => report.problems.push(e.to_string()),
    }
    match keys {
        Ok(keys) => {
            report.trusted = keys
                .trusted()
                .map(|(k, p)| {
                    let policy = keys.policy().key(k.key_id);
                    ListedKey {
                        key_id: k.key_id,
                        file: p.to_path_buf(),
                        name: policy.and_then(|p| p.name.clone()),
                        role: policy.and_then(|p| p.role.clone()),
                        valid_until: policy.and_then(|p| p.valid_until.clone()),
                        expired: keys.expired(k.key_id).is_some(),
                    }
                })
                .collect();
            report.revoked = keys.revocations().to_vec();
            let trusted: Vec<&PublicKey> = keys.trusted().map(|(k, _)| k).collect();
            report.one_signer = keys
                .lineages()
                .groups(&trusted)
                .into_iter()
                .map(|(group, rotations)| OneSigner {
                    keys: group.iter().map(|k| k.key_id).collect(),
                    rotations,
                })
                .collect();
            report.threshold = keys.threshold();
            report.usable_signers = keys.usable_signers();
            report.policy = keys.policy().file.clone();
            report.problems.extend(keys.notes().iter().cloned());
            report.problems.extend(keys.inconsistencies());
        }
        Err(e) => report.problems.push(e.to_string()),
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minisign::keys::{generate, SecretKey, SecretKeyText};

    fn key_pair() -> (PublicKey, SecretKey) {
        let pair = generate(None).unwrap();
        let secret =
            SecretKey::load(&SecretKeyText::new(pair.secret_box.to_string()), None).unwrap();
        (pair.public, secret)
    }

    /// A keys folder in `dir` holding these keys, each as `<id>.pub`.
    fn folder(dir: &Path, keys: &[&PublicKey]) {
        std::fs::create_dir_all(dir).unwrap();
        for k in keys {
            std::fs::write(dir.join(format!("{}.pub", k.key_id)), k.to_string()).unwrap();
        }
    }

    #[test]
    fn a_key_and_its_successor_are_one_usable_signer() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("keys");
        let ((a, a_sk), (b, _), (s, s_sk)) = (key_pair(), key_pair(), key_pair());
        folder(&dir, &[&a, &b]);
        assert_eq!(TrustedKeys::load_dir(&dir).unwrap().usable_signers(), 2);
        let opts = crate::trust::rotation::RotateOptions {
            keys_dir: dir.clone(),
            rotated_at: "2026-01-01T00:00:00Z".into(),
        };
        crate::trust::rotation::rotate(&opts, &a_sk, &s_sk).unwrap();
        let keys = TrustedKeys::load_dir(&dir).unwrap();
        assert_eq!(keys.usable().count(), 3);
        assert_eq!(keys.usable_signers(), 2);
        assert!(keys.lineages().one_signer(&a, &s).is_some());
        assert!(keys.lineages().one_signer(&a, &b).is_none());
    }

    #[test]
    fn a_pinned_key_past_its_date_leads_nowhere() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("keys");
        let ((a, a_sk), (s, s_sk)) = (key_pair(), key_pair());
        folder(&dir, &[&a]);
        let opts = crate::trust::rotation::RotateOptions {
            keys_dir: dir.clone(),
            rotated_at: "2026-01-01T00:00:00Z".into(),
        };
        crate::trust::rotation::rotate(&opts, &a_sk, &s_sk).unwrap();
        let pinned = t.path().join("a.pub");
        std::fs::write(&pinned, a.to_string()).unwrap();
        let followed = TrustedKeys::load_files(std::slice::from_ref(&pinned))
            .unwrap()
            .follow_rotations(&dir)
            .unwrap();
        assert!(followed.find(s.key_id).is_some());
        std::fs::write(
            dir.join("policy.toml"),
            format!("[keys.{}]\nvalid_until = 2020-01-01\n", a.key_id),
        )
        .unwrap();
        let followed = TrustedKeys::load_files(&[pinned])
            .unwrap()
            .follow_rotations(&dir)
            .unwrap();
        assert!(followed.find(s.key_id).is_none());
    }

    #[test]
    fn one_key_under_two_ids_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let (a, _) = key_pair();
        let mut twin = a.clone();
        twin.key_id = KeyId::from_hex("0123456789ABCDEF").unwrap();
        folder(t.path(), &[&a, &twin]);
        let e = TrustedKeys::load_dir(t.path()).unwrap_err().to_string();
        assert!(
            e.contains("one key under two ids would count as two signers"),
            "{e}"
        );
    }
}
