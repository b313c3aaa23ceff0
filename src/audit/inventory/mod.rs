//! `warden audit --org ORG --inventory`: every signing key of an organisation as one table.
//! Three sources, read during each repository's audit (`facts`): the public keys repositories
//! commit with their keys folders' state, the secrets the audit shows to be keys with where they
//! are stored, and the key ids of recent releases' signatures. Keys are joined by their bytes
//! (a signature is attributed to a key only when it verifies under it, and only to a key its own
//! repository commits or the organisation's `.github` repository lists in `keys/`); a key known
//! only from a signature no such key verifies is known by its id alone, and said so.

pub(crate) mod facts;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::findings::{AuditReport, Finding, Location};
use super::org::{NotAudited, OrgReport};
use super::rules::{
    key_expiring, key_not_committed, key_secret_overexposed, key_shared_across_repositories,
    key_unused, repository_signs_without_key, revoked_key_still_read,
};
use super::severity::Severity;
use crate::minisign::keys::{KeyId, PublicKey};
use facts::{OrgSecret, RepoFacts, SignatureFacts};

/// Keys within this many seconds of their `valid_until` are due for rotation.
const DUE: u64 = 30 * 86_400;

/// The inventory of an organisation's signing keys.
#[derive(Debug, Serialize)]
pub struct Inventory {
    pub(crate) version: u32,
    pub(crate) kind: &'static str,
    pub(crate) organization: String,
    /// The findings belong to the organisation (what `--baseline` reads).
    pub(crate) repository: String,
    pub(crate) fail_on: Severity,
    /// How many recent releases of each repository were read.
    pub(crate) releases: usize,
    /// Repositories audited.
    pub(crate) repositories: Vec<String>,
    pub(crate) keys: Vec<KeyEntry>,
    /// Signing secrets whose key is not known (no key named, committed or seen in releases).
    pub(crate) unattributed: Vec<SigningUse>,
    /// Public keys outside `keys/` not read, over the request budget (`repository path`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) keys_not_fetched: Vec<String>,
    #[serde(skip)]
    pub(crate) report: AuditReport,
    pub(crate) unreadable: Vec<NotAudited>,
    pub(crate) not_started: Vec<NotAudited>,
}

/// One key: identified by its bytes (with every id it is seen under), or by an id alone when
/// only a signature nothing committed verifies under names it.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct KeyEntry {
    pub(crate) key_id: String,
    /// Other ids the same key bytes are committed under: one key, several names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) other_ids: Vec<String>,
    /// The minisign public key (`RW…`) as first committed; `null` when known by its id only.
    pub(crate) public_key: Option<String>,
    /// `sha256:` and the hex SHA-256 of the key's 32 Ed25519 bytes: what a suppression or a
    /// baseline names it by (`key:sha256:…`); absent when known by its id only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fingerprint: Option<String>,
    pub(crate) committed: Vec<Committed>,
    pub(crate) signing_jobs: Vec<SigningUse>,
    pub(crate) secrets: Vec<SecretPlace>,
    /// The newest release it signed, per repository.
    pub(crate) last_releases: Vec<LastRelease>,
    pub(crate) state: KeyState,
    /// Repositories whose releases a thief holding the key could sign: those whose keys/
    /// trusts it, and those whose releases it signs.
    pub(crate) blast_radius: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Committed {
    pub(crate) repository: String,
    pub(crate) path: String,
    /// The id this file gives the key (one key can be committed under several).
    pub(crate) key_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) revoked_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) valid_until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rotated_to: Option<String>,
}

/// A job that signs with a key, and the secret it reads.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SigningUse {
    pub(crate) repository: String,
    pub(crate) workflow: String,
    pub(crate) job: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<String>,
    pub(crate) secret: String,
    /// Why this job's secret is taken to be this key: `named` (the workflow names the key),
    /// `releases` (the repository's releases are signed by it), `committed` (the one key the
    /// repository commits).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub(crate) basis: &'static str,
}

/// Where a secret holding the key is stored, and who can read it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SecretPlace {
    pub(crate) name: String,
    /// `environment`, `repository`, `organization`, or `unknown` (the settings could not be
    /// read, or no secret of that name is visible).
    pub(crate) store: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) repository: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) visibility: Option<String>,
    /// The repositories whose workflows can read it.
    pub(crate) readable_by: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct LastRelease {
    pub(crate) repository: String,
    pub(crate) tag: String,
    /// The signature verified under the key's bytes (else it is known by id).
    pub(crate) verified: bool,
}

