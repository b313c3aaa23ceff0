//! A release folder (or files) judged from what its reader read: against its signed checksum
//! list when it has one, else (with `--allow-no-checksums`) file by file against each one's own
//! signature. Cheap checks come first: the list's signatures are judged before a byte of any
//! artifact is asked for, and nothing a failed list covers is read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::evidence::{Entry, Evidence, FileBytes, InputKind, Judgement, Needs};
use super::file::{log_requirements, Job};
use super::report::{ArtifactResult, ArtifactStatus, Verdict, VerifyReport};
use super::VerifyOptions;
use crate::error::{Error, Reason, Result};
use crate::minisign::checksums::ChecksumFile;
use crate::minisign::hash::hash_bytes;
use crate::minisign::names::{
    cosigned_file, signature_path, CHECKSUMS_NAME, PROOF_SUFFIX, SIGNATURE_SUFFIX,
};
use crate::trust::signer::{
    check_signature_set, verify_signature_set, Cause, Rejected, SignatureFiles, SignedName,
};
use crate::trust::TrustedKeys;
use crate::util::parallel_map;

/// A `SHA256SUMS` is read whole (it is hashed and parsed); 256 MiB is over two million entries.
pub(crate) const SUMS_CAP: u64 = 256 << 20;

/// Whether `name` is the checksum list `list`, its signature, or one of its co-signatures: the
/// files a release's signers made.
pub(crate) fn is_signed_list_file(name: &str, list: &str) -> bool {
    name == list
        || name.strip_suffix(SIGNATURE_SUFFIX) == Some(list)
        || cosigned_file(name).is_some_and(|(f, _)| f == list)
}

/// The verdict on every input of `ev` (files and release folders, or a published release's
/// folder), or what it needs first. `Err` only for usage errors; per-file problems are results.
pub(crate) fn judge(
    ev: &Evidence,
    opts: &VerifyOptions,
    keys: &TrustedKeys,
) -> Result<Judgement<VerifyReport>> {
    precheck(ev, opts, keys)?;
    let mut report = VerifyReport::default();
    check_expected_commit(opts, &mut report)?;
    let mut jobs = Vec::new();
    let mut needs = Needs::default();
    let given: BTreeSet<&Path> = ev.inputs.iter().map(|(p, _)| p.as_path()).collect();
    for (input, kind) in &ev.inputs {
        match kind {
            InputKind::Folder => {
                let judged = folder_jobs(ev, input, (opts, keys), (&mut jobs, &mut report))?;
                if let Err(more) = judged {
                    // The list's verdict waits on the log: nothing else is judged before it.
                    return Ok(Judgement::Needs(more));
                }
            }
            InputKind::Missing => report.results.push(
                Verdict::new()
                    .error("no such file or directory")
                    .into_result(input.display().to_string()),
            ),
            InputKind::File => {
                if let Some(artifact) = input
                    .to_str()
                    .and_then(|n| n.strip_suffix(SIGNATURE_SUFFIX))
                {
                    if !given.contains(Path::new(artifact)) {
                        return Err(Error::Usage(format!(
                            "{}: give the artifact, not its signature (warden verify {artifact})",
                            input.display()
                        )));
                    }
                    report.skip(
                        input,
                        format!("the signature of {artifact}, checked with it"),
                    );
                    continue;
                }
                if let Some(list) = ev.file_lists.get(input) {
                    let judged =
                        file_in_list(ev, (input, list), (opts, keys), (&mut jobs, &mut report));
                    if let Err(more) = judged {
                        return Ok(Judgement::Needs(more));
                    }
                    continue;
                }
                jobs.push(file_job(ev, input, opts));
            }
        }
    }
    let judged = parallel_map(&jobs, |job| {
        let mut more = Needs::default();
        let verdict = super::file::judge(job, ev, (keys, opts), &mut more);
        (verdict, more)
    });
    let mut results = Vec::new();
    for (job, (verdict, more)) in jobs.iter().zip(judged) {
        needs.bytes.extend(more.bytes);
        if let Some(v) = verdict {
            results.push(v.into_result(job.name.clone()));
        }
    }
    if !needs.is_empty() {
        return Ok(Judgement::Needs(needs));
    }
    report.results.extend(results);
    note_unbound(&mut report);
    if !ev.is_published() {
        note_offline_runs(&mut report);
        // A published release's witnesses are judged with its provenance (`release`).
        if let Err(more) = super::witnesses::judge(ev, opts, keys, &mut report) {
            return Ok(Judgement::Needs(more));
        }
    }
    Ok(Judgement::Done(report))
}

