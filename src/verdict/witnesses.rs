//! A release's witnesses held against each other (issue 48): the minisign signature (the
//! project's key), GitHub's release attestation (an immutable release's tag, commit and every
//! asset's digest, signed by GitHub) and build provenance (the run that built each artifact, in
//! a certificate GitHub issued to it). A thief with the minisign key alone cannot make the other
//! two, so where they are present they must agree: repository, tag and commit; the provenance's
//! run, attempt, workflow and (where GitHub vouches for it) environment with the run the
//! signature binds; every file's digest with the release attestation's. Each disagreement fails
//! naming both sides. What a bundle proves is `attest`'s; this judges what they say.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::evidence::{Evidence, FileBytes, Needs};
use super::report::{ArtifactResult, ArtifactStatus, Verdict, VerifyReport, Witness};
use super::VerifyOptions;
use crate::attest::claims::{BuildClaims, Kind};
use crate::attest::verify::{verify, Attestation, Verified};
use crate::minisign::names::{PROOF_SUFFIX, SIGNATURE_SUFFIX};
use crate::minisign::run::RunBinding;
use crate::trust::policy::AttestRequirement;
use crate::trust::signer::{Cause, Rejected};
use crate::trust::TrustedKeys;
use crate::util::to_hex;

/// One file of the release as the witnesses see it: its name (as an asset is named), how the
/// report names it, its SHA-256 when known, and whether it is an artifact (not a checksum list,
/// a signature or a log proof).
struct ReleaseFile {
    name: String,
    shown: String,
    sha256: Option<[u8; 32]>,
    artifact: bool,
}

