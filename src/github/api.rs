//! GitHub REST access: an octocrab client used through relative routes (octocrab drops the auth
//! header on absolute URLs), `Link` pagination on every list, retries with backoff that honour
//! `retry-after` / `x-ratelimit-reset`, and answers as JSON values that the caller types. The
//! same [`ApiSource`] reads a snapshot folder instead.

use crate::error::Reason;
use std::fmt;
use std::time::Duration;

use http::header::HeaderMap;
use octocrab::service::middleware::retry::RetryConfig;
use octocrab::Octocrab;
use serde_json::Value;

/// Where an asset download may be redirected: an absolute HTTP(S) URL, and never from HTTPS down
/// to HTTP. The signed storage URL's query is left out of the error.
fn redirect_allowed(from_https: bool, location: &str) -> Result<(), Reason> {
    if from_https && !location.starts_with("https://") {
        return Err(format!(
            "refused a redirect from HTTPS to {}",
            location.split('?').next().unwrap_or_default()
        )
        .into());
    }
    if !(location.starts_with("https://") || location.starts_with("http://")) {
        return Err("a redirect to a relative or unknown location".into());
    }
    Ok(())
}

#[cfg(test)]
mod redirect_tests {
    use crate::github::api::redirect_allowed;

    #[test]
    fn no_downgrade_and_no_relative_redirects() {
        assert!(redirect_allowed(true, "https://objects.example/x?sig=1").is_ok());
        assert_eq!(
            redirect_allowed(true, "http://objects.example/x?sig=secret").unwrap_err(),
            "refused a redirect from HTTPS to http://objects.example/x"
        );
        assert!(redirect_allowed(false, "http://127.0.0.1:9/x").is_ok());
        assert!(redirect_allowed(false, "/relative").is_err());
        assert!(redirect_allowed(true, "file:///etc/passwd").is_err());
    }
}

/// The next chunk of an asset's bytes (frames without data, such as trailers, skipped).
async fn next_chunk(body: &mut AssetBody) -> Option<Result<bytes::Bytes, Reason>> {
    use http_body_util::BodyExt;
    loop {
        match body.frame().await? {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    return Some(Ok(data));
                }
            }
            Err(e) => return Some(Err(e.to_string().into())),
        }
    }
}

/// A small body of at most `cap` bytes as `{"base64": "…"}`, the JSON form snapshots keep; a
/// larger one, or one cut short, as a failed answer.
async fn capped_base64(mut body: AssetBody, cap: u64) -> Fetched {
    use base64::Engine as _;
    let mut bytes = Vec::new();
    while let Some(data) = next_chunk(&mut body).await {
        match data {
            Ok(data) => bytes.extend_from_slice(&data),
            Err(e) => return asset_failure(e.into()),
        }
        if bytes.len() as u64 > cap {
            return asset_failure(format!("larger than {cap} bytes"));
        }
    }
    Fetched::Ok(serde_json::json!({
        "base64": base64::engine::general_purpose::STANDARD.encode(bytes)
    }))
}

/// A download that did not complete, as an answer (no HTTP status to report).
fn asset_failure(why: String) -> Fetched {
    Fetched::Failed {
        status: 0,
        message: why,
        permission: None,
    }
}

pub(crate) use super::git_object::base64_content;

/// The body of an asset download, as octocrab returns it.
type AssetBody = http_body_util::combinators::BoxBody<bytes::Bytes, octocrab::Error>;

/// A token, never printed.
#[derive(Clone)]
pub struct Token(String, &'static str);

impl Token {
    /// A token from its text; `None` when it is empty or blank.
    pub fn new(s: String) -> Option<Self> {
        Self::from_var("the token", s)
    }

    /// A token read from the environment variable `var` (named when GitHub refuses it).
    pub fn from_var(var: &'static str, s: String) -> Option<Self> {
        let s = s.trim().to_string();
        (!s.is_empty()).then_some(Token(s, var))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// The API base URL: the one given (`--api-url`, else `GITHUB_API_URL`), else github.com, without
/// a trailing `/`.
pub fn api_base(given: Option<&str>) -> String {
    given
        .filter(|s| !s.is_empty())
        .unwrap_or("https://api.github.com")
        .trim_end_matches('/')
        .to_string()
}

/// The answer to one (possibly paginated) GET.
#[derive(Clone, Debug, PartialEq)]
pub enum Fetched {
    /// The body; for lists, all pages merged into the shape of the first.
    Ok(Value),
    /// The read failed: status (0 = no HTTP answer), GitHub's message, and the permission GitHub
    /// says it needs (`X-Accepted-GitHub-Permissions`), when it says.
    Failed {
        status: u16,
        message: String,
        permission: Option<String>,
    },
}

/// A read the API did not answer usefully: where, the status (0 = no HTTP answer), GitHub's
/// message, and the permission GitHub says it needs (`X-Accepted-GitHub-Permissions`), when it
/// says. The one error type of a read; [`ApiError::describe`] is its one wording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) route: String,
    pub(crate) status: u16,
    pub(crate) message: String,
    pub(crate) permission: Option<String>,
}

impl ApiError {
    /// The failure of `fetched` (an `Ok` here is "an unexpected answer").
    pub(crate) fn from_fetched(route: &str, fetched: Fetched) -> ApiError {
        let (status, message, permission) = match fetched {
            Fetched::Failed {
                status,
                message,
                permission,
            } => (status, message, permission),
            Fetched::Ok(_) => (0, "unexpected answer".to_string(), None),
        };
        ApiError {
            route: route.to_string(),
            status,
            message,
            permission,
        }
    }

    /// `GET /repos/o/r/rulesets answered 403: Resource not accessible by integration` (the
    /// permission GitHub asked for is not part of it: see `Display` and [`ApiError::needs`]).
    pub(crate) fn describe(&self) -> String {
        let answered = match self.status {
            0 => "failed".to_string(),
            status => format!("answered {status}"),
        };
        format!(
            "GET /{} {answered}: {}",
            super::routes::path_of(&self.route),
            self.message
        )
    }

    /// What would have allowed the read: GitHub's own word, else `fallback`.
    pub(crate) fn needs(&self, fallback: &str) -> String {
        match &self.permission {
            Some(p) => format!("a token with `{p}` (GitHub's X-Accepted-GitHub-Permissions)"),
            None => format!("a token with {fallback}"),
        }
    }
}

/// The one wording of a failed read: what was asked, what GitHub answered, and the permission
/// GitHub says it needs, when it says.
impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())?;
        match &self.permission {
            Some(p) => write!(f, " (needs `{p}`)"),
            None => Ok(()),
        }
    }
}

