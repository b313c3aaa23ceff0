//! `warden audit --apply`: sends the fix plan's API changes. Environment updates keep the
//! reviewers and wait timer the environment already has, so applying never removes protection.
//! The confirmation is the binary's; this sends what it is given.

use serde_json::{json, Value};

use super::fix_plan::{Change, Method};
use crate::github::api::{ApiSource, Fetched, Shape};
use crate::github::routes;
use crate::github::session::Session;

/// What one request came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub title: String,
    pub method: Method,
    pub route: String,
    /// The HTTP status, or why there was none.
    pub status: Result<u16, String>,
    /// GitHub's message, for a refused write.
    pub message: String,
}

impl Applied {
    pub fn succeeded(&self) -> bool {
        self.status.as_ref().is_ok_and(|s| (200..300).contains(s))
    }
}

/// The plan's steps that warden can send.
pub fn requests(plan: Vec<Change>) -> Vec<Change> {
    plan.into_iter().filter(|s| s.request.is_some()).collect()
}

/// Sends every request of `steps` to `repo`, in order, one at a time (a write is not retried).
pub fn apply(session: &Session, repo: &str, steps: &[Change]) -> Vec<Applied> {
    let api = session.api();
    session.block_on(async {
        let mut results = Vec::new();
        for step in steps {
            let Some(request) = &step.request else {
                continue;
            };
            let mut body = request.body.clone();
            if let Some(env) = &step.environment {
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
            let (status, message) = match sent {
                Ok((status, _, text)) => (Ok(status), github_message(&text)),
                Err(e) => (Err(e), String::new()),
            };
            results.push(Applied {
                title: step.title.clone(),
                method: request.method,
                route: request.route.clone(),
                status,
                message,
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
}
