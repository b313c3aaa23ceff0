//! `warden audit --apply`: sends the fix plan's API changes (through `github::changes`, which
//! keeps an environment's existing reviewers and wait timer, so applying never removes
//! protection). The confirmation is the binary's; this sends what it is given.

use super::fix_plan::Change;
use crate::error::Reason;
use crate::github::changes::{self, Method};
use crate::github::session::Session;

/// What one request came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub(crate) title: String,
    pub(crate) method: Method,
    pub(crate) route: String,
    /// The HTTP status, or why there was none.
    pub(crate) status: Result<u16, Reason>,
    /// GitHub's message, for a refused write.
    pub(crate) message: String,
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
    let sendable: Vec<(&Change, &changes::Request)> = steps
        .iter()
        .filter_map(|s| Some((s, s.request.as_ref()?)))
        .collect();
    let requests: Vec<&changes::Request> = sendable.iter().map(|(_, r)| *r).collect();
    let sent = changes::send(session, repo, &requests);
    sendable
        .into_iter()
        .zip(sent)
        .map(|((step, request), sent)| Applied {
            title: step.title.clone(),
            method: request.method,
            route: request.route.clone(),
            status: sent.status,
            message: sent.message,
        })
        .collect()
}
