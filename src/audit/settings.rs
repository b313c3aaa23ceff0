//! Online audits of repository settings, from the API or a snapshot: tag rulesets, the signing
//! environments, and where the signing secret is stored. Two waves of concurrent reads: the lists,
//! then the details they name. A read that fails is an `unverifiable` finding, never a pass.

use std::collections::BTreeSet;

use futures::future::join_all;
use serde_json::Value;

use super::workflows::SigningJob;
use super::{ref_glob, sample_tags, Confidence, Finding, Location, Severity, SigningSecrets};
use crate::github::{ApiSource, Fetched, Shape};

pub struct SettingsInput<'a> {
    /// `owner/name`.
    pub repo: &'a str,
    pub signing_jobs: &'a [SigningJob],
    pub tag_patterns: &'a [String],
    pub secrets: &'a SigningSecrets,
}

/// Environment names are path segments: `/` must be encoded.
pub fn encode_segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn api(route: &str) -> Location {
    Location::Api {
        resource: route.split('?').next().unwrap_or(route).to_string(),
    }
}

fn finding(
    id: &'static str,
    severity: Severity,
    route: &str,
    message: String,
    remediation: String,
) -> Finding {
    Finding::new(id, severity, api(route), message, remediation)
}

/// The finding for a read that failed: what could not be checked, and the permission it needed.
fn unverifiable(
    route: &str,
    severity: Severity,
    what: &str,
    fallback_permission: &str,
    fetched: &Fetched,
) -> Finding {
    let (status, message, permission) = match fetched {
        Fetched::Failed {
            status,
            message,
            permission,
        } => (*status, message.as_str(), permission),
        Fetched::Ok(_) => (0, "unexpected response", &None),
    };
    let answered = if status == 0 {
        "failed".to_string()
    } else {
        format!("answered {status}")
    };
    let needs = match permission {
        Some(p) => format!("a token with `{p}` (GitHub's X-Accepted-GitHub-Permissions)"),
        None => format!("a token with {fallback_permission}"),
    };
    Finding {
        id: "unverifiable",
        severity,
        confidence: Confidence::High,
        location: api(route),
        message: format!("could not read {what}: GET /{} {answered}: {message}. Not assumed to be safe", route.split('?').next().unwrap_or(route)),
        remediation: format!("Run the audit with {needs}, or from a snapshot taken with one (`warden audit snapshot`)."),
    }
}

const RULESET_PERMISSION: &str = "Administration: read (fine-grained) or `repo` (classic)";
const ENV_PERMISSION: &str = "Actions: read (fine-grained) or `repo` (classic)";
const SECRETS_PERMISSION: &str = "Secrets: read (fine-grained) or `repo` (classic)";
const ENV_SECRETS_PERMISSION: &str = "Environments: read (fine-grained) or `repo` (classic)";

fn str_list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a ruleset's ref_name condition covers `tag_ref` (`refs/tags/...`).
fn ruleset_covers(ruleset: &Value, tag_ref: &str) -> bool {
    let cond = &ruleset["conditions"]["ref_name"];
    let include = str_list(&cond["include"]);
    let exclude = str_list(&cond["exclude"]);
    let matches = |p: &String| p == "~ALL" || ref_glob(p).is_some_and(|g| g.is_match(tag_ref));
    include.iter().any(matches) && !exclude.iter().any(matches)
}

/// The first release tag (`samples` are `refs/tags/…`) that `covers` rejects, without the prefix.
fn missed_tag(samples: &[String], covers: impl Fn(&str) -> bool) -> Option<&str> {
    samples
        .iter()
        .find(|s| !covers(s))
        .map(|s| s.trim_start_matches("refs/tags/"))
}

/// An active ruleset that covers every release tag.
fn protects(ruleset: &Value, samples: &[String]) -> bool {
    is_active(ruleset) && missed_tag(samples, |s| ruleset_covers(ruleset, s)).is_none()
}

