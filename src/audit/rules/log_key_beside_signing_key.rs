//! `log-key-beside-signing-key`: one job holds a release signing key and the transparency log's
//! key. The log exists so that a stolen signing key is seen; a thief who holds the runner of that
//! job holds both keys, appends what they sign, and is then seen only by the project's own
//! monitor (the log's witnesses vouch for its history, not for its entries).

use std::collections::BTreeSet;

use crate::audit::findings::{Finding, Subject};
use crate::audit::rule::{Meta, Rule};
use crate::audit::severity::Severity;
use crate::audit::workflows::checks::JobContext;
use crate::audit::workflows::flow::{env_secret_names, scalar};
use crate::audit::workflows::signing_job::JobView;

pub(crate) const RULE: Rule = Rule(&Meta {
    id: "log-key-beside-signing-key",
    severity: Severity::Medium,
    description: "One job holds a release signing key and the transparency log's key",
    explanation: "a job that reads a release signing key also reads the transparency log's key (`--log-key-env`): whoever runs code in that job holds both, can sign and log whatever they like, and is then seen only by the project's own monitor",
});

/// The variables a step hands warden's log key in (`--log-key-env VAR`).
fn log_key_vars(script: &str) -> BTreeSet<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r#"--log-key-env(?:=|\s+)["']?([A-Za-z_][A-Za-z0-9_]*)"#)
            .expect("static regex")
    })
    .captures_iter(script)
    .map(|c| c[1].to_string())
    .collect()
}

/// The check (the job hook): the job's secrets that reach `--log-key-env`, beside any other key.
pub(crate) fn check(v: &JobView, _: &JobContext) -> Vec<Finding> {
    let job_env = v
        .wf_value
        .get("jobs")
        .and_then(|j| j.get(v.id))
        .map(env_secret_names)
        .unwrap_or_default();
    let mut log_keys = BTreeSet::new();
    let mut first_step = None;
    for (i, step) in v.steps().into_iter().enumerate() {
        let Some(script) = step.get("run").and_then(scalar) else {
            continue;
        };
        let vars = log_key_vars(&script);
        if vars.is_empty() {
            continue;
        }
        let step_env = env_secret_names(step);
        for var in vars {
            let secrets = step_env.get(&var).or_else(|| job_env.get(&var));
            for name in secrets.into_iter().flatten() {
                log_keys.insert(name.clone());
                first_step.get_or_insert(i);
            }
        }
    }
    let signing: Vec<String> = v
        .secrets
        .keys
        .iter()
        .map(|k| k.name.clone())
        .filter(|n| !log_keys.contains(n))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (Some(step), false) = (first_step, signing.is_empty()) else {
        return Vec::new();
    };
    let log: Vec<String> = log_keys.into_iter().collect();
    let (log_list, signing_list) = (log.join(", "), signing.join(", "));
    vec![Finding::new(
        RULE,
        v.src.loc(v.step_at(step), Some(v.id)),
        format!(
            "job `{}` holds the release signing key ({signing_list}) and the transparency log's key ({log_list}): whoever runs code in this job can sign and log anything, and only the project's own monitor would see it",
            v.id
        ),
        format!(
            "Sign in this job and hand the signed files on as an artifact; append them to the log in a job of its own (`needs:` this one) in an environment of its own that holds only {log_list}: `warden log append log --release dist/ --log-key-env {}`, then push the log branch from there (docs/transparency-log.md).",
            log.first().map(String::as_str).unwrap_or("WARDEN_LOG_KEY")
        ),
    )
    .about(Subject::secrets(signing.into_iter().chain(log)))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_key_is_the_variable_named_by_log_key_env() {
        assert_eq!(
            log_key_vars("warden sign dist/ --log log --log-key-env WARDEN_LOG_KEY \\\n  --tag x"),
            BTreeSet::from(["WARDEN_LOG_KEY".to_string()])
        );
        assert_eq!(
            log_key_vars("warden log append log --release dist --log-key-env=\"LOGK\""),
            BTreeSet::from(["LOGK".to_string()])
        );
        assert!(log_key_vars("warden sign dist/ --secret-key-env KEY").is_empty());
    }
}