/// A file given on its own, judged by its own signature (`-x FILE`, `<file>.minisig`, or a
/// minisign `<file>.sig`). Without one, and without a signed list beside it, the failure says
/// the ways to give one.
fn file_job(ev: &Evidence, input: &Path, opts: &VerifyOptions) -> Job {
    let mut job = Job::signed_file(input.to_path_buf(), input.display().to_string());
    if let Some(sig) = &opts.signature_file {
        job.signature = Some(sig.clone());
        return job;
    }
    match signature_of(ev, input) {
        Some(sig) => job.signature = Some(sig),
        None => {
            job.preset_failure = Some(unsigned(format!(
                "missing signature {} (or .sig), and no signed checksum list beside it: -x FILE names its signature, --checksums NAME its list",
                signature_path(input).display(),
            )))
        }
    }
    job
}

/// One downloaded file of a release signed by its checksum list: the list beside it is judged,
/// and the file against it; the other files the list names that are not here were not
/// downloaded, and are said in one line (not failures).
fn file_in_list(
    ev: &Evidence,
    (input, list): (&Path, &Path),
    (opts, keys): (&VerifyOptions, &TrustedKeys),
    (jobs, report): (&mut Vec<Job>, &mut VerifyReport),
) -> std::result::Result<(), Needs> {
    let (result, parsed) = judge_list(ev, list, keys, opts)?;
    let trusted = result.status == ArtifactStatus::Ok;
    let list_name = file_name(list);
    report.results.push(result);
    let Ok(parsed) = parsed else {
        return Ok(());
    };
    let name = file_name(input);
    let dir = crate::files::paths::parent_dir(input);
    match parsed.entries().find(|(n, _)| *n == name) {
        None => jobs.push(Job::failing(
            input,
            (
                Cause::Unlisted,
                format!("{list_name} beside it does not list {name}, and it has no signature of its own (-x FILE names one)"),
            ),
        )),
        Some((_, digest)) => jobs.push(Job {
            path: input.to_path_buf(),
            name: input.display().to_string(),
            signature: Some(signature_path(input)),
            require_signature: !trusted,
            failed_list: (!trusted).then(|| list.to_path_buf()),
            expected: trusted.then_some(*digest),
            preset_failure: None,
        }),
    }
    // A per-file checksum names its one file: what else it names is not a release's rest.
    let sidecar = super::layout::sidecar_subject(&list_name).is_some();
    let others = parsed
        .names()
        .filter(|n| *n != name && !ev.exists(&dir.join(n)) && !sidecar)
        .count();
    if others > 0 {
        report.notes.push(format!(
            "{list_name} names {others} other file{} that {} not here: not downloaded, so not checked",
            if others == 1 { "" } else { "s" },
            if others == 1 { "is" } else { "are" }
        ));
    }
    Ok(())
}

/// What cannot be asked, said before anything is read: no trusted key, nothing to verify, `-x`
/// for more than one file.
pub(crate) fn precheck(ev: &Evidence, opts: &VerifyOptions, keys: &TrustedKeys) -> Result<()> {
    refuse_without_keys(keys)?;
    if ev.is_published() {
        return Ok(());
    }
    if ev.inputs.is_empty() {
        return Err(Error::Usage(
            "nothing to verify: name files or a release directory".into(),
        ));
    }
    let one_file = matches!(ev.inputs.as_slice(), [(_, kind)] if *kind != InputKind::Folder);
    if opts.signature_file.is_some() && !one_file {
        return Err(Error::Usage(
            "-x names the signature of one file: give exactly one file to verify".into(),
        ));
    }
    Ok(())
}

/// Every key revoked is not a usage error: each signature fails, naming its revocation.
fn refuse_without_keys(keys: &TrustedKeys) -> Result<()> {
    if keys.is_empty() && keys.revocations().is_empty() {
        return Err(Error::Usage(
            "no trusted public keys: pass --public-key FILE or a --keys-dir with *.pub files"
                .into(),
        ));
    }
    Ok(())
}

fn check_expected_commit(opts: &VerifyOptions, report: &mut VerifyReport) -> Result<()> {
    if let Some(c) = &opts.expect_commit {
        if !(12..=40).contains(&c.len()) || !c.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::Usage(format!(
                "--expect-commit {c:?}: give the commit as 12 to 40 hex digits"
            )));
        }
        if c.len() < 40 {
            report.warnings.push(format!(
                "--expect-commit {c} is a prefix: any signed commit that begins with it is accepted"
            ));
        }
    }
    Ok(())
}