/// Where list items live in a response: a bare array, or under a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Object,
    Array,
    Items(&'static str),
}

/// A source of API answers: the live API or a snapshot.
pub trait ApiSource: Sync {
    fn get(&self, route: &str, shape: Shape) -> impl std::future::Future<Output = Fetched> + Send;

    /// One GraphQL query (`POST /graphql`) with its variables: the whole answer (`data`, and
    /// `errors` when part of it failed). Only the live API serves it: everywhere else (snapshots,
    /// recordings) it fails, and the caller reads the same facts through REST.
    fn graphql(
        &self,
        _query: &str,
        _variables: &Value,
    ) -> impl std::future::Future<Output = Fetched> + Send {
        std::future::ready(Fetched::Failed {
            status: 0,
            message: "GraphQL is not served here".to_string(),
            permission: None,
        })
    }

    /// A small binary answer (a release asset of at most `cap` bytes), as
    /// `{"base64": "…"}`: the JSON form a snapshot records and replays.
    fn get_bytes(
        &self,
        route: &str,
        _cap: u64,
    ) -> impl std::future::Future<Output = Fetched> + Send {
        self.get(route, Shape::Object)
    }

    /// A small answer from another host than the API's (a bundle in blob storage), at most
    /// `cap` bytes, as `{"base64": "…"}`; sent without the token. A snapshot keeps it under
    /// the URL's host and path (its query is a signed, expiring token).
    fn get_external(
        &self,
        url: &str,
        cap: u64,
    ) -> impl std::future::Future<Output = Fetched> + Send {
        let route = super::routes::external(url);
        async move { self.get_bytes(&route, cap).await }
    }

    /// The digests of a release asset of any size, as `{"sha256": "<hex>", "blake2b512":
    /// "<hex>", "size": N}` (streamed: memory stays flat; a snapshot records only the digests).
    fn get_sha256(&self, route: &str) -> impl std::future::Future<Output = Fetched> + Send {
        self.get(route, Shape::Object)
    }

    /// A release asset of any size, chunk by chunk into `out`; returns the bytes sent. A recorded
    /// answer is the `get_bytes` form, replayed in one chunk.
    fn download(
        &self,
        route: &str,
        out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    ) -> impl std::future::Future<Output = Result<u64, Reason>> + Send {
        async move {
            use base64::Engine as _;
            let bytes = match self.get_bytes(route, RECORDED_ASSET_CAP).await {
                Fetched::Ok(v) => base64::engine::general_purpose::STANDARD
                    .decode(v["base64"].as_str().unwrap_or_default())
                    .map_err(|_| format!("GET /{route}: the recorded answer is not base64"))?,
                Fetched::Failed {
                    status, message, ..
                } => return Err(format!("{status} {message}").into()),
            };
            let sent = bytes.len() as u64;
            out.send(bytes::Bytes::from(bytes))
                .await
                .map_err(|_| "the writer stopped".to_string())?;
            Ok(sent)
        }
    }
}

/// The largest asset a snapshot records (as base64 in one JSON file, under the snapshot cap).
pub(crate) const RECORDED_ASSET_CAP: u64 = 40 << 20;

/// Retry policy: attempts and the longest single wait honoured.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    pub attempts: u32,
    pub base_delay: Duration,
    pub max_wait: Duration,
    /// How long one response may take to arrive.
    pub read_timeout: Duration,
    /// The longest wait for a rate limit to reset (`WARDEN_RATE_LIMIT_WAIT`); a later reset
    /// stops the command instead.
    pub rate_limit_wait: Duration,
}

/// Seconds warden waits, at most, for a spent rate limit to reset before it stops instead.
pub const DEFAULT_RATE_LIMIT_WAIT: u64 = 60;

/// A wait for the rate limit, told as it counts down (once a second) so the caller can show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// Why: "GitHub's rate limit is spent" and the like.
    pub why: String,
    pub left: Duration,
    /// The first notice of this wait.
    pub first: bool,
}

/// Shows a [`Waiting`] (the binary prints it on stderr; the library never prints).
pub type WaitNotice = std::sync::Arc<dyn Fn(&Waiting) + Send + Sync>;

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 4,
            base_delay: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
            read_timeout: Duration::from_secs(30),
            rate_limit_wait: Duration::from_secs(DEFAULT_RATE_LIMIT_WAIT),
        }
    }
}

/// Answers kept on disk with their ETags (`--cache DIR`): a request for a cached route asks
/// `If-None-Match`, and GitHub's 304 (which costs no rate limit) is answered from the file.
/// Git objects named by their SHA never change and are not asked for again.
#[derive(Clone, Debug)]
pub struct ResponseCache {
    dir: std::path::PathBuf,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct CachedAnswer {
    route: String,
    etag: String,
    #[serde(default)]
    link: Option<String>,
    body: String,
}

/// A cached answer is one API response: a few MB at most.
const CACHED_ANSWER_CAP: u64 = 64 << 20;

impl ResponseCache {
    pub fn new(dir: std::path::PathBuf) -> Self {
        ResponseCache { dir }
    }

    fn file(&self, route: &str) -> std::path::PathBuf {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(route.as_bytes());
        self.dir
            .join(format!("{}.json", crate::util::to_hex(&digest)))
    }

    fn get(&self, route: &str) -> Option<CachedAnswer> {
        let file = self.file(route);
        let text =
            crate::files::guarded::read_text_inside(&self.dir, &file, CACHED_ANSWER_CAP).ok()?;
        serde_json::from_str::<CachedAnswer>(&text)
            .ok()
            .filter(|a| a.route == route)
    }

    fn put(&self, answer: &CachedAnswer) {
        // A cache that cannot be written only costs requests next time.
        if std::fs::create_dir_all(&self.dir).is_ok() {
            if let Ok(json) = serde_json::to_vec(answer) {
                let _ = crate::files::atomic::write_atomic(
                    &self.file(&answer.route),
                    &json,
                    0o600,
                    true,
                );
            }
        }
    }
}

/// A git object named by its SHA: its content never changes.
fn immutable(route: &str) -> bool {
    ["/git/blobs/", "/git/trees/"].iter().any(|kind| {
        route.split_once(kind).is_some_and(|(_, rest)| {
            let sha = rest.split('?').next().unwrap_or(rest);
            sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())
        })
    })
}

