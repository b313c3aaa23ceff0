//! `warden verify`: load the trusted keys, verify (files, folders, or a published release),
//! report.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use release_warden::github::releases::{self, ReleaseSource};
use release_warden::release::binding::ReleaseIdentity;
use release_warden::release::hash::Progress;
use release_warden::release::trusted_keys::TrustedKeys;
use release_warden::release::verify::{verify, Only, VerifyOptions};

use crate::cli::VerifyArgs;
use crate::context::Context;
use crate::progress::ProgressDisplay;

/// The keys `verify` trusts: the repository's (`--keys-from-repo`, downloaded into the folder
/// returned with them), the keys folder, or pinned `--public-key` files (following rotations).
fn trusted_keys(
    args: &VerifyArgs,
    ctx: &Context,
    notes: &mut Vec<String>,
) -> anyhow::Result<(TrustedKeys, Option<tempfile::TempDir>)> {
    if args.keys_from_repo {
        let repo = args.repo.as_deref().unwrap_or_default();
        let dir = tempfile::Builder::new()
            .prefix("warden-keys-")
            .tempdir()
            .context("creating a temporary folder")?;
        let session = ctx.connect(args.api_url.as_deref(), ctx.token.as_ref())?;
        let names = releases::repo_keys(&session, repo, dir.path())?;
        notes.push(format!(
            "trusting {} from keys/ of {repo}'s default branch (--keys-from-repo): this trusts the repository itself; it still catches a tampered mirror or asset",
            names.join(", ")
        ));
        let keys = TrustedKeys::load_dir(dir.path())?;
        return Ok((keys, Some(dir)));
    }
    let here = std::path::Path::new("minisign.pub");
    let keys = if args.public_key.is_empty()
        && args.keys_dir == std::path::Path::new("keys")
        && !args.keys_dir.exists()
        && here.is_file()
    {
        // As minisign: with nothing given and no keys/ here, ./minisign.pub.
        notes.push("no keys/ folder here: trusting ./minisign.pub".into());
        TrustedKeys::load_files(&[here.to_path_buf()])?
    } else if args.public_key.is_empty() {
        TrustedKeys::load_dir(&args.keys_dir)
            .context("loading trusted keys (pass --public-key FILE or --keys-dir DIR)")?
    } else {
        let pinned = TrustedKeys::load_files(&args.public_key)?;
        if args.follow_rotations {
            pinned.follow_rotations(&args.keys_dir)?
        } else {
            pinned
        }
    };
    Ok((keys, None))
}

/// Where a recording keeps the repository's revocation statements, inside the snapshot.
const REPO_KEYS: &str = "repo-keys";

pub(crate) fn run(args: VerifyArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut notes = Vec::new();
    let (mut keys, _repo_keys) = trusted_keys(&args, ctx, &mut notes)?;
    if let Some(dir) = &args.revocations {
        if !dir.is_dir() {
            anyhow::bail!("--revocations {}: not a folder", dir.display());
        }
        keys = keys.apply_statements(dir)?;
    }
    let mut opts = VerifyOptions {
        inputs: args.paths.iter().chain(&args.file).cloned().collect(),
        expect_tag: args.expect_tag.clone(),
        expect_repo: args.expect_repo.clone(),
        expect_commit: args.expect_commit.clone(),
        release: None,
        allow_legacy: args.allow_legacy,
        allow_dry_run: args.allow_dry_run,
        allow_unlisted: args.allow_unlisted,
        allow_no_checksums: args.allow_no_checksums,
        allow_unbound: args.allow_unbound,
        only: Only::new(&args.only)?,
        known_digests: Default::default(),
        preset_failures: Default::default(),
        signature_file: args.signature_file.clone(),
        checksums_name: args.checksums.clone(),
        progress: Some(Progress::default()),
    };
    // A published release: downloaded, then verified like a folder, bound to its tag, its
    // repository and the commit the tag names now.
    let fetched = match (&args.release, &args.repo) {
        (Some(tag), Some(repo)) => {
            fetch_release(&args, ctx, (tag, repo), (&mut opts, &mut keys), &mut notes)?
        }
        _ => FetchedRelease::default(),
    };
    if let Some(mut report) = fetched.decided {
        report.notes = fetched.facts;
        report.warnings = notes;
        return ctx.emit(out, &report, args.format.into(), args.step_summary);
    }
    let (provenance, facts) = (fetched.provenance, fetched.facts);
    let bar = ProgressDisplay::start(
        opts.progress.clone(),
        ctx.progress && !args.no_progress,
        "verifying",
    );
    let mut report = verify(&opts, &keys)?;
    drop(bar);
    match provenance {
        Some((sig, Some(p))) => {
            let failure = (!p.problems.is_empty()).then(|| p.problems.join("; "));
            let name = format!("{} ({})", sig.display(), p.binding);
            report.add_check(name, "provenance", failure);
        }
        Some((sig, None)) if sig.exists() => notes.push(format!(
            "{} binds no workflow run: where it was made cannot be checked (`warden sign` in GitHub Actions binds one; keys/policy.toml's require_run makes it required)",
            sig.file_name().unwrap_or_default().to_string_lossy()
        )),
        _ => {}
    }
    report.warnings.extend(notes);
    report.notes.extend(facts);
    if args.out.is_none() {
        if let Some(dir) = opts.inputs.first().filter(|_| opts.release.is_some()) {
            report.strip_folder(dir);
        }
    }
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}