/// What the release is, for the witnesses to agree with, and where each value came from.
#[derive(Default)]
struct Expected {
    repo: Option<(String, &'static str)>,
    tag: Option<(String, &'static str)>,
    commit: Option<(String, &'static str)>,
    /// The run the counted minisign signature binds.
    run: Option<RunBinding>,
}

/// A judgement of the witnesses as it is made: the lines it adds, the witnesses, the notes, the
/// files an attestation contradicts, and the artifacts build provenance covers.
#[derive(Default)]
struct Judging {
    lines: Vec<ArtifactResult>,
    witnesses: Vec<Witness>,
    notes: Vec<String>,
    file_failures: BTreeMap<String, Rejected>,
    covered: BTreeSet<String>,
}

/// Judges the attestations in `ev` (asking for GitHub's, for a published release, first) and
/// adds their lines, the files they contradict and the witnesses to `report`.
pub(crate) fn judge(
    ev: &Evidence,
    opts: &VerifyOptions,
    keys: &TrustedKeys,
    report: &mut VerifyReport,
) -> Result<(), Needs> {
    let Some(roots) = opts.attest.roots.as_deref() else {
        return Ok(());
    };
    let files = release_files(ev);
    if ev.is_published() {
        let wanted = wanted_digests(&files, opts.attest.one_asset);
        let missing: BTreeSet<[u8; 32]> =
            wanted.difference(&ev.attestations.asked).copied().collect();
        if !missing.is_empty() {
            return Err(Needs {
                attestations: missing,
                ..Needs::default()
            });
        }
    }
    let expected = expected(opts, report);
    let mut j = Judging::default();
    let verified = j.verify_all(ev, roots);
    let releases: Vec<&Attestation> = verified
        .iter()
        .filter(|a| a.kind == Kind::ReleaseAttestation)
        .collect();
    for a in &releases {
        j.release(a, (&files, &expected), ev.is_published());
    }
    for a in verified.iter().filter(|a| a.kind == Kind::Provenance) {
        j.provenance(a, (&files, &expected), keys);
    }
    j.requirements((ev, &files), !releases.is_empty(), (opts, keys));
    j.finish(report);
    Ok(())
}

impl Judging {
    /// Every bundle read, verified once each (GitHub answers each asset's digest with the same
    /// release attestation); a bundle that fails is a line, another kind of statement a note.
    fn verify_all(&mut self, ev: &Evidence, roots: &crate::attest::TrustRoots) -> Vec<Attestation> {
        let mut seen = BTreeSet::new();
        let mut verified = Vec::new();
        let mut other = Vec::new();
        for (source, read) in &ev.attestations.sources {
            let bundles = match read {
                Ok(b) => b,
                Err(why) => {
                    self.lines.push(
                        Verdict::new()
                            .rejected((Cause::Unverifiable, format!("not read: {why}")))
                            .into_result(format!("attestations ({source})")),
                    );
                    continue;
                }
            };
            for raw in bundles {
                if !seen.insert(crate::util::sha256(raw.json.as_bytes())) {
                    continue;
                }
                match verify(roots, raw) {
                    Verified::Attestation(a) => verified.push(*a),
                    Verified::Other {
                        origin,
                        predicate_type,
                    } => other.push(format!("{origin} ({predicate_type})")),
                    Verified::Failed { origin, kind, why } => {
                        let noun = kind.map_or("attestation", Kind::noun);
                        self.lines.push(
                            Verdict::new()
                                .rejected((Cause::Attestation, format!("{why} ({origin})")))
                                .into_result(noun.to_string()),
                        );
                        self.witnesses.push(Witness::failed(kind, why));
                    }
                }
            }
        }
        if !other.is_empty() {
            self.notes.push(format!(
                "not a witness here (another kind of statement): {}",
                other.join(", ")
            ));
        }
        verified
    }

    /// A release attestation against the release, and every file against its digests.
    fn release(
        &mut self,
        a: &Attestation,
        (files, expected): (&[ReleaseFile], &Expected),
        published: bool,
    ) {
        for f in files {
            match asset_problem(a, f) {
                // A checksum list on disk that was never an asset (made here, or by another
                // tool) is said; a published release's every asset is in its attestation.
                Some(why) if why.0 == Cause::Missing && !f.artifact && !published => self
                    .notes
                    .push(format!("{} is not in GitHub's release attestation", f.name)),
                Some((_, why)) => {
                    let failure = (Cause::Replaced, why);
                    self.file_failures.entry(f.shown.clone()).or_insert(failure);
                }
                None => {}
            }
        }
        let claims = a.release.clone().unwrap_or_default();
        let assets = a.subjects.iter().filter(|s| s.sha256.is_some()).count();
        let says = format!(
            "GitHub's release signer: release {} of {} at commit {}, {assets} asset{} (signed {})",
            claims.tag.as_deref().unwrap_or("?"),
            claims.repo.as_deref().unwrap_or("?"),
            claims.commit.as_deref().unwrap_or("?"),
            if assets == 1 { "" } else { "s" },
            a.signed_at.as_deref().unwrap_or("at an unproven time")
        );
        let mut w = Witness::attestation(a);
        w.repo = claims.repo.clone();
        w.tag = claims.tag.clone();
        w.commit = claims.commit.clone();
        let problems = release_problems(&claims, expected);
        self.push_judged("release attestation".into(), problems, says, w);
    }

    /// Build provenance against the release and the run its signature binds, for the files it
    /// covers.
    fn provenance(
        &mut self,
        a: &Attestation,
        (files, expected): (&[ReleaseFile], &Expected),
        keys: &TrustedKeys,
    ) {
        let of: Vec<&ReleaseFile> = files
            .iter()
            .filter(|f| {
                f.sha256
                    .is_some_and(|d| a.subjects.iter().any(|s| s.sha256 == Some(d)))
            })
            .collect();
        if of.is_empty() {
            self.notes.push(format!(
                "build provenance of none of these files, not used: {}",
                a.origin
            ));
            return;
        }
        self.covered.extend(of.iter().map(|f| f.name.clone()));
        let build = a.build.clone().unwrap_or_default();
        let problems = build_problems(&build, expected, keys);
        let names: Vec<&str> = of.iter().map(|f| f.name.as_str()).collect();
        let mut w = Witness::attestation(a);
        w.repo = build.repo.clone();
        w.commit = build.commit.clone();
        w.git_ref = build.git_ref.clone();
        w.workflow = build.workflow.clone();
        w.run_id = build.run_id;
        w.attempt = build.attempt;
        w.environment = build.environment.clone();
        w.files = names.iter().map(|n| n.to_string()).collect();
        self.push_judged(
            format!("build provenance of {}", shown_names(&names)),
            problems,
            build_says(&build, expected),
            w,
        );
    }

    /// What `require_attestation` (and `--require-attestation`) asks that is not there fails;
    /// without a requirement, what is missing is a note.
    fn requirements(
        &mut self,
        (ev, files): (&Evidence, &[ReleaseFile]),
        release_verified: bool,
        (opts, keys): (&VerifyOptions, &TrustedKeys),
    ) {
        let require = AttestRequirement::and(opts.attest.require, keys.policy().attestation);
        let origin = match opts.attest.require {
            Some(_) => "--require-attestation".to_string(),
            None => keys.policy().origin(),
        };
        // Offline, where to get them from.
        let hint = if ev.attestations.not_recorded {
            " (the snapshot, recorded by an older warden, holds none of GitHub's answers about them)"
        } else if ev.is_published() {
            ""
        } else {
            " (`gh attestation download` saves them; pass them with --attestations FILE)"
        };
        if ev.attestations.not_recorded && require.is_none() {
            self.notes.push(
                "GitHub's attestations are not in the snapshot (recorded by an older warden): not checked".into(),
            );
            return;
        }
        let read_any = !ev.attestations.sources.is_empty() || ev.is_published();
        let unbuilt: Vec<&str> = files
            .iter()
            .filter(|f| f.artifact && !self.covered.contains(&f.name))
            // Of a published release, only what GitHub was asked about is known.
            .filter(|f| {
                f.sha256
                    .is_some_and(|d| !ev.is_published() || ev.attestations.asked.contains(&d))
            })
            .map(|f| f.name.as_str())
            .collect();
        let mut missing = Vec::new();
        // A release GitHub says is mutable has none (and a note says it is mutable already).
        let immutable = ev.published.as_ref().and_then(|p| p.immutable);
        let mutable = immutable == Some(false);
        if !release_verified {
            let none = if mutable {
                "none: the release is not immutable, and GitHub attests immutable releases only"
            } else {
                "none"
            };
            match require.filter(|r| r.release()) {
                Some(r) => self.required("release attestation", none, (&origin, r), hint),
                None if mutable => {}
                None if immutable == Some(true) => missing.push(
                    "no release attestation, though GitHub says the release is immutable".into(),
                ),
                None => missing.push(
                    "no release attestation (GitHub attests immutable releases only)".to_string(),
                ),
            }
        }
        if !unbuilt.is_empty() {
            let none = format!("none for {}", unbuilt.join(", "));
            match require.filter(|r| r.provenance()) {
                Some(r) => self.required("build provenance", &none, (&origin, r), hint),
                None => missing.push(format!("no build provenance for {}", shown_names(&unbuilt))),
            }
        }
        if read_any && !missing.is_empty() {
            self.notes.push(format!(
                "from GitHub's attestations: {}",
                missing.join("; ")
            ));
        }
    }

    /// A required attestation that is not there: a failed line.
    fn required(
        &mut self,
        name: &str,
        what: &str,
        (origin, r): (&str, AttestRequirement),
        hint: &str,
    ) {
        self.lines.push(
            Verdict::new()
                .rejected((
                    Cause::Attestation,
                    format!(
                        "{what}; {origin} requires it (require_attestation = \"{}\"){hint}",
                        r.word()
                    ),
                ))
                .into_result(name.into()),
        );
    }

    /// Adds everything to `report`: the lines, the files an attestation contradicts (their own
    /// line fails), the witnesses (the minisign signature first, judged before the attestations
    /// spoke) and whether they agree.
    fn finish(mut self, report: &mut VerifyReport) {
        let mut minisign = minisign_witness(report);
        if let Some(m) = minisign.as_mut() {
            let failed = report
                .results
                .iter()
                .any(|r| r.key_id.is_some() && r.status != ArtifactStatus::Ok);
            m.status = if failed {
                ArtifactStatus::Failed
            } else {
                ArtifactStatus::Ok
            };
        }
        let files_agree = self.file_failures.is_empty();
        for (shown, why) in std::mem::take(&mut self.file_failures) {
            match report.results.iter_mut().find(|r| r.name == shown) {
                Some(r) => {
                    r.status = ArtifactStatus::Failed;
                    r.cause = why.0;
                    r.reason = Some(why.1);
                }
                None => self
                    .lines
                    .push(Verdict::new().rejected(why).into_result(shown)),
            }
        }
        let agree = !self.witnesses.is_empty()
            && files_agree
            && self.lines.iter().all(|l| l.status == ArtifactStatus::Ok)
            && minisign
                .as_ref()
                .is_some_and(|m| m.status == ArtifactStatus::Ok);
        report.results.extend(self.lines);
        report.witnesses = minisign.into_iter().chain(self.witnesses).collect();
        if agree {
            let named: Vec<&str> = report.witnesses.iter().map(|w| w.noun()).collect();
            self.notes
                .push(format!("the witnesses agree: {}", named.join(", ")));
        }
        report.notes.extend(self.notes);
    }

    /// Adds the line and the witness of one attestation: OK with what it says, or failed with
    /// its problems.
    fn push_judged(&mut self, name: String, problems: Vec<String>, says: String, mut w: Witness) {
        let verdict = if problems.is_empty() {
            let mut v = Verdict::new();
            v.checked.push("attestation");
            v
        } else {
            w.status = ArtifactStatus::Failed;
            w.reason = Some(problems.join("; "));
            Verdict::new().rejected((Cause::Attestation, problems.join("; ")))
        };
        let mut result = verdict.into_result(name);
        if problems.is_empty() {
            result.says = Some(says);
        }
        self.lines.push(result);
        self.witnesses.push(w);
    }
}

/// The release's files with their SHA-256: a published release's assets (the digest read, or
/// GitHub's), or the files of a folder that were read (and its checksum lists).
fn release_files(ev: &Evidence) -> Vec<ReleaseFile> {
    let sha256 = |path: &Path| match ev.bytes.get(path) {
        Some(FileBytes::Read(d, _)) => Some(d.sha256),
        Some(FileBytes::Sha256Only(d)) => Some(*d),
        _ => None,
    };
    let name_of = |path: &Path| {
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    };
    let mut out = Vec::new();
    if let Some(p) = &ev.published {
        let dir = ev.inputs.first().map_or(PathBuf::new(), |(d, _)| d.clone());
        for name in &p.assets {
            let path = dir.join(name);
            out.push(ReleaseFile {
                name: name.clone(),
                shown: path.display().to_string(),
                sha256: sha256(&path).or_else(|| p.digests.get(name).copied()),
                artifact: is_artifact(name),
            });
        }
        return out;
    }
    for path in ev.bytes.keys().filter(|p| !ev.lists.contains_key(*p)) {
        let name = name_of(path);
        out.push(ReleaseFile {
            artifact: is_artifact(&name),
            shown: path.display().to_string(),
            sha256: sha256(path),
            name,
        });
    }
    for (path, bytes) in &ev.lists {
        let Ok(Some(bytes)) = bytes else { continue };
        out.push(ReleaseFile {
            name: name_of(path),
            shown: path.display().to_string(),
            sha256: Some(crate::util::sha256(bytes)),
            artifact: false,
        });
    }
    out
}

/// Whether an asset is something built (not a checksum list, a signature or a log proof).
fn is_artifact(name: &str) -> bool {
    !(name.ends_with(SIGNATURE_SUFFIX)
        || name.ends_with(".sig")
        || name.ends_with(PROOF_SUFFIX)
        || super::layout::list_rank(name).is_some()
        || super::layout::sidecar_subject(name).is_some())
}

/// The digests to ask GitHub about: every asset's (GitHub finds its release attestation by any
/// digest it lists, so a replaced asset's digest finds none, and each artifact may have its own
/// provenance); for the audit, one artifact's and one other asset's (a checksum list first).
fn wanted_digests(files: &[ReleaseFile], one: bool) -> BTreeSet<[u8; 32]> {
    if !one {
        return files.iter().filter_map(|f| f.sha256).collect();
    }
    let artifact = files.iter().filter(|f| f.artifact).find_map(|f| f.sha256);
    let list = files
        .iter()
        .filter(|f| super::layout::list_rank(&f.name).is_some())
        .chain(files.iter().filter(|f| !f.artifact))
        .find_map(|f| f.sha256);
    artifact.into_iter().chain(list).collect()
}

/// What the release is: a published release's identity; else what `--expect-*` and the counted
/// minisign signatures bind.
fn expected(opts: &VerifyOptions, report: &VerifyReport) -> Expected {
    let signed = report
        .results
        .iter()
        .filter(|r| r.status == ArtifactStatus::Ok && r.key_id.is_some());
    let first = |pick: &dyn Fn(&ArtifactResult) -> Option<String>| signed.clone().find_map(pick);
    let run = first(&|r| r.run.as_ref().map(|_| r.name.clone())).and_then(|name| {
        report
            .results
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.run.clone())
    });
    if let Some(release) = &opts.release {
        return Expected {
            repo: Some((release.repo.clone(), "the release is of")),
            tag: Some((release.tag.clone(), "the release is")),
            commit: release.commit.clone().map(|c| (c, "the tag is at")),
            run,
        };
    }
    let or_signed = |given: Option<&String>,
                     flag: &'static str,
                     pick: &dyn Fn(&ArtifactResult) -> Option<String>| {
        given
            .map(|v| (v.clone(), flag))
            .or_else(|| first(pick).map(|v| (v, "the minisign signature binds")))
    };
    Expected {
        repo: or_signed(opts.expect_repo.as_ref(), "--expect-repo is", &|r| {
            r.repo.clone()
        }),
        tag: or_signed(opts.expect_tag.as_ref(), "--expect-tag is", &|r| {
            r.tag.clone()
        }),
        commit: first(&|r| r.commit.clone())
            .map(|c| (c, "the minisign signature binds"))
            .or_else(|| {
                opts.expect_commit
                    .clone()
                    .map(|c| (c, "--expect-commit is"))
            }),
        run,
    }
}

fn same_commit(theirs: &str, ours: &str) -> bool {
    let (t, o) = (theirs.to_ascii_lowercase(), ours.to_ascii_lowercase());
    o.len() >= 12 && (t == o || t.starts_with(&o))
}

/// Where a release attestation contradicts the release.
fn release_problems(
    claims: &crate::attest::claims::ReleaseClaims,
    expected: &Expected,
) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(theirs), Some((ours, from))) = (&claims.repo, &expected.repo) {
        if !theirs.eq_ignore_ascii_case(ours) {
            out.push(format!(
                "GitHub attests a release of {theirs}; {from} {ours}"
            ));
        }
    }
    if let (Some(theirs), Some((ours, from))) = (&claims.tag, &expected.tag) {
        if theirs != ours {
            out.push(format!("GitHub attests tag {theirs}; {from} {ours}"));
        }
    }
    match (&claims.commit, &expected.commit) {
        (Some(theirs), Some((ours, from))) if !same_commit(theirs, ours) => {
            out.push(format!("GitHub attests commit {theirs}; {from} {ours}"))
        }
        _ => {}
    }
    if claims.tag.is_none() || claims.repo.is_none() {
        out.push("it names no repository or tag".into());
    }
    out
}

