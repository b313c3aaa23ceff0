//! The sticky PR comment: one comment per pull request, found by a hidden marker, updated in
//! place. Every page of comments is read; nothing is written when the body is unchanged.

use serde_json::{json, Value};

use super::{failure, ApiSource, Fetched, LiveApi, Shape};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Upsert {
    Created,
    Updated(u64),
    Unchanged(u64),
}

/// Why the comment could not be written or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommentError {
    pub status: u16,
    pub message: String,
    pub permission: Option<String>,
}

impl std::fmt::Display for CommentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.message)?;
        if let Some(p) = &self.permission {
            write!(f, " (needs {p})")?;
        }
        Ok(())
    }
}

fn from_fetched(f: Fetched) -> CommentError {
    match f {
        Fetched::Failed {
            status,
            message,
            permission,
        } => CommentError {
            status,
            message,
            permission,
        },
        Fetched::Ok(_) => CommentError {
            status: 0,
            message: "unexpected response".into(),
            permission: None,
        },
    }
}

/// The pull request number from a GitHub Actions event payload.
pub fn pr_from_event(payload: &Value) -> Option<u64> {
    payload["pull_request"]["number"]
        .as_u64()
        .or_else(|| payload["issue"]["number"].as_u64())
        .or_else(|| payload["number"].as_u64())
}

/// Creates or updates the comment on `repo`'s pull request `pr` that contains `marker`.
pub async fn upsert(
    api: &LiveApi,
    repo: &str,
    pr: u64,
    body: &str,
    marker: &str,
) -> Result<Upsert, CommentError> {
    let comments = match api
        .get(
            &format!("repos/{repo}/issues/{pr}/comments?per_page=100"),
            Shape::Array,
        )
        .await
    {
        Fetched::Ok(Value::Array(list)) => list,
        Fetched::Ok(_) => {
            return Err(CommentError {
                status: 0,
                message: "expected a list of comments".into(),
                permission: None,
            })
        }
        f => return Err(from_fetched(f)),
    };
    let existing = comments
        .iter()
        .find(|c| c["body"].as_str().is_some_and(|b| b.contains(marker)));
    let payload = json!({ "body": body });
    let (method, route, outcome) = match existing {
        Some(c) => {
            let id = c["id"].as_u64().unwrap_or_default();
            if c["body"].as_str().map(str::trim_end) == Some(body.trim_end()) {
                return Ok(Upsert::Unchanged(id));
            }
            (
                "PATCH",
                format!("repos/{repo}/issues/comments/{id}"),
                Upsert::Updated(id),
            )
        }
        None => (
            "POST",
            format!("repos/{repo}/issues/{pr}/comments"),
            Upsert::Created,
        ),
    };
    match api.send(method, &route, &payload).await {
        Ok((status, _, _)) if (200..300).contains(&status) => Ok(outcome),
        Ok((status, headers, text)) => Err(from_fetched(failure(status, &headers, &text))),
        Err(e) => Err(CommentError {
            status: 0,
            message: e,
            permission: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pr_number_from_event_payloads() {
        assert_eq!(
            pr_from_event(&json!({"pull_request": {"number": 7}})),
            Some(7)
        );
        assert_eq!(
            pr_from_event(&json!({"issue": {"number": 8, "pull_request": {}}})),
            Some(8)
        );
        assert_eq!(pr_from_event(&json!({"ref": "refs/heads/main"})), None);
    }
}
