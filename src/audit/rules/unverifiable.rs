//! `unverifiable`: something could not be read, so it is not assumed to be safe.

use crate::audit::findings::{Finding, Location};
use crate::github::settings::Read;
use crate::audit::rule::{Meta, Rule};
use crate::audit::settings::rulesets::{tag_protection, TagProtection};
use crate::audit::settings::view::{
    SettingsView, ENV_PERMISSION, ENV_SECRETS_PERMISSION, RULESET_PERMISSION, SECRETS_PERMISSION,
};
use crate::audit::severity::Severity;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "unverifiable",
    severity: Severity::Medium,
    description: "A setting could not be read; it is not assumed to be safe",
    explanation: "a read failed (401/403/404/410, or a field GitHub withheld, such as `bypass_actors`). It names the endpoint and the permission GitHub asked for (`X-Accepted-GitHub-Permissions`)",
});

// Raised wherever a read fails or a value is decided at run time (`Finding::unverifiable`, at
// the severity of the check it stands for); its check reports the settings reads that failed.

/// Something that could not be checked, at the severity of the check it stands for: it is
/// never assumed to be safe.
pub(crate) fn finding(
    severity: Severity,
    location: Location,
    message: impl Into<String>,
    remediation: impl Into<String>,
) -> Finding {
    Finding {
        severity,
        ..Finding::new(RULE, location, message, remediation)
    }
}

/// The finding for a settings read that failed: what could not be checked, at the severity of
/// the check, and the permission that would have let it be read.
pub(crate) fn unreadable<T>(
    read: &Read<T>,
    severity: Severity,
    what: &str,
    fallback_permission: &str,
) -> Option<Finding> {
    let failure = read.answer.as_ref().err()?;
    Some(finding(
        severity,
        Location::api(&read.route),
        format!(
            "could not read {what}: {}. Not assumed to be safe",
            failure.describe()
        ),
        format!(
            "Run the audit with {}, or from a snapshot taken with one (`warden audit snapshot`).",
            failure.needs(fallback_permission)
        ),
    ))
}

/// The check (a settings rule): every settings read that failed, at the severity of the checks
/// it stood for, with the permission that would have allowed it. An unreadable list of rulesets
/// or environments stands for the rules of its family, which then say nothing.
pub(crate) fn check(v: &SettingsView) -> Vec<Finding> {
    let s = v.settings;
    let mut out = Vec::new();
    let read = |out: &mut Vec<Finding>, f: Option<Finding>| out.extend(f);
    match tag_protection(s, v.tags) {
        TagProtection::ListUnreadable => read(
            &mut out,
            unreadable(&s.rulesets, Severity::High, "the tag rulesets", RULESET_PERMISSION),
        ),
        _ => {
            for detail in &s.ruleset_details {
                read(
                    &mut out,
                    unreadable(detail, Severity::High, "a tag ruleset", RULESET_PERMISSION),
                );
            }
        }
    }
    if !s.signing_environments.is_empty() {
        read(
            &mut out,
            unreadable(&s.environments, Severity::High, "the environments", ENV_PERMISSION),
        );
    }
    read(
        &mut out,
        unreadable(&s.repo_secrets, Severity::High, "the repository secrets", SECRETS_PERMISSION),
    );
    read(
        &mut out,
        unreadable(
            &s.org_secrets,
            Severity::Medium,
            "the organization secrets visible to the repository",
            SECRETS_PERMISSION,
        ),
    );
    let listed = s.environments.ok().is_some();
    for reads in &s.signing_environments {
        if listed && s.environment(&reads.name).is_none() {
            continue; // reported as missing
        }
        read(
            &mut out,
            unreadable(
                &reads.secrets,
                Severity::Medium,
                &format!("the secrets of environment `{}`", reads.name),
                ENV_SECRETS_PERMISSION,
            ),
        );
    }
    out
}

/// A file over the size cap, not fetched: a workflow is `workflow-unparseable` (as the offline
/// audit reports it), anything else (a local action, the configuration, a key) `unverifiable`.
pub(crate) fn oversized(path: &str, size: u64) -> Finding {
    let why = format!(
        "{size} bytes, more than the {} MiB warden reads of one file: not fetched",
        crate::github::org::FILE_CAP >> 20
    );
    let rel = std::path::Path::new(path);
    if path.starts_with(".github/workflows/") {
        return super::workflow_unparseable::finding(rel, (1, 1), &why);
    }
    finding(
        Severity::High,
        Location::Workflow {
            path: rel.to_path_buf(),
            line: 1,
            column: 1,
            job: None,
        },
        format!("{path} could not be audited ({why}): whatever a workflow hands it is not followed"),
        "Keep workflow files and local actions under 1 MiB, or audit a checkout (`warden audit` in the repository) to see what it does.",
    )
}