/// What the API said of the rate limit last, and how many requests went out.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    remaining: std::sync::atomic::AtomicI64,
    reset: std::sync::atomic::AtomicU64,
    sent: std::sync::atomic::AtomicUsize,
    graphql: std::sync::atomic::AtomicUsize,
    not_modified: std::sync::atomic::AtomicUsize,
    from_cache: std::sync::atomic::AtomicUsize,
}

/// Requests sent, answered 304 (free), and answered from the cache without a request; of those
/// sent, GraphQL queries (counted against GraphQL's own rate limit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct RequestCounts {
    pub(crate) sent: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) graphql: usize,
    pub(crate) not_modified: usize,
    pub(crate) from_cache: usize,
}

/// How many requests may be in flight at once: GitHub asks for no more than 100 concurrent
/// requests, and its secondary limits punish bursts.
pub(crate) const MAX_IN_FLIGHT: usize = 64;

pub struct LiveApi {
    crab: Octocrab,
    /// The same client asking for raw bytes (`Accept: application/octet-stream`), for assets.
    bytes: Octocrab,
    /// No token at all: for whatever host an asset download is redirected to.
    anonymous: Octocrab,
    /// The same token at the host's root, for GraphQL queries (`graphql_path`).
    gql: Octocrab,
    graphql_path: String,
    /// GraphQL answered a query with a refusal: not asked again.
    graphql_refused: std::sync::atomic::AtomicBool,
    base_url: String,
    base_path: String,
    retry: RetryPolicy,
    cache: Option<ResponseCache>,
    usage: Usage,
    in_flight: tokio::sync::Semaphore,
    /// Where the token came from, for the one line a refused token gets.
    token_source: Option<&'static str>,
    /// Where the base URL came from (`--api-url`, `GITHUB_API_URL`), for a failed connection.
    url_source: &'static str,
    wait_notice: Option<WaitNotice>,
    /// Set when the API cannot be used any more: the token was refused (401), the rate limit is
    /// spent until later than warden waits, or the API cannot be reached. Every later request is
    /// answered at once with this status and line (nothing more is sent), and the command stops
    /// with the line (`LiveApi::stopped`).
    stopped: std::sync::OnceLock<(u16, String)>,
}

impl fmt::Debug for LiveApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LiveApi({})", self.base_path)
    }
}

impl LiveApi {
    pub fn new(base_url: &str, token: Option<&Token>, retry: RetryPolicy) -> Result<Self, Reason> {
        let client_at = |base: &str,
                         accept: &str,
                         token: Option<&Token>,
                         read: Duration|
         -> Result<Octocrab, Reason> {
            let mut b = Octocrab::builder()
                .base_uri(base)
                .map_err(|e| format!("--api-url {base_url:?}: {e}"))?
                // Our own retry loop honours retry-after and x-ratelimit-reset.
                .add_retry_config(RetryConfig::None)
                .set_connect_timeout(Some(Duration::from_secs(10)))
                .set_read_timeout(Some(read))
                .add_header(http::header::ACCEPT, accept.into());
            if let Some(t) = token {
                b = b.personal_token(t.0.clone());
            }
            b.build()
                .map_err(|e| format!("building the GitHub client: {e}").into())
        };
        let client = |accept: &str, token: Option<&Token>, read: Duration| {
            client_at(base_url, accept, token, read)
        };
        // API answers have their own deadline (`get_once`), which must come first.
        let crab = client("application/vnd.github+json", token, retry.read_timeout * 2)?;
        let bytes = client("application/octet-stream", token, retry.read_timeout)?;
        let anonymous = client("application/octet-stream", None, retry.read_timeout)?;
        let base_path = base_url
            .split_once("://")
            .map(|(_, rest)| rest.find('/').map_or("", |i| &rest[i..]))
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string();
        // GraphQL beside the REST API: `/graphql` on github.com, `/api/graphql` beside GHES's
        // `/api/v3`. Its own client, based at the host's root: octocrab puts the base URL's path
        // in front of every path.
        let origin = base_url.trim_end_matches('/');
        let origin = origin.strip_suffix(base_path.as_str()).unwrap_or(origin);
        let graphql_path = match base_path.strip_suffix("/api/v3") {
            Some(prefix) => format!("{prefix}/api/graphql"),
            None => format!("{base_path}/graphql"),
        };
        let gql = client_at(origin, "application/json", token, retry.read_timeout)?;
        Ok(LiveApi {
            crab,
            gql,
            graphql_path,
            graphql_refused: Default::default(),
            bytes,
            anonymous,
            base_url: base_url.trim_end_matches('/').to_string(),
            base_path,
            retry,
            cache: None,
            usage: Usage {
                remaining: std::sync::atomic::AtomicI64::new(-1),
                ..Usage::default()
            },
            in_flight: tokio::sync::Semaphore::new(MAX_IN_FLIGHT),
            token_source: token.map(|t| t.1),
            url_source: "the default",
            wait_notice: None,
            stopped: std::sync::OnceLock::new(),
        })
    }

    /// Names where the base URL came from (`--api-url`, `GITHUB_API_URL`) in a failed connection.
    pub(crate) fn with_url_source(mut self, from: &'static str) -> Self {
        self.url_source = from;
        self
    }

    /// Tells `notice` of each second spent waiting for a rate limit.
    pub(crate) fn with_wait_notice(mut self, notice: Option<WaitNotice>) -> Self {
        self.wait_notice = notice;
        self
    }

    /// Why the API cannot be used any more, if so: GitHub refused the token (401), the rate limit
    /// is spent until later than warden waits, or the API cannot be reached. None of these is a
    /// finding about a repository, so the command stops with this line (exit 2).
    pub(crate) fn stopped(&self) -> Option<&str> {
        self.stopped.get().map(|(_, line)| line.as_str())
    }

    fn stop(&self, status: u16, line: String) {
        let _ = self.stopped.set((status, line));
    }