#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct KeyState {
    /// Repositories whose keys/revoked/ revokes it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) revoked_in: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) valid_until: Option<String>,
    /// `valid`, `due` (within 30 days of `valid_until`), `expired`.
    pub(crate) validity: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rotated_to: Option<String>,
}

/// A key as the join sees it: its bytes, or an id alone.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum KeyRef {
    Bytes([u8; 32]),
    Id(KeyId),
}

/// What is gathered of one key before it is written out.
#[derive(Default)]
struct Gathered {
    ids: BTreeSet<KeyId>,
    public_key: Option<String>,
    committed: Vec<Committed>,
    expires_at: Option<u64>,
    jobs: Vec<SigningUse>,
    /// (repository, tag, verified), newest first per repository.
    releases: Vec<(String, String, bool)>,
}

/// What the inventory is built from.
pub(crate) struct Sources<'a> {
    pub(crate) org: &'a OrgReport,
    pub(crate) facts: &'a [RepoFacts],
    pub(crate) org_secrets: Option<&'a BTreeMap<String, OrgSecret>>,
    pub(crate) releases: usize,
    pub(crate) now: u64,
}

/// Joins the repositories' facts into the inventory, with its findings.
pub(crate) fn build(src: &Sources<'_>) -> Inventory {
    let mut keys: BTreeMap<KeyRef, Gathered> = BTreeMap::new();
    gather_committed(src.facts, &mut keys);
    let signed_by = gather_releases(src.facts, &mut keys);
    let mut unattributed = gather_jobs(src.facts, &signed_by, &mut keys);
    let mut entries: Vec<(KeyRef, KeyEntry)> = keys
        .into_iter()
        .map(|(r, g)| {
            let entry = entry(src, &r, g);
            (r, entry)
        })
        .collect();
    entries.sort_by(|a, b| a.1.key_id.cmp(&b.1.key_id));
    let mut findings = Vec::new();
    for (r, e) in &entries {
        findings.extend(key_findings(src, r, e));
    }
    for f in src.facts {
        findings.extend(unkeyed_repository(f));
    }
    findings.extend(id_collisions(src.facts));
    let mut report = AuditReport {
        findings,
        fail_on: src.org.fail_on,
        repository: Some(src.org.organization.clone()),
        release_tag_patterns: Vec::new(),
        workflows: Vec::new(),
        snapshot: None,
        suppressed: Vec::new(),
        baseline: None,
        coverage: Default::default(),
        sources: None,
    };
    report.sort();
    unattributed.sort();
    Inventory {
        version: 1,
        kind: "inventory",
        organization: src.org.organization.clone(),
        repository: src.org.organization.clone(),
        fail_on: src.org.fail_on,
        releases: src.releases,
        repositories: src.facts.iter().map(|f| f.repository.clone()).collect(),
        keys: entries.into_iter().map(|(_, e)| e).collect(),
        unattributed,
        keys_not_fetched: src
            .facts
            .iter()
            .flat_map(|f| {
                f.keys_not_fetched
                    .iter()
                    .map(move |p| format!("{} {p}", f.repository))
            })
            .collect(),
        report,
        unreadable: src.org.unreadable.clone(),
        not_started: src.org.not_started.clone(),
    }
}

/// Every committed key, by its bytes.
fn gather_committed(facts: &[RepoFacts], keys: &mut BTreeMap<KeyRef, Gathered>) {
    for f in facts {
        for c in &f.committed {
            let Some(key) = c.key() else { continue };
            let g = keys.entry(KeyRef::Bytes(*key.key.as_bytes())).or_default();
            g.ids.insert(key.key_id);
            g.public_key.get_or_insert_with(|| c.public_key.clone());
            if c.in_keys_folder && c.expires_at.is_some() {
                g.expires_at = g.expires_at.min(c.expires_at).or(c.expires_at);
            }
            g.committed.push(Committed {
                repository: f.repository.clone(),
                path: c.path.clone(),
                key_id: key.key_id.to_string(),
                revoked_at: c.revoked_at.clone(),
                valid_until: c.valid_until.clone(),
                rotated_to: c
                    .rotated_to
                    .as_deref()
                    .and_then(|t| PublicKey::from_base64(t).ok())
                    .map(|k| k.key_id.to_string()),
            });
        }
    }
}

