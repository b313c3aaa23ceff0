//! A published release, read through `github::releases` and judged by `release::verdict`: the
//! one path `warden verify --release`, the audit's release check and `audit --org` take, so that
//! they read the same records the same way and cannot come to different answers. How much of
//! the release is read is the only difference ([`Depth`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Reason, Result};
use crate::github::api::ApiSource;
use crate::github::releases::{self, Asset, Release, ReleaseSource};
use crate::release::binding::ReleaseIdentity;
use crate::release::hash::Progress;
use crate::release::names::PROOF_SUFFIX;
use crate::release::names::{cosigned_file, SIGNATURE_SUFFIX};
use crate::release::trusted_keys::TrustedKeys;
use crate::release::verdict::{self, ReleaseEvidence, ReleaseVerdict};
use crate::release::verify::{AssetBytes, Published, VerifyOptions, VerifyReport};

/// The most a checksum list or a signature of a published release may be: read whole, and kept
/// in a snapshot as one answer.
pub(crate) const LIST_CAP: u64 = crate::github::api::RECORDED_ASSET_CAP;
pub(crate) const SIGNATURE_CAP: u64 = 64 << 10;

/// How much of a release is read.
pub(crate) enum Depth<'a> {
    /// The checksum list and its signatures; every other asset is judged by GitHub's digest
    /// (the audit).
    Signatures,
    /// Every signature, and every asset without GitHub's digest hashed as it streams (never
    /// kept): `audit --deep`.
    Deep,
    /// Every asset downloaded into `dir` (`verify --release`), the signed list first: when it
    /// does not verify, nothing else is downloaded.
    Download {
        dir: &'a Path,
        progress: Option<&'a Progress>,
    },
}

impl Depth<'_> {
    fn reads_everything(&self) -> bool {
        !matches!(self, Depth::Signatures)
    }
}

/// Reads the release `release` of `repo` (its tag naming `commit`, when that could be read) as
/// deep as `depth` says, and
/// judges it with `keys` and `opts`. A read that fails is an error, never a pass.
pub(crate) async fn judge<S: ApiSource>(
    source: &S,
    (repo, release, commit): (&str, &Release, Option<&str>),
    (keys, opts): (&TrustedKeys, &VerifyOptions),
    depth: &Depth<'_>,
) -> Result<ReleaseVerdict> {
    let dir = match depth {
        Depth::Download { dir, .. } => dir.to_path_buf(),
        _ => PathBuf::new(),
    };
    let mut ev = ReleaseEvidence {
        identity: ReleaseIdentity {
            tag: release.tag.clone(),
            repo: repo.to_string(),
            commit: commit.map(str::to_string),
        },
        assets: release.assets.iter().map(Asset::record).collect(),
        published: Published {
            dir: dir.clone(),
            on_disk: matches!(depth, Depth::Download { .. }),
            assets: release.assets.iter().map(|a| a.name.clone()).collect(),
            ..Published::default()
        },
        runs: BTreeMap::new(),
    };
    ev.published.downloading = matches!(depth, Depth::Download { .. });
    // GitHub's digest stands for an asset's bytes until they are read.
    for a in &ev.assets {
        if let Some(d) = a.digest {
            ev.published
                .bytes
                .insert(dir.join(&a.name), AssetBytes::Sha256Only(d));
        }
    }
    let (small, rest) = split_small(release, keys, opts);
    read_small(source, repo, &small, depth, &mut ev.published).await?;
    for a in release
        .assets
        .iter()
        .filter(|a| unread_signature(a, &small))
    {
        ev.published.unread.insert(dir.join(&a.name));
    }
    // The list first, judged once: whether it is trusted decides what else is read.
    let release_opts = VerifyOptions {
        release: Some(ev.identity.clone()),
        ..opts.clone()
    };
    let list = crate::release::verify::judge_list(&ev.published, &release_opts, keys);
    let list_trusted = list.0.status == crate::release::verify::ArtifactStatus::Ok;
    for (binding, environment) in verdict::runs_to_read(&list.0, keys) {
        // A run that could not be read is the command's failure to read, never a verdict.
        let read = crate::github::runs::evidence(source, repo, &binding, environment.as_deref())
            .await
            .map_err(|e| Error::Api(format!("reading {binding}, which the signature names: {e}")))?;
        ev.runs.insert((binding.run_id, binding.attempt), Ok(read));
    }
    ev.published.judged_list = Some(list);
    if list_trusted && depth.reads_everything() {
        let replaced: BTreeSet<String> = verdict::replaced(&ev, opts);
        let rest: Vec<Asset> = rest
            .into_iter()
            .filter(|a| !replaced.contains(&a.name))
            .collect();
        read_rest(source, repo, &rest, depth, &mut ev.published).await?;
    }
    verdict::judge(&ev, keys, opts)
}

