//! Every audit rule, one file each: its metadata (`RULE`: id, severity, description, the
//! README's explanation) and its check. The list below registers them, in the order of the
//! README table and SARIF's rule list, with the hook that runs each:
//!
//! - `job`: `check(&JobView, &JobContext)`, run on every job that may hold a key;
//! - `workflow`: `check(&WorkflowView)`, run on every workflow;
//! - `settings`: `check(&SettingsView)`, run on what the settings audit read;
//! - `stage`: raised by the pipeline stage its file names (the parser, the release check, the
//!   configuration).
//!
//! Adding a rule: a new file here, a line in the list, and a test case.

use crate::audit::rule::Rule;
use crate::audit::settings::view::SettingsCheck;
use crate::audit::workflows::checks::{Checks, JobCheck, WorkflowCheck};

/// The hooks of one rule: at most one is set.
type Hooks = (
    Option<JobCheck>,
    Option<WorkflowCheck>,
    Option<SettingsCheck>,
);

macro_rules! hook {
    (job, $module:ident) => {
        (Some($module::check as JobCheck), None, None)
    };
    (workflow, $module:ident) => {
        (None, Some($module::check as WorkflowCheck), None)
    };
    (settings, $module:ident) => {
        (None, None, Some($module::check as SettingsCheck))
    };
    (stage, $module:ident) => {
        (None, None, None)
    };
}

macro_rules! is_settings_hook {
    (settings) => {
        true
    };
    ($other:ident) => {
        false
    };
}

macro_rules! rules {
    ($($module:ident: $hook:ident,)*) => {
        $(pub(crate) mod $module;)*

        /// Every rule, in the order of the README table and SARIF's rule list.
        pub const ALL: &[Rule] = &[$($module::RULE,)*];

        /// Whether `rule` judges the repository's settings (rulesets, environments, secrets).
        pub(crate) fn is_settings(rule: Rule) -> bool {
            $((is_settings_hook!($hook) && rule.id() == $module::RULE.id()) ||)* false
        }

        /// Every rule's hooks, in list order.
        fn hooks() -> Vec<Hooks> {
            vec![$(hook!($hook, $module),)*]
        }
    };
}

rules! {
    signing_secret_outside_environment: job,
    tag_gate_is_not_a_boundary: job,
    signing_secret_dangerous_trigger: workflow,
    secrets_context_to_untrusted_code: job,
    secrets_overprovisioned: job,
    signing_secrets_inherit: workflow,
    signing_job_write_permissions: job,
    signing_secret_to_remote_workflow: workflow,
    signing_job_default_permissions: job,
    signing_job_unpinned_action: job,
    signing_job_template_injection: job,
    signing_job_cache_restore: job,
    signing_job_self_hosted_runner: job,
    signing_job_foreign_artifact: job,
    signing_key_in_artifact: job,
    signing_job_without_attestation: job,
    log_key_beside_signing_key: job,
    workflow_unparseable: stage,
    no_tag_ruleset: settings,
    legacy_tag_protection: settings,
    tag_ruleset_incomplete: settings,
    tag_ruleset_bypass: settings,
    environment_missing: settings,
    environment_no_reviewers: settings,
    environment_self_review: settings,
    environment_admin_bypass: settings,
    environment_any_ref: settings,
    environment_no_tag_policy: settings,
    secret_repo_level: settings,
    secret_shadowed: settings,
    secret_org_visible: settings,
    suppression_expired: stage,
    suppression_unmatched: stage,
    release_unsigned: stage,
    release_signature_invalid: stage,
    release_binding_mismatch: stage,
    release_mutable: stage,
    immutable_releases_disabled: stage,
    release_signed_by_revoked_key: stage,
    release_signed_outside_pipeline: stage,
    release_asset_replaced: stage,
    release_attestation_mismatch: stage,
    keys_folder_inconsistent: stage,
    key_shared_across_repositories: stage,
    key_not_committed: stage,
    key_id_collision: stage,
    key_unused: stage,
    key_secret_overexposed: stage,
    key_expiring: stage,
    revoked_key_still_read: stage,
    repository_signs_without_key: stage,
    unverifiable: settings,
}

/// The rule with this id.
pub(crate) fn by_id(id: &str) -> Option<Rule> {
    ALL.iter().copied().find(|r| r.id() == id)
}

/// What the workflow audit runs: every job and workflow check of the list.
pub fn workflow_checks() -> Checks {
    let hooks = hooks();
    Checks {
        job: hooks.iter().filter_map(|h| h.0).collect(),
        workflow: hooks.iter().filter_map(|h| h.1).collect(),
        unparseable: workflow_unparseable::finding,
        unread: signing_secret_outside_environment::unread,
    }
}

/// What the settings audit runs: every settings check of the list.
pub fn settings_checks() -> Vec<SettingsCheck> {
    hooks().iter().filter_map(|h| h.2).collect()
}

impl<'de> serde::Deserialize<'de> for Rule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = <String as serde::Deserialize>::deserialize(d)?;
        by_id(&id).ok_or_else(|| serde::de::Error::custom(format!("unknown finding id {id:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_described_and_named_after_their_file() {
        let mut ids: Vec<&str> = ALL.iter().map(|r| r.id()).collect();
        for r in ALL {
            assert!(
                !r.description().is_empty() && !r.explanation().is_empty(),
                "{r}"
            );
            assert!(
                r.id().bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{r}"
            );
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), ALL.len());
        // Each file's RULE has the file's name: `rules/<id>.rs`.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/audit/rules");
        for r in ALL {
            let file = dir.join(format!("{}.rs", r.id().replace('-', "_")));
            assert!(file.is_file(), "{r}: no {}", file.display());
        }
        assert_eq!(by_id("secret-shadowed"), Some(secret_shadowed::RULE));
        assert_eq!(by_id("nope"), None);
    }

    #[test]
    fn every_job_workflow_and_settings_rule_is_dispatched() {
        let checks = workflow_checks();
        assert_eq!((checks.job.len(), checks.workflow.len()), (14, 3));
        assert_eq!(settings_checks().len(), 14);
    }
}