/// A verified signature whose trusted comment binds no file and no release is accepted, as
/// minisign accepts it, and said: the same signature would verify a renamed or older file.
fn note_unbound(report: &mut VerifyReport) {
    let verified = |r: &&ArtifactResult| r.status == ArtifactStatus::Ok;
    let names = |pick: &dyn Fn(&ArtifactResult) -> bool| -> Vec<String> {
        report
            .results
            .iter()
            .filter(verified)
            .filter(|r| pick(r))
            .map(|r| r.name.clone())
            .collect()
    };
    let nothing = names(&|r| r.binds_nothing);
    let no_file = names(&|r| r.binds_no_file && !r.binds_nothing);
    if !nothing.is_empty() {
        report.warnings.push(format!(
            "{}: the trusted comment binds no file or tag, so the signature would verify the same bytes under another name or release (minisign accepts it too)",
            nothing.join(", ")
        ));
    }
    if !no_file.is_empty() {
        report.warnings.push(format!(
            "{}: the trusted comment binds no file name, so the signature would verify the same bytes under another name",
            no_file.join(", ")
        ));
    }
}

/// Offline, a bound run is a claim: said, with the command that checks it.
fn note_offline_runs(report: &mut VerifyReport) {
    let runs: BTreeSet<String> = report
        .results
        .iter()
        .filter_map(|r| r.run.as_ref().map(|b| b.to_string()))
        .collect();
    if !runs.is_empty() {
        report.warnings.push(format!(
            "signed by {}: the run itself was not checked (offline); `warden verify --release` checks it against GitHub's records",
            runs.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
}

/// The jobs for the release folder `dir`, by its layout (`layout::choose`): against its signed
/// checksum list when it has one, else against each file's own signature. Every other entry is
/// a failure or, when allowed, a named skip (a published release's assets a foreign layout does
/// not cover: "not signed", one line). `Err(needs)` when the list's verdict waits on them.
fn folder_jobs(
    ev: &Evidence,
    dir: &Path,
    (opts, keys): (&VerifyOptions, &TrustedKeys),
    (jobs, report): (&mut Vec<Job>, &mut VerifyReport),
) -> Result<std::result::Result<(), Needs>> {
    let names: Vec<&str> = entries(ev, dir)
        .iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| e.name.as_deref())
        .collect();
    let layout =
        super::layout::choose(names.iter().copied(), opts.checksums_name.as_deref(), |n| {
            signature_of(ev, &dir.join(n)).is_some()
        });
    if let Some(note) = layout.note() {
        report.notes.push(note);
    }
    if let Some(list) = layout.list.as_deref().filter(|l| ev.exists(&dir.join(l))) {
        let sums_path = dir.join(list);
        let listed = match checksum_list_jobs(ev, (dir, &sums_path), (opts, keys), jobs, report) {
            Ok(listed) => listed,
            Err(needs) => return Ok(Err(needs)),
        };
        unlisted_entries(ev, (dir, &layout), &listed, (opts, jobs), report);
        return Ok(Ok(()));
    }
    // A list's signature without the list it signs: deleted, or an interrupted `warden sign`.
    let orphan = names.iter().find_map(|n| {
        let list = n.strip_suffix(SIGNATURE_SUFFIX)?;
        let named = layout
            .list
            .as_deref()
            .map_or(super::layout::list_rank(list).is_some(), |l| l == list);
        (named && !ev.exists(&dir.join(list))).then_some(list)
    });
    if let Some(list) = orphan {
        let sums_path = dir.join(list);
        report.results.push(
            Verdict::new()
                .rejected(unsigned(format!(
                    "missing: {} is here but {list} is not (deleted, or an interrupted `warden sign`)",
                    signature_path(&sums_path).display(),
                )))
                .into_result(sums_path.display().to_string()),
        );
    } else if let (Some(list), false) = (
        layout
            .list
            .clone()
            .or_else(|| wardens_release(ev, dir).then(|| CHECKSUMS_NAME.to_string())),
        opts.allow_no_checksums,
    ) {
        // A list named with --checksums that is not there, or a release warden signed (its
        // signatures bind a release) without the list warden always writes beside them.
        report.results.push(
            Verdict::new()
                .rejected(unsigned(format!(
                    "no {list}: a release directory is verified against its signed checksum list; pass --allow-no-checksums to check each file's own signature instead",
                )))
                .into_result(dir.display().to_string()),
        );
        return Ok(Ok(()));
    }
    let before = jobs.len();
    if let Err(needs) = signed_entries(ev, dir, (opts, keys), (jobs, report)) {
        return Ok(Err(needs));
    }
    if jobs.len() == before {
        report.results.push(
            Verdict::new()
                .rejected(unsigned(format!(
                    "nothing here is signed: no signed checksum list ({}, …; --checksums NAME names another) and no .minisig or .sig beside a file",
                    super::layout::list_names_shown()
                )))
                .into_result(dir.display().to_string()),
        );
    }
    Ok(Ok(()))
}

/// Whether the signatures in `dir` are warden's own (their comments bind a release): warden
/// signs a release folder with its `SHA256SUMS` beside, so one without is missing a file.
fn wardens_release(ev: &Evidence, dir: &Path) -> bool {
    entries(ev, dir).iter().any(|e| {
        let Some(Ok(text)) = ev.texts.get(&e.path) else {
            return false;
        };
        crate::minisign::signature::SignatureFile::parse(text)
            .ok()
            .and_then(|sig| sig.trusted_comment.binds().ok())
            .is_some_and(|b| b.is_wardens())
    })
}

fn unsigned(why: String) -> Rejected {
    (Cause::Unsigned, why)
}

/// The entries of the folder `dir`, as its reader found them.
fn entries<'e>(ev: &'e Evidence, dir: &Path) -> &'e [Entry] {
    ev.entries.get(dir).map_or(&[], Vec::as_slice)
}

