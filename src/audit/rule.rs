//! Every audit rule as a value: its id (the only name it has: JSON, SARIF `ruleId`, the README
//! table), what it means, and the severity its findings carry. SARIF's rule list and the README
//! table come from [`Rule::ALL`].

use std::fmt;

use serde::Serialize;

use super::severity::Severity;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    SigningSecretOutsideEnvironment,
    TagGateIsNotABoundary,
    SigningSecretDangerousTrigger,
    SigningSecretsInherit,
    SigningJobWritePermissions,
    SigningSecretToRemoteWorkflow,
    SigningJobDefaultPermissions,
    SigningJobUnpinnedAction,
    SigningJobTemplateInjection,
    SigningJobCacheRestore,
    SigningJobSelfHostedRunner,
    SigningJobForeignArtifact,
    WorkflowUnparseable,
    NoTagRuleset,
    LegacyTagProtection,
    TagRulesetIncomplete,
    TagRulesetBypass,
    EnvironmentMissing,
    EnvironmentNoReviewers,
    EnvironmentSelfReview,
    EnvironmentAdminBypass,
    EnvironmentAnyRef,
    EnvironmentNoTagPolicy,
    SecretRepoLevel,
    SecretShadowed,
    SecretOrgVisible,
    SuppressionExpired,
    SuppressionUnmatched,
    ReleaseUnsigned,
    ReleaseSignatureInvalid,
    ReleaseBindingMismatch,
    ReleaseMutable,
    ImmutableReleasesDisabled,
    Unverifiable,
}

impl Rule {
    /// Every rule, in the order of the README table and SARIF's rule list.
    pub const ALL: [Rule; 34] = [
        Rule::SigningSecretOutsideEnvironment,
        Rule::TagGateIsNotABoundary,
        Rule::SigningSecretDangerousTrigger,
        Rule::SigningSecretsInherit,
        Rule::SigningJobWritePermissions,
        Rule::SigningSecretToRemoteWorkflow,
        Rule::SigningJobDefaultPermissions,
        Rule::SigningJobUnpinnedAction,
        Rule::SigningJobTemplateInjection,
        Rule::SigningJobCacheRestore,
        Rule::SigningJobSelfHostedRunner,
        Rule::SigningJobForeignArtifact,
        Rule::WorkflowUnparseable,
        Rule::NoTagRuleset,
        Rule::LegacyTagProtection,
        Rule::TagRulesetIncomplete,
        Rule::TagRulesetBypass,
        Rule::EnvironmentMissing,
        Rule::EnvironmentNoReviewers,
        Rule::EnvironmentSelfReview,
        Rule::EnvironmentAdminBypass,
        Rule::EnvironmentAnyRef,
        Rule::EnvironmentNoTagPolicy,
        Rule::SecretRepoLevel,
        Rule::SecretShadowed,
        Rule::SecretOrgVisible,
        Rule::SuppressionExpired,
        Rule::SuppressionUnmatched,
        Rule::ReleaseUnsigned,
        Rule::ReleaseSignatureInvalid,
        Rule::ReleaseBindingMismatch,
        Rule::ReleaseMutable,
        Rule::ImmutableReleasesDisabled,
        Rule::Unverifiable,
    ];