/// Why a legacy tag protection (`{id, pattern}`, fnmatch on the tag name) leaves some release
/// tag unprotected; `None` when it protects them all.
fn legacy_gap(protection: &Value, samples: &[String]) -> Option<String> {
    let Some(pattern) = protection["pattern"].as_str() else {
        return Some("no pattern".into());
    };
    let Some(glob) = ref_glob(&format!("refs/tags/{pattern}")) else {
        return Some("not a valid pattern".into());
    };
    if let Some(tag) = missed_tag(samples, |s| glob.is_match(s)) {
        return Some(format!("does not cover {tag}"));
    }
    (protection["enabled"].as_bool() == Some(false)).then(|| "disabled".into())
}

fn is_active(ruleset: &Value) -> bool {
    // GitHub's own examples say "enabled", which is not in the enum: read it as active.
    matches!(
        ruleset["enforcement"].as_str(),
        Some("active") | Some("enabled")
    )
}

/// Audits the settings of `input.repo` through `api`.
pub async fn audit_settings<S: ApiSource>(
    api_source: &S,
    input: &SettingsInput<'_>,
) -> Vec<Finding> {
    let repo = input.repo;
    let samples: Vec<String> = input
        .tag_patterns
        .iter()
        .flat_map(|p| sample_tags(p))
        .map(|t| format!("refs/tags/{t}"))
        .collect();
    let patterns = input.tag_patterns.join(", ");
    let envs: BTreeSet<String> = input
        .signing_jobs
        .iter()
        .filter_map(|j| j.environment.clone())
        .collect();

    // Wave 1: the lists.
    let r_rulesets =
        format!("repos/{repo}/rulesets?targets=tag&includes_parents=true&per_page=100");
    let r_envs = format!("repos/{repo}/environments?per_page=100");
    let r_secrets = format!("repos/{repo}/actions/secrets?per_page=100");
    let r_org = format!("repos/{repo}/actions/organization-secrets?per_page=100");
    let (rulesets, environments, repo_secrets, org_secrets) = futures::join!(
        api_source.get(&r_rulesets, Shape::Array),
        api_source.get(&r_envs, Shape::Items("environments")),
        api_source.get(&r_secrets, Shape::Items("secrets")),
        api_source.get(&r_org, Shape::Items("secrets")),
    );

    // Wave 2: every tag ruleset in full; secrets and deployment policies of each signing environment.
    let ids: Vec<u64> = match &rulesets {
        Fetched::Ok(Value::Array(list)) => list.iter().filter_map(|r| r["id"].as_u64()).collect(),
        _ => Vec::new(),
    };
    let env_list: Vec<String> = envs.iter().cloned().collect();
    let detail_routes: Vec<String> = ids
        .iter()
        .map(|id| format!("repos/{repo}/rulesets/{id}?includes_parents=true"))
        .collect();
    let env_secret_routes: Vec<String> = env_list
        .iter()
        .map(|e| {
            format!(
                "repos/{repo}/environments/{}/secrets?per_page=100",
                encode_segment(e)
            )
        })
        .collect();
    let policy_routes: Vec<String> = env_list
        .iter()
        .map(|e| {
            format!(
                "repos/{repo}/environments/{}/deployment-branch-policies?per_page=100",
                encode_segment(e)
            )
        })
        .collect();
    let (details, env_secrets, policies) = futures::join!(
        join_all(
            detail_routes
                .iter()
                .map(|r| api_source.get(r, Shape::Object))
        ),
        join_all(
            env_secret_routes
                .iter()
                .map(|r| api_source.get(r, Shape::Items("secrets")))
        ),
        join_all(
            policy_routes
                .iter()
                .map(|r| api_source.get(r, Shape::Items("branch_policies")))
        ),
    );

    // Wave 3, only when no ruleset protects the release tags: GHES up to 3.19 may still protect
    // them with legacy tag protection (github.com answers 410 Gone, read as "none").
    let r_legacy = format!("repos/{repo}/tags/protection");
    let any_covering = details
        .iter()
        .any(|d| matches!(d, Fetched::Ok(rs) if protects(rs, &samples)));
    let legacy = if matches!(rulesets, Fetched::Ok(_)) && !any_covering {
        Some(api_source.get(&r_legacy, Shape::Array).await)
    } else {
        None
    };

    let mut out = Vec::new();
    rulesets_findings(
        &mut out,
        repo,
        &r_rulesets,
        &rulesets,
        &detail_routes,
        &details,
        &samples,
        &patterns,
        legacy.as_ref().map(|l| (r_legacy.as_str(), l)),
    );

    // Environments.
    let env_map: Option<Vec<Value>> = match &environments {
        Fetched::Ok(v) => Some(v["environments"].as_array().cloned().unwrap_or_default()),
        f => {
            if !envs.is_empty() {
                out.push(unverifiable(
                    &r_envs,
                    Severity::High,
                    "the environments",
                    ENV_PERMISSION,
                    f,
                ));
            }
            None
        }
    };
    for (i, name) in env_list.iter().enumerate() {
        let Some(all) = &env_map else { break };
        let route = format!("repos/{repo}/environments/{}", encode_segment(name));
        let jobs: Vec<String> = input
            .signing_jobs
            .iter()
            .filter(|j| j.environment.as_deref() == Some(name))
            .map(|j| format!("{}:{}", j.workflow.display(), j.job))
            .collect();
        let Some(env) = all.iter().find(|e| e["name"].as_str() == Some(name)) else {
            out.push(finding(
                "environment-missing",
                Severity::High,
                &route,
                format!("environment `{name}` (used by {}) does not exist: the first run creates it with no protection rules", jobs.join(", ")),
                format!("Create environment `{name}` with required reviewers and a tag deployment policy before the next release (see --fix-plan)."),
            ));
            continue;
        };
        environment_findings(
            &mut out,
            name,
            &route,
            env,
            &policy_routes[i],
            &policies[i],
            &samples,
            &patterns,
        );
    }

    // Secrets.
    let names = |f: &Fetched| -> Option<Vec<String>> {
        match f {
            Fetched::Ok(v) => Some(
                v["secrets"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s["name"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => None,
        }
    };
    let repo_names = names(&repo_secrets);
    let org_names = names(&org_secrets);
    match &repo_names {
        Some(list) => {
            for n in list.iter().filter(|n| input.secrets.is_signing(n)) {
                out.push(finding(
                    "secret-repo-level",
                    Severity::High,
                    &r_secrets,
                    format!("{n} is a repository secret: every job of every workflow can read it, whatever its environment"),
                    format!("Store {n} in the signing environment only: `gh secret set {n} --env release`, then `gh secret delete {n}`."),
                ));
            }
        }
        None => out.push(unverifiable(
            &r_secrets,
            Severity::High,
            "the repository secrets",
            SECRETS_PERMISSION,
            &repo_secrets,
        )),
    }
    match &org_names {
        Some(list) => {
            for n in list.iter().filter(|n| input.secrets.is_signing(n)) {
                out.push(finding(
                    "secret-org-visible",
                    Severity::High,
                    &r_org,
                    format!("an organization secret named {n} is visible to this repository: any job can read it"),
                    format!("Remove this repository from the organization secret {n}'s selected repositories, or delete it; keep the key in the environment."),
                ));
            }
        }
        None => out.push(unverifiable(
            &r_org,
            Severity::Medium,
            "the organization secrets visible to the repository",
            "Secrets: read (fine-grained) or `repo` (classic)",
            &org_secrets,
        )),
    }
    for (i, env) in env_list.iter().enumerate() {
        if env_map
            .as_ref()
            .is_some_and(|all| !all.iter().any(|e| e["name"].as_str() == Some(env)))
        {
            continue; // reported as missing
        }
        match names(&env_secrets[i]) {
            Some(in_env) => {
                for n in in_env.iter().filter(|n| input.secrets.is_signing(n)) {
                    let at_repo = repo_names.as_ref().is_some_and(|l| l.contains(n));
                    let at_org = org_names.as_ref().is_some_and(|l| l.contains(n));
                    if at_repo || at_org {
                        out.push(finding(
                            "secret-shadowed",
                            Severity::High,
                            &env_secret_routes[i],
                            format!(
                                "{n} is in environment `{env}` and also at {} level: a job without the environment silently gets the other copy",
                                if at_repo { "repository" } else { "organization" }
                            ),
                            format!("Delete the {} copy of {n}; keep only the one in `{env}`.", if at_repo { "repository" } else { "organization" }),
                        ));
                    }
                }
            }
            None => out.push(unverifiable(
                &env_secret_routes[i],
                Severity::Medium,
                &format!("the secrets of environment `{env}`"),
                ENV_SECRETS_PERMISSION,
                &env_secrets[i],
            )),
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn rulesets_findings(
    out: &mut Vec<Finding>,
    repo: &str,
    route: &str,
    list: &Fetched,
    detail_routes: &[String],
    details: &[Fetched],
    samples: &[String],
    patterns: &str,
    legacy: Option<(&str, &Fetched)>,
) {
    if let Fetched::Failed { .. } = list {
        out.push(unverifiable(
            route,
            Severity::High,
            "the tag rulesets",
            RULESET_PERMISSION,
            list,
        ));
        return;
    }
    let mut covering = Vec::new();
    let mut unreadable = Vec::new();
    let mut seen = Vec::new();
    for (r, d) in detail_routes.iter().zip(details) {
        match d {
            Fetched::Ok(rs) => {
                if rs["target"].as_str().is_some_and(|t| t != "tag") {
                    continue;
                }
                let name = rs["name"].as_str().unwrap_or("?").to_string();
                let missed = missed_tag(samples, |s| ruleset_covers(rs, s));
                seen.push(format!(
                    "{name} ({}{})",
                    rs["enforcement"].as_str().unwrap_or("?"),
                    missed.map_or(String::new(), |tag| format!(", does not cover {tag}"))
                ));
                if protects(rs, samples) {
                    covering.push((r.clone(), rs.clone()));
                }
            }
            f => unreadable.push(unverifiable(
                r,
                Severity::High,
                "a tag ruleset",
                RULESET_PERMISSION,
                f,
            )),
        }
    }
    if covering.is_empty() {
        if !unreadable.is_empty() {
            out.extend(unreadable);
            return;
        }
        // Legacy tag protection: `{id, pattern}` entries, fnmatch on the tag name.
        let legacy_list = match legacy {
            Some((_, Fetched::Ok(Value::Array(list)))) => list.clone(),
            _ => Vec::new(),
        };
        if let (Some((legacy_route, _)), Some(p)) = (
            legacy,
            legacy_list
                .iter()
                .find(|p| legacy_gap(p, samples).is_none()),
        ) {
            out.push(finding(
                "legacy-tag-protection",
                Severity::Medium,
                legacy_route,
                format!(
                    "the release tags ({patterns}) are protected only by legacy tag protection `{}`: it is deprecated (gone from github.com since 2024-08-30), and anyone with the maintain role can create release tags",
                    p["pattern"].as_str().unwrap_or("?")
                ),
                format!("Replace it with an active tag ruleset on refs/tags/{} with creation, update, deletion and non_fast_forward rules, bypass only for admins (see --fix-plan for repos/{repo}/rulesets), then delete the legacy protection.", patterns.split(", ").next().unwrap_or("v*")),
            ));
            return;
        }
        for p in &legacy_list {
            seen.push(format!(
                "legacy tag protection {} ({})",
                p["pattern"].as_str().unwrap_or("?"),
                legacy_gap(p, samples).unwrap_or_default()
            ));
        }
        out.push(finding(
            "no-tag-ruleset",
            Severity::High,
            route,
            format!(
                "no active ruleset protects the release tags ({patterns}){}: anyone who can push can create a release tag, and the tag's workflow file decides what runs with the key",
                if seen.is_empty() { String::new() } else { format!("; tag protections seen: {}", seen.join(", ")) }
            ),
            format!("Create an active tag ruleset on refs/tags/{} with creation, update, deletion and non_fast_forward rules, bypass only for admins (see --fix-plan for repos/{repo}/rulesets).", patterns.split(", ").next().unwrap_or("v*")),
        ));
        return;
    }
    out.extend(unreadable);
    for (route, rs) in covering {
        let name = rs["name"].as_str().unwrap_or("?");
        let types: BTreeSet<&str> = rs["rules"]
            .as_array()
            .map(|a| a.iter().filter_map(|r| r["type"].as_str()).collect())
            .unwrap_or_default();
        let missing: Vec<&str> = ["creation", "update", "deletion"]
            .into_iter()
            .filter(|t| !types.contains(t))
            .collect();
        if !missing.is_empty() {
            out.push(finding(
                "tag-ruleset-incomplete",
                Severity::Medium,
                &route,
                format!(
                    "tag ruleset `{name}` has no {} rule: release tags can be {}",
                    missing.join(", "),
                    missing
                        .iter()
                        .map(|m| match *m {
                            "creation" => "created",
                            "update" => "moved",
                            _ => "deleted",
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!(
                    "Add the {} rule{} to ruleset `{name}`.",
                    missing.join(", "),
                    if missing.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        match rs.get("bypass_actors") {
            None | Some(Value::Null) => out.push(Finding {
                id: "unverifiable",
                severity: Severity::High,
                confidence: Confidence::High,
                location: api(&route),
                message: format!("tag ruleset `{name}` was returned without `bypass_actors`: GitHub hides them from tokens without write access to the ruleset, so who can bypass it is unknown"),
                remediation: "Run the audit with a token that can administer the repository (Administration: write).".into(),
            }),
            Some(actors) => {
                for a in actors.as_array().cloned().unwrap_or_default() {
                    let mode = a["bypass_mode"].as_str().unwrap_or("always");
                    if mode != "always" {
                        continue;
                    }
                    let kind = a["actor_type"].as_str().unwrap_or("?");
                    let id = a["actor_id"].as_u64();
                    let who = match (kind, id) {
                        ("RepositoryRole", Some(4)) => Some("the write role".to_string()),
                        ("RepositoryRole", Some(2)) => Some("the maintain role".to_string()),
                        ("Integration", i) => Some(format!("a GitHub App (integration {})", i.map_or("?".into(), |i| i.to_string()))),
                        ("DeployKey", _) => Some("deploy keys".to_string()),
                        _ => None,
                    };
                    if let Some(who) = who {
                        out.push(finding(
                            "tag-ruleset-bypass",
                            Severity::High,
                            &route,
                            format!("tag ruleset `{name}` lets {who} bypass it at any time: they can create or move release tags"),
                            format!("Remove that bypass actor from `{name}`, or set its bypass_mode to pull_request; keep bypass for the admin role only."),
                        ));
                    }
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn environment_findings(
    out: &mut Vec<Finding>,
    name: &str,
    route: &str,
    env: &Value,
    policy_route: &str,
    policies: &Fetched,
    samples: &[String],
    patterns: &str,
) {
    let rules = env["protection_rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let reviewers = rules
        .iter()
        .find(|r| r["type"].as_str() == Some("required_reviewers"));
    match reviewers {
        Some(r) if r["reviewers"].as_array().is_some_and(|a| !a.is_empty()) => {
            if r["prevent_self_review"].as_bool() != Some(true) {
                out.push(finding(
                    "environment-self-review",
                    Severity::Medium,
                    route,
                    format!("environment `{name}` lets the person who started the run approve it (prevent_self_review is off)"),
                    format!("Turn on \"Prevent self-review\" for `{name}`."),
                ));
            }
        }
        _ => out.push(finding(
            "environment-no-reviewers",
            Severity::High,
            route,
            format!("environment `{name}` has no required reviewers: any run that reaches it gets the signing key without approval"),
            format!("Add required reviewers (at least one person or team) to `{name}`."),
        )),
    }
    match env.get("can_admins_bypass").and_then(Value::as_bool) {
        Some(true) => out.push(finding(
            "environment-admin-bypass",
            Severity::Medium,
            route,
            format!("administrators can bypass the protection rules of `{name}`"),
            format!("Turn off \"Allow administrators to bypass configured protection rules\" for `{name}`."),
        )),
        Some(false) => {}
        None => out.push(Finding {
            id: "unverifiable",
            severity: Severity::Low,
            confidence: Confidence::Medium,
            location: api(route),
            message: format!("environment `{name}` was returned without `can_admins_bypass`, so whether admins can bypass it is unknown"),
            remediation: "Check the setting in the environment's page, or re-run against the live API (GitHub's documentation examples omit the field).".into(),
        }),
    }
    let policy = &env["deployment_branch_policy"];
    if policy.is_null() {
        out.push(finding(
            "environment-any-ref",
            Severity::Medium,
            route,
            format!("environment `{name}` has no deployment branch policy: a run from any branch or tag can use it"),
            format!("Restrict `{name}` to selected tags matching {patterns} (a deployment policy of type tag)."),
        ));
        return;
    }
    if policy["custom_branch_policies"].as_bool() == Some(true) {
        match policies {
            Fetched::Ok(v) => {
                let tags: Vec<String> = v["branch_policies"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter(|p| p["type"].as_str() == Some("tag"))
                            .filter_map(|p| p["name"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let missed = missed_tag(samples, |s| {
                    let tag = s.trim_start_matches("refs/tags/");
                    tags.iter()
                        .any(|p| ref_glob(p).is_some_and(|g| g.is_match(tag)))
                });
                if let Some(missed) = missed {
                    out.push(finding(
                        "environment-no-tag-policy",
                        Severity::Medium,
                        policy_route,
                        format!(
                            "no tag deployment policy of `{name}` covers the release tags ({patterns}){}",
                            if tags.is_empty() { String::new() } else { format!("; tag policies: {} (none covers {missed})", tags.join(", ")) }
                        ),
                        format!("Add a deployment policy of type tag named {} to `{name}`.", patterns.split(", ").next().unwrap_or("v*")),
                    ));
                }
            }
            f => out.push(unverifiable(
                policy_route,
                Severity::Medium,
                &format!("the deployment policies of `{name}`"),
                ENV_PERMISSION,
                f,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_names_are_encoded() {
        assert_eq!(encode_segment("release"), "release");
        assert_eq!(encode_segment("prod/eu"), "prod%2Feu");
    }

    #[test]
    fn ruleset_patterns_and_enforcement() {
        let rs = serde_json::json!({"enforcement": "enabled", "conditions": {"ref_name": {"include": ["refs/tags/v*"], "exclude": ["refs/tags/v0*"]}}});
        assert!(is_active(&rs));
        assert!(ruleset_covers(&rs, "refs/tags/v1.2.3"));
        assert!(!ruleset_covers(&rs, "refs/tags/v0.1"));
        assert!(!ruleset_covers(&rs, "refs/tags/pkg-v1"));
        let all =
            serde_json::json!({"conditions": {"ref_name": {"include": ["~ALL"], "exclude": []}}});
        assert!(ruleset_covers(&all, "refs/tags/anything"));
        assert!(!is_active(&serde_json::json!({"enforcement": "evaluate"})));
    }
}