/// The signature of the file at `path`: `<file>.minisig`, else a `<file>.sig` that is a
/// minisign signature (a `.sig` is often GPG's: read, it is not taken for minisign's).
pub(crate) fn signature_of(ev: &Evidence, path: &Path) -> Option<PathBuf> {
    let [minisig, sig] = super::layout::signature_names(&path.display().to_string());
    let (minisig, sig) = (PathBuf::from(minisig), PathBuf::from(sig));
    if ev.exists(&minisig) {
        return Some(minisig);
    }
    let minisign = |text: &String| text.starts_with("untrusted comment:");
    let read = matches!(ev.texts.get(&sig), Some(Ok(text)) if minisign(text));
    // A published release's `.sig` asset not read yet: the layout takes it for a signature.
    let unread = ev.is_published() && ev.exists(&sig) && !ev.texts.contains_key(&sig);
    (read || unread).then_some(sig)
}

/// Judges the checksum list and its signature (a result of its own), then adds a job per listed
/// file: checked against its digest when the list verified, else against its own signature.
/// Returns the listed names, or what the list's verdict needs first.
fn checksum_list_jobs(
    ev: &Evidence,
    (dir, sums_path): (&Path, &Path),
    (opts, keys): (&VerifyOptions, &TrustedKeys),
    jobs: &mut Vec<Job>,
    report: &mut VerifyReport,
) -> std::result::Result<BTreeSet<String>, Needs> {
    let list_name = file_name(sums_path);
    let (result, parsed) = judge_list(ev, sums_path, keys, opts)?;
    let trusted_list = result.status == ArtifactStatus::Ok;
    let list_failed = list_failure(ev, &result, &list_name);
    report.results.push(result);
    let mut listed = BTreeSet::new();
    let Ok(list) = parsed else {
        return Ok(listed);
    };
    let mut selected_by = BTreeSet::new();
    for (name, digest) in list.entries() {
        listed.insert(name.to_string());
        let path = dir.join(name);
        if let Some(only) = &opts.only {
            let matches = only.set.matches(name);
            if matches.is_empty() {
                report.skip(&path, "not selected by --only".into());
                continue;
            }
            selected_by.extend(matches);
        }
        let escapes = ev.escapes.get(&path).map(|real| {
            (
                Cause::Invalid,
                format!(
                    "resolves to {}, outside the release directory",
                    real.display()
                ),
            )
        });
        let signature = signature_of(ev, &path).unwrap_or_else(|| signature_path(&path));
        let not_read = matches!(ev.bytes.get(&path), Some(FileBytes::NotRead))
            && !ev.preset.contains_key(&path)
            && ev.exists(&path);
        if not_read && trusted_list && !ev.unread.contains(&signature) {
            report.skip(
                &path,
                "not read, and GitHub gives no digest of it (`--deep` reads every asset)".into(),
            );
            continue;
        }
        jobs.push(Job {
            name: path.display().to_string(),
            // An artifact's own signature the reader did not read is not checked (said once).
            signature: (!ev.unread.contains(&signature)).then_some(signature),
            // Without a verified checksum file, only the artifact's own signature counts.
            require_signature: !trusted_list,
            failed_list: (!trusted_list).then(|| sums_path.to_path_buf()),
            expected: trusted_list.then_some(*digest),
            preset_failure: escapes
                .or_else(|| ev.preset.get(&path).cloned())
                .or_else(|| list_failed.clone()),
            path,
        });
    }
    // A pattern that selects nothing is a mistake (or a release without that artifact): never a
    // silent pass over nothing.
    if let Some(only) = &opts.only {
        for (i, pattern) in only.patterns.iter().enumerate() {
            if !selected_by.contains(&i) {
                report.results.push(
                    Verdict::new()
                        .fail(format!("matches no file {list_name} lists"))
                        .into_result(format!("--only {pattern}")),
                );
            }
        }
    }
    Ok(listed)
}

