//! GitHub REST access: an octocrab client used through relative routes (octocrab drops the auth
//! header on absolute URLs), `Link` pagination on every list, retries with backoff that honour
//! `retry-after` / `x-ratelimit-reset`, and answers as JSON values that the caller types. The
//! same [`ApiSource`] reads a snapshot folder instead.

use std::fmt;
use std::time::Duration;

use http::header::HeaderMap;
use octocrab::service::middleware::retry::RetryConfig;
use octocrab::Octocrab;
use serde_json::Value;

/// Where an asset download may be redirected: an absolute HTTP(S) URL, and never from HTTPS down
/// to HTTP. The signed storage URL's query is left out of the error.
fn redirect_allowed(from_https: bool, location: &str) -> Result<(), String> {
    if from_https && !location.starts_with("https://") {
        return Err(format!(
            "refused a redirect from HTTPS to {}",
            location.split('?').next().unwrap_or_default()
        ));
    }
    if !(location.starts_with("https://") || location.starts_with("http://")) {
        return Err("a redirect to a relative or unknown location".into());
    }
    Ok(())
}

#[cfg(test)]
mod redirect_tests {
    use super::redirect_allowed;

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
async fn next_chunk(body: &mut AssetBody) -> Option<Result<bytes::Bytes, String>> {
    use http_body_util::BodyExt;
    loop {
        match body.frame().await? {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    return Some(Ok(data));
                }
            }
            Err(e) => return Some(Err(e.to_string())),
        }
    }
}

/// A download that did not complete, as an answer (no HTTP status to report).
fn asset_failure(route: &str, why: String) -> Fetched {
    Fetched::Failed {
        status: 0,
        message: format!("GET /{route}: {why}"),
        permission: None,
    }
}

/// The body of an asset download, as octocrab returns it.
type AssetBody = http_body_util::combinators::BoxBody<bytes::Bytes, octocrab::Error>;

/// A token, never printed.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// A token from its text; `None` when it is empty or blank.
    pub fn new(s: String) -> Option<Self> {
        let s = s.trim().to_string();
        (!s.is_empty()).then_some(Token(s))
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

    /// A small binary answer (a release asset of at most `cap` bytes), as
    /// `{"base64": "…"}`: the JSON form a snapshot records and replays.
    fn get_bytes(
        &self,
        route: &str,
        _cap: u64,
    ) -> impl std::future::Future<Output = Fetched> + Send {
        self.get(route, Shape::Object)
    }

    /// The SHA-256 of a release asset of any size, as `{"sha256": "<hex>"}` (streamed: memory
    /// stays flat; a snapshot records only the digest).
    fn get_sha256(&self, route: &str) -> impl std::future::Future<Output = Fetched> + Send {
        self.get(route, Shape::Object)
    }
}

/// Retry policy: attempts and the longest single wait honoured.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    pub attempts: u32,
    pub base_delay: Duration,
    pub max_wait: Duration,
    /// How long one response may take to arrive.
    pub read_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 4,
            base_delay: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
            read_timeout: Duration::from_secs(30),
        }
    }
}

pub struct LiveApi {
    crab: Octocrab,
    /// The same client asking for raw bytes (`Accept: application/octet-stream`), for assets.
    bytes: Octocrab,
    /// No token at all: for whatever host an asset download is redirected to.
    anonymous: Octocrab,
    base_url: String,
    base_path: String,
    retry: RetryPolicy,
}

impl fmt::Debug for LiveApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LiveApi({})", self.base_path)
    }
}

impl LiveApi {
    pub fn new(base_url: &str, token: Option<&Token>, retry: RetryPolicy) -> Result<Self, String> {
        let client = |accept: &str, token: Option<&Token>| -> Result<Octocrab, String> {
            let mut b = Octocrab::builder()
                .base_uri(base_url)
                .map_err(|e| format!("--api-url {base_url:?}: {e}"))?
                // Our own retry loop honours retry-after and x-ratelimit-reset.
                .add_retry_config(RetryConfig::None)
                .set_connect_timeout(Some(Duration::from_secs(10)))
                .set_read_timeout(Some(retry.read_timeout))
                .add_header(http::header::ACCEPT, accept.into());
            if let Some(t) = token {
                b = b.personal_token(t.0.clone());
            }
            b.build()
                .map_err(|e| format!("building the GitHub client: {e}"))
        };
        let crab = client("application/vnd.github+json", token)?;
        let bytes = client("application/octet-stream", token)?;
        let anonymous = client("application/octet-stream", None)?;
        let base_path = base_url
            .split_once("://")
            .map(|(_, rest)| rest.find('/').map_or("", |i| &rest[i..]))
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string();
        Ok(LiveApi {
            crab,
            bytes,
            anonymous,
            base_url: base_url.trim_end_matches('/').to_string(),
            base_path,
            retry,
        })
    }