/// The small files read first (the list and its signatures by keys known here), and the rest.
fn split_small(
    release: &Release,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> (Vec<Asset>, Vec<Asset>) {
    let sums = opts.checksums_name.as_str();
    let known = keys.known_ids();
    let logged = !crate::release::verify::log_requirements(opts, keys).is_empty();
    release.assets.iter().cloned().partition(|a| {
        let name = a.name.as_str();
        let signature = |name: &str| {
            name.strip_suffix(SIGNATURE_SUFFIX) == Some(sums)
                || cosigned_file(name).is_some_and(|(f, id)| f == sums && known.contains(&id))
        };
        // With a log required, the proofs of the list's signatures are read with them.
        let proof = logged
            && name
                .strip_suffix(PROOF_SUFFIX)
                .is_some_and(|stem| signature(&format!("{stem}{SIGNATURE_SUFFIX}")));
        name == sums || signature(name) || proof
    })
}

/// A signature asset not read with the list: an artifact's own (read with the rest, when the
/// list verifies and everything is read), or a co-signature by a key unknown here (never
/// counted, never read).
fn unread_signature(a: &Asset, small: &[Asset]) -> bool {
    a.name.ends_with(SIGNATURE_SUFFIX) && !small.iter().any(|s| s.name == a.name)
}

/// Reads the small files: downloaded into the folder (then read back, capped), or fetched into
/// memory.
async fn read_small<S: ApiSource>(
    source: &S,
    repo: &str,
    small: &[Asset],
    depth: &Depth<'_>,
    published: &mut Published,
) -> Result<()> {
    let dir = published.dir.clone();
    if let Depth::Download { dir, progress } = depth {
        download_into(source, repo, small, (dir, *progress), published).await?;
    }
    for a in small {
        let path = dir.join(&a.name);
        let cap = if a.name.ends_with(SIGNATURE_SUFFIX) {
            SIGNATURE_CAP
        } else if a.name.ends_with(PROOF_SUFFIX) {
            crate::release::tlog::proof::MAX_PROOF_BYTES
        } else {
            LIST_CAP
        };
        let bytes = match depth {
            Depth::Download { .. } => crate::files::guarded::open_regular(&path)
                .and_then(|f| crate::files::guarded::read_at_most(f, cap))
                .map_err(|e| e.to_string())
                .and_then(|b| b.ok_or_else(|| format!("larger than {cap} bytes"))),
            _ => releases::asset_bytes(source, repo, a, cap)
                .await
                .map_err(|e| e.to_string()),
        };
        if a.name.ends_with(SIGNATURE_SUFFIX) || a.name.ends_with(PROOF_SUFFIX) {
            let text = bytes.and_then(|b| {
                String::from_utf8(b)
                    .map_err(|_| "not a minisign signature or log proof (not UTF-8)".into())
            });
            published
                .signatures
                .insert(path, text.map_err(Reason::from));
        } else {
            if let (Ok(b), false) = (&bytes, published.on_disk) {
                published
                    .bytes
                    .insert(path, AssetBytes::Read(crate::release::hash::hash_bytes(b)));
            }
            published.list = Some(bytes.map_err(Reason::from));
        }
    }
    Ok(())
}

/// Downloads `assets` into `dir` (each within its deadline), keeping the digests taken as they
/// arrived.
async fn download_into<S: ApiSource>(
    source: &S,
    repo: &str,
    assets: &[Asset],
    (dir, progress): (&Path, Option<&Progress>),
    published: &mut Published,
) -> Result<()> {
    let deadline = (
        releases::download_deadline as fn(u64) -> std::time::Duration,
        progress,
    );
    for (path, digests) in releases::download_counted(source, repo, assets, dir, deadline).await? {
        published.bytes.insert(path, AssetBytes::Read(digests));
    }
    Ok(())
}

/// Reads the other assets: downloaded (`verify --release`), or, deep, those without GitHub's
/// digest hashed as they stream.
async fn read_rest<S: ApiSource>(
    source: &S,
    repo: &str,
    rest: &[Asset],
    depth: &Depth<'_>,
    published: &mut Published,
) -> Result<()> {
    match depth {
        Depth::Signatures => {}
        Depth::Download { dir, progress } => {
            download_into(source, repo, rest, (dir, *progress), published).await?;
            for a in rest.iter().filter(|a| a.name.ends_with(SIGNATURE_SUFFIX)) {
                let path = dir.join(&a.name);
                let text = crate::files::guarded::read_text_inside(dir, &path, SIGNATURE_CAP)
                    .map_err(|e| e.to_string());
                published.unread.remove(&path);
                published
                    .signatures
                    .insert(path, text.map_err(Reason::from));
            }
        }
        Depth::Deep => {
            for a in rest {
                let path = published.dir.join(&a.name);
                if a.name.ends_with(SIGNATURE_SUFFIX) {
                    let text = releases::asset_bytes(source, repo, a, SIGNATURE_CAP)
                        .await
                        .map_err(|e| e.to_string())
                        .and_then(|b| {
                            String::from_utf8(b)
                                .map_err(|_| "not a minisign signature (not UTF-8)".into())
                        });
                    published.unread.remove(&path);
                    published
                        .signatures
                        .insert(path, text.map_err(Reason::from));
                } else if a.digest.is_none() || signed_on_its_own(a, rest) {
                    let bytes = releases::asset_digests(source, repo, a)
                        .await
                        .map_err(|e| Error::Api(format!("{}: {e}", a.name)))?;
                    published.bytes.insert(path, bytes);
                }
            }
        }
    }
    Ok(())
}

/// Whether an asset has a signature of its own among `assets`: checking it needs the bytes.
fn signed_on_its_own(a: &Asset, assets: &[Asset]) -> bool {
    let sig = format!("{}{SIGNATURE_SUFFIX}", a.name);
    assets.iter().any(|s| s.name == sig)
}

/// What `warden verify --release` is asked.
#[derive(Debug)]
pub struct ReleaseRequest<'a> {
    pub repo: String,
    pub tag: String,
    /// Where the assets go (kept), or `None` for a temporary folder (removed).
    pub out: Option<PathBuf>,
    pub from: ReleaseSource<'a>,
    pub opts: VerifyOptions,
    /// Bytes downloaded so far, and the total to download, for a progress bar.
    pub progress: Option<(Progress, Progress)>,
}