    fn note_refusal(&self, body: &str) {
        let message = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| "Unauthorized".into());
        // The server's words, on one line of bounded length (escaped again where printed).
        let message: String = message.chars().take(200).collect();
        let line = match self.token_source {
            Some(var) => format!(
                "GitHub refused the token in {var} (401 {message}): it is expired, revoked or mistyped; make a new one (`gh auth token`, or a fine-grained token under Settings → Developer settings) and set {var} to it"
            ),
            None => format!(
                "GitHub answered 401 without a token ({message}): set GH_TOKEN to a token that can read the repository"
            ),
        };
        self.stop(401, line);
    }

    /// Waits out `wait` (told to the notice once a second), or, when the reset is later than
    /// warden waits, stops the session with the line saying when it resets.
    async fn wait_for_limit(&self, route: &str, headers: &HeaderMap, last_try: bool) -> bool {
        let route = route
            .trim_start_matches('/')
            .split('?')
            .next()
            .unwrap_or_default();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let retry_after = header(headers, "retry-after").and_then(|v| v.parse::<u64>().ok());
        let reset = header(headers, "x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok());
        let spent_advice = "run again after the reset, or with a token that has requests left (`gh api rate_limit` shows them)";
        let (wait, why, advice) = match (retry_after, reset) {
            (Some(secs), _) => (
                secs,
                format!("GitHub's secondary rate limit asks warden to wait {secs} s (GET /{route})"),
                "run again later, with fewer requests at once (`--jobs`)",
            ),
            (None, Some(at)) => {
                let wait = at.saturating_sub(now);
                (
                    wait,
                    format!(
                        "GitHub's rate limit for this token is spent (GET /{route}); it resets at {}, in {}",
                        crate::util::utc_time(at),
                        human_duration(wait)
                    ),
                    spent_advice,
                )
            }
            (None, None) => (
                u64::MAX,
                format!("GitHub's rate limit for this token is spent (GET /{route}), and GitHub did not say when it resets"),
                spent_advice,
            ),
        };
        let bound = self.retry.rate_limit_wait;
        if last_try || Duration::from_secs(wait) > bound {
            let line = if last_try && Duration::from_secs(wait) <= bound {
                format!(
                    "{why}, and is still spent after {} tries: {advice}",
                    self.retry.attempts
                )
            } else {
                format!(
                    "{why}: longer than warden waits ({} s, WARDEN_RATE_LIMIT_WAIT): {advice}",
                    bound.as_secs()
                )
            };
            self.stop(403, line);
            return false;
        }
        // A reset is a whole second: one more than it says. `retry-after` is what to wait.
        let wait = wait + u64::from(retry_after.is_none());
        let mut left = Duration::from_secs(wait);
        let why = format!("{why}: waiting for it");
        while !left.is_zero() {
            if let Some(notice) = &self.wait_notice {
                notice(&Waiting {
                    why: why.clone(),
                    left,
                    first: left == Duration::from_secs(wait),
                });
            }
            let step = left.min(Duration::from_secs(1));
            tokio::time::sleep(step).await;
            left -= step;
        }
        true
    }

    /// Answers from and into `cache` (conditional requests).
    pub(crate) fn with_cache(mut self, cache: Option<ResponseCache>) -> Self {
        self.cache = cache;
        self
    }

    /// The last `x-ratelimit-remaining` and `x-ratelimit-reset` (epoch seconds) seen, if any.
    pub(crate) fn rate_limit(&self) -> Option<(u64, u64)> {
        use std::sync::atomic::Ordering::Relaxed;
        let remaining = self.usage.remaining.load(Relaxed);
        (remaining >= 0).then(|| (remaining as u64, self.usage.reset.load(Relaxed)))
    }

    pub(crate) fn request_counts(&self) -> RequestCounts {
        use std::sync::atomic::Ordering::Relaxed;
        RequestCounts {
            sent: self.usage.sent.load(Relaxed),
            graphql: self.usage.graphql.load(Relaxed),
            not_modified: self.usage.not_modified.load(Relaxed),
            from_cache: self.usage.from_cache.load(Relaxed),
        }
    }

    fn note_usage(&self, headers: &HeaderMap) {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(r) = header(headers, "x-ratelimit-remaining").and_then(|v| v.parse().ok()) {
            self.usage.remaining.store(r, Relaxed);
        }
        if let Some(r) = header(headers, "x-ratelimit-reset").and_then(|v| v.parse().ok()) {
            self.usage.reset.store(r, Relaxed);
        }
    }

    /// One GET, through the cache when there is one: a cached git object is not asked for
    /// again, anything else is asked with `If-None-Match` and a 304 is answered from the cache.
    async fn get_cached(&self, route: &str) -> Result<(u16, HeaderMap, String), Reason> {
        use std::sync::atomic::Ordering::Relaxed;
        let cached = self.cache.as_ref().and_then(|c| c.get(route));
        let mut cached_headers = HeaderMap::new();
        if let Some(link) = cached.as_ref().and_then(|c| c.link.as_deref()) {
            if let Ok(v) = http::HeaderValue::from_str(link) {
                cached_headers.insert(http::header::LINK, v);
            }
        }
        // A git object is answered from the cache only when it hashes to the SHA that names
        // it (anyone who can write the cache folder could have changed it); else asked again.
        let cached = cached
            .filter(|c| !immutable(route) || super::git_object::answer_matches(route, &c.body));
        if let Some(answer) = &cached {
            if immutable(route) {
                self.usage.from_cache.fetch_add(1, Relaxed);
                return Ok((200, cached_headers, answer.body.clone()));
            }
        }
        let etag = cached.as_ref().map(|c| c.etag.as_str());
        let (status, headers, body) = self.get_once(route, etag).await?;
        match (status, cached) {
            (304, Some(answer)) => {
                self.usage.not_modified.fetch_add(1, Relaxed);
                Ok((200, cached_headers, answer.body))
            }
            (200, _) => {
                if let (Some(cache), Some(etag)) = (&self.cache, header(&headers, "etag")) {
                    cache.put(&CachedAnswer {
                        route: route.to_string(),
                        etag: etag.to_string(),
                        link: header(&headers, "link").map(str::to_string),
                        body: body.clone(),
                    });
                }
                Ok((status, headers, body))
            }
            _ => Ok((status, headers, body)),
        }
    }

    /// One GET with retries (`If-None-Match: etag` when given). Returns status, headers and body.
    async fn get_once(
        &self,
        route: &str,
        etag: Option<&str>,
    ) -> Result<(u16, HeaderMap, String), Reason> {
        let mut attempt = 0;
        let first_try = tokio::time::Instant::now();
        let mut conditional = HeaderMap::new();
        if let Some(v) = etag.and_then(|e| http::HeaderValue::from_str(e).ok()) {
            conditional.insert(http::header::IF_NONE_MATCH, v);
        }
        loop {
            attempt += 1;
            if let Some((status, line)) = self.stopped.get() {
                // The token was refused, the limit is spent or the API is unreachable: nothing
                // more is sent.
                return Ok((*status, HeaderMap::new(), stopped_answer(line)));
            }
            let (status, headers, body) = self.try_once(route, &conditional, attempt).await?;
            self.note_usage(&headers);
            if status == 401 {
                self.note_refusal(&body);
            }
            // A secondary limit is a 403 or 429 with `retry-after`; the primary one, remaining 0.
            let rate_limited = status == 429
                || (status == 403
                    && (header(&headers, "x-ratelimit-remaining") == Some("0")
                        || header(&headers, "retry-after").is_some()));
            if rate_limited {
                let last_try = attempt >= self.retry.attempts;
                if self.wait_for_limit(route, &headers, last_try).await {
                    continue;
                }
                let (status, line) = self.stopped.get().cloned().unwrap_or_default();
                return Ok((status, HeaderMap::new(), stopped_answer(&line)));
            }
            let retryable = status == 0 || status >= 500;
            if !retryable || attempt >= self.retry.attempts {
                if status == 0 || status >= 500 {
                    // A GitHub that keeps failing says nothing about the repository.
                    let line = self.keeps_failing(route, status, &headers, &body, first_try);
                    self.stop(status, line.clone());
                    if status == 0 {
                        return Err(line.into());
                    }
                }
                return Ok((status, headers, body));
            }
            let wait = self.wait(attempt, &headers);
            if status >= 500 {
                self.tell_retry(route, status, attempt, wait).await;
            } else {
                tokio::time::sleep(wait).await;
            }
        }
    }

    /// One attempt of a GET: the answer, or `Err` when no more attempts are to be made (the
    /// answer is too large, too slow, or no server answers).
    async fn try_once(
        &self,
        route: &str,
        conditional: &HeaderMap,
        attempt: u32,
    ) -> Result<(u16, HeaderMap, String), Reason> {
        let permit = self.in_flight.acquire().await;
        self.usage
            .sent
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // A relative route (`/repos/…`): octocrab adds the base URL and, only then, the token.
        let started = tokio::time::Instant::now();
        let first = self.retry.read_timeout;
        let result = tokio::time::timeout(
            first,
            self.crab._get_with_headers(
                format!("/{}", route.trim_start_matches('/')),
                Some(conditional.clone()),
            ),
        )
        .await
        .unwrap_or_else(|_| {
            Err(octocrab::Error::Other {
                source: Box::new(Silent),
                backtrace: std::backtrace::Backtrace::disabled(),
            })
        });
        let answer = match result {
            Ok(resp) => {
                let status = resp.status().as_u16();
                let headers = resp.headers().clone();
                match read_answer(resp.into_body(), started, first).await {
                    Ok(body) => (status, headers, body),
                    Err(Oversize) => {
                        return Err(format!(
                            "GET /{}: the answer is larger than {} MiB, the most warden reads of one answer: refusing it",
                            route.trim_start_matches('/'),
                            ANSWER_CAP >> 20
                        ).into())
                    }
                    Err(TooSlow(received)) => {
                        let line = self.too_slow(route, Some(received), started.elapsed());
                        self.stop(0, line.clone());
                        return Err(line.into());
                    }
                    Err(Unreadable(e)) => {
                        (0, HeaderMap::new(), format!("reading the response: {e}"))
                    }
                }
            }
            Err(e) if is_silent(&e) => {
                // An answer that does not start in time is not retried: the next would
                // wait as long, and every request of the command after it.
                let line = self.too_slow(route, None, started.elapsed());
                self.stop(0, line.clone());
                return Err(line.into());
            }
            Err(e) => {
                // No server answers: one more try, not the whole backoff.
                if cannot_connect(&e) && attempt >= self.retry.attempts.min(2) {
                    let line = format!(
                        "cannot connect to the GitHub API at {} (from {}): {}; check the URL and the network",
                        self.base_url,
                        self.url_source,
                        root_cause(&e)
                    );
                    self.stop(0, line.clone());
                    return Err(line.into());
                }
                (0, HeaderMap::new(), e.to_string())
            }
        };
        drop(permit);
        Ok(answer)
    }

    /// Waits `wait` before attempt `attempt + 1`, telling the notice what failed and how long
    /// is left (once a second).
    async fn tell_retry(&self, route: &str, status: u16, attempt: u32, wait: Duration) {
        let why = format!(
            "GET /{} answered {status}: trying again ({} of {})",
            super::routes::path_of(route.trim_start_matches('/')),
            attempt + 1,
            self.retry.attempts
        );
        let mut left = wait;
        while !left.is_zero() {
            if let Some(notice) = &self.wait_notice {
                notice(&Waiting {
                    why: why.clone(),
                    left: Duration::from_secs(left.as_secs_f64().ceil() as u64),
                    first: left == wait,
                });
            }
            let step = left.min(Duration::from_secs(1));
            tokio::time::sleep(step).await;
            left -= step;
        }
    }

    /// The line a GitHub that keeps answering 5xx stops the command with.
    fn keeps_failing(
        &self,
        route: &str,
        status: u16,
        headers: &HeaderMap,
        body: &str,
        first_try: tokio::time::Instant,
    ) -> String {
        let message = match failure(status, headers, body) {
            Fetched::Failed { message, .. } => message.chars().take(200).collect::<String>(),
            Fetched::Ok(_) => String::new(),
        };
        let answered = match status {
            0 => format!("failed ({message})"),
            s => format!("answered {s} ({message})"),
        };
        format!(
            "the GitHub API at {} (from {}) keeps failing: GET /{} {answered} {} times in {} s; this is not about the repository: try again later (https://www.githubstatus.com for github.com)",
            self.base_url,
            self.url_source,
            super::routes::path_of(route.trim_start_matches('/')),
            self.retry.attempts,
            first_try.elapsed().as_secs_f64().ceil() as u64,
        )
    }

    /// The line an answer that did not arrive in time stops the command with.
    fn too_slow(&self, route: &str, received: Option<u64>, took: Duration) -> String {
        let route = super::routes::path_of(route.trim_start_matches('/'));
        let first = self.retry.read_timeout.as_secs_f64();
        let what = match received {
            None => format!("no answer within {first} s"),
            Some(n) => format!(
                "the answer arrived too slowly ({n} bytes in {} s; warden waits {first} s for it to start, then needs {} KiB/s)",
                took.as_secs(),
                MIN_ANSWER_RATE >> 10
            ),
        };
        format!(
            "GET /{route}: {what} from the GitHub API at {} (from {}): it is down or too slow; try again later",
            self.base_url, self.url_source
        )
    }

    /// How long to wait before attempt `attempt + 1` after a failure that is not a rate limit:
    /// `retry-after` when the server sends one, else exponential backoff; never longer than
    /// `max_wait`. (GitHub sends `x-ratelimit-reset` on every answer: a 500 does not wait for it.)
    fn wait(&self, attempt: u32, headers: &HeaderMap) -> Duration {
        let backoff = self.retry.base_delay * 2u32.saturating_pow(attempt - 1);
        header(headers, "retry-after")
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_secs)
            .unwrap_or(backoff)
            .min(self.retry.max_wait)
    }

    /// Streams one release asset, chunk by chunk, into `out` (a bounded channel: memory stays flat
    /// whatever the asset's size), following the redirect to the storage host without the token:
    /// the token goes only to the API's own origin, and a redirect from HTTPS to HTTP is refused.
    async fn stream_asset(
        &self,
        route: &str,
        out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    ) -> Result<u64, Reason> {
        let mut body = self.open_asset(route).await?.into_body();
        let mut written = 0u64;
        while let Some(data) = next_chunk(&mut body).await {
            let data = data?;
            written += data.len() as u64;
            out.send(data)
                .await
                .map_err(|_| "the writer stopped".to_string())?;
        }
        Ok(written)
    }

    /// An asset's response, after the redirect to the storage host (see `download`).
    async fn open_asset(&self, route: &str) -> Result<http::Response<AssetBody>, Reason> {
        let resp = self
            .bytes
            ._get(format!("/{}", route.trim_start_matches('/')))
            .await
            .map_err(|e| e.to_string())?;
        self.follow(resp).await
    }

    /// The response of an absolute URL on another host, without the token (HTTPS, unless the
    /// API itself is plain HTTP: a local test server).
    async fn open_external(&self, url: &str) -> Result<http::Response<AssetBody>, Reason> {
        redirect_allowed(self.base_url.starts_with("https://"), url)?;
        let resp = self.anonymous._get(url).await.map_err(|e| e.to_string())?;
        self.follow(resp).await
    }

    /// `resp`, or where its redirects lead (at most five, none from HTTPS down to HTTP, each on
    /// the client without the token).
    async fn follow(
        &self,
        mut resp: http::Response<AssetBody>,
    ) -> Result<http::Response<AssetBody>, Reason> {
        let api_https = self.base_url.starts_with("https://");
        for _ in 0..5 {
            if !resp.status().is_redirection() {
                break;
            }
            let location = header(resp.headers(), "location")
                .ok_or("a redirect without a Location")?
                .to_string();
            redirect_allowed(api_https, &location)?;
            // An absolute URL on the anonymous client: no token, whatever the host.
            resp = self
                .anonymous
                ._get(location.as_str())
                .await
                .map_err(|e| e.to_string())?;
        }
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(format!("HTTP {status}").into());
        }
        Ok(resp)
    }

    /// A write (`POST`, `PUT` or `PATCH`) with a JSON body. Returns the status and the body; not
    /// retried (a write is not known to be idempotent).
    pub(crate) async fn send(
        &self,
        method: &str,
        route: &str,
        body: &Value,
    ) -> Result<(u16, HeaderMap, String), Reason> {
        let uri = format!("/{}", route.trim_start_matches('/'));
        let resp = match method {
            "PUT" => self.crab._put(uri, Some(body)).await,
            "PATCH" => self.crab._patch(uri, Some(body)).await,
            _ => self.crab._post(uri, Some(body)).await,
        };
        let resp = resp.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = self
            .crab
            .body_to_string(resp)
            .await
            .map_err(|e| e.to_string())?;
        Ok((status, headers, text))
    }

    /// The `rel="next"` link as a relative route (path + query), so the token is still sent.
    fn next_route(&self, headers: &HeaderMap) -> Option<String> {
        let link = header(headers, "link")?;
        let next = link.split(',').find(|part| part.contains("rel=\"next\""))?;
        let url = next
            .split(';')
            .next()?
            .trim()
            .trim_start_matches('<')
            .trim_end_matches('>');
        let path = match url.split_once("://") {
            Some((_, rest)) => &rest[rest.find('/')?..],
            None => url,
        };
        Some(path.to_string())
    }
}

