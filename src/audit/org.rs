//! `warden audit --org ORG`: the full audit of every repository of an organisation, through the
//! API only. Each repository's `.github/` and `keys/` are fetched into a temporary folder (no
//! clone) and audited as a checkout, then its settings are read; repositories run concurrently
//! (`--jobs`), over one client whose requests in flight are bounded. When the rate limit would
//! run out, no further repository starts, and the report names those left.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use futures::StreamExt as _;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize as _, Serialize};

use super::baseline::Baseline;
use super::findings::{AuditReport, Confidence, Finding, Location, Severity, Suppression};
use super::inventory::facts::{self, OrgSecret, RepoFacts};
use super::rule::Rule;
use super::secrets::SigningSecrets;
use super::{settings, Prepared};
use crate::error::{Error, Reason, Result};
use crate::github::api::{ApiSource, RequestCounts};
use crate::github::graphql;
use crate::github::memo::Memo;
use crate::github::org::{
    fetch_audit_files, legacy_tag_protection_gone, list_repositories, org_secrets_by_repository,
    OrgOverlay, OrgRepository, SecretReaders,
};
use crate::github::session::Session;
use crate::github::snapshot::{Recorder, SnapshotSource};

/// What to audit in the organisation, and how.
#[derive(Clone, Debug)]
pub struct OrgRequest {
    pub org: String,
    pub include_archived: bool,
    pub include_forks: bool,
    /// Only repositories whose name (without the owner) matches one of these globs.
    pub matching: Vec<String>,
    /// Only these repositories (`NAME` or `OWNER/NAME`), from `--repos-from FILE`.
    pub only: Option<Vec<String>>,
    /// Repositories audited at once.
    pub jobs: usize,
    pub secrets: SigningSecrets,
    pub fallback_tag_patterns: Vec<String>,
    pub fail_on: Severity,
    pub releases: usize,
    pub deep: bool,
    /// No repository starts while fewer requests than this are left in the rate limit.
    pub reserve: u64,
    /// `--resume`: an earlier run of the same organisation that stopped early.
    pub resume: Option<Resume>,
    /// Repositories audited so far and how many will be (set once the listing is read), for a
    /// progress display.
    pub progress: Option<OrgProgress>,
    /// `--inventory`: each repository's key facts are gathered as it is audited.
    pub inventory: bool,
}

/// Repositories done, and the total once known.
#[derive(Clone, Debug, Default)]
pub struct OrgProgress {
    pub done: crate::minisign::Progress,
    pub total: crate::minisign::Progress,
}

/// What an earlier, interrupted run leaves: the repositories it audited, kept as they are.
/// Every other repository of today's listing is audited now (those it did not start or could
/// not read, and those created since).
#[derive(Clone, Debug, Default)]
pub struct Resume {
    pub(crate) audited: Vec<AuditReport>,
    /// With `--inventory`: the key facts of the repositories audited.
    pub(crate) key_facts: Vec<RepoFacts>,
}

impl Resume {
    /// The state an interrupted run of `org` saved: its JSON report.
    pub fn load(file: &std::path::Path, org: &str) -> Result<Resume> {
        let dir = crate::files::paths::parent_dir(file);
        let text = crate::files::guarded::read_text_inside(dir, file, 256 << 20)
            .map_err(|e| Error::io("reading", file, e))?;
        let bad = |why: String| Error::input(file.display().to_string(), None, why);
        let doc: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not a JSON report: {e}")))?;
        if doc["organization"].as_str() != Some(org) {
            return Err(bad(format!("not a report of the organisation {org}")));
        }
        let mut resume = Resume::default();
        for r in doc["repositories"].as_array().into_iter().flatten() {
            resume
                .audited
                .push(report_from_json(r).map_err(|e| bad(format!("a repository's report: {e}")))?);
        }
        if let Some(facts) = doc.get("key_facts") {
            resume.key_facts = serde_json::from_value(facts.clone())
                .map_err(|e| bad(format!("the key facts: {e}")))?;
        }
        Ok(resume)
    }
}

