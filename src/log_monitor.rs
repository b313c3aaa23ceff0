//! `warden log monitor`: reads the entries appended since its last run, checks that the log
//! grew append-only, and checks each entry against GitHub's records: the run it binds exists
//! and ran the bound workflow for that tag and commit, and the release of that tag holds the
//! signed file with that digest. An entry that no release run made — a laptop signature that
//! was logged, a stolen key — is reported with its index and run.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::files::{atomic, guarded};
use crate::github::api::ApiSource;
use crate::github::snapshot::{Recorder, SnapshotSource};
use crate::github::ReleaseSource;
use crate::log::entry::Entry;
use crate::log::note::{VerifiedCheckpoint, MAX_CHECKPOINT_BYTES};
use crate::log::tiles::{Store, Tiles};
use crate::log::tree::{self, LogError};
use crate::trust::log::{rolled_back, LogTrust, LoggedRelease as Logged};
use crate::trust::run_policy::RunPolicy;
use crate::verdict::provenance::{judge_run, Signed};

/// What to monitor.
pub struct MonitorRequest {
    /// The log: a folder, or the URL it is served from.
    pub log: String,
    pub trust: LogTrust,
    /// `OWNER/NAME`: entries of other repositories are counted, not judged.
    pub repo: String,
    /// The last checkpoint this monitor verified (`--state FILE`), advanced when nothing is flagged.
    pub state: Option<PathBuf>,
    /// The repository's own keys (its keys folder, revoked ones included): an entry signed by
    /// one of them is judged whatever repository its trusted comment names, since a thief
    /// holding the key chooses what the comment says.
    pub keys: Vec<crate::minisign::PublicKey>,
}

/// One entry as the monitor judged it.
#[derive(Debug, Serialize)]
pub(crate) struct EntryVerdict {
    pub(crate) index: u64,
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: crate::minisign::KeyId,
    pub(crate) tag: Option<String>,
    pub(crate) run: Option<String>,
    /// Empty: a release run of the repository made it, and the release holds what it signed.
    pub(crate) problems: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct MonitorReport {
    pub(crate) log: String,
    pub(crate) repo: String,
    /// The entries read: `from` (the size last seen) up to `size`.
    pub(crate) from: u64,
    pub(crate) size: u64,
    pub(crate) entries: Vec<EntryVerdict>,
    /// Entries of other repositories, passed over.
    pub(crate) other_repositories: u64,
    /// The log itself failed: a fork, a bad signature.
    pub(crate) problem: Option<String>,
}

impl MonitorReport {
    pub fn exit_code(&self) -> u8 {
        u8::from(self.problem.is_some() || self.entries.iter().any(|e| !e.problems.is_empty()))
    }
}

/// Monitors the log of `req` against GitHub: live, recording GitHub's answers (`--record`), or
/// replaying them (`--snapshot`, no network but the log's own URL, if it has one).
pub fn monitor(from: &ReleaseSource<'_>, req: &MonitorRequest) -> Result<MonitorReport> {
    match from {
        ReleaseSource::Live(session) => {
            let got = session.block_on(monitor_with(session.api(), req));
            session.check_api()?;
            got
        }
        ReleaseSource::Record(session, dir) => {
            let recorder = Recorder::new(session.api());
            let got = session.block_on(monitor_with(&recorder, req));
            session.check_api()?;
            recorder.save(dir)?;
            got
        }
        ReleaseSource::Snapshot(dir) => {
            let source = SnapshotSource { dir: dir.clone() };
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::Usage(format!("starting the async runtime: {e}")))?;
            runtime.block_on(monitor_with(&source, req))
        }
    }
}

fn failed(report: &mut MonitorReport, e: LogError) -> Result<()> {
    match e {
        LogError::Input(e) => Err(e),
        LogError::Failed(why) => {
            report.problem = Some(why.to_string());
            Ok(())
        }
    }
}

