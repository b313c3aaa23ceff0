//! GitHub's attestations of an artifact (`GET /repos/O/R/attestations/sha256:…`): the Sigstore
//! bundles of its release attestation and build provenance, read as they come. Since July 2026
//! GitHub answers with `"bundle": null` and a `bundle_url` into blob storage, where the bundle
//! is snappy-compressed JSON: it is fetched there without the token (a pre-signed URL on another
//! host), capped before it is decompressed. What a bundle proves is `attest`'s.

use serde_json::Value;

use super::api::{ApiError, ApiSource, Fetched, Shape};
use super::routes;
use crate::attest::bundle::{RawBundle, MAX_BUNDLES};

/// The most one bundle may be, compressed or not (a release's attestation lists every asset:
/// a few KiB each hundred).
const BUNDLE_CAP: u64 = 16 << 20;

/// What GitHub answered about one artifact.
pub(crate) enum Answer {
    /// The bundles it holds (none: it holds no attestation of it).
    Bundles(Vec<RawBundle>),
    /// A snapshot recorded by an older warden, which did not ask.
    NotRecorded,
}

/// The bundles GitHub holds for the artifact whose SHA-256 is `digest`.
pub(crate) async fn for_digest<S: ApiSource>(
    source: &S,
    repo: &str,
    digest: &[u8; 32],
) -> Result<Answer, ApiError> {
    let hex = crate::util::to_hex(digest);
    let route = routes::attestations(repo, &hex);
    let answer = match source.get(&route, Shape::Object).await {
        Fetched::Ok(v) => v,
        // GitHub answers 404 for an artifact it holds no attestation of.
        Fetched::Failed { status: 404, .. } => return Ok(Answer::Bundles(Vec::new())),
        Fetched::Failed {
            status: 0, message, ..
        } if message.starts_with(super::snapshot::NOT_RECORDED) => return Ok(Answer::NotRecorded),
        failed => return Err(ApiError::from_fetched(&route, failed)),
    };
    let fail = |message: String| ApiError {
        route: route.clone(),
        status: 0,
        message,
        permission: None,
    };
    let items = answer
        .get("attestations")
        .and_then(Value::as_array)
        .ok_or_else(|| fail("not a list of attestations".into()))?;
    if items.len() > MAX_BUNDLES {
        return Err(fail(format!("more than {MAX_BUNDLES} attestations")));
    }
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let origin = format!("GitHub's attestation {} of sha256:{}", i + 1, &hex[..12]);
        let json = match (
            item.get("bundle").filter(|b| b.is_object()),
            item.get("bundle_url"),
        ) {
            (Some(bundle), _) => bundle.to_string(),
            (None, Some(Value::String(url))) => {
                let bytes = external_bytes(source, url).await.map_err(|e| {
                    fail(format!(
                        "{origin}: its bundle_url {}: {e}",
                        crate::markup::text_value(url.split('?').next().unwrap_or(url))
                    ))
                })?;
                bundle_text(&bytes).map_err(|e| fail(format!("{origin}: {e}")))?
            }
            _ => return Err(fail(format!("{origin}: neither a bundle nor a bundle_url"))),
        };
        out.push(RawBundle { origin, json });
    }
    Ok(Answer::Bundles(out))
}

/// The bytes at `url` (another host), capped.
async fn external_bytes<S: ApiSource>(source: &S, url: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    match source.get_external(url, BUNDLE_CAP).await {
        Fetched::Ok(v) => base64::engine::general_purpose::STANDARD
            .decode(v["base64"].as_str().unwrap_or_default())
            .map_err(|_| "not base64".to_string()),
        Fetched::Failed {
            status, message, ..
        } => Err(match status {
            0 => message,
            s => format!("answered {s}: {message}"),
        }),
    }
}

/// A bundle as blob storage serves it: a snappy block (what GitHub serves), a snappy frame
/// stream, or plain JSON; decompressed only when its size, read from its header, is within
/// the cap.
fn bundle_text(bytes: &[u8]) -> Result<String, String> {
    const FRAMED: &[u8] = b"\xff\x06\x00\x00sNaPpY";
    let json = if bytes.first() == Some(&b'{') {
        bytes.to_vec()
    } else if bytes.starts_with(FRAMED) {
        use std::io::Read as _;
        let mut out = Vec::new();
        snap::read::FrameDecoder::new(bytes)
            .take(BUNDLE_CAP + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("not a snappy stream: {e}"))?;
        if out.len() as u64 > BUNDLE_CAP {
            return Err(format!("larger than {} MiB decompressed", BUNDLE_CAP >> 20));
        }
        out
    } else {
        let len = snap::raw::decompress_len(bytes).map_err(|e| format!("not snappy: {e}"))?;
        if len as u64 > BUNDLE_CAP {
            return Err(format!("larger than {} MiB decompressed", BUNDLE_CAP >> 20));
        }
        snap::raw::Decoder::new()
            .decompress_vec(bytes)
            .map_err(|e| format!("not snappy: {e}"))?
    };
    let value: Value =
        serde_json::from_slice(&json).map_err(|e| format!("not a JSON bundle: {e}"))?;
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_served_compressed_or_plain() {
        let json = br#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}"#;
        let block = snap::raw::Encoder::new().compress_vec(json).unwrap();
        let want = String::from_utf8(json.to_vec()).unwrap();
        assert_eq!(bundle_text(&block).unwrap(), want);
        let mut framed = Vec::new();
        {
            use std::io::Write as _;
            let mut w = snap::write::FrameEncoder::new(&mut framed);
            w.write_all(json).unwrap();
        }
        assert_eq!(bundle_text(&framed).unwrap(), want);
        assert_eq!(bundle_text(json).unwrap(), want);
        // A block whose header claims more than the cap is refused before it is decompressed.
        let bomb = [0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(
            bundle_text(&bomb).unwrap_err(),
            "larger than 16 MiB decompressed"
        );
        assert!(bundle_text(b"\x05garbage").is_err());
    }
}