/// A path's file name, as text.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What a published release's listed files fail with when the list does not verify: they are
/// not judged further (nor downloaded), the list's failure is theirs.
fn list_failure(ev: &Evidence, list: &ArtifactResult, list_name: &str) -> Option<Rejected> {
    match &ev.published {
        Some(p) if list.status != ArtifactStatus::Ok => Some((
            Cause::ListFailed,
            format!(
                "{}: {} does not verify ({})",
                if p.downloading {
                    "not downloaded"
                } else {
                    "not checked"
                },
                list_name,
                list.reason.as_deref().unwrap_or_default()
            ),
        )),
        _ => None,
    }
}

/// The checksum list's own verdict (its signatures over its bytes, and the logs they must be
/// in), and the list when it parses; `Err` with what it needs first.
pub(crate) fn judge_list(
    ev: &Evidence,
    sums_path: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> std::result::Result<(ArtifactResult, std::result::Result<ChecksumFile, Reason>), Needs> {
    let name = sums_path.display().to_string();
    let (verdict, parsed) = list_verdict(ev, sums_path, keys, opts)?;
    Ok((verdict.into_result(name), parsed))
}

fn list_verdict(
    ev: &Evidence,
    sums_path: &Path,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> std::result::Result<(Verdict, std::result::Result<ChecksumFile, Reason>), Needs> {
    let mut out = Verdict::new();
    let main = signature_of(ev, sums_path).unwrap_or_else(|| signature_path(sums_path));
    let need = keys.threshold();
    let list_name = file_name(sums_path);
    let name = SignedName::new(&list_name, ev.resolved.get(sums_path).cloned());
    let files = SignatureFiles(&ev.texts);
    let checked = check_signature_set(
        (sums_path, &main),
        &name,
        (keys, need),
        (&opts.checks(), &files),
        &mut out.judged,
    );
    // A list renamed is still the list: only the files it names are held to their names.
    out.judged.no_file = false;
    let text = match ev.lists.get(sums_path) {
        Some(Ok(text)) => text,
        Some(Err(e)) => {
            return Ok((
                out.error(format!("reading {}: {e}", sums_path.display())),
                Err(e.clone()),
            ))
        }
        None => {
            let e: Reason = "not read".to_string().into();
            return Ok((
                out.error(format!("reading {}: {e}", sums_path.display())),
                Err(e),
            ));
        }
    };
    let parsed = parse_list(sums_path, text.as_deref());
    let text = text.as_deref().unwrap_or_default();
    let out = match (checked, &parsed) {
        (_, Err(why)) => out.error(why.clone()),
        (Err(rejected), _) => out.rejected(rejected),
        (Ok(set), Ok(_)) => {
            let digests = hash_bytes(text);
            let bytes = (&digests, Some(text));
            match verify_signature_set(&set, &main, bytes, (keys, need), &mut out.judged) {
                Ok(()) => {
                    out.checked.push("signature");
                    let listed = (list_name.as_str(), digests.sha256);
                    let mut needs = Needs::default();
                    let mut failed = None;
                    for (i, req) in log_requirements(opts, keys).into_iter().enumerate() {
                        let logged = super::logged::judge((i, req), &set, listed, ev, &mut needs);
                        if let Some(Err(rejected)) = logged {
                            failed.get_or_insert(rejected);
                        }
                    }
                    if failed.is_none() && !needs.is_empty() {
                        return Err(needs);
                    }
                    match failed {
                        None if log_requirements(opts, keys).is_empty() => out,
                        None => {
                            out.checked.push("log");
                            out
                        }
                        Some(rejected) => out.rejected(rejected),
                    }
                }
                Err(e) => out.fail(e),
            }
        }
    };
    Ok((out, parsed.map_err(Reason::from)))
}

/// The list in `text` (`None`: larger than a list may be), or why it is not one.
fn parse_list(sums_path: &Path, text: Option<&[u8]>) -> std::result::Result<ChecksumFile, String> {
    let text = text.ok_or_else(|| {
        format!(
            "{}: larger than {} MiB: not a checksum list",
            sums_path.display(),
            SUMS_CAP >> 20
        )
    })?;
    let text = std::str::from_utf8(text)
        .map_err(|_| format!("{}: not valid UTF-8", sums_path.display()))?;
    let parsed = match super::layout::sidecar_subject(&file_name(sums_path)) {
        Some(subject) => ChecksumFile::parse_sidecar(text, subject),
        None => ChecksumFile::parse(text),
    };
    parsed.map_err(|e| format!("{}: {e}", sums_path.display()))
}

/// Every entry of a release folder that the verified list does not account for (a listed
/// file, its signature, the list and its signature, the other signed lists beside it, a folder
/// holding listed files) fails the run, or with `--allow-unlisted` is a named skip. A published
/// release signed by another tool than warden (its list's comment is not warden's) says the
/// assets it does not cover in one line, "not signed": its list is not the whole release.
fn unlisted_entries(
    ev: &Evidence,
    (dir, layout): (&Path, &super::layout::Layout),
    listed: &BTreeSet<String>,
    (opts, jobs): (&VerifyOptions, &mut Vec<Job>),
    report: &mut VerifyReport,
) {
    let list = layout.list.as_deref().unwrap_or_default();
    let mut accounted: BTreeSet<String> = BTreeSet::new();
    let mut folders: BTreeSet<String> = BTreeSet::new();
    let signatures = |name: &str| {
        let sig = signature_of(ev, &dir.join(name))
            .map(|p| file_name(p.as_path()))
            .unwrap_or_else(|| format!("{name}{SIGNATURE_SUFFIX}"));
        [sig, format!("{name}{SIGNATURE_SUFFIX}")]
    };
    for name in listed {
        accounted.insert(name.clone());
        accounted.extend(signatures(name));
        let mut parts: Vec<&str> = name.split('/').collect();
        while parts.len() > 1 {
            parts.pop();
            folders.insert(parts.join("/"));
        }
    }
    for name in std::iter::once(list).chain(layout.other_lists.iter().map(String::as_str)) {
        accounted.insert(name.to_string());
        accounted.extend(signatures(name));
        // The lists' signatures' log proofs (`--require-log` checks them; they sign nothing).
        accounted.insert(format!("{name}{PROOF_SUFFIX}"));
    }
    let signs_a_list = |n: &str| {
        std::iter::once(list)
            .chain(layout.other_lists.iter().map(String::as_str))
            .any(|l| l == n)
    };
    let cosignature_proof = |n: &str| {
        n.strip_suffix(PROOF_SUFFIX)
            .and_then(|stem| {
                cosigned_file(&format!("{stem}{SIGNATURE_SUFFIX}")).map(|(f, _)| signs_a_list(f))
            })
            .unwrap_or(false)
    };
    let foreign = ev.is_published()
        && report
            .results
            .iter()
            .find(|r| r.name == dir.join(list).display().to_string())
            .is_none_or(|r| r.trusted_comment.is_some());
    let mut not_signed = Vec::new();
    for entry in entries(ev, dir) {
        let name = entry.name.as_deref();
        if entry.is_dir && name.is_some_and(|n| folders.contains(n)) {
            continue;
        }
        let accounted_for = name.is_some_and(|n| {
            accounted.contains(n)
                || cosignature_proof(n)
                || cosigned_file(n)
                    .is_some_and(|(file, _)| signs_a_list(file) || listed.contains(file))
        });
        if !entry.is_dir && accounted_for {
            continue;
        }
        let why = format!("{}, not listed in {list}", entry.kind);
        if foreign {
            not_signed.push(name.unwrap_or_default().to_string());
        } else if opts.allow_unlisted {
            report.skip(&entry.path, why);
        } else {
            // A job that fails before reading anything, so it reports in walk order.
            jobs.push(Job::failing(
                &entry.path,
                (
                    Cause::Unlisted,
                    format!("{why}: unverified content in the release (pass --allow-unlisted to accept it)"),
                ),
            ));
        }
    }
    if !not_signed.is_empty() {
        report.notes.push(format!(
            "not signed (not in {list}, no signature of their own): {}",
            not_signed.join(", ")
        ));
    }
}

/// Without a checksum list: a job for every file that may be an artifact (each must carry a
/// valid signature, `.minisig` or a minisign `.sig`), a failure for a signature whose artifact
/// is gone, and a named skip for everything else (links, hidden files, special files). A
/// published release's assets without a signature are "not signed", in one line.
fn signed_entries(
    ev: &Evidence,
    dir: &Path,
    (opts, keys): (&VerifyOptions, &TrustedKeys),
    (jobs, report): (&mut Vec<Job>, &mut VerifyReport),
) -> std::result::Result<(), Needs> {
    let mut not_signed = Vec::new();
    for entry in entries(ev, dir) {
        if entry.is_dir {
            continue;
        }
        let path = entry.path.as_path();
        let name = path.file_name().and_then(|n| n.to_str());
        match per_file_checksum(ev, path) {
            PerFileChecksum::None => {}
            PerFileChecksum::SignsItsFile(sidecar) => {
                file_in_list(ev, (path, &sidecar), (opts, keys), (jobs, report))?;
                continue;
            }
            PerFileChecksum::JudgedWithItsFile => continue,
            PerFileChecksum::Unsigned(subject) => {
                report.skip(
                    path,
                    format!(
                        "an unsigned checksum of {subject}, which is verified by its own signature"
                    ),
                );
                continue;
            }
        }
        let plain = matches!(entry.kind, "a file" | "a signature of no listed file");
        let minisign_sig = name
            .and_then(|n| n.strip_suffix(".sig"))
            .filter(|artifact| {
                signature_of(ev, &path.with_file_name(artifact)).as_deref() == Some(path)
            });
        if !plain || name.is_none_or(|n| n.starts_with('.')) {
            report.skip(path, format!("{}: not an artifact", entry.kind));
        } else if let Some(artifact) = name
            .and_then(|n| n.strip_suffix(SIGNATURE_SUFFIX))
            .or(minisign_sig)
        {
            // A co-signature is checked with the file it signs.
            let cosigned = name.and_then(cosigned_file).map(|(file, _)| file);
            if cosigned.is_some_and(|f| ev.exists(&path.with_file_name(f))) {
                continue;
            }
            if !ev.exists(&path.with_file_name(artifact)) {
                jobs.push(Job::failing(
                    path,
                    (
                        Cause::Missing,
                        format!("a signature without its artifact: {artifact} is missing"),
                    ),
                ));
            }
        } else if ev.is_published() && signature_of(ev, path).is_none() {
            not_signed.push(name.unwrap_or_default().to_string());
        } else {
            let mut job = Job::signed_file(path.to_path_buf(), path.display().to_string());
            job.signature = signature_of(ev, path).or(job.signature);
            jobs.push(job);
        }
    }
    if !not_signed.is_empty() {
        report.notes.push(format!(
            "not signed (no signature beside them): {}",
            not_signed.join(", ")
        ));
    }
    Ok(())
}

/// What a per-file checksum (`app.tar.gz.sha256`) is to the layout of a signature beside each
/// file.
enum PerFileChecksum {
    /// Not one, or one signed beside a file signed too: a signed file like any other.
    None,
    /// The file at hand has no signature of its own; this signed checksum of it stands in.
    SignsItsFile(PathBuf),
    /// A signed checksum of a file without its own signature: judged as that file's list.
    JudgedWithItsFile,
    /// An unsigned checksum of a signed file (of the file named): a claim nothing relies on.
    Unsigned(String),
}

fn per_file_checksum(ev: &Evidence, path: &Path) -> PerFileChecksum {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let signed = |p: &Path| signature_of(ev, p).is_some();
    if !signed(path) {
        let sidecar = super::layout::sidecar_names(name)
            .map(|s| path.with_file_name(s))
            .find(|s| signed(s) && ev.lists.contains_key(s));
        if let Some(sidecar) = sidecar {
            return PerFileChecksum::SignsItsFile(sidecar);
        }
    }
    let Some(subject) = super::layout::sidecar_subject(name) else {
        return PerFileChecksum::None;
    };
    let subject_path = path.with_file_name(subject);
    if !ev.exists(&subject_path) {
        return PerFileChecksum::None;
    }
    match (signed(path), signed(&subject_path)) {
        (true, false) if ev.lists.contains_key(path) => PerFileChecksum::JudgedWithItsFile,
        (false, true) => PerFileChecksum::Unsigned(subject.to_string()),
        _ => PerFileChecksum::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::evidence::ByteNeed;
    use crate::verdict::testkit::{folder, list, read, Signer};
    use std::path::PathBuf;

    const COMMENT: &str = "timestamp:1\tfile:SHA256SUMS\thashed\ttag:v1";

    fn opts() -> VerifyOptions {
        VerifyOptions {
            inputs: vec![PathBuf::from("dist")],
            checksums_name: None,
            ..VerifyOptions::default()
        }
    }

    /// The report's lines: name, status and reason.
    fn lines(report: &VerifyReport) -> Vec<String> {
        report
            .results
            .iter()
            .map(|r| {
                format!(
                    "{} {:?} {}",
                    r.name,
                    r.status,
                    r.reason.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    fn done(j: Judgement<VerifyReport>) -> VerifyReport {
        match j {
            Judgement::Done(r) => r,
            Judgement::Needs(n) => panic!("still needs {n:?}"),
        }
    }

    /// A signed release of one app: the list's signature is judged from the evidence alone, then
    /// the app's bytes are asked for, and judged against the list.
    #[test]
    fn a_signed_list_asks_for_the_bytes_it_covers_and_judges_them() {
        let s = Signer::new();
        let sums = list(&[("app", b"the app")]);
        let sig = s.sign(&sums, COMMENT).to_string();
        let mut ev = folder(
            &["SHA256SUMS", "SHA256SUMS.minisig", "app"],
            Some(&sums),
            &[("SHA256SUMS.minisig", sig)],
        );
        let keys = s.keys();
        let Judgement::Needs(needs) = judge(&ev, &opts(), &keys).unwrap() else {
            panic!("judged without the app's bytes");
        };
        assert_eq!(
            needs.bytes.into_iter().collect::<Vec<_>>(),
            [(PathBuf::from("dist/app"), ByteNeed::default())]
        );
        let mut good = ev.clone();
        read(&mut good, Path::new("dist/app"), b"the app");
        let report = done(judge(&good, &opts(), &keys).unwrap());
        assert_eq!(
            lines(&report),
            ["dist/SHA256SUMS Ok ", "dist/app Ok "],
            "{report:?}"
        );
        read(&mut ev, Path::new("dist/app"), b"another app");
        let report = done(judge(&ev, &opts(), &keys).unwrap());
        assert_eq!(report.results[1].cause, Cause::Mismatch);
    }

    /// Hostile evidence: a list whose signature is another key's, or another list's, is refused
    /// before any artifact's bytes are asked for, and nothing it covers is read.
    #[test]
    fn a_list_that_does_not_verify_asks_for_nothing() {
        let (s, thief) = (Signer::new(), Signer::new());
        let sums = list(&[("app", b"the app")]);
        for sig in [
            thief.sign(&sums, COMMENT).to_string(),
            s.sign(&list(&[("app", b"old")]), COMMENT).to_string(),
            "not a signature".to_string(),
        ] {
            let ev = folder(
                &["SHA256SUMS", "SHA256SUMS.minisig", "app", "app.minisig"],
                Some(&sums),
                &[("SHA256SUMS.minisig", sig)],
            );
            let report = done(judge(&ev, &opts(), &s.keys()).unwrap());
            assert_ne!(report.results[0].status, ArtifactStatus::Ok, "{report:?}");
            assert_eq!(report.results[1].status, ArtifactStatus::Failed);
        }
    }

    /// Entries the list does not account for fail; a listed path that resolves outside the
    /// folder fails without being read.
    #[test]
    fn unlisted_entries_and_escaping_paths_fail_unread() {
        let s = Signer::new();
        let sums = list(&[("app", b"the app")]);
        let sig = s.sign(&sums, COMMENT).to_string();
        let mut ev = folder(
            &["SHA256SUMS", "SHA256SUMS.minisig", "app", "extra"],
            Some(&sums),
            &[("SHA256SUMS.minisig", sig)],
        );
        ev.escapes
            .insert(PathBuf::from("dist/app"), PathBuf::from("/etc/passwd"));
        let report = done(judge(&ev, &opts(), &s.keys()).unwrap());
        assert_eq!(
            lines(&report),
            [
                "dist/SHA256SUMS Ok ",
                "dist/app Failed resolves to /etc/passwd, outside the release directory",
                "dist/extra Failed a file, not listed in SHA256SUMS: unverified content in the release (pass --allow-unlisted to accept it)"
            ]
        );
    }

    /// A published release whose list fails: its files are "not downloaded", and the verdict
    /// asks for no asset.
    #[test]
    fn a_published_release_whose_list_fails_downloads_nothing() {
        let (s, thief) = (Signer::new(), Signer::new());
        let sums = list(&[("app", b"the app")]);
        let mut ev = folder(
            &["SHA256SUMS", "SHA256SUMS.minisig", "app"],
            Some(&sums),
            &[("SHA256SUMS.minisig", thief.sign(&sums, COMMENT).to_string())],
        );
        ev.published = Some(crate::verdict::evidence::Published {
            assets: ["SHA256SUMS", "SHA256SUMS.minisig", "app"]
                .map(String::from)
                .into(),
            downloading: true,
            digests: Default::default(),
            immutable: None,
        });
        let report = done(judge(&ev, &opts(), &s.keys()).unwrap());
        assert!(
            lines(&report)[1]
                .starts_with("dist/app Failed not downloaded: SHA256SUMS does not verify ("),
            "{report:?}"
        );
    }

    /// Without a list, `--allow-no-checksums` judges each file by its own signature; a legacy
    /// signature asks for the bytes themselves.
    #[test]
    fn a_legacy_signature_asks_for_the_whole_file() {
        let s = Signer::new();
        let mut sig = s.sign(b"the app", "timestamp:1\tfile:app");
        sig.algorithm = crate::minisign::signature::SignatureAlgorithm::Legacy;
        let ev = folder(
            &["app", "app.minisig"],
            None,
            &[("app.minisig", sig.to_string())],
        );
        let opts = VerifyOptions {
            allow_no_checksums: true,
            allow_legacy: true,
            ..opts()
        };
        let Judgement::Needs(needs) = judge(&ev, &opts, &s.keys()).unwrap() else {
            panic!("a legacy signature judged without the bytes");
        };
        assert_eq!(
            needs.bytes.into_iter().collect::<Vec<_>>(),
            [(
                PathBuf::from("dist/app"),
                ByteNeed {
                    whole: true,
                    sha512: false
                }
            )]
        );
    }
}