/// Ids carried by more than one key (different bytes): one finding per id, each key with its
/// fingerprint and where it is committed.
fn id_collisions(facts: &[RepoFacts]) -> Vec<Finding> {
    let mut by_id: BTreeMap<KeyId, BTreeMap<[u8; 32], Vec<String>>> = BTreeMap::new();
    for f in facts {
        for c in &f.committed {
            if let Some(k) = c.key() {
                by_id
                    .entry(k.key_id)
                    .or_default()
                    .entry(*k.key.as_bytes())
                    .or_default()
                    .push(format!("{}/{}", f.repository, c.path));
            }
        }
    }
    by_id
        .into_iter()
        .filter(|(_, keys)| keys.len() > 1)
        .map(|(id, keys)| {
            let listed: Vec<String> = keys
                .into_iter()
                .map(|(bytes, places)| format!("{} in {}", fingerprint(&bytes), places.join(", ")))
                .collect();
            super::rules::key_id_collision::finding(&id.to_string(), &listed)
        })
        .collect()
}

/// The keys a repository's releases are judged by: those it commits and the organisation's
/// list (the `.github` repository's `keys/`), never a `.pub` another repository commits (which
/// anyone who can push there could add).
fn trusted_by(facts: &[RepoFacts], repo: &RepoFacts) -> Vec<PublicKey> {
    let org_list = facts
        .iter()
        .filter(|f| f.repository.rsplit('/').next() == Some(".github"))
        .flat_map(|f| f.committed.iter().filter(|c| c.in_keys_folder));
    repo.committed
        .iter()
        .chain(org_list)
        .filter_map(|c| c.key())
        .collect()
}

/// Release signatures, each attributed to the key it verifies under among those its repository
/// trusts (else its id); returns the keys that sign each repository's releases.
fn gather_releases<'a>(
    facts: &'a [RepoFacts],
    keys: &mut BTreeMap<KeyRef, Gathered>,
) -> BTreeMap<&'a str, BTreeSet<KeyRef>> {
    let mut signed_by: BTreeMap<&str, BTreeSet<KeyRef>> = BTreeMap::new();
    for f in facts {
        let known = trusted_by(facts, f);
        for r in &f.releases {
            for s in &r.signatures {
                let (at, verified) = attribute(s, &known);
                signed_by
                    .entry(&f.repository)
                    .or_default()
                    .insert(at.clone());
                let g = keys.entry(at).or_default();
                g.ids.insert(s.key_id);
                if !g.releases.iter().any(|(repo, _, _)| repo == &f.repository) {
                    g.releases
                        .push((f.repository.clone(), r.tag.clone(), verified));
                }
            }
        }
    }
    signed_by
}

/// Each signing job's secrets, on the keys they are taken to hold; returns those tied to none.
fn gather_jobs(
    facts: &[RepoFacts],
    signed_by: &BTreeMap<&str, BTreeSet<KeyRef>>,
    keys: &mut BTreeMap<KeyRef, Gathered>,
) -> Vec<SigningUse> {
    let mut unattributed = Vec::new();
    for f in facts {
        let signs = signed_by.get(f.repository.as_str());
        for j in &f.jobs {
            let (refs, basis) = job_keys(f, j, signs);
            for secret in &j.secrets {
                let at = SigningUse {
                    repository: f.repository.clone(),
                    workflow: j.workflow.clone(),
                    job: j.job.clone(),
                    environment: j.environment.clone(),
                    secret: secret.clone(),
                    basis,
                };
                if refs.is_empty() {
                    unattributed.push(SigningUse { basis: "", ..at });
                    continue;
                }
                for r in &refs {
                    keys.entry(r.clone()).or_default().jobs.push(at.clone());
                }
            }
        }
    }
    unattributed
}

/// The key a release signature is by: the committed key it verifies under (by bytes), else its
/// id alone. The second value says whether it verified.
fn attribute(s: &SignatureFacts, known: &[PublicKey]) -> (KeyRef, bool) {
    let prehash = s.prehash.as_deref().and_then(crate::util::from_hex::<64>);
    if let (Some(text), Some(prehash)) = (s.signature.as_deref(), prehash) {
        if let Some(k) = crate::trust::signer::made_by(text, &prehash, known) {
            return (KeyRef::Bytes(*k.key.as_bytes()), true);
        }
    }
    (KeyRef::Id(s.key_id), false)
}