/// A repository that was not audited, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotAudited {
    pub(crate) repository: String,
    pub(crate) reason: String,
    /// With `--baseline`: the baseline lists it as unreadable for the same reason, so it is not
    /// new and does not fail the run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) in_baseline: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct OrgReport {
    pub(crate) organization: String,
    /// One report per repository audited, worst first.
    pub reports: Vec<AuditReport>,
    /// Repositories whose files or settings could not be read: never a pass.
    pub unreadable: Vec<NotAudited>,
    /// Repositories not started because the rate limit would have run out.
    pub not_started: Vec<NotAudited>,
    /// Archived repositories and forks left out (without --include-archived/--include-forks),
    /// and those outside --match/--repos-from.
    pub(crate) excluded: usize,
    pub(crate) fail_on: Severity,
    pub(crate) requests: RequestCounts,
    /// `warden audit snapshot --org`: where the answers were saved, and how many.
    #[serde(skip)]
    pub snapshot: Option<(PathBuf, usize)>,
    /// Why the API could not be used any more (a refused token, a rate limit spent until later
    /// than warden waits, no connection): the repositories not reached are `not_started`, and
    /// the command stops (exit 2) once the state to `--resume` from is saved.
    #[serde(skip)]
    pub stopped: Option<String>,
    /// With `--inventory`: each audited repository's key facts (saved for `--resume`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) key_facts: Vec<RepoFacts>,
    /// With `--inventory`: each organisation secret's visibility and readers, when the token may
    /// read the organisation's secrets.
    #[serde(skip)]
    pub(crate) org_secrets: Option<std::collections::BTreeMap<String, OrgSecret>>,
}

impl OrgReport {
    /// 2 when repositories were not started to keep the rate limit (quota is a usage problem,
    /// not a finding: the report is incomplete, and `--resume` finishes it); else 1 when a
    /// repository has a finding at or above the threshold or could not be read; else 0.
    pub(crate) fn exit_code(&self) -> u8 {
        if !self.not_started.is_empty() {
            return 2;
        }
        u8::from(
            self.reports.iter().any(|r| r.exit_code() != 0)
                || self.unreadable.iter().any(|u| !u.in_baseline),
        )
    }
}

fn globs(patterns: &[String]) -> Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| Error::Usage(format!("--match {p:?}: {e}")))?);
    }
    b.build()
        .map(Some)
        .map_err(|e| Error::Usage(format!("--match: {e}")))
}

/// The repositories of the listing that the request covers; and how many it leaves out.
fn select(listing: Vec<OrgRepository>, req: &OrgRequest) -> Result<(Vec<String>, usize)> {
    let matching = globs(&req.matching)?;
    let total = listing.len();
    let chosen: Vec<String> = listing
        .into_iter()
        .filter(|r| req.include_archived || !r.archived)
        .filter(|r| req.include_forks || !r.fork)
        .map(|r| r.full_name)
        .filter(|full| {
            let name = full.rsplit('/').next().unwrap_or(full);
            matching.as_ref().is_none_or(|m| m.is_match(name))
                && req
                    .only
                    .as_ref()
                    .is_none_or(|only| only.iter().any(|o| o == full || o == name))
        })
        .collect();
    Ok((chosen.clone(), total - chosen.len()))
}

/// How one repository's audit ended.
enum Outcome {
    Audited(Box<AuditReport>, Option<Box<RepoFacts>>),
    Unreadable(String),
    NotStarted(String),
}

/// Where an organisation's answers come from.
pub enum OrgSource<'a> {
    Live(&'a Session),
    /// The API, every answer saved under the folder (`warden audit snapshot --org`).
    Record(&'a Session, PathBuf),
    /// A folder saved by `warden audit snapshot --org`.
    Snapshot(PathBuf),
}

/// What the live session says of the API while the organisation is audited: the rate limit
/// left, and why it cannot be used any more (a refused token, a spent limit, no connection).
struct ApiState<'a> {
    rate_limit: &'a (dyn Fn() -> Option<(u64, u64)> + Sync),
    stopped: &'a (dyn Fn() -> Option<String> + Sync),
}

