//! A source that answers each route once: the audit of one repository and the key inventory
//! read the same releases, signatures and secret lists, and the inventory's reads that the audit
//! already made cost nothing. It counts the reads it passed on, so a caller can keep to a budget.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::api::{ApiSource, Fetched, Shape};

/// Which call an answer came from (a route read as JSON and as bytes are two answers).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Call {
    Get(String),
    Bytes(String, u64),
}

pub(crate) struct Memo<'a, S> {
    inner: &'a S,
    answers: Mutex<HashMap<Call, Fetched>>,
    passed_on: AtomicU64,
}

impl<'a, S: ApiSource> Memo<'a, S> {
    pub(crate) fn new(inner: &'a S) -> Self {
        Memo {
            inner,
            answers: Mutex::new(HashMap::new()),
            passed_on: AtomicU64::new(0),
        }
    }

    /// A memo that already holds `answers` (REST answers by route, read another way: an
    /// organisation's GraphQL query). They cost nothing here.
    pub(crate) fn with_answers(
        inner: &'a S,
        answers: impl IntoIterator<Item = (String, serde_json::Value)>,
    ) -> Self {
        let memo = Memo::new(inner);
        if let Ok(mut a) = memo.answers.lock() {
            a.extend(
                answers
                    .into_iter()
                    .map(|(route, v)| (Call::Get(route), Fetched::Ok(v))),
            );
        }
        memo
    }

    /// How many reads reached the source behind (the rest were answered from memory).
    pub(crate) fn passed_on(&self) -> u64 {
        self.passed_on.load(Ordering::Relaxed)
    }

    /// Whether `route` was read as bytes with `cap` already (so reading it again is free).
    pub(crate) fn has_bytes(&self, route: &str, cap: u64) -> bool {
        self.answers
            .lock()
            .is_ok_and(|a| a.contains_key(&Call::Bytes(route.to_string(), cap)))
    }

    fn remembered(&self, call: &Call) -> Option<Fetched> {
        self.answers.lock().ok()?.get(call).cloned()
    }

    fn remember(&self, call: Call, answer: &Fetched) {
        self.passed_on.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut a) = self.answers.lock() {
            a.insert(call, answer.clone());
        }
    }
}

impl<S: ApiSource> ApiSource for Memo<'_, S> {
    async fn get(&self, route: &str, shape: Shape) -> Fetched {
        let call = Call::Get(route.to_string());
        if let Some(a) = self.remembered(&call) {
            return a;
        }
        let answer = self.inner.get(route, shape).await;
        self.remember(call, &answer);
        answer
    }

    async fn get_bytes(&self, route: &str, cap: u64) -> Fetched {
        let call = Call::Bytes(route.to_string(), cap);
        if let Some(a) = self.remembered(&call) {
            return a;
        }
        let answer = self.inner.get_bytes(route, cap).await;
        self.remember(call, &answer);
        answer
    }

    async fn get_sha256(&self, route: &str) -> Fetched {
        self.passed_on.fetch_add(1, Ordering::Relaxed);
        self.inner.get_sha256(route).await
    }

    async fn get_external(&self, url: &str, cap: u64) -> Fetched {
        self.passed_on.fetch_add(1, Ordering::Relaxed);
        self.inner.get_external(url, cap).await
    }

    // Whole assets stream through, never kept.
    async fn download(
        &self,
        route: &str,
        out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    ) -> Result<u64, crate::error::Reason> {
        self.passed_on.fetch_add(1, Ordering::Relaxed);
        self.inner.download(route, out).await
    }
}
