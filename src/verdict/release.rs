//! The one verdict of a published release, for `verify --release`, `audit` and `audit --org`
//! alike: given what was read (GitHub's record of the release and of each asset, the assets that
//! were read, the tag's commit, the records of the runs its signatures name) and the trusted
//! keys with their statements and policy, every file and signature is judged as a release
//! folder is (`verify`), and GitHub's records are held against them: the digest GitHub took of
//! each asset at upload, the run each counted signature of the list names (`provenance`), and
//! who uploaded each asset, and when.
//!
//! What the verdict says is a [`VerifyReport`] (a line per file, signature and run) and the same
//! failures as typed [`Problem`]s, which the audit's rules are chosen by.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::evidence::{Evidence, FileBytes, Judgement, Needs};
use super::report::{ArtifactResult, ArtifactStatus, VerifyReport};
use super::VerifyOptions;
use crate::error::Result;
use crate::github::records::{AssetRecord, RunEvidence, UploadRecord};
use crate::minisign::checksums::ChecksumFile;
use crate::minisign::names::SIGNATURE_SUFFIX;
use crate::minisign::run::RunBinding;
use crate::trust::binding::ReleaseIdentity;
use crate::trust::keys::TrustedKeys;
use crate::trust::signer::{Cause, Rejected};
use crate::verdict::provenance::{judge_run, judge_uploads, Signed};

/// Which run a signature names: its id and attempt (the records are read once per run).
pub(crate) type RunKey = (u64, u32);

/// Everything read about a published release.
#[derive(Debug)]
pub(crate) struct ReleaseEvidence {
    /// Its tag, repository, and the commit the tag names now.
    pub(crate) identity: ReleaseIdentity,
    pub(crate) assets: Vec<AssetRecord>,
    /// The assets as they were read: a folder of them (`dir/<name>`).
    pub(crate) folder: Evidence,
    /// The records of each run a counted signature of the list names, once read.
    pub(crate) runs: BTreeMap<RunKey, RunEvidence>,
}

impl ReleaseEvidence {
    /// The folder the assets are judged in.
    pub(crate) fn dir(&self) -> &Path {
        self.folder
            .inputs
            .first()
            .map_or(Path::new(""), |(p, _)| p.as_path())
    }
}

/// One failure of the verdict: why (as a type), what it is about, and the words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) cause: Cause,
    /// The file, signature or run it is about, as the report names it.
    pub(crate) subject: String,
    pub(crate) why: String,
}

/// The verdict: the report `verify --release` prints, and its failures, typed.
#[derive(Debug)]
pub(crate) struct ReleaseVerdict {
    pub(crate) report: VerifyReport,
    pub(crate) problems: Vec<Problem>,
}

/// The runs the counted signatures of a trusted list (`list`, its verdict) name, with the
/// environment whose deployment each must show (the binding's, or the policy's).
fn runs_to_read(list: &ArtifactResult, keys: &TrustedKeys) -> Vec<(RunBinding, Option<String>)> {
    let mut out: Vec<(RunBinding, Option<String>)> = Vec::new();
    if list.status != ArtifactStatus::Ok {
        return out;
    }
    for binding in list
        .signers
        .iter()
        .filter(|s| s.counted)
        .filter_map(|s| s.run.as_ref())
    {
        let env = binding
            .environment
            .clone()
            .or_else(|| keys.policy().run.environment.clone());
        if !out.iter().any(|(b, _)| same_run(b, binding)) {
            out.push((binding.clone(), env));
        }
    }
    out
}

fn same_run(a: &RunBinding, b: &RunBinding) -> bool {
    (a.run_id, a.attempt) == (b.run_id, b.attempt)
}

impl ReleaseVerdict {
    fn list_result(&self) -> Option<&ArtifactResult> {
        self.report
            .results
            .first()
            .filter(|r| r.checked != ["provenance"])
    }
}

/// Whether a release carries anything signed: a checksum list or a signature.
pub(crate) fn is_signed<'a>(mut assets: impl Iterator<Item = &'a str>, list: &str) -> bool {
    assets.any(|a| a.ends_with(SIGNATURE_SUFFIX) || a.ends_with(".sig") || a == list)
}

