//! C2SP tlog-witness over HTTP: `warden log witness --serve ADDR` (a witness anyone can run,
//! answering `POST /add-checkpoint` for the logs it follows) and `warden log cosign DIR --witness
//! URL…` (the log's client: each witness is sent the checkpoint with a consistency proof from the
//! size it knows, learnt from its 409 when unknown, and each cosignature that verifies under
//! `--witness-vkey` is added to the checkpoint). The decision itself is `log::witness::decide`.
//!
//! What a request or an answer controls is bounded: bodies are capped, every answer has a
//! deadline, a witness's text is printed escaped, and a cosignature joins the checkpoint only
//! when it verifies.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::files::atomic;
use crate::log::note::{
    cosign, cosignature_line, verify_checkpoint, CheckpointPolicy, VerifiedCheckpoint,
};
use crate::log::tiles::DirStore;
use crate::log::tree::{self, LogError};
use crate::log::witness::{
    decide, last_cosigned, origin_of, state_file, with_cosignature, AddCheckpoint, Refusal,
    MAX_REQUEST_BYTES, SIZE_TYPE,
};
use crate::trust::log::VerifierKeyArg;

use super::log_ops::WitnessKey;

/// The most connections a witness serves at once.
const MAX_CONNECTIONS: usize = 64;
/// How long a witness may take to answer, all told.
const ANSWER_DEADLINE: Duration = Duration::from_secs(20);
/// The most of a witness's answer the client reads.
const MAX_ANSWER_BYTES: usize = 16 << 10;

/// A witness serving the logs of `logs`.
struct Witness {
    logs: Vec<VerifierKeyArg>,
    key: WitnessKey,
    state: PathBuf,
    /// One decision at a time: the check of the old size and the update of the state are
    /// one step (the spec's rollback race); the folder lock keeps other processes out.
    turn: std::sync::Mutex<()>,
}

impl Witness {
    fn policy(&self, origin: &str) -> Option<CheckpointPolicy> {
        self.logs
            .iter()
            .find(|l| l.0.name == origin)
            .map(|l| CheckpointPolicy {
                log: l.0.clone(),
                witnesses: Vec::new(),
                threshold: 0,
            })
    }

    /// The answer to an `add-checkpoint` body: status, content type, body.
    fn add_checkpoint(&self, body: &[u8], now: u64) -> (u16, &'static str, String) {
        let text = "text/plain; charset=utf-8";
        let req = match AddCheckpoint::parse(body) {
            Ok(req) => req,
            Err(why) => return (400, text, format!("{why}\n")),
        };
        let Some(origin) = origin_of(&req.checkpoint).map(str::to_string) else {
            return (400, text, "not a checkpoint\n".into());
        };
        let Some(policy) = self.policy(&origin) else {
            return (404, text, "this witness does not follow that log\n".into());
        };
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let _lock = match atomic::DirLock::acquire(&self.state) {
            Ok(lock) => lock,
            Err(e) => return (500, text, format!("{e}\n")),
        };
        let file = state_file(&self.state, &origin);
        let last = match last_cosigned(&self.state, &policy) {
            Ok(last) => last,
            Err(e) => return (500, text, format!("{e}\n")),
        };
        match decide(&req, &policy, last.as_ref()) {
            Err(Refusal { status, body }) => {
                if status == 422 {
                    // A validly signed checkpoint this witness will not cosign: evidence.
                    let evidence = self.state.join(format!(
                        "refused-{}",
                        crate::util::to_hex(
                            &crate::minisign::hash::hash_bytes(&req.checkpoint).sha256[..8]
                        )
                    ));
                    let _ = atomic::write_atomic(&evidence, &req.checkpoint, 0o644, true);
                }
                let kind = if status == 409 { SIZE_TYPE } else { text };
                (status, kind, body)
            }
            Ok(cp) => {
                let signer = self.key.0.clone_at(now.max(1));
                let signed = cosignature_line(&cp.note, &signer)
                    .and_then(|line| Ok((line, cosign(&cp.note, &signer)?)));
                let (line, cosigned) = match signed {
                    Ok(x) => x,
                    Err(why) => return (500, text, format!("{why}\n")),
                };
                // Persisted before the answer: a cosignature is never given for a state lost.
                if let Err(e) = atomic::write_atomic(&file, &cosigned, 0o644, true) {
                    return (500, text, format!("{e}\n"));
                }
                (200, text, line)
            }
        }
    }
}