async fn audit_one<S: ApiSource>(
    api: &S,
    state: &ApiState<'_>,
    repo: &str,
    req: &OrgRequest,
    primed: std::collections::HashMap<String, serde_json::Value>,
) -> Outcome {
    if let Some(line) = (state.stopped)() {
        return Outcome::NotStarted(line);
    }
    if let Some((remaining, reset)) = (state.rate_limit)() {
        if remaining < req.reserve {
            return Outcome::NotStarted(format!(
                "the rate limit would run out ({remaining} requests left, reset at {reset} seconds since the epoch): run again after the reset"
            ));
        }
    }
    let checkout = match tempfile::Builder::new().prefix(".warden-org-").tempdir() {
        Ok(d) => d,
        Err(e) => return Outcome::Unreadable(format!("a temporary folder: {e}")),
    };
    // The inventory's reads that the audit made already are free, and so are those GraphQL
    // answered for the batch.
    let memo = Memo::with_answers(api, primed);
    let api = &memo;
    let key_budget = req.inventory.then_some(facts::EXTRA_REQUESTS);
    let files = match fetch_audit_files(api, repo, checkout.path(), key_budget).await {
        Ok(files) => files,
        Err(why) => {
            return match (state.stopped)() {
                Some(line) => Outcome::NotStarted(line),
                None => Outcome::Unreadable(why.into()),
            }
        }
    };
    let prepared = match Prepared::new(
        checkout.path(),
        &req.secrets,
        &req.fallback_tag_patterns,
        req.fail_on,
    ) {
        Ok(p) => p,
        Err(e) => return Outcome::Unreadable(e.to_string()),
    };
    let (mut found, read) = {
        let input = prepared.settings_input(repo, req.releases, req.deep);
        settings::audit_with_settings(api, &input).await
    };
    let facts = if req.inventory {
        let budget = facts::EXTRA_REQUESTS.saturating_sub(files.key_files);
        let (named, sent) =
            crate::github::org::fetch_named_keys(api, repo, checkout.path(), budget).await;
        let committed = facts::committed_keys(checkout.path(), prepared.keys.as_ref(), &named);
        let jobs = facts::jobs(checkout.path(), &prepared.wf.signing_jobs, &committed);
        let budget = budget.saturating_sub(sent);
        let (releases, releases_unread) = facts::releases(api, repo, req.releases, budget).await;
        Some(Box::new(RepoFacts {
            repository: repo.to_string(),
            committed,
            jobs,
            stores: facts::stores(&read),
            releases,
            releases_unread,
            keys_not_fetched: files.keys_not_fetched.clone(),
        }))
    } else {
        None
    };
    found.extend(
        files
            .oversized
            .iter()
            .map(|(path, size)| super::rules::unverifiable::oversized(path, *size)),
    );
    // The API stopped during this repository: its answers are not about the repository.
    if let Some(line) = (state.stopped)() {
        return Outcome::NotStarted(line);
    }
    Outcome::Audited(Box::new(prepared.finish(Some(repo), found)), facts)
}

