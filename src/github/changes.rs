//! The settings writes warden can make (`warden audit --fix-plan` proposes them, `--apply` sends
//! them): a tag ruleset, an environment's protection, a tag deployment policy. Each is a typed
//! request built here, so routes and GitHub's JSON bodies stay inside `github/`. An environment
//! update keeps the reviewers and wait timer the environment already has.

use crate::error::Reason;
use serde_json::{json, Value};

use super::api::{ApiSource, Fetched, Shape};
use super::routes;
use super::session::Session;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Post,
    Put,
}

impl Method {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }
}

/// One API write: what is printed in the plan and what `--apply` sends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Request {
    pub(crate) method: Method,
    pub(crate) route: String,
    pub(crate) body: Value,
    /// An environment update: the environment whose reviewers and wait timer are kept.
    pub(crate) keeps_environment: Option<String>,
}

fn tag_ruleset(patterns: &[String], with_name: bool) -> Value {
    let tags: Vec<String> = patterns.iter().map(|p| format!("refs/tags/{p}")).collect();
    let mut body = json!({
        "target": "tag",
        "enforcement": "active",
        "conditions": {"ref_name": {"include": tags, "exclude": []}},
        "rules": [{"type": "creation"}, {"type": "update"}, {"type": "deletion"}, {"type": "non_fast_forward"}],
        // RepositoryRole 5 = admin: only admins may bypass.
        "bypass_actors": [{"actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"}]
    });
    if with_name {
        body["name"] = json!("release tags");
    }
    body
}

/// A new tag ruleset named "release tags" on `patterns`: creation, update, deletion and
/// non-fast-forward rules, only admins may bypass.
pub(crate) fn create_tag_ruleset(repo: &str, patterns: &[String]) -> Request {
    Request {
        method: Method::Post,
        route: routes::ruleset_write(repo, None),
        body: tag_ruleset(patterns, true),
        keeps_environment: None,
    }
}

/// The same rules, conditions and bypass list set on the existing ruleset `id`.
pub(crate) fn replace_tag_ruleset(repo: &str, id: Option<u64>, patterns: &[String]) -> Request {
    Request {
        method: Method::Put,
        route: routes::ruleset_write(repo, id),
        body: tag_ruleset(patterns, false),
        keeps_environment: None,
    }
}

/// Environment `env` without self-review or admin bypass, deployable from selected refs only.
pub(crate) fn protect_environment(repo: &str, env: &str) -> Request {
    Request {
        method: Method::Put,
        route: routes::environment(repo, env),
        body: json!({
            "prevent_self_review": true,
            "can_admins_bypass": false,
            "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
        }),
        keeps_environment: Some(env.to_string()),
    }
}

/// Tags matching `pattern` may deploy to `env`.
pub(crate) fn allow_tag_deployments(repo: &str, env: &str, pattern: &str) -> Request {
    Request {
        method: Method::Post,
        route: routes::deployment_policy_create(repo, env),
        body: json!({"name": pattern, "type": "tag"}),
        keeps_environment: None,
    }
}

/// What a sent request came to: the HTTP status (or why there was none) and GitHub's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) status: Result<u16, Reason>,
    pub(crate) message: String,
}

/// Sends `requests` to `repo`, in order, one at a time (a write is not retried).
pub(crate) fn send(session: &Session, repo: &str, requests: &[&Request]) -> Vec<Sent> {
    let api = session.api();
    session.block_on(async {
        let mut results = Vec::new();
        for request in requests {
            let mut body = request.body.clone();
            if let Some(env) = &request.keeps_environment {
                if let Fetched::Ok(current) = api
                    .get(&routes::environment(repo, env), Shape::Object)
                    .await
                {
                    keep_environment_settings(&current, &mut body);
                }
            }
            let sent = api
                .send(request.method.as_str(), &request.route, &body)
                .await;
            results.push(match sent {
                Ok((status, _, text)) => Sent {
                    status: Ok(status),
                    message: github_message(&text),
                },
                Err(e) => Sent {
                    status: Err(e),
                    message: String::new(),
                },
            });
        }
        results
    })
}

fn github_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Copies the reviewers and wait timer an environment already has into the PUT body.
fn keep_environment_settings(current: &Value, body: &mut Value) {
    for rule in current["protection_rules"].as_array().into_iter().flatten() {
        match rule["type"].as_str() {
            Some("required_reviewers") => {
                let reviewers: Vec<Value> = rule["reviewers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| {
                        Some(json!({"type": r["type"].as_str()?, "id": r["reviewer"]["id"].as_u64()?}))
                    })
                    .collect();
                body["reviewers"] = json!(reviewers);
            }
            Some("wait_timer") => body["wait_timer"] = rule["wait_timer"].clone(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_reviewers_and_wait_timer_are_kept() {
        let current = json!({"protection_rules": [
            {"type": "required_reviewers", "reviewers": [{"type": "Team", "reviewer": {"id": 9, "slug": "x"}}]},
            {"type": "wait_timer", "wait_timer": 15},
            {"type": "branch_policy"}
        ]});
        let mut body = json!({"prevent_self_review": true});
        keep_environment_settings(&current, &mut body);
        assert_eq!(
            body,
            json!({"prevent_self_review": true, "reviewers": [{"type": "Team", "id": 9}], "wait_timer": 15})
        );
    }

    #[test]
    fn requests_name_their_route_and_keep_what_they_must() {
        let r = protect_environment("o/r", "rel/prod");
        assert_eq!(
            (r.method, r.route.as_str(), r.keeps_environment.as_deref()),
            (
                Method::Put,
                "repos/o/r/environments/rel%2Fprod",
                Some("rel/prod")
            )
        );
        let r = replace_tag_ruleset("o/r", Some(7), &["v*".into()]);
        assert_eq!(r.route, "repos/o/r/rulesets/7");
        assert_eq!(
            r.body["conditions"]["ref_name"]["include"],
            json!(["refs/tags/v*"])
        );
        assert!(r.body.get("name").is_none());
    }
}