/// Why a file contradicts the release attestation: listed with another digest, under another
/// name, or not at all.
fn asset_problem(a: &Attestation, f: &ReleaseFile) -> Option<Rejected> {
    let digest = f.sha256?;
    let named = a.subjects.iter().find(|s| s.name == f.name);
    let why = match named.and_then(|s| s.sha256) {
        Some(d) if d == digest => return None,
        Some(d) => format!(
            "replaced: GitHub's release attestation lists {} as sha256:{}, the file is sha256:{}",
            f.name,
            to_hex(&d),
            to_hex(&digest)
        ),
        None => match a.subjects.iter().find(|s| s.sha256 == Some(digest)) {
            Some(s) => format!(
                "GitHub's release attestation has these bytes as {}, not {}",
                s.name, f.name
            ),
            None => {
                return Some((
                    Cause::Missing,
                    format!(
                        "not in GitHub's release attestation: {} (sha256:{}) was not an asset when the release was published",
                        f.name,
                        to_hex(&digest)
                    ),
                ))
            }
        },
    };
    Some((Cause::Replaced, why))
}

/// Where build provenance contradicts the release or the run its signature binds.
fn build_problems(b: &BuildClaims, expected: &Expected, keys: &TrustedKeys) -> Vec<String> {
    let mut out = Vec::new();
    match (&b.repo, &expected.repo) {
        (None, _) => out.push("its certificate names no source repository".into()),
        (Some(theirs), Some((ours, from))) if !theirs.eq_ignore_ascii_case(ours) => {
            out.push(format!("built by a workflow of {theirs}; {from} {ours}"))
        }
        _ => {}
    }
    if let (Some(theirs), Some((ours, from))) = (&b.commit, &expected.commit) {
        if !same_commit(theirs, ours) {
            out.push(format!("built from commit {theirs}; {from} {ours}"));
        }
    }
    let built_tag = b
        .git_ref
        .as_deref()
        .and_then(|r| r.strip_prefix("refs/tags/"));
    if let (Some(theirs), Some((ours, from))) = (built_tag, &expected.tag) {
        if theirs != ours {
            out.push(format!("built for tag {theirs}; {from} {ours}"));
        }
    }
    if let Some(run) = &expected.run {
        if b.run_id.is_some_and(|id| id != run.run_id)
            || b.attempt.is_some_and(|a| a != run.attempt)
        {
            out.push(format!(
                "built by run {} (attempt {}); the minisign signature binds run {} (attempt {})",
                b.run_id.map_or("?".into(), |i| i.to_string()),
                b.attempt.map_or("?".into(), |i| i.to_string()),
                run.run_id,
                run.attempt
            ));
        }
        if let Some(w) = &b.workflow {
            if !w.eq_ignore_ascii_case(&run.workflow) {
                out.push(format!(
                    "built by workflow {w}; the minisign signature binds {}",
                    run.workflow
                ));
            }
        }
        if let (Some(theirs), Some(ours)) = (&b.environment, &run.environment) {
            if theirs != ours {
                out.push(format!(
                    "built in environment {theirs}; the minisign signature binds environment {ours}"
                ));
            }
        }
    }
    if let (Some(theirs), Some(required)) = (&b.environment, &keys.policy().run.environment) {
        if theirs != required {
            out.push(format!(
                "built in environment {theirs}; {} requires environment {required}",
                keys.policy().origin()
            ));
        }
    }
    out
}

