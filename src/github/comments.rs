//! The sticky PR comment: one comment per pull request, found by a hidden marker, updated in
//! place. Every page of comments is read; nothing is written when the body is unchanged.

use serde_json::{json, Value};

use super::api::{failure, ApiSource, Fetched, LiveApi, Shape};
use super::routes;
use super::session::Session;
use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Upsert {
    Created,
    Updated(u64),
    Unchanged(u64),
}

/// Why the comment could not be written or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommentError {
    pub(crate) status: u16,
    pub(crate) message: String,
    pub(crate) permission: Option<String>,
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

/// The login whose comments warden may edit: the token's user, or for an installation token
/// (which cannot read `/user`), the Actions bot that posts with `GITHUB_TOKEN`.
async fn poster(api: &LiveApi) -> String {
    match api.get(&routes::authenticated_user(), Shape::Object).await {
        Fetched::Ok(user) => match user["login"].as_str() {
            Some(login) => login.to_string(),
            None => ACTIONS_BOT.to_string(),
        },
        Fetched::Failed { .. } => ACTIONS_BOT.to_string(),
    }
}

/// The author of comments made with an Actions `GITHUB_TOKEN`.
pub(crate) const ACTIONS_BOT: &str = "github-actions[bot]";

/// Creates or updates the comment on `repo`'s pull request `pr` that contains `marker`. Only a
/// comment written by the identity that posts is updated: anyone can write the marker into a
/// comment of their own, and warden must not edit (or vouch for) it.
pub(crate) async fn upsert(
    api: &LiveApi,
    repo: &str,
    pr: u64,
    body: &str,
    marker: &str,
) -> Result<Upsert, CommentError> {
    let comments = match api
        .get(&routes::issue_comments(repo, pr), Shape::Array)
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
    let me = poster(api).await;
    let existing = comments.iter().find(|c| {
        c["body"].as_str().is_some_and(|b| b.contains(marker))
            && c["user"]["login"].as_str() == Some(me.as_str())
    });
    let payload = json!({ "body": body });
    let (method, route, outcome) = match existing {
        Some(c) => {
            let id = c["id"].as_u64().unwrap_or_default();
            if c["body"].as_str().map(str::trim_end) == Some(body.trim_end()) {
                return Ok(Upsert::Unchanged(id));
            }
            (
                "PATCH",
                routes::issue_comment(repo, id),
                Upsert::Updated(id),
            )
        }
        None => (
            "POST",
            routes::issue_comment_create(repo, pr),
            Upsert::Created,
        ),
    };
    match api.send(method, &route, &payload).await {
        Ok((status, _, _)) if (200..300).contains(&status) => Ok(outcome),
        Ok((status, headers, text)) => Err(from_fetched(failure(status, &headers, &text))),
        Err(e) => Err(CommentError {
            status: 0,
            message: e.into(),
            permission: None,
        }),
    }
}

/// What posting the sticky comment came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Posted {
    Written(Upsert),
    /// The token may read but not comment (403): a pull request from a fork.
    ReadOnly(CommentError),
}

/// Creates or updates the sticky comment carrying `marker` on `repo`'s pull request `pr`. A 403
/// is an answer ([`Posted::ReadOnly`]), so the caller can put the body elsewhere; any other
/// failure is an error.
pub fn post(session: &Session, repo: &str, pr: u64, body: &str, marker: &str) -> Result<Posted> {
    match session.block_on(upsert(session.api(), repo, pr, body, marker)) {
        Ok(done) => Ok(Posted::Written(done)),
        Err(e) if e.status == 403 => Ok(Posted::ReadOnly(e)),
        Err(e) => Err(Error::Api(format!(
            "--post: commenting on {repo}#{pr} failed: {e}"
        ))),
    }
}