/// Lists the organisation and audits what the request covers; `rate_limit` says what is left.
async fn audit_all<S: ApiSource>(
    api: &S,
    state: &ApiState<'_>,
    req: &OrgRequest,
) -> Result<(Vec<(String, Outcome)>, usize, Option<SecretReaders>)> {
    let listing = list_repositories(api, &req.org)
        .await
        .map_err(|why| Error::Usage(format!("listing the repositories of {}: {why}", req.org)))?;
    // Read once for the organisation where the token may (else each repository is asked).
    let (answers, readers) = org_secrets_by_repository(api, &req.org, &listing)
        .await
        .map_or((Default::default(), None), |(a, r)| (a, Some(r)));
    let (mut repos, excluded) = select(listing, req)?;
    // Legacy tag protection is gone from github.com (410 for every repository): asked once.
    let legacy_gone = match repos.first() {
        Some(first) => legacy_tag_protection_gone(api, first).await,
        None => None,
    };
    let overlay = &OrgOverlay {
        inner: api,
        answers,
        legacy_gone,
    };
    // Resumed: every repository of today's listing the saved run did not audit (those it did not
    // start, could not read, and any created since).
    if let Some(resume) = &req.resume {
        let audited: std::collections::BTreeSet<&str> = resume
            .audited
            .iter()
            .filter_map(|r| r.repository.as_deref())
            .collect();
        repos.retain(|r| !audited.contains(r.as_str()));
    }
    if let Some(p) = &req.progress {
        p.total.store(repos.len() as u64, Ordering::Relaxed);
    }
    let wanted = graphql::Wanted {
        key_budget: req.inventory.then_some(facts::EXTRA_REQUESTS),
        releases: req.releases,
    };
    // One GraphQL query answers a batch's trees, files and rulesets (REST reads the rest, and
    // everything where GraphQL is not served); the next batch is asked for while one is audited.
    let batches: Vec<Vec<String>> = repos
        .chunks(graphql::BATCH)
        .map(<[String]>::to_vec)
        .collect();
    let outcomes = futures::stream::iter(batches)
        .map(|batch| async move {
            let mut primed = graphql::prime(api, &batch, wanted).await;
            let with_answers: Vec<_> = batch
                .into_iter()
                .map(|repo| {
                    let answers = primed.remove(&repo).unwrap_or_default();
                    (repo, answers)
                })
                .collect();
            futures::stream::iter(with_answers)
        })
        .buffered(2)
        .flatten()
        .map(|(repo, primed)| async move {
            let outcome = audit_one(overlay, state, &repo, req, primed).await;
            if let Some(p) = &req.progress {
                p.done.fetch_add(1, Ordering::Relaxed);
            }
            (repo, outcome)
        })
        .buffer_unordered(req.jobs.max(1))
        .collect()
        .await;
    Ok((outcomes, excluded, readers))
}

/// Audits every repository of `req.org` the request covers.
pub fn run_org(
    source: &OrgSource,
    req: &OrgRequest,
    baseline: Option<&Baseline>,
) -> Result<OrgReport> {
    let mut snapshot = None;
    let mut stopped = None;
    let (outcomes, excluded, readers, requests) = match source {
        OrgSource::Live(session) => {
            let api = session.api();
            let state = ApiState {
                rate_limit: &|| api.rate_limit(),
                stopped: &|| api.stopped().map(str::to_string),
            };
            let all = session.block_on(audit_all(api, &state, req));
            if all.is_err() {
                // Stopped before the listing was read: nothing to report or resume.
                session.check_api()?;
            }
            let (o, e, r) = all?;
            stopped = api.stopped().map(str::to_string);
            (o, e, r, api.request_counts())
        }
        OrgSource::Record(session, out) => {
            let api = session.api();
            let recorder = Recorder::new(api);
            let state = ApiState {
                rate_limit: &|| api.rate_limit(),
                stopped: &|| None,
            };
            let all = session.block_on(audit_all(&recorder, &state, req));
            session.check_api()?;
            let (o, e, r) = all?;
            snapshot = Some((out.clone(), recorder.save(out)?));
            (o, e, r, api.request_counts())
        }
        OrgSource::Snapshot(dir) => {
            let source = SnapshotSource { dir: dir.clone() };
            let state = ApiState {
                rate_limit: &|| None,
                stopped: &|| None,
            };
            let (o, e, r) = futures::executor::block_on(audit_all(&source, &state, req))?;
            (o, e, r, RequestCounts::default())
        }
    };
    let mut report = OrgReport {
        organization: req.org.clone(),
        reports: Vec::new(),
        unreadable: Vec::new(),
        not_started: Vec::new(),
        excluded,
        fail_on: req.fail_on,
        requests,
        snapshot,
        stopped,
        key_facts: Vec::new(),
        org_secrets: readers.map(|r| {
            r.into_iter()
                .map(|(name, (visibility, readers))| {
                    (
                        name,
                        OrgSecret {
                            visibility,
                            readers,
                        },
                    )
                })
                .collect()
        }),
    };
    fold(&mut report, req, outcomes, baseline);
    report.reports.sort_by(|a, b| {
        b.severity_counts()
            .cmp(&a.severity_counts())
            .then_with(|| a.repository.cmp(&b.repository))
    });
    report
        .unreadable
        .sort_by(|a, b| a.repository.cmp(&b.repository));
    report
        .not_started
        .sort_by(|a, b| a.repository.cmp(&b.repository));
    report
        .key_facts
        .sort_by(|a, b| a.repository.cmp(&b.repository));
    Ok(report)
}