/// The keys a job's secrets are taken to hold, and why: the committed keys its workflow names;
/// else the one key the repository's releases are signed by; else the one key its keys/
/// trusts.
fn job_keys(
    f: &RepoFacts,
    j: &facts::JobFacts,
    signs: Option<&BTreeSet<KeyRef>>,
) -> (Vec<KeyRef>, &'static str) {
    let bytes = |c: &facts::CommittedKey| c.key().map(|k| KeyRef::Bytes(*k.key.as_bytes()));
    let named: Vec<KeyRef> = f
        .committed
        .iter()
        .filter(|c| j.names.contains(&c.path))
        .filter_map(bytes)
        .collect();
    if !named.is_empty() {
        return (named, "named");
    }
    if let Some(set) = signs.filter(|s| s.len() == 1) {
        return (set.iter().cloned().collect(), "releases");
    }
    let trusted: BTreeSet<KeyRef> = f
        .committed
        .iter()
        .filter(|c| c.in_keys_folder && c.revoked_at.is_none())
        .filter_map(bytes)
        .collect();
    if trusted.len() == 1 {
        return (trusted.into_iter().collect(), "committed");
    }
    (Vec::new(), "")
}

/// The written entry of one key.
fn entry(src: &Sources<'_>, r: &KeyRef, mut g: Gathered) -> KeyEntry {
    let ids: Vec<String> = g.ids.iter().map(KeyId::to_string).collect();
    // The id it is committed under first (the one its public key text carries).
    let main = g
        .public_key
        .as_deref()
        .and_then(|p| PublicKey::from_base64(p).ok())
        .map(|k| k.key_id.to_string())
        .or_else(|| ids.first().cloned())
        .unwrap_or_default();
    g.committed
        .sort_by(|a, b| (&a.repository, &a.path).cmp(&(&b.repository, &b.path)));
    g.jobs.sort();
    g.jobs.dedup();
    let secrets = secret_places(src, &g.jobs);
    let revoked_in: Vec<String> = sorted(
        g.committed
            .iter()
            .filter(|c| c.revoked_at.is_some())
            .map(|c| c.repository.clone()),
    );
    let validity = match g.expires_at {
        Some(at) if src.now >= at => "expired",
        Some(at) if at - src.now <= DUE => "due",
        _ => "valid",
    };
    let mut blast: BTreeSet<String> = g
        .committed
        .iter()
        .filter(|c| c.revoked_at.is_none() && c.path.starts_with("keys/"))
        .map(|c| c.repository.clone())
        .collect();
    blast.extend(g.releases.iter().map(|(repo, _, _)| repo.clone()));
    g.releases.sort();
    KeyEntry {
        other_ids: ids.iter().filter(|i| **i != main).cloned().collect(),
        key_id: main,
        public_key: match r {
            KeyRef::Bytes(_) => g.public_key.clone(),
            KeyRef::Id(_) => None,
        },
        fingerprint: match r {
            KeyRef::Bytes(b) => Some(fingerprint(b)),
            KeyRef::Id(_) => None,
        },
        state: KeyState {
            revoked_in,
            valid_until: g.committed.iter().find_map(|c| c.valid_until.clone()),
            validity,
            rotated_to: g.committed.iter().find_map(|c| c.rotated_to.clone()),
        },
        committed: g.committed,
        signing_jobs: g.jobs,
        secrets,
        last_releases: g
            .releases
            .into_iter()
            .map(|(repository, tag, verified)| LastRelease {
                repository,
                tag,
                verified,
            })
            .collect(),
        blast_radius: blast.into_iter().collect(),
    }
}

fn sorted(items: impl Iterator<Item = String>) -> Vec<String> {
    items.collect::<BTreeSet<_>>().into_iter().collect()
}