/// The answer every request gets once the API is stopped: the stop line, whole, as GitHub's
/// `message` (a server's own text is cut to 200 characters; this one is warden's).
fn stopped_answer(line: &str) -> String {
    serde_json::json!({ "message": line }).to_string()
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// How a failed answer that is a web page begins.
pub(crate) const WEB_PAGE: &str = "a web page, not a GitHub API answer";

/// What a failed answer that is not GitHub's JSON says, on one line: a web page (a proxy, or an
/// `--api-url` that is not the API) by its type and size, other text as its first 120
/// characters with whitespace collapsed.
fn not_json(headers: &HeaderMap, body: &str) -> String {
    let kind = header(headers, "content-type").unwrap_or_default();
    if kind.starts_with("text/html") || body.trim_start().starts_with('<') {
        return format!(
            "{WEB_PAGE} ({} bytes of {}): is the API URL right?",
            body.len(),
            kind.split(';')
                .next()
                .filter(|k| !k.is_empty())
                .unwrap_or("HTML")
        );
    }
    let text: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    text.chars().take(120).collect()
}

pub(crate) fn failure(status: u16, headers: &HeaderMap, body: &str) -> Fetched {
    if (300..400).contains(&status) {
        // An API answer is never a redirect (GitHub redirects only downloads): not followed.
        let to = header(headers, "location").unwrap_or("nowhere");
        let to: String = crate::markup::text_value(to).chars().take(120).collect();
        return Fetched::Failed {
            status,
            message: format!("a redirect to {to}, where an API answer was expected: not followed"),
            permission: None,
        };
    }
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| not_json(headers, body));
    let message = if message.trim().is_empty() {
        "(no message)".to_string()
    } else {
        message
    };
    Fetched::Failed {
        status,
        message,
        permission: header(headers, "x-accepted-github-permissions").map(str::to_string),
    }
}