pub(crate) async fn monitor_with<S: ApiSource>(
    source: &S,
    req: &MonitorRequest,
) -> Result<MonitorReport> {
    let boxed = crate::log::http::open(&req.log, "the log")?;
    let store = boxed.as_ref();
    let mut report = MonitorReport {
        log: req.log.clone(),
        repo: req.repo.clone(),
        from: 0,
        size: 0,
        entries: Vec::new(),
        other_repositories: 0,
        problem: None,
    };
    let current = match tree::read_checkpoint(store, &req.trust.policy) {
        Ok(cp) => cp,
        Err(e) => return failed(&mut report, e).map(|_| report),
    };
    report.size = current.size;
    let last = match &req.state {
        Some(path) if std::fs::symlink_metadata(path).is_ok() => {
            let bytes = guarded::read_small_file(path, MAX_CHECKPOINT_BYTES, "a checkpoint")?;
            let mut policy = req.trust.policy.clone();
            policy.threshold = 0;
            match tree::checked_checkpoint(bytes.as_bytes(), &path.display().to_string(), &policy) {
                Ok(cp) => Some(cp),
                Err(e) => return failed(&mut report, e).map(|_| report),
            }
        }
        _ => None,
    };
    if let Some(last) = &last {
        report.from = last.size;
        if let Err(e) = tree::check_consistency(store, last, &current) {
            failed(&mut report, e)?;
            return Ok(report);
        }
    }
    judge_entries(source, req, store, &current, &mut report).await?;
    if let (Some(path), 0) = (&req.state, report.exit_code()) {
        atomic::write_atomic(path, &current.note, 0o644, true)?;
    }
    Ok(report)
}

/// Judges the entries from `report.from` on, with what the earlier entries logged.
async fn judge_entries<S: ApiSource>(
    source: &S,
    req: &MonitorRequest,
    store: &dyn Store,
    current: &VerifiedCheckpoint,
    report: &mut MonitorReport,
) -> Result<()> {
    // The files a release run's entry backs: a co-signature of one (same bytes, name, tag and
    // commit) is not news. Entries before `from` passed an earlier run of the monitor.
    let mut backed: Vec<Logged> = Vec::new();
    // Every entry's file, to see one signed again for another tag or commit (a rollback).
    let mut logged: Vec<Logged> = Vec::new();
    let mut cosigners: Vec<(usize, Entry)> = Vec::new();
    for (index, entry) in new_entries(store, current, 0)? {
        let entry = match entry {
            Ok(entry) => entry,
            Err(why) if index >= report.from => {
                report.problem.get_or_insert(why);
                continue;
            }
            Err(_) => continue,
        };
        let this = Logged::of(&entry, index);
        if index < report.from {
            if entry
                .signature
                .trusted_comment
                .run()
                .ok()
                .flatten()
                .is_some()
            {
                backed.push(this.clone());
            }
            logged.push(this);
            continue;
        }
        let rollback = rolled_back(&logged, &this);
        logged.push(this.clone());
        let tc = &entry.signature.trusted_comment;
        let repo = tc.value("repo").ok().flatten().map(str::to_string);
        let elsewhere = repo
            .as_deref()
            .filter(|r| !r.eq_ignore_ascii_case(&req.repo));
        match elsewhere {
            // Our key, another repository's name: no release run of ours can back it.
            Some(other) if req.keys.contains(&entry.key) => {
                report.entries.push(EntryVerdict {
                    index,
                    key_id: entry.key.key_id,
                    tag: tc.value("tag").ok().flatten().map(str::to_string),
                    run: tc.run().ok().flatten().map(|b| b.to_string()),
                    problems: vec![format!(
                        "signed by key {} of {}'s keys folder for another repository, {}: a release key used outside its repository (a stolen key, or a key shared between repositories)",
                        entry.key.key_id, req.repo, other
                    )],
                });
            }
            Some(_) => report.other_repositories += 1,
            None => {
                let mut verdict = judge_entry(source, &req.repo, index, &entry).await?;
                if verdict.problems.is_empty() {
                    backed.push(this);
                }
                cosigners.push((report.entries.len(), entry));
                verdict.problems.extend(rollback);
                report.entries.push(verdict);
            }
        }
    }
    for (at, entry) in &cosigners {
        if report.entries[*at]
            .problems
            .iter()
            .any(|p| p.contains("a rollback"))
        {
            continue;
        }
        cosigns(&mut report.entries[*at], entry, &backed, &req.keys);
    }
    Ok(())
}

/// An entry as the monitor reads it: parsed, or why it is not one.
type ReadEntry = std::result::Result<Entry, String>;

