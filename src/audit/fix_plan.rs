//! `warden audit --fix-plan`: for each settings finding, the JSON body and the `gh api` command
//! that closes it. Printed for a person to review and run; warden does not change settings itself.

use std::collections::BTreeSet;
use std::io::{self, Write};

use serde_json::json;

use super::{AuditReport, Location};

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

pub fn render(mut w: impl Write, r: &AuditReport) -> io::Result<()> {
    let repo = r.repository.as_deref().unwrap_or("OWNER/NAME");
    let tags: Vec<String> = r
        .release_tag_patterns
        .iter()
        .map(|p| format!("refs/tags/{p}"))
        .collect();
    let ruleset = json!({
        "name": "release tags",
        "target": "tag",
        "enforcement": "active",
        "conditions": {"ref_name": {"include": tags, "exclude": []}},
        "rules": [{"type": "creation"}, {"type": "update"}, {"type": "deletion"}, {"type": "non_fast_forward"}],
        "bypass_actors": [{"actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"}]
    });
    let mut steps: Vec<String> = Vec::new();
    let mut done = BTreeSet::new();
    for f in &r.findings {
        let Location::Api { resource } = &f.location else {
            continue;
        };
        let (env, ruleset_id) = route_parts(resource);
        let key = (
            f.id,
            env.map(str::to_string),
            ruleset_id.map(str::to_string),
        );
        if !done.insert(key) {
            continue;
        }
        let body = serde_json::to_string_pretty(&ruleset).unwrap_or_default();
        match f.id {
            "no-tag-ruleset" => steps.push(format!(
                "Create a tag ruleset (admins keep bypass, role id 5):\n  gh api --method POST repos/{repo}/rulesets --input - <<'JSON'\n{body}\nJSON"
            )),
            "tag-ruleset-incomplete" | "tag-ruleset-bypass" => steps.push(format!(
                "Replace the rules and bypass list of ruleset {}:\n  gh api --method PUT repos/{repo}/rulesets/{} --input - <<'JSON'\n{body}\nJSON",
                ruleset_id.unwrap_or("ID"),
                ruleset_id.unwrap_or("ID")
            )),
            "environment-missing" | "environment-no-reviewers" | "environment-self-review" | "environment-admin-bypass" | "environment-any-ref" | "environment-no-tag-policy" => {
                let env = env.unwrap_or("release");
                if !done.insert(("environment", Some(env.to_string()), None)) {
                    continue;
                }
                let env_body = json!({
                    "prevent_self_review": true,
                    "reviewers": [{"type": "Team", "id": 0}],
                    "can_admins_bypass": false,
                    "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
                });
                let mut s = format!(
                    "Protect environment `{env}` (set the reviewer ids first: `gh api orgs/ORG/teams/TEAM --jq .id`):\n  gh api --method PUT repos/{repo}/environments/{env} --input - <<'JSON'\n{}\nJSON",
                    serde_json::to_string_pretty(&env_body).unwrap_or_default()
                );
                for p in &r.release_tag_patterns {
                    s.push_str(&format!("\n  gh api --method POST repos/{repo}/environments/{env}/deployment-branch-policies -f name='{p}' -f type=tag"));
                }
                steps.push(s);
            }
            "secret-repo-level" | "secret-shadowed" => {
                let name = f.message.split_whitespace().next().unwrap_or("MINISIGN_SECRET_KEY");
                steps.push(format!(
                    "Keep {name} in the environment only:\n  gh secret set {name} --env release --repo {repo} < FILE\n  gh secret delete {name} --repo {repo}"
                ));
            }
            "secret-org-visible" => steps.push(format!(
                "Stop sharing the organization secret with {repo}: remove the repository from its selected repositories (Settings → Secrets → Actions), or delete it:\n  gh secret delete NAME --org ORG"
            )),
            _ => {}
        }
    }
    if steps.is_empty() {
        return writeln!(w, "\nfix plan: no settings finding to fix");
    }
    writeln!(w, "\nfix plan for {repo} (review each step; run them with a token that can administer the repository):")?;
    for (i, s) in steps.iter().enumerate() {
        writeln!(w, "\n{}. {s}", i + 1)?;
    }
    Ok(())
}
