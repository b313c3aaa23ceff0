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
        inputs: args.paths.into_iter().chain(args.file).collect(),
        expect_tag: args.expect_tag,
        expect_repo: args.expect_repo,
        expect_commit: args.expect_commit,
        release: None,
        allow_legacy: args.allow_legacy,
        allow_dry_run: args.allow_dry_run,
        allow_unlisted: args.allow_unlisted,
        allow_no_checksums: args.allow_no_checksums,
        allow_unbound: args.allow_unbound,
        only: Only::new(&args.only)?,
        known_digests: Default::default(),
        preset_failures: Default::default(),
        checksums_name: args.checksums,
        progress: Some(Progress::default()),
    };
    // A published release: downloaded, then verified like a folder, bound to its tag, its
    // repository and the commit the tag names now.
    let _temp;
    let mut provenance = None;
    if let (Some(tag), Some(repo)) = (&args.release, &args.repo) {
        refuse_contradictions(&opts, tag, repo)?;
        let dir: PathBuf = match &args.out {
            Some(d) => {
                std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
                d.clone()
            }
            None => {
                _temp = tempfile::Builder::new()
                    .prefix("warden-release-")
                    .tempdir()
                    .context("creating a temporary folder")?;
                _temp.path().to_path_buf()
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
                || base == sums
                || release_warden::release::verify::is_cosignature_of(name, sums)
        };
        // The repository's revocations apply whatever keys are trusted (--public-key included).
        let revoked = RepoRevocations::read(&from, repo, &mut notes)?;
        if let Some(dir) = revoked.dir() {
            keys = keys.apply_revocations(dir)?;
        }
        let checks = releases::ReleaseChecks {
            checksums_name: &opts.checksums_name,
            run_policy: &keys.policy().run,
        };
        let got = releases::fetch(&from, repo, tag, &dir, (&wanted, &checks))?;
        opts.known_digests = got.files.into_iter().collect();
        opts.preset_failures = got.replaced.into_iter().collect();
        provenance = Some((
            dir.join(format!("{}.minisig", opts.checksums_name)),
            got.provenance,
        ));
        notes.extend(release_notes(&got.release, &got.commit, repo));
        opts.inputs = vec![dir];
        opts.release = Some(ReleaseIdentity {
            tag: tag.clone(),
            repo: repo.clone(),
            commit: got.commit,
        });
    }
    let bar = ProgressDisplay::start(opts.progress.clone(), ctx.progress, "verifying");
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
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}

/// The repository's `keys/revoked/`, read for `verify --release`: into a temporary folder, or
/// into the snapshot a recording writes (`<snapshot>/repo-keys/revoked/`), or from the one a
/// replay reads.
enum RepoRevocations {
    Temp(tempfile::TempDir),
    Folder(PathBuf),
    None,
}

impl RepoRevocations {
    fn read(from: &ReleaseSource<'_>, repo: &str, notes: &mut Vec<String>) -> anyhow::Result<Self> {
        Ok(match from {
            ReleaseSource::Live(session) => {
                let temp = tempfile::Builder::new()
                    .prefix("warden-revoked-")
                    .tempdir()
                    .context("creating a temporary folder")?;
                releases::repo_revocations(session, repo, temp.path())?;
                RepoRevocations::Temp(temp)
            }
            ReleaseSource::Record(session, snap) => {
                let dir = snap.join(REPO_KEYS);
                std::fs::create_dir_all(dir.join("revoked"))
                    .with_context(|| format!("creating {}", dir.display()))?;
                releases::repo_revocations(session, repo, &dir)?;
                RepoRevocations::Folder(dir)
            }
            ReleaseSource::Snapshot(snap) => {
                let dir = snap.join(REPO_KEYS);
                if dir.join("revoked").is_dir() {
                    RepoRevocations::Folder(dir)
                } else {
                    notes.push(format!(
                        "{} holds no record of {repo}'s keys/revoked/ (recorded by an older warden): only local revocations apply",
                        snap.display()
                    ));
                    RepoRevocations::None
                }
            }
        })
    }

    /// The folder holding `revoked/`, if any.
    fn dir(&self) -> Option<&std::path::Path> {
        match self {
            RepoRevocations::Temp(t) => Some(t.path()),
            RepoRevocations::Folder(d) => Some(d),
            RepoRevocations::None => None,
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
