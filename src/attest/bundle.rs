//! Sigstore bundles as they arrive: one bundle per file (`*.sigstore.json`), one per line
//! (`gh attestation download`'s `*.jsonl`, `*.intoto.jsonl`), a `{"bundle": …}` wrapper, or a
//! saved answer of GitHub's attestations API (`{"attestations": [{"bundle": …}]}`). Each is kept
//! as its JSON text with where it came from; parsing and verifying it is `verify`'s.

use serde_json::Value;

/// The most bundles one file or answer may hold (a release's attestations are a handful).
pub(crate) const MAX_BUNDLES: usize = 1000;

/// One bundle's JSON, and where it came from (`file:line`, or the API route).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawBundle {
    pub(crate) origin: String,
    pub(crate) json: String,
}

/// Where bundles were read from, and each source's bundles or why they could not be read.
pub(crate) type Sources = Vec<(String, Result<Vec<RawBundle>, String>)>;

/// The most one bundle file may be.
const FILE_CAP: u64 = 16 << 20;

/// The bundles in each of `files` (`--attestations`), as evidence's sources; a file that cannot
/// be read or holds no bundle is a usage error, named (exit 2): it was given to be read.
pub(crate) fn read_files(files: &[std::path::PathBuf]) -> crate::error::Result<Sources> {
    let mut out = Vec::new();
    for file in files {
        let text =
            crate::files::guarded::read_small_file(file, FILE_CAP, "a Sigstore bundle file")?;
        let origin = file.display().to_string();
        let bundles = bundles_in(&text, &origin)
            .map_err(|e| crate::error::Error::Usage(format!("--attestations {e}")))?;
        out.push((origin, Ok(bundles)));
    }
    Ok(out)
}

/// The bundles in `text`, read from `origin`; an error names the line.
pub(crate) fn bundles_in(text: &str, origin: &str) -> Result<Vec<RawBundle>, String> {
    let mut out = Vec::new();
    // One JSON document (a bundle, a wrapper or an API answer), else JSON Lines.
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        collect(value, origin, &mut out)?;
    } else {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{origin}:{}", i + 1);
            let value: Value =
                serde_json::from_str(line).map_err(|e| format!("{at}: not JSON ({e})"))?;
            collect(value, &at, &mut out)?;
        }
    }
    if out.is_empty() {
        return Err(format!("{origin}: no Sigstore bundle in it"));
    }
    Ok(out)
}

/// The bundle (or bundles) one JSON value holds.
fn collect(value: Value, origin: &str, out: &mut Vec<RawBundle>) -> Result<(), String> {
    let mut push = |v: &Value, at: String| -> Result<(), String> {
        if out.len() >= MAX_BUNDLES {
            return Err(format!("{origin}: more than {MAX_BUNDLES} bundles"));
        }
        if v.get("payloadType").is_some() && v.get("mediaType").is_none() {
            return Err(format!(
                "{at}: a DSSE envelope without its verification material (certificate and timestamp): a Sigstore bundle is needed to verify offline"
            ));
        }
        out.push(RawBundle {
            origin: at,
            json: v.to_string(),
        });
        Ok(())
    };
    if let Some(list) = value.get("attestations").and_then(Value::as_array) {
        for (i, item) in list.iter().enumerate() {
            let at = format!("{origin}#{}", i + 1);
            match item.get("bundle").filter(|b| !b.is_null()) {
                Some(b) => push(b, at)?,
                None => {
                    return Err(format!(
                        "{at}: no inline bundle (only a bundle_url): fetch it with `gh attestation download`"
                    ))
                }
            }
        }
        return Ok(());
    }
    match value.get("bundle").filter(|b| b.is_object()) {
        Some(b) => push(b, origin.to_string()),
        None if value.is_object() => push(&value, origin.to_string()),
        None => Err(format!("{origin}: not a Sigstore bundle (a JSON object)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_a_wrapper_lines_and_an_api_answer() {
        let b = r#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}"#;
        let one = bundles_in(b, "a.sigstore.json").unwrap();
        assert_eq!(one[0].origin, "a.sigstore.json");
        let wrapped = bundles_in(&format!(r#"{{"bundle":{b}}}"#), "w.json").unwrap();
        assert_eq!(wrapped[0].json, one[0].json);
        let lines = bundles_in(&format!("{b}\n\n{b}\n"), "x.jsonl").unwrap();
        let origins: Vec<&str> = lines.iter().map(|r| r.origin.as_str()).collect();
        assert_eq!(origins, ["x.jsonl:1", "x.jsonl:3"]);
        let api = format!(r#"{{"attestations":[{{"bundle":{b}}},{{"bundle":{b}}}]}}"#);
        assert_eq!(bundles_in(&api, "api").unwrap().len(), 2);
        assert_eq!(
            bundles_in("{\"payloadType\":\"x\"}", "e.intoto.jsonl").unwrap_err(),
            "e.intoto.jsonl: a DSSE envelope without its verification material (certificate and timestamp): a Sigstore bundle is needed to verify offline"
        );
        assert_eq!(
            bundles_in(&format!("{b}\nnot json\n"), "x.jsonl")
                .unwrap_err()
                .split(" (")
                .next(),
            Some("x.jsonl:2: not JSON")
        );
        assert_eq!(
            bundles_in("", "e").unwrap_err(),
            "e: no Sigstore bundle in it"
        );
    }
}
