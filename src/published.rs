//! A published release, read through `github::releases` and judged by `verdict::release`: the
//! one path `warden verify --release`, the audit's release check and `audit --org` take, so that
//! they read the same records the same way and cannot come to different answers. How much of
//! the release is read is the only difference ([`Depth`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Reason, Result};
use crate::github::api::ApiSource;
use crate::github::records::AssetDigests;
use crate::github::releases::{self, Asset, Release, ReleaseSource};
use crate::minisign::hash::Progress;
use crate::minisign::names::{cosigned_file, file_kind, PROOF_SUFFIX, SIGNATURE_SUFFIX};
use crate::trust::binding::ReleaseIdentity;
use crate::trust::signer::{Cause, Rejected};
use crate::trust::TrustedKeys;
use crate::verdict::evidence::{
    Entry, Evidence, FileBytes, InputKind, Judgement, Needs, Published,
};
use crate::verdict::release::{self as verdict, ReleaseEvidence, ReleaseVerdict};
use crate::verdict::{VerifyOptions, VerifyReport};

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

    fn dir(&self) -> PathBuf {
        match self {
            Depth::Download { dir, .. } => dir.to_path_buf(),
            _ => PathBuf::new(),
        }
    }
}

/// What is known of the release before anything is read: its identity, GitHub's records of each
/// asset, and its assets as a folder (GitHub's digest standing for an asset's bytes until they
/// are read; the audit, which reads no asset but the signed files, knows nothing more of one
/// without a digest).
fn evidence(
    (repo, release, commit): (&str, &Release, Option<&str>),
    depth: &Depth<'_>,
) -> ReleaseEvidence {
    let dir = depth.dir();
    let mut folder = Evidence {
        inputs: vec![(dir.clone(), InputKind::Folder)],
        published: Some(Published {
            assets: release.assets.iter().map(|a| a.name.clone()).collect(),
            downloading: matches!(depth, Depth::Download { .. }),
            digests: release
                .assets
                .iter()
                .filter_map(|a| {
                    let d = a.digest.as_deref().and_then(crate::util::from_hex::<32>)?;
                    Some((a.name.clone(), d))
                })
                .collect(),
            immutable: release.immutable,
        }),
        ..Evidence::default()
    };
    let mut entries = Vec::new();
    for a in &release.assets {
        let path = dir.join(&a.name);
        folder.present.insert(path.clone());
        entries.push(Entry {
            path: path.clone(),
            name: Some(a.name.clone()),
            is_dir: false,
            kind: file_kind(&a.name),
        });
        // The audit reads no asset but the signed files: GitHub's digest is all it knows of
        // the others. A deeper read reads them once the list is trusted (the verdict asks).
        if let Depth::Signatures = depth {
            let bytes = match a.digest.as_deref().and_then(crate::util::from_hex::<32>) {
                Some(d) => FileBytes::Sha256Only(d),
                None => FileBytes::NotRead,
            };
            folder.bytes.insert(path, bytes);
        }
    }
    folder.entries.insert(dir, entries);
    ReleaseEvidence {
        identity: ReleaseIdentity {
            tag: release.tag.clone(),
            repo: repo.to_string(),
            commit: commit.map(str::to_string),
        },
        assets: release.assets.iter().map(Asset::record).collect(),
        folder,
        runs: BTreeMap::new(),
    }
}

