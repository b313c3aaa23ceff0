//! The repository settings the audit judges, as typed answers: tag rulesets (and legacy tag
//! protection), environments with their secrets and deployment policies, repository and
//! organisation secrets. Lenient views of GitHub's answers (every field optional, enum values
//! kept as strings, unknown fields ignored), read through [`ApiSource`] in waves of concurrent
//! requests. A read that fails is kept as an [`ApiError`] for the audit to report.

use futures::future::join_all;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;

use super::api::{ApiError, ApiSource, Fetched, Shape};
use super::routes;

/// One GET: where it was read and what came of it.
#[derive(Clone, Debug)]
pub(crate) struct Read<T> {
    pub(crate) route: String,
    pub(crate) answer: Result<T, ApiError>,
}

impl<T> Read<T> {
    pub(crate) fn ok(&self) -> Option<&T> {
        self.answer.as_ref().ok()
    }
}

/// An item of `GET …/rulesets` (a summary: the details need their own GET).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RulesetSummary {
    pub(crate) id: Option<u64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Ruleset {
    pub(crate) id: Option<u64>,
    pub(crate) name: Option<String>,
    pub(crate) target: Option<String>,
    pub(crate) enforcement: Option<String>,
    pub(crate) conditions: Option<Conditions>,
    pub(crate) rules: Option<Vec<RuleItem>>,
    /// `None` when GitHub withheld them (tokens without write access to the ruleset).
    pub(crate) bypass_actors: Option<Vec<BypassActor>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Conditions {
    pub(crate) ref_name: Option<RefName>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RefName {
    pub(crate) include: Option<Vec<String>>,
    pub(crate) exclude: Option<Vec<String>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RuleItem {
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BypassActor {
    pub(crate) actor_id: Option<u64>,
    pub(crate) actor_type: Option<String>,
    pub(crate) bypass_mode: Option<String>,
}

impl Ruleset {
    pub(crate) fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("?")
    }

    pub(crate) fn is_active(&self) -> bool {
        // GitHub's own examples say "enabled", which is not in the enum: read it as active.
        matches!(self.enforcement.as_deref(), Some("active" | "enabled"))
    }

    /// The `ref_name` condition's include and exclude patterns.
    pub(crate) fn ref_patterns(&self) -> (Vec<String>, Vec<String>) {
        let cond = self.conditions.as_ref().and_then(|c| c.ref_name.as_ref());
        let list = |l: Option<&Vec<String>>| l.cloned().unwrap_or_default();
        (
            list(cond.and_then(|c| c.include.as_ref())),
            list(cond.and_then(|c| c.exclude.as_ref())),
        )
    }

    pub(crate) fn rule_types(&self) -> Vec<&str> {
        self.rules
            .iter()
            .flatten()
            .filter_map(|r| r.kind.as_deref())
            .collect()
    }
}

/// A legacy tag protection (GHES ≤ 3.19): fnmatch on the tag name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LegacyProtection {
    pub(crate) pattern: Option<String>,
    pub(crate) enabled: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct EnvironmentList {
    pub(crate) environments: Option<Vec<Environment>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Environment {
    pub(crate) name: Option<String>,
    pub(crate) can_admins_bypass: Option<bool>,
    pub(crate) protection_rules: Option<Vec<ProtectionRule>>,
    /// `None` (JSON null): any ref may deploy.
    pub(crate) deployment_branch_policy: Option<BranchPolicySetting>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ProtectionRule {
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
    pub(crate) prevent_self_review: Option<bool>,
    /// Only how many there are matters.
    pub(crate) reviewers: Option<Vec<IgnoredAny>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BranchPolicySetting {
    pub(crate) custom_branch_policies: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PolicyList {
    pub(crate) branch_policies: Option<Vec<DeploymentPolicy>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct DeploymentPolicy {
    pub(crate) name: Option<String>,
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
}

impl PolicyList {
    /// The patterns of the `type: tag` policies.
    pub(crate) fn tag_patterns(&self) -> Vec<String> {
        self.branch_policies
            .iter()
            .flatten()
            .filter(|p| p.kind.as_deref() == Some("tag"))
            .filter_map(|p| p.name.clone())
            .collect()
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SecretList {
    pub(crate) secrets: Option<Vec<NamedItem>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NamedItem {
    pub(crate) name: Option<String>,
}

impl SecretList {
    pub(crate) fn names(&self) -> Vec<String> {
        self.secrets
            .iter()
            .flatten()
            .filter_map(|s| s.name.clone())
            .collect()
    }
}

/// What one signing environment's reads gave.
#[derive(Clone, Debug)]
pub(crate) struct EnvironmentReads {
    pub(crate) name: String,
    /// `repos/o/r/environments/<name>`: where findings about the environment point.
    pub(crate) route: String,
    pub(crate) secrets: Read<SecretList>,
    pub(crate) policies: Read<PolicyList>,
}

/// Everything the settings audit reads about one repository.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) rulesets: Read<Vec<RulesetSummary>>,
    /// Every listed ruleset, read in full.
    pub(crate) ruleset_details: Vec<Read<Ruleset>>,
    /// Legacy tag protection, read only when no ruleset protects the release tags.
    pub(crate) legacy: Option<Read<Vec<LegacyProtection>>>,
    /// Read only when a signing job names an environment (else empty: no rule consults it).
    pub(crate) environments: Read<EnvironmentList>,
    /// The signing environments' secrets and deployment policies.
    pub(crate) signing_environments: Vec<EnvironmentReads>,
    pub(crate) repo_secrets: Read<SecretList>,
    pub(crate) org_secrets: Read<SecretList>,
}

impl Settings {
    /// The environment named `name`, when the list was read and has it.
    pub(crate) fn environment(&self, name: &str) -> Option<&Environment> {
        self.environments
            .ok()?
            .environments
            .iter()
            .flatten()
            .find(|e| e.name.as_deref() == Some(name))
    }
}

/// One GET, as a typed answer.
async fn read<T: DeserializeOwned, S: ApiSource>(
    source: &S,
    route: String,
    shape: Shape,
) -> Read<T> {
    let answer = match source.get(&route, shape).await {
        Fetched::Ok(value) => serde_json::from_value(value).map_err(|e| ApiError {
            route: route.clone(),
            status: 0,
            message: format!(
                "unexpected response from GET /{}: {e}",
                routes::path_of(&route)
            ),
            permission: None,
        }),
        failed => Err(ApiError::from_fetched(&route, failed)),
    };
    Read { route, answer }
}

/// Reads the settings of `repo` in waves: the lists; then every ruleset in full and each signing
/// environment's secrets and deployment policies; then, only when no ruleset `protects` the
/// release tags, legacy tag protection (github.com answers 410 Gone, read as "none").
pub(crate) async fn read_settings<S: ApiSource>(
    source: &S,
    repo: &str,
    environments: &[String],
    protects: impl Fn(&Ruleset) -> bool,
) -> Settings {
    let list_environments = async {
        let route = routes::environments(repo);
        if environments.is_empty() {
            // No signing job names an environment: no rule consults the list.
            return Read {
                route,
                answer: Ok(EnvironmentList::default()),
            };
        }
        read::<EnvironmentList, _>(source, route, Shape::Items("environments")).await
    };
    let (rulesets, environment_list, repo_secrets, org_secrets) = futures::join!(
        read::<Vec<RulesetSummary>, _>(source, routes::rulesets(repo), Shape::Array),
        list_environments,
        read::<SecretList, _>(source, routes::repo_secrets(repo), Shape::Items("secrets")),
        read::<SecretList, _>(source, routes::org_secrets(repo), Shape::Items("secrets")),
    );
    let ids: Vec<u64> = rulesets
        .ok()
        .map(|list| list.iter().filter_map(|r| r.id).collect())
        .unwrap_or_default();
    let (ruleset_details, signing_environments) = futures::join!(
        join_all(
            ids.iter()
                .map(|id| read(source, routes::ruleset(repo, *id), Shape::Object))
        ),
        join_all(environments.iter().map(|name| async move {
            let (secrets, policies) = futures::join!(
                read(
                    source,
                    routes::environment_secrets(repo, name),
                    Shape::Items("secrets")
                ),
                read(
                    source,
                    routes::deployment_policies(repo, name),
                    Shape::Items("branch_policies")
                ),
            );
            EnvironmentReads {
                name: name.clone(),
                route: routes::environment(repo, name),
                secrets,
                policies,
            }
        })),
    );
    let protected = ruleset_details
        .iter()
        .any(|d| d.ok().is_some_and(&protects));
    let legacy = if rulesets.answer.is_ok() && !protected {
        Some(read(source, routes::legacy_tag_protection(repo), Shape::Array).await)
    } else {
        None
    };
    Settings {
        rulesets,
        ruleset_details,
        legacy,
        environments: environment_list,
        signing_environments,
        repo_secrets,
        org_secrets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ruleset(v: serde_json::Value) -> Ruleset {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn ruleset_patterns_and_enforcement() {
        let rs = ruleset(
            serde_json::json!({"enforcement": "enabled", "conditions": {"ref_name": {"include": ["refs/tags/v*"], "exclude": ["refs/tags/v0*"]}}}),
        );
        assert!(rs.is_active());
        assert_eq!(
            rs.ref_patterns(),
            (
                vec!["refs/tags/v*".to_string()],
                vec!["refs/tags/v0*".to_string()]
            )
        );
        assert!(!ruleset(serde_json::json!({"enforcement": "evaluate"})).is_active());
    }

    #[test]
    fn withheld_and_null_fields_stay_unknown() {
        let rs = ruleset(
            serde_json::json!({"id": 1, "bypass_actors": null, "rules": null, "extra": {"x": 1}}),
        );
        assert!(rs.bypass_actors.is_none());
        assert!(rs.rule_types().is_empty());
        let env: Environment = serde_json::from_value(
            serde_json::json!({"name": "release", "deployment_branch_policy": null}),
        )
        .unwrap();
        assert!(env.deployment_branch_policy.is_none() && env.can_admins_bypass.is_none());
    }
}