/// Appends the items of `page` to `acc`, both in `shape`.
/// Appends the items of `page` to the list in `acc`. `ids` holds the ids of the items read so
/// far: a server that lists an item on two pages (the list changed while it was read) gives it
/// once, the first copy.
fn merge(
    acc: &mut Value,
    page: Value,
    shape: Shape,
    ids: &mut std::collections::BTreeSet<String>,
) -> Result<(), Reason> {
    let items = |v: Value| -> Result<Vec<Value>, Reason> {
        match (shape, v) {
            (Shape::Array, Value::Array(a)) => Ok(a),
            (Shape::Items(key), Value::Object(mut o)) => match o.remove(key) {
                Some(Value::Array(a)) => Ok(a),
                _ => Err(format!("expected an object with a `{key}` array").into()),
            },
            (Shape::Array, _) => Err("expected a JSON array".into()),
            _ => Err("unexpected response shape".into()),
        }
    };
    let more = items(page)?;
    let target = match (shape, acc) {
        (Shape::Array, Value::Array(a)) => a,
        (Shape::Items(key), Value::Object(o)) => match o.get_mut(key) {
            Some(Value::Array(a)) => a,
            _ => return Err(format!("expected an object with a `{key}` array").into()),
        },
        _ => return Err("unexpected response shape".into()),
    };
    target.extend(
        more.into_iter()
            .filter(|v| item_id(v).is_none_or(|id| ids.insert(id))),
    );
    Ok(())
}