/// Reads the release `release` of `repo` (its tag naming `commit`, when that could be read) as
/// deep as `depth` says, and judges it with `keys` and `opts`: the small signed files first,
/// then what the verdict asks for (the runs its counted signatures name, the assets it covers,
/// the log's records), until it is made. A read that fails is an error, never a pass.
pub(crate) async fn judge<S: ApiSource>(
    source: &S,
    (repo, release, commit): (&str, &Release, Option<&str>),
    (keys, opts): (&TrustedKeys, &VerifyOptions),
    depth: &Depth<'_>,
) -> Result<ReleaseVerdict> {
    let mut ev = evidence((repo, release, commit), depth);
    ev.folder.attestations.sources = crate::attest::bundle::read_files(&opts.attest.files)?;
    let (small, rest) = split_small(release, keys, opts);
    read_small(source, repo, &small, depth, &mut ev.folder).await?;
    let dir = depth.dir();
    for a in release
        .assets
        .iter()
        .filter(|a| unread_signature(a, &small))
    {
        ev.folder.unread.insert(dir.join(&a.name));
    }
    let requirements = crate::verdict::file::log_requirements(opts, keys);
    let mut logs = crate::release::log_reader::LogReader::new(requirements);
    let mut rest_read = false;
    let mut asked: Option<String> = None;
    loop {
        let needs = match verdict::judge(&ev, keys, opts)? {
            Judgement::Done(v) => return Ok(v),
            Judgement::Needs(needs) => needs,
        };
        // Each round reads what the last could not: the same question twice would never end.
        let question = format!("{needs:?}");
        if asked.as_ref() == Some(&question) {
            return Err(Error::Refused(format!(
                "internal error: the verdict asked again for what was read ({question})"
            )));
        }
        asked = Some(question);
        for (binding, environment) in &needs.runs {
            // A run that could not be read is the command's failure to read, never a verdict.
            let read = crate::github::runs::evidence(source, repo, binding, environment.as_deref())
                .await
                .map_err(|e| {
                    Error::Api(format!("reading {binding}, which the signature names: {e}"))
                })?;
            ev.runs.insert((binding.run_id, binding.attempt), read);
        }
        if !needs.bytes.is_empty() && !rest_read && depth.reads_everything() {
            // The list is trusted: the rest of the release is read, but what GitHub's digest
            // already shows replaced.
            rest_read = true;
            let replaced: BTreeSet<PathBuf> = verdict::replaced_by_digest(&ev, opts)
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            let rest: Vec<Asset> = rest
                .iter()
                .filter(|a| !replaced.contains(&dir.join(&a.name)))
                .cloned()
                .collect();
            read_rest(source, repo, &rest, depth, &mut ev.folder).await?;
        }
        answer_unreadable(&needs, (depth, &ev.assets), &mut ev.folder);
        logs.read(&needs.logs, &mut ev.folder)?;
        read_attestations(source, repo, &needs.attestations, &mut ev.folder).await;
    }
}

/// GitHub's attestations of each digest asked about, read at once (each answer is a source: the
/// bundles, or why they could not be had, which the verdict says as unverifiable).
async fn read_attestations<S: ApiSource>(
    source: &S,
    repo: &str,
    digests: &BTreeSet<[u8; 32]>,
    folder: &mut Evidence,
) {
    use futures::StreamExt as _;
    let answers: Vec<_> = futures::stream::iter(digests.iter().copied())
        .map(|d| async move {
            let read = crate::github::attestations::for_digest(source, repo, &d).await;
            (d, read)
        })
        .buffered(8)
        .collect()
        .await;
    for (digest, read) in answers {
        use crate::github::attestations::Answer;
        folder.attestations.asked.insert(digest);
        let shown = format!("sha256:{}", crate::util::to_hex(&digest));
        let read = match read {
            Ok(Answer::Bundles(b)) => Ok(b),
            Ok(Answer::NotRecorded) => {
                folder.attestations.not_recorded = true;
                continue;
            }
            Err(e) => Err(format!(
                "{e}; reading attestations needs {}",
                e.needs("`attestations: read` (fine-grained), or none on a public repository")
            )),
        };
        folder.attestations.sources.push((shown, read));
    }
}