/// The layout of a published release, from its assets' names (`opts.checksums_name` when given).
pub(crate) fn layout_of<'a>(
    assets: impl Iterator<Item = &'a str> + Clone,
    opts: &VerifyOptions,
) -> super::layout::Layout {
    let names: std::collections::BTreeSet<&str> = assets.clone().collect();
    super::layout::choose(assets, opts.checksums_name.as_deref(), |n| {
        super::layout::signature_names(n)
            .iter()
            .any(|s| names.contains(s.as_str()))
    })
}

/// The list name a sentence about a release without one names.
fn list_shown(opts: &VerifyOptions) -> &str {
    opts.checksums_name
        .as_deref()
        .unwrap_or(crate::minisign::names::CHECKSUMS_NAME)
}

/// The verdict on `ev`, judged with `keys` and the caller's `opts` (what a signature must bind
/// and what is allowed; `opts.release` is set to the release's identity here), or what it needs
/// read first: the list's signatures are judged before anything else is asked for, and nothing
/// but the runs its counted signatures name and the assets it covers is.
pub(crate) fn judge(
    ev: &ReleaseEvidence,
    keys: &TrustedKeys,
    opts: &VerifyOptions,
) -> Result<Judgement<ReleaseVerdict>> {
    let opts = VerifyOptions {
        release: Some(ev.identity.clone()),
        ..opts.clone()
    };
    let names = ev.assets.iter().map(|a| a.name.as_str());
    if !is_signed(names.clone(), list_shown(&opts)) {
        return Ok(Judgement::Done(unsigned(ev, &opts)));
    }
    let layout = layout_of(names, &opts);
    let mut folder = ev.folder.clone();
    folder.preset.extend(replaced_by_digest(ev, &opts));
    let sums = ev.dir().join(layout.list.as_deref().unwrap_or_default());
    let mut needs = Needs::default();
    if layout.list.is_some() && folder.exists(&sums) {
        match super::folder::judge_list(&folder, &sums, keys, &opts) {
            Err(more) => return Ok(Judgement::Needs(more)),
            Ok((list, _)) => {
                for (binding, env) in runs_to_read(&list, keys) {
                    if !ev.runs.contains_key(&(binding.run_id, binding.attempt)) {
                        needs.runs.push((binding, env));
                    }
                }
            }
        }
    }
    let report = match super::folder::judge(&folder, &opts, keys)? {
        Judgement::Needs(more) => {
            needs.bytes.extend(more.bytes);
            needs.logs.extend(more.logs);
            return Ok(Judgement::Needs(needs));
        }
        Judgement::Done(_) if !needs.is_empty() => return Ok(Judgement::Needs(needs)),
        Judgement::Done(report) => report,
    };
    let list_trusted = report
        .results
        .first()
        .is_some_and(|r| Path::new(&r.name) == sums && r.status == ArtifactStatus::Ok);
    let mut verdict = ReleaseVerdict {
        report,
        problems: Vec::new(),
    };
    if list_trusted {
        provenance(ev, keys, &mut verdict);
    }
    if let Err(more) = super::witnesses::judge(&folder, &opts, keys, &mut verdict.report) {
        return Ok(Judgement::Needs(more));
    }
    verdict.problems = problems(&verdict.report, std::mem::take(&mut verdict.problems));
    notes(ev, keys, &mut verdict.report);
    Ok(Judgement::Done(verdict))
}

/// A release with no checksum list and no signature at all.
fn unsigned(ev: &ReleaseEvidence, opts: &VerifyOptions) -> ReleaseVerdict {
    let mut report = VerifyReport::default();
    let problem = unsigned_problem(&ev.identity, list_shown(opts), ev.assets.len());
    report.add_check(
        problem.subject.clone(),
        "signature",
        Some((Cause::Unsigned, problem.why.clone())),
    );
    notes(ev, &TrustedKeys::default(), &mut report);
    ReleaseVerdict {
        report,
        problems: vec![problem],
    }
}

