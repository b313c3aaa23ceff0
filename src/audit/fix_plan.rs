//! `warden audit --fix-plan` / `--apply`: for each settings finding, the change that closes it,
//! as a JSON body and a `gh api` command. `--apply` sends the ruleset and environment changes with
//! the token after a confirmation; moving a secret stays manual (warden never sees its value).

use std::collections::BTreeSet;
use std::io::{self, Write};

use serde_json::{json, Value};

use super::settings::encode_segment;
use super::{AuditReport, Location};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Post,
    Put,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }
}

/// One step of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub title: String,
    /// `Some` when warden can apply it; `None` for steps a person must do.
    pub request: Option<(Method, String, Value)>,
    /// Extra commands or instructions shown with the step.
    pub manual: Vec<String>,
    /// For environment updates: the environment whose reviewers must be kept.
    pub environment: Option<String>,
}

/// The environment name and ruleset id a finding's API route names, if any.
fn route_parts(resource: &str) -> (Option<&str>, Option<&str>) {
    let parts: Vec<&str> = resource.split('/').collect();
    let env = parts
        .iter()
        .position(|p| *p == "environments")
        .and_then(|i| parts.get(i + 1))
        .copied();
    let ruleset = parts
        .iter()
        .position(|p| *p == "rulesets")
        .and_then(|i| parts.get(i + 1))
        .copied();
    (env, ruleset)
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

/// The environment protection warden applies; reviewers are added from the live environment.
pub fn environment_body() -> Value {
    json!({
        "prevent_self_review": true,
        "can_admins_bypass": false,
        "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
    })
}

/// The steps that close the settings findings of `r`.
pub fn plan(r: &AuditReport) -> Vec<Change> {
    let repo = r.repository.as_deref().unwrap_or("OWNER/NAME");
    let mut steps = Vec::new();
    let mut done = BTreeSet::new();
    for f in &r.findings {
        let Location::Api { resource } = &f.location else {
            continue;
        };
        let (env, ruleset_id) = route_parts(resource);
        match f.id {
            "no-tag-ruleset" | "legacy-tag-protection" if done.insert("ruleset".to_string()) => steps.push(Change {
                title: "create a tag ruleset on the release tags (only admins may bypass)".into(),
                request: Some((Method::Post, format!("repos/{repo}/rulesets"), tag_ruleset(&r.release_tag_patterns, true))),
                manual: Vec::new(),
                environment: None,
            }),
            "tag-ruleset-incomplete" | "tag-ruleset-bypass" => {
                let id = ruleset_id.unwrap_or("ID").to_string();
                if done.insert(format!("ruleset {id}")) {
                    steps.push(Change {
                        title: format!("set the rules, conditions and bypass list of tag ruleset {id}"),
                        request: Some((Method::Put, format!("repos/{repo}/rulesets/{id}"), tag_ruleset(&r.release_tag_patterns, false))),
                        manual: Vec::new(),
                        environment: None,
                    });
                }
            }
            "environment-missing" | "environment-no-reviewers" | "environment-self-review" | "environment-admin-bypass" | "environment-any-ref" | "environment-no-tag-policy" => {
                let env = env.unwrap_or("release").to_string();
                if !done.insert(format!("env {env}")) {
                    continue;
                }
                let mut manual = Vec::new();
                if matches!(f.id, "environment-missing" | "environment-no-reviewers") || r.findings.iter().any(|g| g.id == "environment-no-reviewers") {
                    manual.push(format!(
                        "add required reviewers to `{env}` (Settings → Environments → {env}), or add `\"reviewers\": [{{\"type\": \"Team\", \"id\": TEAM_ID}}]` to the body (`gh api orgs/ORG/teams/TEAM --jq .id`)"
                    ));
                }
                steps.push(Change {
                    title: format!("protect environment `{env}`: no self-review, no admin bypass, selected tags only (existing reviewers kept)"),
                    request: Some((Method::Put, format!("repos/{repo}/environments/{}", encode_segment(&env)), environment_body())),
                    manual,
                    environment: Some(env.clone()),
                });
                for p in &r.release_tag_patterns {
                    steps.push(Change {
                        title: format!("allow tags `{p}` to deploy to `{env}`"),
                        request: Some((
                            Method::Post,
                            format!("repos/{repo}/environments/{}/deployment-branch-policies", encode_segment(&env)),
                            json!({"name": p, "type": "tag"}),
                        )),
                        manual: Vec::new(),
                        environment: None,
                    });
                }
            }
            "secret-repo-level" | "secret-shadowed" => {
                let name = f.message.split_whitespace().next().unwrap_or("MINISIGN_SECRET_KEY").to_string();
                if done.insert(format!("secret {name}")) {
                    steps.push(Change {
                        title: format!("keep {name} in the signing environment only (manual: warden never sees secret values)"),
                        request: None,
                        manual: vec![format!("gh secret set {name} --env release --repo {repo} < FILE"), format!("gh secret delete {name} --repo {repo}")],
                        environment: None,
                    });
                }
            }
            "secret-org-visible" if done.insert("org secret".into()) => steps.push(Change {
                title: format!("stop sharing the organization secret with {repo} (manual)"),
                request: None,
                manual: vec!["remove the repository from the secret's selected repositories, or `gh secret delete NAME --org ORG`".into()],
                environment: None,
            }),
            _ => {}
        }
    }
    steps
}

pub fn render(mut w: impl Write, r: &AuditReport) -> io::Result<()> {
    let steps = plan(r);
    let repo = r.repository.as_deref().unwrap_or("OWNER/NAME");
    if steps.is_empty() {
        return writeln!(w, "\nfix plan: no settings finding to fix");
    }
    writeln!(w, "\nfix plan for {repo} (review each step; `--apply` sends the API changes after a confirmation):")?;
    for (i, s) in steps.iter().enumerate() {
        writeln!(w, "\n{}. {}", i + 1, s.title)?;
        if let Some((method, route, body)) = &s.request {
            writeln!(
                w,
                "  gh api --method {} {route} --input - <<'JSON'\n{}\nJSON",
                method.as_str(),
                serde_json::to_string_pretty(body).unwrap_or_default()
            )?;
        }
        for m in &s.manual {
            writeln!(w, "  {m}")?;
        }
    }
    Ok(())
}