/// Where each secret the jobs read is stored (GitHub's order: the job's environment, the
/// repository, the organisation), and who can read it.
fn secret_places(src: &Sources<'_>, jobs: &[SigningUse]) -> Vec<SecretPlace> {
    let mut places = BTreeSet::new();
    for j in jobs {
        let facts = src.facts.iter().find(|f| f.repository == j.repository);
        let stores = facts.and_then(|f| f.stores.as_ref());
        let unknown = SecretPlace {
            name: j.secret.clone(),
            store: "unknown",
            repository: Some(j.repository.clone()),
            environment: None,
            visibility: None,
            readable_by: Vec::new(),
        };
        let Some(stores) = stores else {
            places.insert(unknown);
            continue;
        };
        let in_env = j.environment.as_ref().filter(|e| {
            stores
                .environments
                .get(e.as_str())
                .is_some_and(|s| s.contains(&j.secret))
        });
        let place = if let Some(env) = in_env {
            SecretPlace {
                store: "environment",
                environment: Some(env.clone()),
                readable_by: vec![j.repository.clone()],
                ..unknown
            }
        } else if stores.repository.contains(&j.secret) {
            SecretPlace {
                store: "repository",
                readable_by: vec![j.repository.clone()],
                ..unknown
            }
        } else if stores.organization.contains(&j.secret) {
            let (visibility, readers) = org_readers(src, &j.secret);
            SecretPlace {
                store: "organization",
                repository: None,
                visibility,
                readable_by: readers,
                ..unknown
            }
        } else {
            unknown
        };
        places.insert(place);
    }
    places.into_iter().collect()
}

/// Who can read an organisation secret: the organisation's listing, else (no permission to
/// read it) the repositories that saw it among theirs.
fn org_readers(src: &Sources<'_>, name: &str) -> (Option<String>, Vec<String>) {
    if let Some(s) = src.org_secrets.and_then(|m| m.get(name)) {
        return (
            Some(s.visibility.clone()),
            sorted(s.readers.iter().cloned()),
        );
    }
    let readers = src
        .facts
        .iter()
        .filter(|f| {
            f.stores
                .as_ref()
                .is_some_and(|s| s.organization.contains(name))
        })
        .map(|f| f.repository.clone());
    (None, sorted(readers))
}

/// The findings about one key.
fn key_findings(src: &Sources<'_>, r: &KeyRef, e: &KeyEntry) -> Vec<Finding> {
    let mut out = Vec::new();
    let id = e.key_id.as_str();
    // Repositories it signs for: whose keys/ trusts it, whose releases it signs, whose jobs
    // hold it.
    let mut repos: BTreeSet<String> = e.blast_radius.iter().cloned().collect();
    repos.extend(e.signing_jobs.iter().map(|j| j.repository.clone()));
    if repos.len() > 1 {
        out.push(key_shared_across_repositories::finding(
            id,
            &repos.into_iter().collect::<Vec<_>>(),
        ));
    }
    if matches!(r, KeyRef::Id(_)) && !e.last_releases.is_empty() {
        let releases: Vec<String> = e
            .last_releases
            .iter()
            .map(|l| format!("{} {}", l.repository, l.tag))
            .collect();
        // An id a key its repository trusts also carries, unverified for want of the signed
        // file, is not a stranger: it is said so in the entry, not reported.
        let committed_id = e.last_releases.iter().all(|l| {
            src.facts
                .iter()
                .find(|f| f.repository == l.repository)
                .is_some_and(|f| {
                    trusted_by(src.facts, f)
                        .iter()
                        .any(|k| k.key_id.to_string() == e.key_id)
                })
        });
        if !committed_id || all_read(src, e) {
            out.push(key_not_committed::finding(id, &releases));
        }
    }
    let trusted_in: Vec<String> = sorted(
        e.committed
            .iter()
            .filter(|c| {
                c.path.starts_with("keys/") && c.revoked_at.is_none() && c.rotated_to.is_none()
            })
            .map(|c| c.repository.clone()),
    );
    let read: usize = src
        .facts
        .iter()
        .filter(|f| trusted_in.contains(&f.repository))
        .map(|f| f.releases.len())
        .sum();
    if !trusted_in.is_empty() && e.last_releases.is_empty() && matches!(r, KeyRef::Bytes(_)) {
        out.push(key_unused::finding(id, &trusted_in, read));
    }
    for s in e.secrets.iter().filter(|s| s.store == "organization") {
        let signers = sorted(
            e.signing_jobs
                .iter()
                .filter(|j| j.secret == s.name)
                .map(|j| j.repository.clone()),
        );
        if s.readable_by.iter().any(|r| !signers.contains(r)) {
            out.push(key_secret_overexposed::finding(
                id,
                &s.name,
                &s.readable_by,
                &signers,
            ));
        }
    }
    if let (Some(until), "expired" | "due") = (&e.state.valid_until, e.state.validity) {
        let repos = sorted(
            e.committed
                .iter()
                .filter(|c| c.valid_until.is_some())
                .map(|c| c.repository.clone()),
        );
        out.push(key_expiring::finding(
            id,
            until,
            e.state.validity == "expired",
            &repos,
        ));
    }
    if !e.state.revoked_in.is_empty() && !e.signing_jobs.is_empty() {
        let jobs = sorted(
            e.signing_jobs
                .iter()
                .map(|j| format!("{} {} (job {})", j.repository, j.workflow, j.job)),
        );
        out.push(revoked_key_still_read::finding(
            id,
            &e.state.revoked_in,
            &jobs,
        ));
    }
    with_fingerprint(out, e)
}