/// Where a recording keeps the repository's policy and revocations, inside the snapshot.
const REPO_KEYS: &str = "repo-keys";

/// `warden verify --release`: the repository's `keys/policy.toml` and `keys/revoked/` applied
/// on top of `keys` (both only remove trust), the release read and downloaded (the signed list
/// first), and judged.
pub fn verify_release(req: &ReleaseRequest<'_>, keys: TrustedKeys) -> Result<VerifyReport> {
    refuse_contradictions(&req.opts, &req.tag, &req.repo)?;
    let mut notes = Vec::new();
    let repo_keys = RepoKeys::read(&req.from, &req.repo, &mut notes)?;
    let keys = match repo_keys.dir() {
        Some(dir) => {
            let origin = format!("keys/policy.toml of {}", req.repo);
            keys.apply_policy_from(dir, &origin)?
                .apply_revocations(dir)?
        }
        None => keys,
    };
    let (dir, _temp) = download_folder(req.out.as_deref())?;
    let depth = Depth::Download {
        dir: &dir,
        progress: req.progress.as_ref().map(|(p, _)| p),
    };
    let (release, commit, verdict) = match &req.from {
        ReleaseSource::Live(session) => {
            let got = session.block_on(read_and_judge(session.api(), req, &keys, &depth));
            session.check_api()?;
            got?
        }
        ReleaseSource::Record(session, out) => {
            let recorder = crate::github::snapshot::Recorder::new(session.api());
            let got = session.block_on(read_and_judge(&recorder, req, &keys, &depth));
            session.check_api()?;
            recorder.save(out)?;
            got?
        }
        ReleaseSource::Snapshot(snapshot) => {
            let source = crate::github::snapshot::SnapshotSource {
                dir: snapshot.clone(),
            };
            // The snapshot answers at once; downloads still hand their bytes to a writer task.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .map_err(|e| Error::Usage(format!("starting the async runtime: {e}")))?;
            runtime.block_on(read_and_judge(&source, req, &keys, &depth))?
        }
    };
    let mut report = verdict.report;
    report
        .notes
        .splice(0..0, release_notes(&release, &commit, &req.repo));
    report.warnings.splice(0..0, notes);
    // The repository's statements were read into a folder that is gone once the command ends.
    if let RepoKeys::Temp(t) = &repo_keys {
        report.rename_folder(t.path(), &format!("{}:keys/", req.repo));
    }
    if req.out.is_none() {
        report.strip_folder(&dir);
    }
    Ok(report)
}