    /// One GET with retries. Returns status, headers and body.
    async fn get_once(&self, route: &str) -> Result<(u16, HeaderMap, String), String> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            // A relative route (`/repos/…`): octocrab adds the base URL and, only then, the token.
            let result = self
                .crab
                ._get(format!("/{}", route.trim_start_matches('/')))
                .await;
            let (status, headers, body) = match result {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let headers = resp.headers().clone();
                    match self.crab.body_to_string(resp).await {
                        Ok(body) => (status, headers, body),
                        Err(e) => (0, HeaderMap::new(), format!("reading the response: {e}")),
                    }
                }
                Err(e) => (0, HeaderMap::new(), e.to_string()),
            };
            let rate_limited = status == 429
                || (status == 403 && header(&headers, "x-ratelimit-remaining") == Some("0"));
            let retryable = status == 0 || status >= 500 || rate_limited;
            if !retryable || attempt >= self.retry.attempts {
                if status == 0 {
                    return Err(body);
                }
                return Ok((status, headers, body));
            }
            tokio::time::sleep(self.wait(attempt, &headers)).await;
        }
    }

    /// How long to wait before attempt `attempt + 1`: `retry-after`, else `x-ratelimit-reset`,
    /// else exponential backoff; never longer than `max_wait`.
    fn wait(&self, attempt: u32, headers: &HeaderMap) -> Duration {
        let backoff = self.retry.base_delay * 2u32.saturating_pow(attempt - 1);
        let told = header(headers, "retry-after")
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_secs)
            .or_else(|| {
                let reset = header(headers, "x-ratelimit-reset")?.parse::<u64>().ok()?;
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()?
                    .as_secs();
                Some(Duration::from_secs(reset.saturating_sub(now)))
            });
        told.unwrap_or(backoff).min(self.retry.max_wait)
    }

    /// Streams one release asset, chunk by chunk, into `out` (a bounded channel: memory stays flat
    /// whatever the asset's size), following the redirect to the storage host without the token:
    /// the token goes only to the API's own origin, and a redirect from HTTPS to HTTP is refused.
    pub async fn download(
        &self,
        route: &str,
        out: &tokio::sync::mpsc::Sender<bytes::Bytes>,
    ) -> Result<u64, String> {
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
    async fn open_asset(&self, route: &str) -> Result<http::Response<AssetBody>, String> {
        let api_https = self.base_url.starts_with("https://");
        let mut resp = self
            .bytes
            ._get(format!("/{}", route.trim_start_matches('/')))
            .await
            .map_err(|e| e.to_string())?;
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
            return Err(format!("HTTP {status}"));
        }
        Ok(resp)
    }

    /// A write (`POST`, `PUT` or `PATCH`) with a JSON body. Returns the status and the body; not
    /// retried (a write is not known to be idempotent).
    pub async fn send(
        &self,
        method: &str,
        route: &str,
        body: &Value,
    ) -> Result<(u16, HeaderMap, String), String> {
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

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

pub fn failure(status: u16, headers: &HeaderMap, body: &str) -> Fetched {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| body.chars().take(200).collect());
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
fn merge(acc: &mut Value, page: Value, shape: Shape) -> Result<(), String> {
    let items = |v: Value| -> Result<Vec<Value>, String> {
        match (shape, v) {
            (Shape::Array, Value::Array(a)) => Ok(a),
            (Shape::Items(key), Value::Object(mut o)) => match o.remove(key) {
                Some(Value::Array(a)) => Ok(a),
                _ => Err(format!("expected an object with a `{key}` array")),
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
            _ => return Err(format!("expected an object with a `{key}` array")),
        },
        _ => return Err("unexpected response shape".into()),
    };
    target.extend(more);
    Ok(())
}

impl ApiSource for LiveApi {
    async fn get_sha256(&self, route: &str) -> Fetched {
        use sha2::Digest as _;
        let digest = async {
            let mut body = self.open_asset(route).await?.into_body();
            let mut sha = sha2::Sha256::new();
            while let Some(data) = next_chunk(&mut body).await {
                sha.update(&data?);
            }
            Ok(crate::release::checksums::to_hex(&sha.finalize()))
        };
        match digest.await {
            Ok(hex) => Fetched::Ok(serde_json::json!({ "sha256": hex })),
            Err(e) => asset_failure(route, e),
        }
    }

    async fn get_bytes(&self, route: &str, cap: u64) -> Fetched {
        use base64::Engine as _;
        let bytes = async {
            let mut body = self.open_asset(route).await?.into_body();
            let mut bytes = Vec::new();
            while let Some(data) = next_chunk(&mut body).await {
                bytes.extend_from_slice(&data?);
                if bytes.len() as u64 > cap {
                    return Err(format!("larger than {cap} bytes"));
                }
            }
            Ok(bytes)
        };
        match bytes.await {
            Ok(b) => Fetched::Ok(serde_json::json!({
                "base64": base64::engine::general_purpose::STANDARD.encode(b)
            })),
            Err(e) => asset_failure(route, e),
        }
    }

    async fn get(&self, route: &str, shape: Shape) -> Fetched {
        let mut route = route.to_string();
        let mut acc: Option<Value> = None;
        // A hard stop against a server that links pages forever.
        for _ in 0..1000 {
            let (status, headers, body) = match self.get_once(&route).await {
                Ok(r) => r,
                Err(e) => {
                    return Fetched::Failed {
                        status: 0,
                        message: e,
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
                (None, _) => acc = Some(value),
                (Some(_), Shape::Object) => {}
                (Some(a), _) => {
                    if let Err(e) = merge(a, value, shape) {
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
                        .to_string()
                }
                None => break,
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
        Fetched::Ok(acc.unwrap_or(Value::Null))
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
        merge(
            &mut a,
            serde_json::json!({"total_count": 3, "secrets": [{"name": "B"}, {"name": "C"}]}),
            Shape::Items("secrets"),
        )
        .unwrap();
        assert_eq!(a["secrets"].as_array().unwrap().len(), 3);
        let mut b = serde_json::json!([1]);
        merge(&mut b, serde_json::json!([2, 3]), Shape::Array).unwrap();
        assert_eq!(b, serde_json::json!([1, 2, 3]));
        assert!(merge(&mut b, serde_json::json!({"x": 1}), Shape::Array).is_err());
    }
}