/// `warden log witness --serve ADDR`: answers `POST <prefix>/add-checkpoint` for the logs of
/// `logs` until the process ends; `ready` is told the address it listens on (port 0: any).
pub fn serve(
    addr: &str,
    logs: Vec<VerifierKeyArg>,
    key: WitnessKey,
    state: &Path,
    now: impl Fn() -> u64 + Send + Sync + 'static,
    ready: impl FnOnce(SocketAddr),
) -> Result<()> {
    std::fs::create_dir_all(state).map_err(|e| Error::io("creating", state, e))?;
    let witness = Arc::new(Witness {
        logs,
        key,
        state: state.to_path_buf(),
        turn: std::sync::Mutex::new(()),
    });
    let now = Arc::new(now);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("starting the async runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Usage(format!("--serve {addr}: {e}")))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::Usage(format!("--serve {addr}: {e}")))?;
        ready(bound);
        // At most this many connections at once: a flood waits at accept, it does not grow.
        let open = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        loop {
            let Ok(permit) = open.clone().acquire_owned().await else {
                continue;
            };
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (witness, now) = (witness.clone(), now.clone());
            tokio::spawn(async move {
                let _permit = permit;
                let service = hyper::service::service_fn(move |req| {
                    let (witness, now) = (witness.clone(), now.clone());
                    async move { Ok::<_, std::convert::Infallible>(answer(&witness, req, now()).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(Duration::from_secs(10))
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                let _ = tokio::time::timeout(Duration::from_secs(60), conn).await;
            });
        }
    })
}

async fn answer(
    witness: &Arc<Witness>,
    req: hyper::Request<hyper::body::Incoming>,
    now: u64,
) -> hyper::Response<Full<Bytes>> {
    let respond = |status: u16, kind: &str, body: String| {
        hyper::Response::builder()
            .status(status)
            .header("content-type", kind)
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_default()
    };
    let text = "text/plain; charset=utf-8";
    if !req.uri().path().ends_with("/add-checkpoint") {
        return respond(404, text, "not found\n".into());
    }
    if req.method() != hyper::Method::POST {
        return respond(405, text, "add-checkpoint takes a POST\n".into());
    }
    let body = match Limited::new(req.into_body(), MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return respond(
                400,
                text,
                "the request is too large or was cut short\n".into(),
            )
        }
    };
    let witness = witness.clone();
    let decided = tokio::task::spawn_blocking(move || witness.add_checkpoint(&body, now)).await;
    match decided {
        Ok((status, kind, body)) => respond(status, kind, body),
        Err(_) => respond(500, text, "the witness failed\n".into()),
    }
}

/// What one witness did with the checkpoint.
#[derive(Debug, Serialize)]
pub struct WitnessOutcome {
    pub(crate) url: String,
    /// The cosignature line added (`— name base64`).
    pub(crate) cosignature: Option<String>,
    /// Why not: its refusal (status and its first line, escaped), or why it could not be reached.
    pub(crate) problem: Option<String>,
}

/// What `warden log cosign` did.
#[derive(Debug, Serialize)]
pub struct CosignReport {
    pub(crate) log: PathBuf,
    pub(crate) size: u64,
    pub(crate) witnesses: Vec<WitnessOutcome>,
    pub(crate) threshold: usize,
    /// The log's checkpoint holds the cosignatures (written back: the log did not move on).
    pub(crate) written: bool,
}

impl CosignReport {
    /// How many witnesses cosigned.
    pub(crate) fn cosigned(&self) -> usize {
        self.witnesses
            .iter()
            .filter(|w| w.cosignature.is_some())
            .count()
    }

    /// 1 when fewer than the threshold cosigned, or the checkpoint could not be written back.
    pub fn exit_code(&self) -> u8 {
        let cosigned = self.cosigned();
        u8::from(cosigned < self.threshold || (cosigned > 0 && !self.written))
    }
}

type Client = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// One POST of `req` to `url`: status and body (at most [`MAX_ANSWER_BYTES`]).
async fn post(
    client: &Client,
    url: &str,
    req: &AddCheckpoint,
) -> std::result::Result<(u16, String), String> {
    let uri: http::Uri = url.parse().map_err(|_| "not a URL".to_string())?;
    let request = hyper::Request::post(uri)
        .header("content-type", "text/plain")
        .body(Full::new(Bytes::from(req.to_bytes())))
        .map_err(|e| e.to_string())?;
    let sent = async {
        let resp = client.request(request).await.map_err(|e| {
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            let mut last = e.to_string();
            while let Some(err) = source {
                last = err.to_string();
                source = err.source();
            }
            last
        })?;
        let status = resp.status().as_u16();
        let body = Limited::new(resp.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|_| "the answer is too large or was cut short".to_string())?;
        Ok((
            status,
            String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        ))
    };
    tokio::time::timeout(ANSWER_DEADLINE, sent)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {} s", ANSWER_DEADLINE.as_secs())))
}

/// A witness's text for a person: its first line, escaped, at most 200 characters.
fn said(body: &str) -> String {
    let first: String = body
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect();
    crate::markup::text_value(&first).into_owned()
}

/// Asks the witness at `url` to cosign `cp` of the log in `store`: its cosignature line.
async fn ask(
    client: &Client,
    url: &str,
    store: &DirStore,
    cp: &VerifiedCheckpoint,
) -> std::result::Result<String, String> {
    let endpoint = format!("{}/add-checkpoint", url.trim_end_matches('/'));
    let mut req = AddCheckpoint {
        old: 0,
        proof: Vec::new(),
        checkpoint: cp.note.clone(),
    };
    // Without state: `old 0` first, and the size the witness knows from its 409.
    for _ in 0..2 {
        let (status, body) = post(client, &endpoint, &req).await?;
        match status {
            200 => return Ok(body),
            409 if req.old == 0 => {
                let known: u64 = body
                    .trim()
                    .parse()
                    .map_err(|_| format!("answered 409 without a size: {}", said(&body)))?;
                if known > cp.size {
                    return Err(format!(
                        "it has cosigned a tree of {known} entries, and this log has {}: this log was rolled back or forked",
                        cp.size
                    ));
                }
                let proof = tree::prove_consistency(store, known, cp).map_err(|e| match e {
                    LogError::Input(e) => e.to_string(),
                    LogError::Failed(why) => why.to_string(),
                })?;
                req = AddCheckpoint {
                    old: known,
                    proof,
                    checkpoint: cp.note.clone(),
                };
            }
            status => return Err(format!("refused ({status}): {}", said(&body))),
        }
    }
    Err("answered 409 twice: another client is adding checkpoints at the same time".into())
}

/// `warden log cosign DIR --witness URL…`: the log's checkpoint sent to each witness; the
/// cosignatures that verify under `vkeys` are added to it, written back when the log has not
/// moved on meanwhile.
pub fn cosign_with_witnesses(
    dir: &Path,
    log: &VerifierKeyArg,
    urls: &[String],
    vkeys: &[VerifierKeyArg],
    threshold: usize,
) -> Result<CosignReport> {
    for url in urls {
        let parsed: http::Uri = url
            .parse()
            .map_err(|_| Error::Usage(format!("--witness {url}: not a URL")))?;
        if !matches!(parsed.scheme_str(), Some("https" | "http")) || parsed.host().is_none() {
            return Err(Error::Usage(format!(
                "--witness {url}: an https:// URL (the witness's submission prefix)"
            )));
        }
    }
    let policy = CheckpointPolicy {
        log: log.0.clone(),
        witnesses: Vec::new(),
        threshold: 0,
    };
    let store = DirStore {
        root: dir.to_path_buf(),
    };
    let cp = match tree::read_checkpoint(&store, &policy) {
        Ok(cp) => cp,
        Err(LogError::Input(e)) => return Err(e),
        Err(LogError::Failed(why)) => return Err(Error::Refused(why.to_string())),
    };
    let (runtime, client): (_, Client) = crate::log::http::https_client("--witness")?;
    let answers = runtime.block_on(futures::future::join_all(
        urls.iter().map(|url| ask(&client, url, &store, &cp)),
    ));
    // Each answer's cosignatures: only those that verify under a given witness key join.
    let with_witnesses = CheckpointPolicy {
        log: log.0.clone(),
        witnesses: vkeys.iter().map(|v| v.0.clone()).collect(),
        threshold: 0,
    };
    let mut note = cp.note.clone();
    let witnesses = urls
        .iter()
        .zip(answers)
        .map(|(url, answer)| take_cosignature(url, answer, &mut note, &with_witnesses))
        .collect();
    // Nothing new (the same cosignatures, made the same second): nothing to write.
    let mut written = note == cp.note;
    if !written {
        let _lock = atomic::DirLock::acquire(dir)?;
        let path = dir.join(tree::CHECKPOINT);
        if std::fs::read(&path).is_ok_and(|now| now == cp.note) {
            atomic::write_atomic(&path, &note, 0o644, true)?;
            written = true;
        }
    }
    Ok(CosignReport {
        log: dir.to_path_buf(),
        size: cp.size,
        witnesses,
        threshold,
        written,
    })
}

/// What the witness at `url` answered: its cosignature added to `note` when one verifies under
/// `policy`'s witnesses, else why not.
fn take_cosignature(
    url: &str,
    answer: std::result::Result<String, String>,
    note: &mut Vec<u8>,
    policy: &CheckpointPolicy,
) -> WitnessOutcome {
    let body = match answer {
        Ok(body) => body,
        Err(problem) => {
            return WitnessOutcome {
                url: url.to_string(),
                cosignature: None,
                problem: Some(problem),
            }
        }
    };
    for line in body.lines().filter(|l| l.starts_with("— ")) {
        let Ok(candidate) = with_cosignature(note, line) else {
            continue;
        };
        // Its line replaced any earlier one by the same key: it must itself verify.
        let name = line
            .trim_start_matches("— ")
            .split(' ')
            .next()
            .unwrap_or("");
        let verified = verify_checkpoint(&candidate, policy)
            .is_ok_and(|v| v.cosigned.iter().any(|(n, _)| n == name));
        if verified {
            *note = candidate;
            return WitnessOutcome {
                url: url.to_string(),
                cosignature: Some(line.to_string()),
                problem: None,
            };
        }
    }
    WitnessOutcome {
        url: url.to_string(),
        cosignature: None,
        problem: Some("answered no cosignature that a --witness-vkey verifies".to_string()),
    }
}