    /// The stable kebab-case id.
    pub fn id(self) -> &'static str {
        self.meta().0
    }

    /// One line on what a finding of this rule means.
    pub fn description(self) -> &'static str {
        self.meta().2
    }

    /// The severity of this rule's findings. `unverifiable` findings carry the severity of the
    /// check that could not be made instead.
    pub fn default_severity(self) -> Severity {
        self.meta().1
    }

    fn meta(self) -> (&'static str, Severity, &'static str) {
        use Severity::{High, Info, Low, Medium};
        match self {
            Rule::SigningSecretOutsideEnvironment => ("signing-secret-outside-environment", High, "A job that uses the signing secret has no `environment:`"),
            Rule::TagGateIsNotABoundary => ("tag-gate-is-not-a-boundary", Info, "A signing job is gated only by an `if:` on the ref, which a tag pusher can rewrite"),
            Rule::SigningSecretDangerousTrigger => ("signing-secret-dangerous-trigger", High, "The signing secret is reachable from pull_request_target, workflow_run or issue_comment"),
            Rule::SigningSecretsInherit => ("signing-secrets-inherit", High, "`secrets: inherit` passes every secret, the signing key included, to a reusable workflow"),
            Rule::SigningJobWritePermissions => ("signing-job-write-permissions", Medium, "A signing job has write-all or write permissions it does not need"),
            Rule::SigningSecretToRemoteWorkflow => ("signing-secret-to-remote-workflow", High, "The signing key is passed to a reusable workflow in another repository"),
            Rule::SigningJobDefaultPermissions => ("signing-job-default-permissions", Medium, "A signing job sets no `permissions:`, so its token gets the repository default (write-all on older repositories)"),
            Rule::SigningJobUnpinnedAction => ("signing-job-unpinned-action", High, "A job that holds the signing key runs an action by a tag or branch, not a full commit SHA"),
            Rule::SigningJobTemplateInjection => ("signing-job-template-injection", High, "A job that holds the signing key expands untrusted input (`github.event.*`, `inputs.*`) inside `run:`"),
            Rule::SigningJobCacheRestore => ("signing-job-cache-restore", Medium, "A job that holds the signing key restores a cache another, less protected job can write"),
            Rule::SigningJobSelfHostedRunner => ("signing-job-self-hosted-runner", Medium, "A job that holds the signing key runs on a self-hosted runner"),
            Rule::SigningJobForeignArtifact => ("signing-job-foreign-artifact", High, "A job that holds the signing key downloads artifacts from another workflow run"),
            Rule::WorkflowUnparseable => ("workflow-unparseable", High, "A workflow file could not be parsed, so it could not be audited"),
            Rule::NoTagRuleset => ("no-tag-ruleset", High, "No active tag ruleset protects the release tags"),
            Rule::LegacyTagProtection => ("legacy-tag-protection", Medium, "The release tags are protected only by deprecated legacy tag protection (GHES)"),
            Rule::TagRulesetIncomplete => ("tag-ruleset-incomplete", Medium, "The tag ruleset lacks creation, update or deletion rules"),
            Rule::TagRulesetBypass => ("tag-ruleset-bypass", High, "The tag ruleset lets write/maintain roles, an integration or a deploy key bypass it"),
            Rule::EnvironmentMissing => ("environment-missing", High, "The signing environment does not exist: GitHub auto-creates it with no protection"),
            Rule::EnvironmentNoReviewers => ("environment-no-reviewers", High, "The signing environment has no required reviewers"),
            Rule::EnvironmentSelfReview => ("environment-self-review", Medium, "The signing environment lets the person who triggered the run approve it"),
            Rule::EnvironmentAdminBypass => ("environment-admin-bypass", Medium, "Administrators can bypass the signing environment's protection"),
            Rule::EnvironmentAnyRef => ("environment-any-ref", Medium, "Any branch or tag may deploy to the signing environment"),
            Rule::EnvironmentNoTagPolicy => ("environment-no-tag-policy", Medium, "No tag deployment policy of the signing environment covers the release tags"),
            Rule::SecretRepoLevel => ("secret-repo-level", High, "The signing secret is a repository secret, reachable from every job"),
            Rule::SecretShadowed => ("secret-shadowed", High, "The signing secret exists in the environment and at repository or organization level"),
            Rule::SecretOrgVisible => ("secret-org-visible", High, "An organization secret with the signing secret's name is visible to the repository"),
            Rule::SuppressionExpired => ("suppression-expired", Medium, "A suppression in .github/warden.toml is past its `until` date, so its finding counts again"),
            Rule::SuppressionUnmatched => ("suppression-unmatched", Low, "A suppression in .github/warden.toml matches no finding"),
            Rule::ReleaseUnsigned => ("release-unsigned", High, "A published release has no SHA256SUMS and SHA256SUMS.minisig"),
            Rule::ReleaseSignatureInvalid => ("release-signature-invalid", High, "A published release's SHA256SUMS.minisig does not verify against the repository's keys/"),
            Rule::ReleaseBindingMismatch => ("release-binding-mismatch", High, "A published release is signed for another tag, repository or commit than its own"),
            Rule::ReleaseMutable => ("release-mutable", Low, "A published release is not immutable: its assets and tag can still change"),
            Rule::ImmutableReleasesDisabled => ("immutable-releases-disabled", Medium, "Neither the repository nor its organisation enforces immutable releases"),
            Rule::Unverifiable => ("unverifiable", Medium, "A setting could not be read; it is not assumed to be safe"),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl<'de> serde::Deserialize<'de> for Rule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = <String as serde::Deserialize>::deserialize(d)?;
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.id() == id)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown finding id {id:?}")))
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_described() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        for r in Rule::ALL {
            assert!(!r.description().is_empty(), "{r}");
            assert!(
                r.id().bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{r}"
            );
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
        // ALL lists every variant, in declaration order (Unverifiable is the last one).
        for (i, r) in Rule::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "{r}");
        }
        assert_eq!(Rule::Unverifiable as usize, Rule::ALL.len() - 1);
    }
}