/// The ids of the items of a first page, for [`merge`].
fn first_page_ids(page: &Value, shape: Shape) -> std::collections::BTreeSet<String> {
    let items = match (shape, page) {
        (Shape::Array, Value::Array(a)) => Some(a),
        (Shape::Items(key), Value::Object(o)) => o.get(key).and_then(Value::as_array),
        _ => None,
    };
    items.into_iter().flatten().filter_map(item_id).collect()
}

/// A list item's `id` (or its `node_id`, `full_name`), as text.
fn item_id(v: &Value) -> Option<String> {
    ["id", "node_id", "full_name"]
        .iter()
        .find_map(|k| v.get(k).filter(|v| !v.is_null()))
        .map(|id| id.to_string())
}

/// The most one API answer may hold, as the cache and snapshots cap theirs: a larger answer is
/// refused before it fills memory.
pub(crate) const ANSWER_CAP: u64 = 64 << 20;

/// The slowest an API answer may arrive once it has started: a trickle holds a command as long
/// as a silent server, so the body must keep this average rate after the first `read_timeout`.
pub(crate) const MIN_ANSWER_RATE: u64 = 16 << 10;

/// Why an answer's body was not read.
enum AnswerError {
    Oversize,
    /// Slower than [`MIN_ANSWER_RATE`]: the bytes received by then.
    TooSlow(u64),
    Unreadable(String),
}
use AnswerError::{Oversize, TooSlow, Unreadable};

/// No answer started within the read timeout (an error for octocrab's `Other`).
#[derive(Debug)]
struct Silent;

impl fmt::Display for Silent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no answer in time")
    }
}

impl std::error::Error for Silent {}

fn is_silent(e: &octocrab::Error) -> bool {
    matches!(e, octocrab::Error::Other { source, .. } if source.is::<Silent>())
}

/// The body of an answer as text, read frame by frame up to [`ANSWER_CAP`], within the time
/// `grace` after `started` plus what has arrived at [`MIN_ANSWER_RATE`].
async fn read_answer(
    mut body: AssetBody,
    started: tokio::time::Instant,
    grace: Duration,
) -> Result<String, AnswerError> {
    let mut bytes = Vec::new();
    loop {
        let allowed = grace + Duration::from_secs_f64(bytes.len() as f64 / MIN_ANSWER_RATE as f64);
        let chunk = match tokio::time::timeout_at(started + allowed, next_chunk(&mut body)).await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(_) => return Err(TooSlow(bytes.len() as u64)),
        };
        let chunk = chunk.map_err(|e| Unreadable(e.into()))?;
        if (bytes.len() + chunk.len()) as u64 > ANSWER_CAP {
            return Err(Oversize);
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|_| Unreadable("the answer is not UTF-8".into()))
}

/// Whether a failed request never reached the server (refused, unroutable, no such host, TLS):
/// then every later request would fail the same way.
fn cannot_connect(e: &octocrab::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(h) = err.downcast_ref::<hyper_util::client::legacy::Error>() {
            return h.is_connect();
        }
        source = err.source();
    }
    false
}

/// The innermost cause of an error ("Connection refused (os error 111)"): octocrab's own
/// Display says only "Service Error".
fn root_cause(e: &octocrab::Error) -> String {
    let mut err: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = err.source() {
        err = next;
    }
    err.to_string()
}