/// What the verdict asked of an asset's bytes that reading the release did not give: the bytes
/// of a downloaded asset read whole (a legacy signature), GitHub's digest where it has one, else
/// said not to be had.
fn answer_unreadable(
    needs: &Needs,
    (depth, assets): (&Depth<'_>, &[crate::github::records::AssetRecord]),
    folder: &mut Evidence,
) {
    for (path, need) in &needs.bytes {
        let have = folder.bytes.get(path);
        let enough = match have {
            Some(FileBytes::Read(d, bytes)) => {
                (!need.whole || bytes.is_some()) && (!need.sha512 || d.sha512.is_some())
            }
            Some(FileBytes::Failed(_) | FileBytes::NotRead) => true,
            _ => false,
        };
        if enough {
            continue;
        }
        let digest = || {
            let name = path.file_name()?.to_str()?;
            assets.iter().find(|a| a.name == name)?.digest
        };
        let answer = match (depth, need.whole, have) {
            (Depth::Download { .. }, _, _) if need.whole || need.sha512 => reread(path, *need),
            (_, true, _) => FileBytes::Failed((
                Cause::Invalid,
                "a legacy signature is checked over the file's bytes, which were not downloaded"
                    .into(),
            )),
            (_, false, Some(FileBytes::Sha256Only(_))) => FileBytes::NotRead,
            (_, false, _) => digest().map_or(FileBytes::NotRead, FileBytes::Sha256Only),
        };
        folder.bytes.insert(path.clone(), answer);
    }
}

/// A downloaded asset read again for what its download did not take: its bytes whole (a legacy
/// signature is checked over them), or its SHA-512 (a SHA-512 list).
fn reread(path: &Path, need: crate::verdict::evidence::ByteNeed) -> FileBytes {
    use std::io::Read as _;
    let failed = |e: std::io::Error| {
        FileBytes::Failed((
            Cause::Unreadable,
            format!("reading {}: {e}", path.display()),
        ))
    };
    if !need.whole {
        return match crate::minisign::hash::hash_file(path, (false, true), None) {
            Ok(d) => FileBytes::Read(d, None),
            Err(e) => failed(e),
        };
    }
    let mut bytes = Vec::new();
    match crate::files::guarded::open_regular(path).and_then(|mut f| f.read_to_end(&mut bytes)) {
        Ok(_) => FileBytes::Read(
            crate::minisign::hash::hash_bytes_sha512(&bytes),
            Some(bytes),
        ),
        Err(e) => failed(e),
    }
}

/// The small files read first, and the rest: the layout's list and its signatures by keys known
/// here (with their log proofs when a log is required), or, where a signature sits beside each
/// file, every signature (each is judged before its file is read).
fn split_small(
    release: &Release,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> (Vec<Asset>, Vec<Asset>) {
    let layout = verdict::layout_of(release.assets.iter().map(|a| a.name.as_str()), opts);
    let known = keys.known_ids();
    let logged = !crate::verdict::file::log_requirements(opts, keys).is_empty();
    let per_file = layout.list.is_none();
    let names: BTreeSet<&str> = release.assets.iter().map(|a| a.name.as_str()).collect();
    let sums = layout.list.unwrap_or_default();
    let sums = sums.as_str();
    release.assets.iter().cloned().partition(|a| {
        let name = a.name.as_str();
        let signature = |name: &str| {
            (per_file && (name.ends_with(SIGNATURE_SUFFIX) || name.ends_with(".sig")))
                || crate::verdict::layout::signature_names(sums)
                    .iter()
                    .any(|s| s == name)
                || cosigned_file(name).is_some_and(|(f, id)| f == sums && known.contains(&id))
        };
        // With a log required, the proofs of the list's signatures are read with them.
        let proof = logged
            && name
                .strip_suffix(PROOF_SUFFIX)
                .is_some_and(|stem| signature(&format!("{stem}{SIGNATURE_SUFFIX}")));
        // A signature beside each file: the signed per-file checksums are lists, read first.
        let signed_sidecar = per_file
            && crate::verdict::layout::sidecar_subject(name).is_some()
            && crate::verdict::layout::signature_names(name)
                .iter()
                .any(|s| names.contains(s.as_str()));
        name == sums || signature(name) || proof || signed_sidecar
    })
}

/// A signature asset not read with the list: an artifact's own (read with the rest, when the
/// list verifies and everything is read), or a co-signature by a key unknown here (never
/// counted, never read).
fn unread_signature(a: &Asset, small: &[Asset]) -> bool {
    a.name.ends_with(SIGNATURE_SUFFIX) && !small.iter().any(|s| s.name == a.name)
}

/// A signature's (or proof's: `what`) text as read, or why it could not be, as the verdict says
/// it.
fn signature_text(
    path: &Path,
    bytes: std::result::Result<Vec<u8>, String>,
    what: &str,
) -> std::result::Result<String, Rejected> {
    bytes
        .and_then(|b| String::from_utf8(b).map_err(|_| format!("not {what} (not UTF-8)")))
        .map_err(|why| {
            (
                Cause::Unreadable,
                format!("reading {}: {why}", path.display()),
            )
        })
}

/// Reads the small files: downloaded into the folder (then read back, capped), or fetched into
/// memory.
async fn read_small<S: ApiSource>(
    source: &S,
    repo: &str,
    small: &[Asset],
    depth: &Depth<'_>,
    folder: &mut Evidence,
) -> Result<()> {
    let dir = depth.dir();
    if let Depth::Download { dir, progress } = depth {
        download_into(source, repo, small, (dir, *progress), folder).await?;
    }
    for a in small {
        let path = dir.join(&a.name);
        let cap = if a.name.ends_with(SIGNATURE_SUFFIX) {
            SIGNATURE_CAP
        } else if a.name.ends_with(PROOF_SUFFIX) {
            crate::log::proof::MAX_PROOF_BYTES
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
            let what = "a minisign signature or log proof";
            folder
                .texts
                .insert(path.clone(), signature_text(&path, bytes, what));
        } else {
            let downloaded = matches!(depth, Depth::Download { .. });
            if let (Ok(b), false) = (&bytes, downloaded) {
                let digests = crate::minisign::hash::hash_bytes(b);
                folder
                    .bytes
                    .insert(path.clone(), FileBytes::Read(digests, None));
            }
            let list =
                bytes.map(|b| (b.len() as u64 <= crate::verdict::folder::SUMS_CAP).then_some(b));
            folder.lists.insert(path, list.map_err(Reason::from));
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
    folder: &mut Evidence,
) -> Result<()> {
    let deadline = (
        releases::download_deadline as fn(u64) -> std::time::Duration,
        progress,
    );
    for (path, digests) in releases::download_counted(source, repo, assets, dir, deadline).await? {
        folder.bytes.insert(path, FileBytes::Read(digests, None));
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
    folder: &mut Evidence,
) -> Result<()> {
    match depth {
        Depth::Signatures => {}
        Depth::Download { dir, progress } => {
            download_into(source, repo, rest, (dir, *progress), folder).await?;
            for a in rest.iter().filter(|a| a.name.ends_with(SIGNATURE_SUFFIX)) {
                let path = dir.join(&a.name);
                let text = crate::files::guarded::read_text_inside(dir, &path, SIGNATURE_CAP)
                    .map_err(|e| e.to_string());
                folder.unread.remove(&path);
                let text = text.map_err(|why| {
                    (
                        Cause::Unreadable,
                        format!("reading {}: {why}", path.display()),
                    )
                });
                folder.texts.insert(path, text);
            }
        }
        Depth::Deep => {
            let dir = depth.dir();
            for a in rest {
                let path = dir.join(&a.name);
                if a.name.ends_with(SIGNATURE_SUFFIX) {
                    let bytes = releases::asset_bytes(source, repo, a, SIGNATURE_CAP)
                        .await
                        .map_err(|e| e.to_string());
                    folder.unread.remove(&path);
                    let text = signature_text(&path, bytes, "a minisign signature");
                    folder.texts.insert(path.clone(), text);
                } else if a.digest.is_none() || signed_on_its_own(a, rest) {
                    let bytes = releases::asset_digests(source, repo, a)
                        .await
                        .map_err(|e| Error::Api(format!("{}: {e}", a.name)))?;
                    let bytes = match bytes {
                        AssetDigests::Read(d) => FileBytes::Read(d, None),
                        AssetDigests::Sha256Only(d) => FileBytes::Sha256Only(d),
                    };
                    folder.bytes.insert(path, bytes);
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
    let layout = verdict::layout_of(release.assets.iter().map(|a| a.name.as_str()), opts);
    let list = layout.list.unwrap_or_default();
    let selected = |name: &str| {
        let base = name
            .strip_suffix(SIGNATURE_SUFFIX)
            .or_else(|| name.strip_suffix(".sig"))
            .unwrap_or(name);
        opts.only.as_ref().is_none_or(|g| g.is_match(base))
            || crate::verdict::folder::is_signed_list_file(name, &list)
            || base == list
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::records::AssetRecord;
    use crate::minisign::keys::generate;
    use crate::verdict::evidence::ByteNeed;

    fn asset(name: &str, digest: Option<[u8; 32]>) -> Asset {
        Asset {
            id: 1,
            name: name.into(),
            size: 10,
            digest: digest.map(|d| crate::util::to_hex(&d)),
            uploader: None,
            created_at: None,
            updated_at: None,
        }
    }

    /// The list and its signatures by keys known here are read first; everything else after.
    #[test]
    fn the_small_signed_files_are_read_first() {
        let known = generate(None).unwrap().public;
        let keys = TrustedKeys::only(known.clone());
        let names = [
            "SHA256SUMS".to_string(),
            "SHA256SUMS.minisig".into(),
            format!("SHA256SUMS.{}.minisig", known.key_id),
            "SHA256SUMS.0123456789ABCDEF.minisig".into(),
            "app".into(),
            "app.minisig".into(),
        ];
        let release = Release {
            id: 7,
            tag: "v1".into(),
            draft: false,
            prerelease: false,
            immutable: None,
            assets: names.iter().map(|n| asset(n, None)).collect(),
        };
        let opts = VerifyOptions {
            checksums_name: None,
            ..VerifyOptions::default()
        };
        let (small, rest) = split_small(&release, &keys, &opts);
        let names = |a: &[Asset]| a.iter().map(|a| a.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&small), names(&release.assets[..3]));
        assert_eq!(names(&rest), names(&release.assets[3..]));
        assert!(unread_signature(&rest[0], &small));
    }

    /// What the verdict asks of an asset the depth does not read: GitHub's digest once, then
    /// "not read"; the bytes themselves (a legacy signature) only from a download.
    #[test]
    fn an_unreadable_asset_is_answered_once_and_the_question_ends() {
        let assets = [AssetRecord {
            name: "app".into(),
            digest: Some([3; 32]),
            upload: None,
        }];
        let path = PathBuf::from("app");
        let mut folder = Evidence::default();
        let mut needs = Needs::default();
        needs.bytes.insert(path.clone(), ByteNeed::default());
        let depth = Depth::Deep;
        answer_unreadable(&needs, (&depth, &assets), &mut folder);
        assert!(matches!(folder.bytes.get(&path), Some(FileBytes::Sha256Only(d)) if *d == [3; 32]));
        answer_unreadable(&needs, (&depth, &assets), &mut folder);
        assert!(matches!(folder.bytes.get(&path), Some(FileBytes::NotRead)));
        let mut whole = Needs::default();
        whole.bytes.insert(
            PathBuf::from("lib"),
            ByteNeed {
                whole: true,
                sha512: false,
            },
        );
        answer_unreadable(&whole, (&Depth::Signatures, &assets), &mut folder);
        assert!(matches!(
            folder.bytes.get(Path::new("lib")),
            Some(FileBytes::Failed((Cause::Invalid, _)))
        ));
    }
}
