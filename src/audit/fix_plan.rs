//! `warden audit --fix-plan`: for each settings finding, the change that closes it, as a request
//! (`github::changes` builds it) or as steps a person must take. Built from each finding's rule
//! and subject, never from its text. `apply` sends the requests.

use std::collections::BTreeSet;

use super::findings::{AuditReport, Finding, SecretScope};
use super::rule::Rule;
use super::rules::{
    environment_admin_bypass, environment_any_ref, environment_missing, environment_no_reviewers,
    environment_no_tag_policy, environment_self_review, legacy_tag_protection, no_tag_ruleset,
    secret_org_visible, secret_repo_level, secret_shadowed, tag_ruleset_bypass,
    tag_ruleset_incomplete,
};
use crate::github::changes::{self, Request};

/// One step of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub(crate) title: String,
    /// `Some` when warden can apply it; `None` for steps a person must do.
    pub(crate) request: Option<Request>,
    /// Extra commands or instructions shown with the step.
    pub(crate) manual: Vec<String>,
}

impl Change {
    fn request(title: String, request: Request) -> Self {
        Change {
            title,
            request: Some(request),
            manual: Vec::new(),
        }
    }

    fn manual(title: String, steps: Vec<String>) -> Self {
        Change {
            title,
            request: None,
            manual: steps,
        }
    }
}

/// What closing a settings finding changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fixes {
    /// A new tag ruleset.
    NewRuleset,
    /// The covering ruleset.
    Ruleset,
    /// The signing environment.
    Environment,
    /// Where the secret is stored.
    Secret,
    /// An organization secret's visibility.
    OrgSecret,
}

fn fixes(rule: Rule) -> Option<Fixes> {
    let any = |rules: &[Rule]| rules.contains(&rule);
    if any(&[no_tag_ruleset::RULE, legacy_tag_protection::RULE]) {
        Some(Fixes::NewRuleset)
    } else if any(&[tag_ruleset_incomplete::RULE, tag_ruleset_bypass::RULE]) {
        Some(Fixes::Ruleset)
    } else if any(&[
        environment_missing::RULE,
        environment_no_reviewers::RULE,
        environment_self_review::RULE,
        environment_admin_bypass::RULE,
        environment_any_ref::RULE,
        environment_no_tag_policy::RULE,
    ]) {
        Some(Fixes::Environment)
    } else if any(&[secret_repo_level::RULE, secret_shadowed::RULE]) {
        Some(Fixes::Secret)
    } else if rule == secret_org_visible::RULE {
        Some(Fixes::OrgSecret)
    } else {
        None
    }
}

/// The steps that close the settings findings of `r`, each once.
pub fn plan(r: &AuditReport) -> Vec<Change> {
    let mut steps = Vec::new();
    let mut done = BTreeSet::new();
    for f in &r.findings {
        let key = match fixes(f.rule) {
            Some(Fixes::NewRuleset) => "ruleset".to_string(),
            Some(Fixes::Ruleset) => format!("ruleset {:?}", f.subject.ruleset),
            Some(Fixes::Environment) => format!("env {:?}", f.subject.environment),
            Some(Fixes::Secret) => {
                format!(
                    "secret {:?} {:?}",
                    f.subject.secrets, f.subject.secret_scope
                )
            }
            Some(Fixes::OrgSecret) => "org secret".to_string(),
            None => continue,
        };
        let repo = f
            .subject
            .repository
            .as_deref()
            .or(r.repository.as_deref())
            .unwrap_or("OWNER/NAME");
        if done.insert(format!("{repo} {key}")) {
            steps.extend(changes_for(f, r, repo));
        }
    }
    steps
}

/// The changes that close one finding.
fn changes_for(f: &Finding, r: &AuditReport, repo: &str) -> Vec<Change> {
    let patterns = &r.release_tag_patterns;
    match fixes(f.rule) {
        Some(Fixes::NewRuleset) => vec![Change::request(
            "create a tag ruleset on the release tags (only admins may bypass)".into(),
            changes::create_tag_ruleset(repo, patterns),
        )],
        Some(Fixes::Ruleset) => {
            let id = f.subject.ruleset;
            vec![Change::request(
                format!(
                    "set the rules, conditions and bypass list of tag ruleset {}",
                    id.map_or("ID".to_string(), |i| i.to_string())
                ),
                changes::replace_tag_ruleset(repo, id, patterns),
            )]
        }
        Some(Fixes::Secret) => secret_change(f, repo),
        Some(Fixes::OrgSecret) => vec![Change::manual(
            format!("stop sharing the organization secret with {repo} (manual)"),
            vec!["remove the repository from the secret's selected repositories, or `gh secret delete NAME --org ORG`".into()],
        )],
        _ => environment_changes(f, r, repo),
    }
}

/// Keep the secret only in the signing environment: set it there, delete the other copy. Manual:
/// warden never sees secret values.
fn secret_change(f: &Finding, repo: &str) -> Vec<Change> {
    let Some(name) = f.subject.secrets.first() else {
        return Vec::new();
    };
    let env = f.subject.environment.as_deref().unwrap_or("release");
    let delete = match f.subject.secret_scope {
        Some(SecretScope::Organization) => format!(
            "remove {repo} from the organization secret {name}'s selected repositories, or `gh secret delete {name} --org ORG`"
        ),
        _ => format!("gh secret delete {name} --repo {repo}"),
    };
    vec![Change::manual(
        format!(
            "keep {name} in the signing environment only (manual: warden never sees secret values)"
        ),
        vec![
            format!("gh secret set {name} --env {env} --repo {repo} < FILE"),
            delete,
        ],
    )]
}

/// Protect the environment (existing reviewers and wait timer kept), and let the release tags
/// deploy to it.
fn environment_changes(f: &Finding, r: &AuditReport, repo: &str) -> Vec<Change> {
    let env = f.subject.environment.as_deref().unwrap_or("release");
    let no_reviewers = |g: &Finding| {
        g.rule == environment_no_reviewers::RULE && g.subject.environment.as_deref() == Some(env)
    };
    let mut manual = Vec::new();
    if f.rule == environment_missing::RULE || r.findings.iter().any(no_reviewers) {
        manual.push(format!(
            "add required reviewers to `{env}` (Settings → Environments → {env}), or add `\"reviewers\": [{{\"type\": \"Team\", \"id\": TEAM_ID}}]` to the body (`gh api orgs/ORG/teams/TEAM --jq .id`)"
        ));
    }
    let mut steps = vec![Change {
        manual,
        ..Change::request(
            format!("protect environment `{env}`: no self-review, no admin bypass, selected tags only (existing reviewers kept)"),
            changes::protect_environment(repo, env),
        )
    }];
    for p in &r.release_tag_patterns {
        steps.push(Change::request(
            format!("allow tags `{p}` to deploy to `{env}`"),
            changes::allow_tag_deployments(repo, env, p),
        ));
    }
    steps
}