/// The findings, each located at the key's fingerprint as well as its id.
fn with_fingerprint(mut findings: Vec<Finding>, e: &KeyEntry) -> Vec<Finding> {
    for f in &mut findings {
        if let Location::Key { fingerprint, .. } = &mut f.location {
            fingerprint.clone_from(&e.fingerprint);
        }
    }
    findings
}

/// A key's fingerprint: `sha256:` and the hex SHA-256 of its 32 Ed25519 bytes.
fn fingerprint(bytes: &[u8; 32]) -> String {
    use sha2::Digest as _;
    format!(
        "sha256:{}",
        crate::util::to_hex(&sha2::Sha256::digest(bytes))
    )
}

/// Whether every release signature of the key's repositories was read with its signed file
/// (so that "verifies under no committed key" is a fact, not a read left out).
fn all_read(src: &Sources<'_>, e: &KeyEntry) -> bool {
    e.last_releases.iter().all(|l| {
        src.facts
            .iter()
            .filter(|f| f.repository == l.repository)
            .flat_map(|f| &f.releases)
            .flat_map(|r| &r.signatures)
            .filter(|s| s.key_id.to_string() == e.key_id)
            .all(|s| s.signature.is_some() && s.prehash.is_some())
    })
}

/// A repository whose releases are signed and that commits no public key at all.
fn unkeyed_repository(f: &RepoFacts) -> Option<Finding> {
    if !f.committed.is_empty() {
        return None;
    }
    let ids = sorted(
        f.releases
            .iter()
            .flat_map(|r| &r.signatures)
            .map(|s| s.key_id.to_string()),
    );
    if ids.is_empty() {
        return None;
    }
    let route = format!("repos/{}/releases", f.repository);
    Some(repository_signs_without_key::finding(
        &f.repository,
        &route,
        &ids,
    ))
}

impl Inventory {
    /// 2 when repositories were not reached (the rate limit: `--resume` finishes it); else 1
    /// when a finding is at or above the threshold or a repository could not be read; else 0.
    pub fn exit_code(&self) -> u8 {
        if !self.not_started.is_empty() {
            return 2;
        }
        u8::from(self.report.exit_code() != 0 || self.unreadable.iter().any(|u| !u.in_baseline))
    }

    /// Hides what `baseline` (an earlier inventory's JSON) already had: only changes count.
    pub fn apply_baseline(&mut self, baseline: &super::Baseline) {
        baseline.apply(&mut self.report);
    }
}

/// The inventory of an organisation audited with `--inventory`. Its findings are suppressed by
/// the `[[ignore]]` entries of `root`'s `.github/warden.toml` that name an inventory rule
/// (`path = "key:<KEYID>"`, or the repository's releases route).
pub fn inventory(
    org: &OrgReport,
    releases: usize,
    now: u64,
    root: &std::path::Path,
) -> crate::error::Result<Inventory> {
    let mut inv = build(&Sources {
        org,
        facts: &org.key_facts,
        org_secrets: org.org_secrets.as_ref(),
        releases,
        now,
    });
    let mut config = super::config::AuditConfig::load(root)?;
    config
        .ignores
        .retain(|i| RULES.iter().any(|r| r.id() == i.get_ref().rule));
    let (y, m, d) = crate::util::today();
    let (active, suppressed) = config.apply(
        std::mem::take(&mut inv.report.findings),
        &format!("{y:04}-{m:02}-{d:02}"),
    );
    inv.report.findings = active;
    inv.report.suppressed = suppressed;
    inv.report.sort();
    Ok(inv)
}

/// The inventory's own rules.
pub(crate) const RULES: [super::rule::Rule; 7] = [
    key_shared_across_repositories::RULE,
    key_not_committed::RULE,
    key_unused::RULE,
    key_secret_overexposed::RULE,
    key_expiring::RULE,
    revoked_key_still_read::RULE,
    repository_signs_without_key::RULE,
];