/// `secs` as "42 s", "7 min" or "2 h 5 min".
fn human_duration(secs: u64) -> String {
    match secs {
        0..=119 => format!("{secs} s"),
        120..=7199 => format!("{} min", secs.div_ceil(60)),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

/// The most pages one list is read over; a longer list is refused, never truncated.
pub(crate) const MAX_PAGES: usize = 1000;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The most one GraphQL answer may take: GitHub itself stops a query after 10 seconds.
const GRAPHQL_TIMEOUT: Duration = Duration::from_secs(20);

impl LiveApi {
    /// One POST of a query, at most twice (a 5xx or no answer is tried once more). Never stops
    /// the command and never waits for a rate limit: a query that fails leaves the caller to REST.
    async fn post_graphql(&self, query: &str, variables: &Value) -> Fetched {
        use std::sync::atomic::Ordering::Relaxed;
        let body = serde_json::json!({"query": query, "variables": variables});
        let url = self.graphql_path.as_str();
        let mut last = Fetched::Failed {
            status: 0,
            message: "not sent".to_string(),
            permission: None,
        };
        for _ in 0..2 {
            if self.stopped.get().is_some() || self.graphql_refused.load(Relaxed) {
                return last;
            }
            let permit = self.in_flight.acquire().await;
            self.usage.sent.fetch_add(1, Relaxed);
            self.usage.graphql.fetch_add(1, Relaxed);
            let started = tokio::time::Instant::now();
            let sent =
                tokio::time::timeout(GRAPHQL_TIMEOUT, self.gql._post(url, Some(&body))).await;
            let resp = match sent {
                Ok(Ok(resp)) => resp,
                Ok(Err(e)) => {
                    last = Fetched::Failed {
                        status: 0,
                        message: root_cause(&e),
                        permission: None,
                    };
                    continue;
                }
                Err(_) => {
                    last = Fetched::Failed {
                        status: 0,
                        message: "no answer in time".to_string(),
                        permission: None,
                    };
                    continue;
                }
            };
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let text = match read_answer(resp.into_body(), started, GRAPHQL_TIMEOUT).await {
                Ok(text) => text,
                Err(_) => {
                    last = Fetched::Failed {
                        status,
                        message: "the answer was too large, too slow or not UTF-8".to_string(),
                        permission: None,
                    };
                    continue;
                }
            };
            drop(permit);
            if status >= 500 {
                last = failure(status, &headers, &text);
                continue;
            }
            if !(200..300).contains(&status) {
                // Not served (404), not for this token (401, 403), or its own limit spent: the
                // rest of the run reads through REST instead of asking again.
                self.graphql_refused.store(true, Relaxed);
                return failure(status, &headers, &text);
            }
            return match serde_json::from_str(&text) {
                Ok(v) => Fetched::Ok(v),
                Err(e) => Fetched::Failed {
                    status,
                    message: format!("malformed JSON from POST {url}: {e}"),
                    permission: None,
                },
            };
        }
        last
    }
}

impl ApiSource for LiveApi {
    async fn graphql(&self, query: &str, variables: &Value) -> Fetched {
        self.post_graphql(query, variables).await
    }

    async fn download(
        &self,
        route: &str,
        out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    ) -> Result<u64, Reason> {
        self.stream_asset(route, out).await
    }

    async fn get_sha256(&self, route: &str) -> Fetched {
        let digest = async {
            let mut body = self.open_asset(route).await?.into_body();
            // Both digests from one read: an artifact's own signature is checked over the
            // BLAKE2b prehash.
            let mut hasher = crate::minisign::hash::StreamHasher::default();
            while let Some(data) = next_chunk(&mut body).await {
                hasher.update(&data?);
            }
            Ok(hasher.finish())
        };
        match digest.await {
            Ok(d) => Fetched::Ok(serde_json::json!({
                "sha256": crate::util::to_hex(&d.sha256),
                "blake2b512": crate::util::to_hex(&d.blake2b512),
                "size": d.size,
            })),
            Err(e) => asset_failure(e),
        }
    }

    async fn get_external(&self, url: &str, cap: u64) -> Fetched {
        match self.open_external(url).await {
            Ok(response) => capped_base64(response.into_body(), cap).await,
            Err(e) => asset_failure(e.into()),
        }
    }

    async fn get_bytes(&self, route: &str, cap: u64) -> Fetched {
        match self.open_asset(route).await {
            Ok(response) => capped_base64(response.into_body(), cap).await,
            Err(e) => asset_failure(e.into()),
        }
    }

    async fn get(&self, route: &str, shape: Shape) -> Fetched {
        let first = route.to_string();
        let mut route = first.clone();
        let mut acc: Option<Value> = None;
        let mut seen = std::collections::BTreeSet::new();
        let mut ids = std::collections::BTreeSet::new();
        for _ in 0..MAX_PAGES {
            seen.insert(route.clone());
            let (status, headers, body) = match self.get_cached(&route).await {
                Ok(r) => r,
                Err(e) => {
                    return Fetched::Failed {
                        status: 0,
                        message: e.into(),
                        permission: None,
                    }
                }
            };
            if !(200..300).contains(&status) {
                return failure(status, &headers, &body);
            }
            let value: Value = match serde_json::from_str(&body) {
                Ok(v) => v,
                Err(e) => {
                    return Fetched::Failed {
                        status,
                        message: format!("malformed JSON from GET /{route}: {e}"),
                        permission: None,
                    }
                }
            };
            match (&mut acc, shape) {
                (None, _) => {
                    ids = first_page_ids(&value, shape);
                    acc = Some(value)
                }
                (Some(_), Shape::Object) => {}
                (Some(a), _) => {
                    if let Err(e) = merge(a, value, shape, &mut ids) {
                        return Fetched::Failed {
                            status,
                            message: format!("GET /{route}: {e}"),
                            permission: None,
                        };
                    }
                }
            }
            if shape == Shape::Object {
                break;
            }
            match self.next_route(&headers) {
                Some(next) => {
                    route = next
                        .trim_start_matches(&self.base_path)
                        .trim_start_matches('/')
                        .to_string();
                    if seen.contains(&route) {
                        return Fetched::Failed {
                            status: 0,
                            message: format!(
                                "GET /{first}: the next-page link points back to a page already read ({route}): refusing a looping list"
                            ),
                            permission: None,
                        };
                    }
                }
                None => return Fetched::Ok(acc.unwrap_or(Value::Null)),
            }
            if let (Some(a), Shape::Items(key)) = (&acc, shape) {
                if !a.get(key).is_some_and(Value::is_array) {
                    return Fetched::Failed {
                        status,
                        message: format!("GET /{route}: expected an object with a `{key}` array"),
                        permission: None,
                    };
                }
            }
        }
        if shape == Shape::Object {
            return Fetched::Ok(acc.unwrap_or(Value::Null));
        }
        Fetched::Failed {
            status: 0,
            message: format!(
                "GET /{first}: more than {MAX_PAGES} pages: refusing a list that would be cut short"
            ),
            permission: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_debug_is_redacted() {
        let t = Token::new("ghp_secretvalue".into()).unwrap();
        assert_eq!(format!("{t:?}"), "Token(***)");
        assert!(Token::new("  ".into()).is_none());
    }

    #[test]
    fn pages_merge_into_the_first_shape() {
        let mut a = serde_json::json!({"total_count": 3, "secrets": [{"name": "A"}]});
        let shape = Shape::Items("secrets");
        let mut ids = first_page_ids(&a, shape);
        merge(
            &mut a,
            serde_json::json!({"total_count": 3, "secrets": [{"name": "B"}, {"name": "C"}]}),
            shape,
            &mut ids,
        )
        .unwrap();
        assert_eq!(a["secrets"].as_array().unwrap().len(), 3);
        let mut b = serde_json::json!([1]);
        let mut ids = first_page_ids(&b, Shape::Array);
        merge(&mut b, serde_json::json!([2, 3]), Shape::Array, &mut ids).unwrap();
        assert_eq!(b, serde_json::json!([1, 2, 3]));
        assert!(merge(&mut b, serde_json::json!({"x": 1}), Shape::Array, &mut ids).is_err());
        // An item a later page repeats is kept once, whichever page listed it first.
        let mut c = serde_json::json!([{"id": 1}, {"id": 2}]);
        let mut ids = first_page_ids(&c, Shape::Array);
        merge(
            &mut c,
            serde_json::json!([{"id": 2}, {"id": 3}]),
            Shape::Array,
            &mut ids,
        )
        .unwrap();
        merge(
            &mut c,
            serde_json::json!([{"id": 3}, {"id": 4}]),
            Shape::Array,
            &mut ids,
        )
        .unwrap();
        assert_eq!(
            c,
            serde_json::json!([{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}])
        );
    }
}