/// What downloading a release left: the folder it went to (kept until the end), the provenance
/// to report, facts about the release, or a report already decided (an unsigned release).
#[derive(Default)]
struct FetchedRelease {
    temp: Option<tempfile::TempDir>,
    provenance: Option<(PathBuf, Option<releases::Provenance>)>,
    facts: Vec<String>,
    decided: Option<release_warden::release::verify::VerifyReport>,
}

/// `verify --release`: the repository's revocations applied to `keys`, the release downloaded
/// (the signed list first), and `opts` pointed at the folder, bound to the release.
fn fetch_release(
    args: &VerifyArgs,
    ctx: &Context,
    (tag, repo): (&String, &String),
    (opts, keys): (&mut VerifyOptions, &mut TrustedKeys),
    notes: &mut Vec<String>,
) -> anyhow::Result<FetchedRelease> {
    let mut fetched = FetchedRelease::default();
    refuse_contradictions(opts, tag, repo)?;
    let dir: PathBuf = match &args.out {
        Some(d) => {
            // Whatever is there would be judged as the release's own.
            let occupied = std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some());
            if occupied {
                anyhow::bail!(
                    "--out {}: not empty; give a new or empty folder (its files would be judged as the release's)",
                    d.display()
                );
            }
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d.clone()
        }
        None => {
            let temp = tempfile::Builder::new()
                .prefix("warden-release-")
                .tempdir()
                .context("creating a temporary folder")?;
            let path = temp.path().to_path_buf();
            fetched.temp = Some(temp);
            path
        }
    };
    let session;
    let from = if let Some(snapshot) = &args.snapshot {
        ReleaseSource::Snapshot(snapshot.clone())
    } else {
        session = ctx.connect(args.api_url.as_deref(), ctx.token.as_ref())?;
        match &args.record {
            Some(out) => ReleaseSource::Record(&session, out.clone()),
            None => ReleaseSource::Live(&session),
        }
    };
    let wanted = |name: &str| {
        let sums = &opts.checksums_name;
        let base = name.strip_suffix(".minisig").unwrap_or(name);
        opts.only.as_ref().is_none_or(|g| g.is_match(base))
            || release_warden::release::verify::is_signed_list_file(name, sums)
    };
    // The repository's policy and revocations apply whatever keys are trusted (--public-key
    // included): both only remove trust. The policy first: its threshold is the one the
    // repository's revocations by other keys were signed under.
    let repo_keys = RepoKeys::read(&from, repo, notes)?;
    if let Some(dir) = repo_keys.dir() {
        let origin = format!("keys/policy.toml of {repo}");
        *keys = keys
            .clone()
            .apply_policy_from(dir, &origin)?
            .apply_revocations(dir)?;
    }
    // The list and its signatures come first; when they fail (key, tag, repository), the
    // release is judged without downloading anything large.
    let list_verifies = |dir: &std::path::Path| -> Result<(), String> {
        let list = VerifyOptions {
            inputs: vec![dir.join(&opts.checksums_name)],
            expect_tag: Some(tag.clone()),
            expect_repo: Some(repo.clone()),
            progress: None,
            ..opts.clone()
        };
        match verify(&list, keys) {
            Ok(r) if r.exit_code() == 0 => Ok(()),
            Ok(r) => Err(r
                .results
                .iter()
                .find_map(|x| x.reason.clone())
                .unwrap_or_else(|| "it does not verify".into())),
            Err(e) => Err(e.to_string()),
        }
    };
    let (downloaded, total) = (Progress::default(), Progress::default());
    let checks = releases::ReleaseChecks {
        checksums_name: &opts.checksums_name,
        run_policy: &keys.policy().run,
        list_verifies: &list_verifies,
        progress: Some(&downloaded),
        total: Some(&total),
    };
    let bar = ProgressDisplay::start_with_total(
        Some(downloaded.clone()),
        Some(total.clone()),
        ctx.progress && !args.no_progress,
        "downloading",
    );
    let got = releases::fetch(&from, repo, tag, &dir, (&wanted, &checks))?;
    drop(bar);
    opts.known_digests = got.files.into_iter().collect();
    opts.preset_failures = got.replaced.into_iter().collect();
    fetched.provenance = Some((
        dir.join(format!("{}.minisig", opts.checksums_name)),
        got.provenance,
    ));
    fetched
        .facts
        .extend(release_notes(&got.release, &got.commit, repo));
    if !got
        .release
        .assets
        .iter()
        .any(|a| a.name.ends_with(".minisig") || a.name == opts.checksums_name)
    {
        let mut report = release_warden::release::verify::VerifyReport::default();
        report.add_check(
            format!("release {tag} of {repo}"),
            "signature",
            Some(format!(
                "this release is not signed: it has no {} and no .minisig among its {} assets",
                opts.checksums_name,
                got.release.assets.len()
            )),
        );
        fetched.decided = Some(report);
        return Ok(fetched);
    }
    opts.inputs = vec![dir];
    opts.release = Some(ReleaseIdentity {
        tag: tag.clone(),
        repo: repo.clone(),
        commit: got.commit,
    });
    Ok(fetched)
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
    fn read(from: &ReleaseSource<'_>, repo: &str, notes: &mut Vec<String>) -> anyhow::Result<Self> {
        Ok(match from {
            ReleaseSource::Live(session) => {
                let temp = tempfile::Builder::new()
                    .prefix("warden-revoked-")
                    .tempdir()
                    .context("creating a temporary folder")?;
                releases::repo_revocations(session, repo, temp.path())?;
                releases::repo_policy(session, repo, temp.path())?;
                RepoKeys::Temp(temp)
            }
            ReleaseSource::Record(session, snap) => {
                let dir = snap.join(REPO_KEYS);
                std::fs::create_dir_all(dir.join("revoked"))
                    .with_context(|| format!("creating {}", dir.display()))?;
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
    fn dir(&self) -> Option<&std::path::Path> {
        match self {
            RepoKeys::Temp(t) => Some(t.path()),
            RepoKeys::Folder(d) => Some(d),
            RepoKeys::None => None,
        }
    }
}

/// `--expect-tag` and `--expect-repo` that name another release than `--release`/`--repo`
/// can never both hold: a usage error, said before anything is downloaded.
fn refuse_contradictions(opts: &VerifyOptions, tag: &str, repo: &str) -> anyhow::Result<()> {
    if let Some(expected) = opts.expect_tag.as_deref().filter(|t| *t != tag) {
        anyhow::bail!(
            "--expect-tag {expected} contradicts --release {tag}: a release is verified for its own tag"
        );
    }
    if let Some(expected) = opts
        .expect_repo
        .as_deref()
        .filter(|r| !r.eq_ignore_ascii_case(repo))
    {
        anyhow::bail!(
            "--expect-repo {expected} contradicts --repo {repo}: a release is verified for its own repository"
        );
    }
    Ok(())
}

/// What the user should know about the release itself.
fn release_notes(release: &releases::Release, commit: &str, repo: &str) -> Vec<String> {
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