async fn read_and_judge<S: ApiSource>(
    source: &S,
    req: &ReleaseRequest<'_>,
    keys: &TrustedKeys,
    depth: &Depth<'_>,
) -> Result<(Release, String, ReleaseVerdict)> {
    let (release, commit) = releases::by_tag(source, &req.repo, &req.tag).await?;
    let opts = &req.opts;
    // `--only`: the listed files it selects, and the list with its signatures.
    let selected = |name: &str| {
        let base = name.strip_suffix(SIGNATURE_SUFFIX).unwrap_or(name);
        opts.only.as_ref().is_none_or(|g| g.is_match(base))
            || crate::release::verify::is_signed_list_file(name, &opts.checksums_name)
    };
    let mut chosen = release.clone();
    chosen.assets.retain(|a| selected(&a.name));
    if let Some((_, total)) = &req.progress {
        let bytes: u64 = chosen.assets.iter().map(|a| a.size).sum();
        total.store(bytes, std::sync::atomic::Ordering::Relaxed);
    }
    let verdict = judge(
        source,
        (&req.repo, &chosen, Some(&commit)),
        (keys, opts),
        depth,
    )
    .await?;
    Ok((release, commit, verdict))
}

/// `--expect-tag` and `--expect-repo` that name another release than `--release`/`--repo`
/// can never both hold: a usage error, said before anything is downloaded.
fn refuse_contradictions(opts: &VerifyOptions, tag: &str, repo: &str) -> Result<()> {
    if let Some(expected) = opts.expect_tag.as_deref().filter(|t| *t != tag) {
        return Err(Error::Usage(format!(
            "--expect-tag {expected} contradicts --release {tag}: a release is verified for its own tag"
        )));
    }
    if let Some(expected) = opts
        .expect_repo
        .as_deref()
        .filter(|r| !r.eq_ignore_ascii_case(repo))
    {
        return Err(Error::Usage(format!(
            "--expect-repo {expected} contradicts --repo {repo}: a release is verified for its own repository"
        )));
    }
    Ok(())
}

