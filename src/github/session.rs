//! The one place warden connects to GitHub: an API client and the runtime that drives it, built
//! together. octocrab spawns its worker onto the runtime it is built in, so that runtime must
//! outlive every request, `--apply`'s writes included.

use std::future::Future;

use super::api::{LiveApi, ResponseCache, RetryPolicy, Token, WaitNotice};
use crate::error::{Error, Result};

pub struct Session {
    runtime: tokio::runtime::Runtime,
    api: LiveApi,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Session({:?})", self.api)
    }
}

/// How to reach the API: where, with which token, and how to behave while doing it.
#[derive(Clone, Debug)]
pub struct Endpoint<'a> {
    /// The base URL (see `api::api_base`).
    pub url: &'a str,
    /// Where the URL came from (`--api-url`, `GITHUB_API_URL`, `the default`), for errors.
    pub url_source: &'static str,
    pub token: Option<&'a Token>,
    /// Answers from and into this folder with conditional requests (`--cache DIR`).
    pub cache: Option<ResponseCache>,
    /// The longest wait for a spent rate limit (`WARDEN_RATE_LIMIT_WAIT`).
    pub rate_limit_wait: std::time::Duration,
}

impl Session {
    /// A client of `endpoint`; `notice` is told of each second spent waiting for a rate limit.
    pub fn open(endpoint: &Endpoint<'_>, notice: Option<WaitNotice>) -> Result<Session> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Usage(format!("starting the async runtime: {e}")))?;
        let api = {
            let _entered = runtime.enter();
            let retry = RetryPolicy {
                rate_limit_wait: endpoint.rate_limit_wait,
                ..RetryPolicy::default()
            };
            LiveApi::new(endpoint.url, endpoint.token, retry)
                .map_err(|e| Error::Usage(e.into()))?
                .with_cache(endpoint.cache.clone())
                .with_url_source(endpoint.url_source)
                .with_wait_notice(notice)
        };
        Ok(Session { runtime, api })
    }

    pub(crate) fn api(&self) -> &LiveApi {
        &self.api
    }

    /// `Err` with its one line when the API could not be used during the requests so far: GitHub
    /// refused the token (401), the rate limit is spent until later than warden waits, or the API
    /// cannot be reached. None is a finding about a repository, so the command stops (exit 2).
    pub(crate) fn check_api(&self) -> Result<()> {
        match self.api.stopped() {
            Some(line) => Err(Error::Usage(line.to_string())),
            None => Ok(()),
        }
    }

    /// Runs `future` (requests through [`Session::api`]) to completion.
    pub(crate) fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}