/// The problem of a release that carries no checksum list (`list`) and no signature among its
/// `assets` assets: one sentence, for `verify --release` and the audit alike.
pub(crate) fn unsigned_problem(release: &ReleaseIdentity, list: &str, assets: usize) -> Problem {
    Problem {
        cause: Cause::Unsigned,
        subject: format!("release {} of {}", release.tag, release.repo),
        why: format!(
            "this release is not signed: it has no {list} and no .minisig among its {assets} assets"
        ),
    }
}

fn parsed_list(folder: &Evidence, sums: &Path) -> Option<ChecksumFile> {
    let bytes = folder.lists.get(sums)?.as_ref().ok()?.as_ref()?;
    ChecksumFile::parse(std::str::from_utf8(bytes).ok()?).ok()
}

/// Assets whose digest GitHub took at upload is not what the list says (found without reading
/// them), and assets whose bytes, read, are not what GitHub took. The list is not trusted yet:
/// a forged list fails on its signature whatever it says here.
pub(crate) fn replaced_by_digest(
    ev: &ReleaseEvidence,
    opts: &VerifyOptions,
) -> Vec<(PathBuf, Rejected)> {
    let dir = ev.dir();
    let layout = layout_of(ev.assets.iter().map(|a| a.name.as_str()), opts);
    let Some(list_name) = layout.list else {
        return Vec::new();
    };
    let listed: BTreeMap<String, [u8; 32]> = parsed_list(&ev.folder, &dir.join(&list_name))
        .map(|l| {
            l.entries()
                .filter_map(|(n, d)| Some((n.to_string(), *d.sha256()?)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for a in &ev.assets {
        let Some(digest) = a.digest else { continue };
        let path = dir.join(&a.name);
        let hex = crate::util::to_hex(&digest);
        if let Some(expected) = listed.get(&a.name).filter(|l| **l != digest) {
            out.push((
                path,
                (
                    Cause::Replaced,
                    format!(
                        "GitHub's digest of the asset is sha256:{hex}, the signed {} lists {}: replaced after signing",
                        list_name,
                        crate::util::to_hex(expected),
                    ),
                ),
            ));
        } else if let Some(FileBytes::Read(d, _)) = ev.folder.bytes.get(&path) {
            if d.sha256 != digest {
                out.push((
                    path,
                    (
                        Cause::Replaced,
                        format!(
                            "the bytes read have SHA-256 {}, GitHub's digest at upload is sha256:{hex}",
                            crate::util::to_hex(&d.sha256)
                        ),
                    ),
                ));
            }
        }
    }
    out
}

/// Each counted signature of the list that binds a run, against GitHub's records of it; and
/// every asset's upload against the run of the first signature (a co-signature's asset against
/// its own run, when it binds one). A line each in the report; each problem typed.
fn provenance(ev: &ReleaseEvidence, keys: &TrustedKeys, verdict: &mut ReleaseVerdict) {
    let Some(list) = verdict.list_result().cloned() else {
        return;
    };
    let policy = &keys.policy().run;
    let mut lines = Vec::new();
    for (i, signer) in list.signers.iter().filter(|s| s.counted).enumerate() {
        let Some(binding) = &signer.run else { continue };
        let subject = format!("{} ({binding})", signer.signature.display());
        let mut found: Vec<Problem> = Vec::new();
        let mut add = |cause: Cause, why: String| {
            found.push(Problem {
                cause,
                subject: subject.clone(),
                why,
            })
        };
        let evidence = match ev.runs.get(&(binding.run_id, binding.attempt)) {
            Some(e) => e,
            None => {
                add(
                    Cause::Unverifiable,
                    "the run the signature names was not read".into(),
                );
                lines.push((subject.clone(), found));
                continue;
            }
        };
        let signed = Signed {
            binding,
            timestamp: signer.timestamp,
            commit: signer.commit.as_deref(),
            repo: &ev.identity.repo,
            tag: &ev.identity.tag,
        };
        for why in judge_run(&signed, evidence, policy) {
            add(Cause::Provenance, why);
        }
        if let Some(run) = &evidence.run {
            for (cause, why) in uploads(ev, &list, (i == 0, signer), run) {
                add(cause, why);
            }
        }
        lines.push((subject, found));
    }
    for (subject, found) in lines {
        let failure = (!found.is_empty()).then(|| {
            let cause = found
                .iter()
                .map(|p| p.cause.clone())
                .find(|c| *c == Cause::Provenance)
                .unwrap_or_else(|| found[0].cause.clone());
            let why = found
                .iter()
                .map(|p| p.why.as_str())
                .collect::<Vec<_>>()
                .join("; ");
            (cause, why)
        });
        verdict.report.add_check(subject, "provenance", failure);
        verdict.problems.extend(found);
    }
}

/// The uploads a signature's run must have made: for the first signature, every asset but the
/// co-signatures that bind runs of their own; for such a co-signature, its own asset.
fn uploads(
    ev: &ReleaseEvidence,
    list: &ArtifactResult,
    (first, signer): (bool, &crate::trust::signer::SignerEntry),
    run: &crate::github::records::RunRecord,
) -> Vec<Rejected> {
    let own_run: Vec<String> = list
        .signers
        .iter()
        .skip(1)
        .filter(|s| s.counted && s.run.is_some())
        .filter_map(|s| s.signature.file_name()?.to_str().map(str::to_string))
        .collect();
    let mine = signer
        .signature
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut records: Vec<UploadRecord> = Vec::new();
    for a in &ev.assets {
        let judged_here = if first {
            !own_run.contains(&a.name)
        } else {
            a.name == mine
        };
        if !judged_here {
            continue;
        }
        match &a.upload {
            Some(u) => records.push(u.clone()),
            None => out.push((
                Cause::Unverifiable,
                format!(
                    "the API does not say who uploaded {} or when",
                    crate::markup::text_value(&a.name)
                ),
            )),
        }
    }
    out.extend(
        judge_uploads(run, &records)
            .into_iter()
            .map(|why| (Cause::Upload, why)),
    );
    out
}

/// Every failure of the report as a problem (a provenance line's own problems are kept as they
/// were found), in report order. Files that fail only because the list does not verify are
/// the list's problem, not problems of their own.
fn problems(report: &VerifyReport, provenance: Vec<Problem>) -> Vec<Problem> {
    let mut out = Vec::new();
    for r in &report.results {
        if r.status == ArtifactStatus::Ok
            || r.checked == ["provenance"]
            || r.cause == Cause::ListFailed
        {
            continue;
        }
        out.push(Problem {
            cause: r.cause.clone(),
            subject: r.name.clone(),
            why: r.reason.clone().unwrap_or_default(),
        });
    }
    out.extend(provenance);
    out
}

/// What the reader should know of the release besides its verdict.
fn notes(ev: &ReleaseEvidence, keys: &TrustedKeys, report: &mut VerifyReport) {
    let unread = ev.folder.unread.len();
    if unread > 0 {
        report.notes.push(format!(
            "{unread} signature asset{} not read: an artifact's own signature (the list's signatures were; --deep reads every asset), or a co-signature by a key not known here",
            if unread == 1 { "" } else { "s" }
        ));
    }
    report.warnings.extend(keys.notes().iter().cloned());
    let first = report
        .results
        .first()
        .filter(|r| r.checked != ["provenance"]);
    let unbound = first.filter(|r| {
        r.status == ArtifactStatus::Ok && r.run.is_none() && r.trusted_comment.is_none()
    });
    if let (Some(list), false) = (unbound, keys.policy().run.is_set()) {
        let name = Path::new(&list.name)
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        report.warnings.push(format!(
            "{name}{SIGNATURE_SUFFIX} binds no workflow run: where it was made cannot be checked (`warden sign` in GitHub Actions binds one; keys/policy.toml's require_run makes it required)",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::evidence::Published;
    use crate::verdict::testkit::{folder, list, Signer};

    const COMMIT: &str = "3470838ef50e566f292860fb1d8aee4937d11849";

    /// Release v1 of o/r: the assets named, GitHub's digest of each (`digests`), and the folder
    /// of them as read before any artifact's bytes.
    fn release(names: &[&str], digests: &[(&str, [u8; 32])], folder: Evidence) -> ReleaseEvidence {
        let mut folder = folder;
        folder.published = Some(Published {
            assets: names.iter().map(|n| n.to_string()).collect(),
            downloading: true,
            digests: Default::default(),
            immutable: None,
        });
        ReleaseEvidence {
            identity: ReleaseIdentity {
                tag: "v1".into(),
                repo: "o/r".into(),
                commit: Some(COMMIT.into()),
            },
            assets: names
                .iter()
                .map(|n| AssetRecord {
                    name: n.to_string(),
                    digest: digests.iter().find(|(d, _)| d == n).map(|(_, d)| *d),
                    upload: None,
                })
                .collect(),
            folder,
            runs: BTreeMap::new(),
        }
    }

    fn opts() -> VerifyOptions {
        VerifyOptions {
            checksums_name: None,
            ..VerifyOptions::default()
        }
    }

    #[test]
    fn a_release_without_signatures_is_unsigned_in_one_sentence() {
        let ev = release(&["app"], &[], folder(&["app"], None, &[]));
        let Judgement::Done(v) = judge(&ev, &Signer::new().keys(), &opts()).unwrap() else {
            panic!("an unsigned release needs nothing");
        };
        assert_eq!(
            v.problems,
            [Problem {
                cause: Cause::Unsigned,
                subject: "release v1 of o/r".into(),
                why: "this release is not signed: it has no SHA256SUMS and no .minisig among its 1 assets".into(),
            }]
        );
    }

    /// GitHub's digest shows an asset replaced after signing: it fails as replaced, and its
    /// bytes are never asked for.
    #[test]
    fn an_asset_replaced_after_signing_is_caught_by_github_s_digest_unread() {
        let s = Signer::new();
        let sums = list(&[("app", b"the app")]);
        let comment =
            format!("timestamp:1\tfile:SHA256SUMS\thashed\ttag:v1\trepo:o/r\tcommit:{COMMIT}");
        let names = ["SHA256SUMS", "SHA256SUMS.minisig", "app"];
        let ev = release(
            &names,
            &[("app", [7; 32])],
            folder(
                &names,
                Some(&sums),
                &[("SHA256SUMS.minisig", s.sign(&sums, &comment).to_string())],
            ),
        );
        let Judgement::Done(v) = judge(&ev, &s.keys(), &opts()).unwrap() else {
            panic!("a replaced asset's bytes were asked for");
        };
        assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
        assert_eq!(v.problems[0].cause, Cause::Replaced);
        assert_eq!(v.problems[0].subject, "dist/app");
    }

    /// A trusted list whose signature names a run: the verdict asks for the run, and a run
    /// GitHub does not have fails the release.
    #[test]
    fn a_bound_run_is_asked_for_and_judged() {
        let s = Signer::new();
        let sums = list(&[("app", b"the app")]);
        let comment = format!("timestamp:1\tfile:SHA256SUMS\thashed\ttag:v1\trepo:o/r\tcommit:{COMMIT}\trun:555\tattempt:1\tworkflow:o/r/.github/workflows/release.yml@refs/tags/v1");
        let names = ["SHA256SUMS", "SHA256SUMS.minisig", "app"];
        let mut ev = release(
            &names,
            &[],
            folder(
                &names,
                Some(&sums),
                &[("SHA256SUMS.minisig", s.sign(&sums, &comment).to_string())],
            ),
        );
        crate::verdict::testkit::read(&mut ev.folder, Path::new("dist/app"), b"the app");
        let Judgement::Needs(needs) = judge(&ev, &s.keys(), &opts()).unwrap() else {
            panic!("judged without the run");
        };
        assert_eq!(
            needs
                .runs
                .iter()
                .map(|(b, _)| b.to_string())
                .collect::<Vec<_>>(),
            ["run 555 (attempt 1) of .github/workflows/release.yml"]
        );
        ev.runs.insert(
            (555, 1),
            RunEvidence {
                run: None,
                deployments: Vec::new(),
            },
        );
        let Judgement::Done(v) = judge(&ev, &s.keys(), &opts()).unwrap() else {
            panic!("still needs something");
        };
        assert_eq!(
            v.problems
                .iter()
                .map(|p| p.cause.clone())
                .collect::<Vec<_>>(),
            [Cause::Provenance]
        );
    }
}