/// Adds each repository's outcome to the report (the resumed run's first), the baseline applied.
fn fold(
    report: &mut OrgReport,
    req: &OrgRequest,
    outcomes: Vec<(String, Outcome)>,
    baseline: Option<&Baseline>,
) {
    let resumed = req.resume.iter().flat_map(|r| {
        r.audited.iter().cloned().map(|a| {
            let facts = r
                .key_facts
                .iter()
                .find(|f| Some(&f.repository) == a.repository.as_ref())
                .cloned()
                .map(Box::new);
            (a, facts)
        })
    });
    let outcomes = resumed
        .map(|(r, facts)| {
            let name = r.repository.clone().unwrap_or_default();
            (name, Outcome::Audited(Box::new(r), facts))
        })
        .chain(outcomes);
    for (repository, outcome) in outcomes {
        match outcome {
            Outcome::Audited(mut r, facts) => {
                if let Some(b) = baseline {
                    b.apply(&mut r);
                }
                report.reports.push(*r);
                report.key_facts.extend(facts.map(|f| *f));
            }
            Outcome::Unreadable(reason) => report.unreadable.push(NotAudited {
                in_baseline: baseline.is_some_and(|b| b.lists_unreadable(&repository, &reason)),
                repository,
                reason,
            }),
            Outcome::NotStarted(reason) => report.not_started.push(NotAudited {
                repository,
                reason,
                in_baseline: false,
            }),
        }
    }
}

/// A report read back from its JSON v1 (a saved organisation run, for `--resume`): the fields
/// `report::audit` writes that a resumed run needs.
fn report_from_json(v: &serde_json::Value) -> Result<AuditReport, Reason> {
    #[derive(serde::Deserialize)]
    struct Owned {
        version: u32,
        repository: Option<String>,
        #[serde(default)]
        release_tag_patterns: Vec<String>,
        #[serde(default)]
        workflows: Vec<PathBuf>,
        fail_on: Severity,
        findings: Vec<OwnedFinding>,
        #[serde(default)]
        coverage: crate::audit::findings::Coverage,
    }
    #[derive(serde::Deserialize)]
    struct OwnedFinding {
        id: Rule,
        severity: Severity,
        confidence: Confidence,
        location: Location,
        #[serde(default)]
        secrets: Vec<String>,
        #[serde(default)]
        subject: Option<String>,
        message: String,
        remediation: String,
        suppressed: Option<Suppression>,
        #[serde(default)]
        evidence: Vec<crate::audit::findings::Evidence>,
    }
    let o = Owned::deserialize(v).map_err(|e| e.to_string())?;
    if o.version != 1 {
        return Err(format!("version {} is not 1", o.version).into());
    }
    let mut report = AuditReport {
        findings: Vec::new(),
        fail_on: o.fail_on,
        repository: o.repository.clone(),
        release_tag_patterns: o.release_tag_patterns,
        workflows: o.workflows,
        snapshot: None,
        suppressed: Vec::new(),
        baseline: None,
        coverage: o.coverage,
        sources: None,
    };
    for f in o.findings {
        let finding = Finding {
            rule: f.id,
            severity: f.severity,
            confidence: f.confidence,
            location: f.location,
            subject: crate::audit::findings::Subject {
                repository: o.repository.clone(),
                secrets: f.secrets,
                detail: f.subject,
                ..Default::default()
            },
            message: f.message,
            remediation: f.remediation,
            evidence: f.evidence,
            parts: Vec::new(),
        };
        match f.suppressed {
            Some(s) => report.suppressed.push((finding, s)),
            None => report.findings.push(finding),
        }
    }
    Ok(report)
}