/// What build provenance says, in a line.
fn build_says(b: &BuildClaims, expected: &Expected) -> String {
    let workflow = b
        .workflow
        .as_deref()
        .map(|w| w.split('@').next().unwrap_or(w))
        .map(|w| w.splitn(3, '/').nth(2).unwrap_or(w))
        .unwrap_or("an unnamed workflow");
    let env = match (
        &b.environment,
        expected.run.as_ref().and_then(|r| r.environment.as_ref()),
    ) {
        (Some(e), _) => format!("environment {e}"),
        (None, Some(_)) => "environment not vouched by GitHub".to_string(),
        (None, None) => "no environment".to_string(),
    };
    format!(
        "run {} (attempt {}) of {workflow} in {} at commit {}; {env}",
        b.run_id.map_or("?".into(), |i| i.to_string()),
        b.attempt.map_or("?".into(), |i| i.to_string()),
        b.repo.as_deref().unwrap_or("?"),
        b.commit.as_deref().unwrap_or("?"),
    )
}

/// Up to three names, then how many more.
fn shown_names(names: &[&str]) -> String {
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{} and {} more", names[..3].join(", "), n - 3),
    }
}

/// The minisign signature as a witness: the counted signature of the first verified file (the
/// list, where there is one) and what it binds.
fn minisign_witness(report: &VerifyReport) -> Option<Witness> {
    let r = report
        .results
        .iter()
        .find(|r| r.key_id.is_some() && r.status == ArtifactStatus::Ok)
        .or_else(|| report.results.iter().find(|r| r.key_id.is_some()))?;
    let mut w = Witness::new("minisign", format!("key {}", r.key_id?));
    w.status = r.status;
    w.repo = r.repo.clone();
    w.tag = r.tag.clone();
    w.commit = r.commit.clone();
    if let Some(run) = &r.run {
        w.run_id = Some(run.run_id);
        w.attempt = Some(run.attempt);
        w.workflow = Some(run.workflow.clone());
        w.environment = run.environment.clone();
    }
    Some(w)
}
