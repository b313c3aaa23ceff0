//! Online audits of repository settings, from the API or a snapshot: tag rulesets, the signing
//! environments, and where the signing secret is stored.
//!
//! `github::settings` reads everything in waves of concurrent requests into typed, lenient
//! structs; then every settings rule (`audit/rules/`, handed in as `SettingsInput::checks`) is a
//! pure function of what it read, over a [`view::SettingsView`]; `rulesets` and `environments`
//! hold what a family of rules shares. A read that fails is an `unverifiable` finding, never a
//! pass. The published releases are judged last (`audit::releases`).

pub(crate) mod environments;
pub(crate) mod rulesets;
pub(crate) mod view;

use std::collections::BTreeSet;

use crate::audit::findings::Finding;
use crate::audit::secrets::SigningSecrets;
use crate::audit::tags::ruleset_protects;
use crate::audit::tags::ReleaseTags;
use crate::audit::workflows::signing_job::SigningJob;
use crate::github::api::ApiSource;
use crate::github::settings::read_settings;

pub struct SettingsInput<'a> {
    /// `owner/name`.
    pub repo: &'a str,
    pub signing_jobs: &'a [SigningJob],
    pub tag_patterns: &'a [String],
    pub secrets: &'a SigningSecrets,
    /// The repository's `keys/`, to verify its published releases against.
    pub keys: Option<&'a crate::trust::keys::TrustedKeys>,
    /// How many of the latest releases to check (`--releases N`).
    pub releases: usize,
    /// `--deep`: download and check every asset of those releases, not just the signed list.
    pub deep: bool,
    /// The settings rules (`audit::rules::settings_checks()`).
    pub checks: Vec<view::SettingsCheck>,
}

/// Audits the settings of `input.repo` read through `source`.
pub async fn audit<S: ApiSource>(source: &S, input: &SettingsInput<'_>) -> Vec<Finding> {
    audit_with_settings(source, input).await.0
}

/// The audit, and the settings it read (the key inventory reads where each secret is stored).
pub(crate) async fn audit_with_settings<S: ApiSource>(
    source: &S,
    input: &SettingsInput<'_>,
) -> (Vec<Finding>, crate::github::settings::Settings) {
    let tags = ReleaseTags::new(input.tag_patterns);
    let environments: Vec<String> = input
        .signing_jobs
        .iter()
        .filter_map(|j| j.environment.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let settings = read_settings(source, input.repo, &environments, |rs| {
        ruleset_protects(rs, &tags)
    })
    .await;
    let view = view::SettingsView {
        settings: &settings,
        repo: input.repo,
        tags: &tags,
        jobs: input.signing_jobs,
        secrets: input.secrets,
    };
    let mut out: Vec<Finding> = input.checks.iter().flat_map(|check| check(&view)).collect();
    out.extend(
        crate::audit::releases::judge(source, input.repo, input.keys, (input.releases, input.deep))
            .await,
    );
    for f in &mut out {
        f.subject.repository = Some(input.repo.to_string());
    }
    (out, settings)
}