/// The entries `from..` of the tree of `cp`, each checked against its leaf hash.
fn new_entries(
    store: &dyn Store,
    cp: &VerifiedCheckpoint,
    from: u64,
) -> Result<Vec<(u64, ReadEntry)>> {
    let tiles = Tiles::new(store);
    let mut out = Vec::new();
    tree::checked_entries(store, &tiles, cp, from, |index, bytes| {
        // In the tree, signed by the log key, yet not an entry: the log's fault, flagged.
        let entry = Entry::parse(bytes).map_err(|e| {
            format!(
                "entry {index} of the log is not a release entry ({e}): whoever holds the log key appended it"
            )
        });
        out.push((index, entry));
    })
    .map_err(|e| match e {
        LogError::Input(e) => e,
        LogError::Failed(why) => Error::Refused(why.to_string()),
    })?;
    Ok(out)
}

/// A co-signature (a maintainer's `sign --cosign --log`, bound to no run) of a file an entry of
/// a release run backs, by a key of the repository's keys folder, is that release's: not news.
/// Only for the same bytes, name, tag, commit and version.
fn cosigns(
    verdict: &mut EntryVerdict,
    entry: &Entry,
    backed: &[Logged],
    keys: &[crate::minisign::PublicKey],
) {
    let unbound = entry
        .signature
        .trusted_comment
        .run()
        .ok()
        .flatten()
        .is_none();
    let this = Logged::of(entry, verdict.index);
    let first = backed
        .iter()
        .find(|b| b.sha256 == this.sha256 && b.file == this.file && b.same_release(&this));
    if let (true, Some(b)) = (unbound && keys.contains(&entry.key), first) {
        verdict.problems.clear();
        verdict.run = Some(format!("co-signs entry {}", b.index));
    }
}

/// Whether a release run of `repo` made `entry`, by GitHub's records.
async fn judge_entry<S: ApiSource>(
    source: &S,
    repo: &str,
    index: u64,
    entry: &Entry,
) -> Result<EntryVerdict> {
    let tc = &entry.signature.trusted_comment;
    let tag = tc.value("tag").ok().flatten().map(str::to_string);
    let commit = tc.value("commit").ok().flatten().map(str::to_string);
    let timestamp = tc
        .value("timestamp")
        .ok()
        .flatten()
        .and_then(|t| t.parse().ok());
    let mut verdict = EntryVerdict {
        index,
        key_id: entry.key.key_id,
        tag: tag.clone(),
        run: None,
        problems: Vec::new(),
    };
    let binding = match tc.run() {
        Ok(Some(b)) => b,
        Ok(None) => {
            verdict.problems.push("its trusted comment binds no workflow run: signed outside a release run (a laptop, or a stolen key)".into());
            return Ok(verdict);
        }
        Err(why) => {
            verdict
                .problems
                .push(format!("its run binding does not parse: {why}"));
            return Ok(verdict);
        }
    };
    verdict.run = Some(binding.to_string());
    let Some(tag) = tag else {
        verdict
            .problems
            .push("its trusted comment binds no tag: no release can back it".into());
        return Ok(verdict);
    };
    // With the binding's environment, its deployments too (the protection rules that let it run).
    let environment = binding.environment.clone();
    let evidence = crate::github::runs::evidence(source, repo, &binding, environment.as_deref())
        .await
        .map_err(|e| Error::Api(e.to_string()))?;
    let signed = Signed {
        binding: &binding,
        timestamp,
        commit: commit.as_deref(),
        repo,
        tag: &tag,
    };
    verdict
        .problems
        .extend(judge_run(&signed, &evidence, &RunPolicy::default()));
    match crate::github::releases::by_tag_if_any(source, repo, &tag).await? {
        None => verdict
            .problems
            .push(format!("{repo} has no release {tag}")),
        Some((release, _)) => match release.assets.iter().find(|a| a.name == entry.file) {
            None => verdict
                .problems
                .push(format!("release {tag} has no {}", entry.file)),
            Some(asset) => {
                let digest = match &asset.digest {
                    Some(d) => d.clone(),
                    None => {
                        let bytes =
                            crate::github::releases::asset_bytes(source, repo, asset, 256 << 20)
                                .await
                                .map_err(|e| Error::Api(e.to_string()))?;
                        crate::util::to_hex(&crate::minisign::hash::hash_bytes(&bytes).sha256)
                    }
                };
                let logged = crate::util::to_hex(&entry.sha256);
                if digest != logged {
                    verdict.problems.push(format!(
                        "release {tag}'s {} has SHA-256 {digest}, the entry signed {logged}",
                        entry.file
                    ));
                }
            }
        },
    }
    Ok(verdict)
}
