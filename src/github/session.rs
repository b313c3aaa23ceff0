//! The one place warden connects to GitHub: an API client and the runtime that drives it, built
//! together. octocrab spawns its worker onto the runtime it is built in, so that runtime must
//! outlive every request, `--apply`'s writes included.

use std::future::Future;

use super::api::{LiveApi, ResponseCache, RetryPolicy, Token};
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

impl Session {
    /// A client of the API at `base_url` (see `api::api_base`), with `token` when there is one.
    pub fn connect(base_url: &str, token: Option<&Token>) -> Result<Session> {
        Self::connect_cached(base_url, token, None)
    }

    /// The same, answering from and into `cache` with conditional requests (`--cache DIR`).
    pub fn connect_cached(
        base_url: &str,
        token: Option<&Token>,
        cache: Option<ResponseCache>,
    ) -> Result<Session> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Usage(format!("starting the async runtime: {e}")))?;
        let api = {
            let _entered = runtime.enter();
            LiveApi::new(base_url, token, RetryPolicy::default())
                .map_err(Error::Usage)?
                .with_cache(cache)
        };
        Ok(Session { runtime, api })
    }

    pub fn api(&self) -> &LiveApi {
        &self.api
    }

    /// `Err` with its one line when GitHub refused the token (a 401) during the requests so far:
    /// authentication is not a finding about a repository, so the command stops (exit 2).
    pub fn check_token(&self) -> Result<()> {
        match self.api.refused() {
            Some(line) => Err(Error::Usage(line.to_string())),
            None => Ok(()),
        }
    }

    /// Runs `future` (requests through [`Session::api`]) to completion.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}
