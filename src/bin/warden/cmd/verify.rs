//! `warden verify`: load the trusted keys, verify (files, folders, or a published release),
//! report.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use release_warden::attest::TrustRoots;
use release_warden::github::{repo_keys, ReleaseSource};
use release_warden::minisign::Progress;
use release_warden::published::{verify_release, ReleaseRequest};
use release_warden::release::verify;
use release_warden::trust::{AttestRequirement, TrustedKeys};
use release_warden::verdict::{AttestOptions, Only, VerifyOptions};

use crate::cli::VerifyArgs;
use crate::context::Context;
use crate::progress::ProgressDisplay;

/// The keys folder `verify` reads when none is named.
use super::DEFAULT_KEYS_DIR;

/// The keys `verify` trusts: the repository's (`--keys-from-repo`, downloaded into the folder
/// returned with them), the keys folder, or pinned `--public-key` files (with the statements of
/// the folder each sits in, of `--keys-dir` when it is named too, and following rotations).
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
        let names = repo_keys(&session, repo, dir.path())?;
        notes.push(format!(
            "trusting {} from keys/ of {repo}'s default branch (--keys-from-repo): this trusts the repository itself; it still catches a tampered mirror or asset",
            names.join(", ")
        ));
        let keys = TrustedKeys::load_dir(dir.path())?;
        return Ok((keys, Some(dir)));
    }
    let keys_dir = args
        .keys_dir
        .as_deref()
        .unwrap_or(Path::new(DEFAULT_KEYS_DIR));
    let here = Path::new("minisign.pub");
    let keys = if args.public_key.is_empty()
        && args.keys_dir.is_none()
        && !keys_dir.exists()
        && here.is_file()
    {
        // As minisign: with nothing given and no keys/ here, ./minisign.pub.
        notes.push("no keys/ folder here: trusting ./minisign.pub".into());
        TrustedKeys::load_files(&[here.to_path_buf()])?.found_unnamed()
    } else if args.public_key.is_empty() {
        let keys = TrustedKeys::load_dir(keys_dir)
            .context("loading trusted keys (pass --public-key FILE or --keys-dir DIR)")?;
        match args.keys_dir {
            Some(_) => keys,
            None => keys.found_unnamed(),
        }
    } else {
        let mut pinned = TrustedKeys::load_files(&args.public_key)?;
        if args.follow_rotations {
            pinned = pinned.follow_rotations(keys_dir)?;
        } else if let Some(dir) = &args.keys_dir {
            // A keys folder named beside the pinned keys: its revocations and policy apply.
            pinned = pinned.apply_folder(dir)?;
        }
        pinned
    };
    Ok((keys, None))
}

/// How GitHub's attestations take part: read for a published release, from `--attestations`
/// files, or asked for by a requirement (which then fails without them).
fn attest_options(args: &VerifyArgs, keys: &TrustedKeys) -> anyhow::Result<AttestOptions> {
    let require = args
        .require_attestation
        .as_deref()
        .and_then(AttestRequirement::parse);
    let wanted = args.release.is_some()
        || !args.attestations.is_empty()
        || require.is_some()
        || keys.attestation_required();
    let roots = match (&args.trusted_root, wanted) {
        (_, false) => None,
        (Some(file), true) => Some(TrustRoots::with_github_root(file)?),
        (None, true) => Some(TrustRoots::embedded()?),
    };
    Ok(AttestOptions {
        roots: roots.map(std::sync::Arc::new),
        files: args.attestations.clone(),
        require,
        one_asset: false,
    })
}

pub(crate) fn run(args: VerifyArgs, ctx: &Context, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut notes = Vec::new();
    let (mut keys, _repo_keys) = trusted_keys(&args, ctx, &mut notes)?;
    if let Some(dir) = &args.revocations {
        if !dir.is_dir() {
            anyhow::bail!("--revocations {}: not a folder", dir.display());
        }
        keys = keys.apply_statements(dir)?;
    }
    let opts = VerifyOptions {
        inputs: args.paths.iter().chain(&args.file).cloned().collect(),
        expect_tag: args.expect_tag.clone(),
        expect_repo: args.expect_repo.clone(),
        expect_commit: args.expect_commit.clone(),
        release: None,
        allow_legacy: args.allow_legacy,
        allow_dry_run: args.allow_dry_run,
        allow_unlisted: args.allow_unlisted,
        allow_no_checksums: args.allow_no_checksums,
        only: Only::new(&args.only)?,
        signature_file: args.signature_file.clone(),
        checksums_name: args.checksums.clone(),
        progress: Some(Progress::default()),
        log: super::log::requirement(&args.log)?,
        attest: attest_options(&args, &keys)?,
    };
    let show = ctx.progress && !args.no_progress;
    let mut report = match (&args.release, &args.repo) {
        (Some(tag), Some(repo)) => {
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
            let (downloaded, total) = (Progress::default(), Progress::default());
            let bar = ProgressDisplay::start_with_total(
                Some(downloaded.clone()),
                Some(total.clone()),
                show,
                "downloading",
            );
            let req = ReleaseRequest {
                repo: repo.clone(),
                tag: tag.clone(),
                out: args.out.clone(),
                from,
                opts,
                progress: Some((downloaded, total)),
            };
            let report = verify_release(&req, keys)?;
            drop(bar);
            report
        }
        _ => {
            let bar = ProgressDisplay::start(opts.progress.clone(), show, "verifying");
            let mut report = verify(&opts, &keys)?;
            drop(bar);
            report.warnings.extend(keys.notes().iter().cloned());
            report
        }
    };
    report.warnings.splice(0..0, notes);
    ctx.emit(out, &report, args.format.into(), args.step_summary)
}