/// The folder a release is downloaded into: `--out` (new or empty: whatever is there would be
/// judged as the release's own), or a temporary one, removed when the command ends.
fn download_folder(out: Option<&Path>) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
    match out {
        Some(d) => {
            let occupied = std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some());
            if occupied {
                return Err(Error::Usage(format!(
                    "--out {}: not empty; give a new or empty folder (its files would be judged as the release's)",
                    d.display()
                )));
            }
            std::fs::create_dir_all(d).map_err(|e| Error::io("creating", d, e))?;
            Ok((d.to_path_buf(), None))
        }
        None => {
            let temp = tempfile::Builder::new()
                .prefix("warden-release-")
                .tempdir()
                .map_err(|e| {
                    Error::io("creating a temporary folder in", std::env::temp_dir(), e)
                })?;
            Ok((temp.path().to_path_buf(), Some(temp)))
        }
    }
}

/// The repository's `keys/revoked/` and `keys/policy.toml`, read for `verify --release`: into a
/// temporary folder, or into the snapshot a recording writes (`<snapshot>/repo-keys/`), or from
/// the one a replay reads.
enum RepoKeys {
    Temp(tempfile::TempDir),
    Folder(PathBuf),
    None,
}

impl RepoKeys {
    fn read(from: &ReleaseSource<'_>, repo: &str, notes: &mut Vec<String>) -> Result<Self> {
        let temp = || {
            tempfile::Builder::new()
                .prefix("warden-revoked-")
                .tempdir()
                .map_err(|e| Error::io("creating a temporary folder in", std::env::temp_dir(), e))
        };
        Ok(match from {
            ReleaseSource::Live(session) => {
                let temp = temp()?;
                releases::repo_revocations(session, repo, temp.path())?;
                releases::repo_policy(session, repo, temp.path())?;
                RepoKeys::Temp(temp)
            }
            ReleaseSource::Record(session, snap) => {
                let dir = snap.join(REPO_KEYS);
                std::fs::create_dir_all(dir.join("revoked"))
                    .map_err(|e| Error::io("creating", &dir, e))?;
                releases::repo_revocations(session, repo, &dir)?;
                releases::repo_policy(session, repo, &dir)?;
                RepoKeys::Folder(dir)
            }
            ReleaseSource::Snapshot(snap) => {
                let dir = snap.join(REPO_KEYS);
                if dir.join("revoked").is_dir() {
                    RepoKeys::Folder(dir)
                } else {
                    notes.push(format!(
                        "{} holds no record of {repo}'s keys/revoked/ (recorded by an older warden): only local revocations apply",
                        snap.display()
                    ));
                    RepoKeys::None
                }
            }
        })
    }

    /// The folder holding `revoked/`, if any.
    fn dir(&self) -> Option<&Path> {
        match self {
            RepoKeys::Temp(t) => Some(t.path()),
            RepoKeys::Folder(d) => Some(d),
            RepoKeys::None => None,
        }
    }
}

/// What the user should know about the release itself.
fn release_notes(release: &Release, commit: &str, repo: &str) -> Vec<String> {
    let mut notes = vec![format!(
        "release {} of {repo}: {} assets, tag at commit {}{}{}",
        release.tag,
        release.assets.len(),
        commit,
        if release.draft { ", a draft" } else { "" },
        if release.prerelease {
            ", a prerelease"
        } else {
            ""
        },
    )];
    notes.push(match release.immutable {
        Some(true) => {
            "GitHub says the release is immutable (its tag and assets cannot change)".into()
        }
        Some(false) => {
            "GitHub says the release is not immutable: its assets and tag can still change".into()
        }
        None => "the API does not say whether the release is immutable".into(),
    });
    notes
}
