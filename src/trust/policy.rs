//! `keys/policy.toml`: how many distinct signers must sign a release (`threshold`), until when each
//! key is trusted (`valid_until`), and a name and role for people to read. Optional: a keys
//! folder with only `*.pub` files has threshold 1 and keys that never expire, as before.
//!
//! ```toml
//! threshold = 2
//!
//! [keys.8A1C53B2E07E2B8A]
//! name = "Alice Example"
//! role = "release manager"
//! valid_until = 2027-12-31T00:00:00Z   # or a date: trusted through that day (UTC)
//! ```
//!
//! A policy only ever removes trust: a threshold above 1 asks for more signatures, a date ends a
//! key's trust. It never adds a key; keys are the folder's `*.pub` files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Reason, Result};
use crate::minisign::keys::KeyId;

/// The policy file, inside the keys folder.
pub(crate) const POLICY_FILE: &str = "policy.toml";

/// Thresholds above this are refused as mistakes (nobody gathers 65 signatures on a release).
const MAX_THRESHOLD: u64 = 64;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    threshold: Option<toml::Spanned<u64>>,
    /// The first signature must bind the workflow run that made it (issue 26).
    #[serde(default)]
    require_run: bool,
    /// The workflow file that must have made it (`.github/workflows/release.yml`).
    workflow: Option<toml::Spanned<String>>,
    /// The deployment environment it must have run in.
    environment: Option<toml::Spanned<String>>,
    /// Every counted signature must be in the transparency log `log_vkey` names (issue 38).
    #[serde(default)]
    require_log: Option<toml::Spanned<bool>>,
    log_vkey: Option<toml::Spanned<String>>,
    #[serde(default)]
    witnesses: Vec<toml::Spanned<String>>,
    witness_threshold: Option<toml::Spanned<u64>>,
    /// GitHub's statements a published release must carry (issue 48).
    require_attestation: Option<toml::Spanned<String>>,
    #[serde(default)]
    keys: BTreeMap<String, toml::Spanned<KeyEntry>>,
}

/// Which of GitHub's statements about a release must be there (`require_attestation`,
/// `--require-attestation`): its release attestation, build provenance of its artifacts, or
/// both. Without a requirement, missing ones are a note; present ones are always checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AttestRequirement {
    Release,
    Provenance,
    Both,
}

impl AttestRequirement {
    /// The word in `keys/policy.toml` and on the command line.
    pub fn parse(word: &str) -> Option<AttestRequirement> {
        match word {
            "release" => Some(AttestRequirement::Release),
            "provenance" => Some(AttestRequirement::Provenance),
            "both" => Some(AttestRequirement::Both),
            _ => None,
        }
    }

    /// `require_attestation` as written, or why it is not one.
    fn parse_spanned(v: &toml::Spanned<String>) -> std::result::Result<Self, String> {
        AttestRequirement::parse(v.get_ref()).ok_or_else(|| {
            format!(
                "require_attestation {}: one of \"release\", \"provenance\", \"both\"",
                crate::markup::text_value(v.get_ref())
            )
        })
    }

    pub(crate) fn release(self) -> bool {
        self != AttestRequirement::Provenance
    }

    pub(crate) fn provenance(self) -> bool {
        self != AttestRequirement::Release
    }

    /// Two requirements at once: each holds (a flag adds to the policy, never lifts it).
    pub(crate) fn and(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(x), Some(y)) if x == y => Some(x),
            _ => Some(AttestRequirement::Both),
        }
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            AttestRequirement::Release => "release",
            AttestRequirement::Provenance => "provenance",
            AttestRequirement::Both => "both",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyEntry {
    name: Option<String>,
    role: Option<String>,
    valid_until: Option<toml::Spanned<toml::value::Datetime>>,
}

/// The keys folder's policy (the default when it has no `policy.toml`).
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct Policy {
    /// Distinct trusted, unrevoked, unexpired keys that must sign.
    pub(crate) threshold: usize,
    pub(crate) keys: Vec<KeyPolicy>,
    /// Where it was read from; `None` for the default policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<PathBuf>,
    /// What the run that signs must be (`require_run`, `workflow`, `environment`).
    pub(crate) run: crate::trust::run_policy::RunPolicy,
    /// `require_log = true`: the logs every counted signature must be in (this policy's, and
    /// the other's when two are applied together: each holds in full).
    #[serde(skip)]
    pub(crate) log: Vec<crate::trust::log::LogRequirement>,
    /// `require_attestation`: GitHub's statements a published release must carry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) attestation: Option<AttestRequirement>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            threshold: 1,
            keys: Vec::new(),
            file: None,
            run: crate::trust::run_policy::RunPolicy::default(),
            log: Vec::new(),
            attestation: None,
        }
    }
}

/// What the policy says of one key.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct KeyPolicy {
    #[serde(serialize_with = "crate::minisign::keys::serialize_key_id")]
    pub(crate) key_id: KeyId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<String>,
    /// As written, and the first second (Unix time) at which the key is no longer trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) valid_until: Option<String>,
    #[serde(skip)]
    pub(crate) expires_at: Option<u64>,
}

impl Policy {
    /// `keys_dir/policy.toml`, or the default policy when there is none.
    pub(crate) fn load(keys_dir: &Path) -> Result<Policy> {
        let file = keys_dir.join(POLICY_FILE);
        match std::fs::symlink_metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Policy::default()),
            _ => {}
        }
        let text = crate::trust::statement::read(&file)?;
        Policy::parse(&file, &text)
    }

    /// The policy in `text`, read from `file`; an error names the file and the line.
    pub(crate) fn parse(file: &Path, text: &str) -> Result<Policy> {
        let parsed: PolicyFile = crate::trust::statement::parse(file, text, "key policy")?;
        let line = |span: std::ops::Range<usize>| {
            Some(text[..span.start.min(text.len())].matches('\n').count() + 1)
        };
        let bad = |span, why: String| Error::input(file.display().to_string(), line(span), why);
        let threshold = match parsed.threshold {
            None => 1,
            Some(t) if (1..=MAX_THRESHOLD).contains(t.get_ref()) => *t.get_ref() as usize,
            Some(t) => {
                return Err(bad(
                    t.span(),
                    format!(
                        "threshold {} is not between 1 and {MAX_THRESHOLD}",
                        t.get_ref()
                    ),
                ))
            }
        };
        let mut keys = Vec::new();
        for (id, entry) in parsed.keys {
            let span = entry.span();
            let key_id = KeyId::from_hex(&id).ok_or_else(|| {
                bad(
                    span.clone(),
                    format!(
                        "[keys.{}]: not a key id (16 hex digits, as `warden keys list` shows)",
                        crate::markup::text_value(&id)
                    ),
                )
            })?;
            let entry = entry.into_inner();
            for (field, value) in [("name", &entry.name), ("role", &entry.role)] {
                if value
                    .as_deref()
                    .is_some_and(|v| v.trim().is_empty() || v.chars().any(char::is_control))
                {
                    return Err(bad(
                        span.clone(),
                        format!("[keys.{id}] {field}: one line of text"),
                    ));
                }
            }
            let (valid_until, expires_at) = match entry.valid_until {
                None => (None, None),
                Some(v) => {
                    let at = end_of_validity(v.get_ref()).map_err(|why| {
                        bad(
                            v.span(),
                            format!("[keys.{id}] valid_until {}: {why}", v.get_ref()),
                        )
                    })?;
                    (Some(v.get_ref().to_string()), Some(at))
                }
            };
            keys.push(KeyPolicy {
                key_id,
                name: entry.name,
                role: entry.role,
                valid_until,
                expires_at,
            });
        }
        let run = run_policy(parsed.require_run, parsed.workflow, parsed.environment)
            .map_err(|(span, why)| bad(span, why))?;
        let log = log_requirement(
            &parsed.require_log,
            &parsed.log_vkey,
            &parsed.witnesses,
            &parsed.witness_threshold,
        )
        .map_err(|(span, why)| bad(span, why))?;
        let attestation = parsed
            .require_attestation
            .map(|v| AttestRequirement::parse_spanned(&v).map_err(|why| bad(v.span(), why)))
            .transpose()?;
        Ok(Policy {
            threshold,
            keys,
            file: Some(file.to_path_buf()),
            run,
            log: log.into_iter().collect(),
            attestation,
        })
    }

    /// What the policy says of the key `id`.
    pub(crate) fn key(&self, id: KeyId) -> Option<&KeyPolicy> {
        self.keys.iter().find(|k| k.key_id == id)
    }

    /// The key's policy when it has expired at `now` (Unix seconds).
    pub(crate) fn expired(&self, id: KeyId, now: u64) -> Option<&KeyPolicy> {
        self.key(id)
            .filter(|k| k.expires_at.is_some_and(|at| now >= at))
    }

    /// Both policies at once, for a verifier that trusts its own keys and applies the
    /// repository's policy too (`theirs`, named `origin` in messages): a policy only removes
    /// trust, so the higher threshold, the earlier end of each key this policy's keys hold, the
    /// run requirements of both, and both logs. A workflow or environment both name must be the same:
    /// otherwise no run could satisfy both, which is an error, not a silent choice.
    pub(crate) fn with_stricter(mut self, theirs: Policy, origin: &str) -> Result<Policy> {
        if theirs.threshold > self.threshold {
            self.threshold = theirs.threshold;
            self.file = Some(PathBuf::from(origin));
        }
        for k in theirs.keys {
            let Some(mine) = self.keys.iter_mut().find(|m| m.key_id == k.key_id) else {
                if k.expires_at.is_some() {
                    // A key this policy says nothing of: the repository's end date applies.
                    self.keys.push(KeyPolicy {
                        name: None,
                        role: None,
                        ..k
                    });
                }
                continue;
            };
            if k.expires_at
                .is_some_and(|t| mine.expires_at.is_none_or(|m| t < m))
            {
                mine.expires_at = k.expires_at;
                mine.valid_until = k.valid_until;
            }
        }
        // Two log requirements are two requirements: the repository's witnesses are never
        // dropped for the verifier's log (or the other way round).
        self.log.extend(theirs.log);
        self.attestation = AttestRequirement::and(self.attestation, theirs.attestation);
        // Messages name where a requirement came from: the repository's file when this policy
        // has none of its own.
        if self.file.is_none() && theirs.run.is_set() {
            self.file = Some(PathBuf::from(origin));
        }
        let run = &mut self.run;
        run.require_run |= theirs.run.require_run;
        for (mine, their, what) in [
            (&mut run.workflow, theirs.run.workflow, "workflow"),
            (&mut run.environment, theirs.run.environment, "environment"),
        ] {
            match (&mine, their) {
                (Some(a), Some(b)) if *a != b => {
                    return Err(Error::input(
                        origin.to_string(),
                        None,
                        format!("{what} {b:?}, but the local keys/policy.toml asks {a:?}: no run can be both"),
                    ))
                }
                (None, Some(b)) => *mine = Some(b),
                _ => {}
            }
        }
        Ok(self)
    }

    /// The file the policy came from, for messages (`keys/policy.toml`, or "no policy").
    pub(crate) fn origin(&self) -> String {
        self.file
            .as_ref()
            .map_or("no policy file".into(), |f| f.display().to_string())
    }
}

/// `require_run`, `workflow` and `environment`, each one word; or where and why not.
fn run_policy(
    require_run: bool,
    workflow: Option<toml::Spanned<String>>,
    environment: Option<toml::Spanned<String>>,
) -> std::result::Result<crate::trust::run_policy::RunPolicy, (std::ops::Range<usize>, String)> {
    let mut run = crate::trust::run_policy::RunPolicy {
        require_run,
        ..Default::default()
    };
    for (name, value, slot) in [
        ("workflow", workflow, &mut run.workflow),
        ("environment", environment, &mut run.environment),
    ] {
        if let Some(v) = value {
            let text = v.get_ref();
            if text.is_empty() || text.chars().any(|c| c.is_control() || c.is_whitespace()) {
                return Err((
                    v.span(),
                    format!(
                        "{name} {}: one word, no spaces",
                        crate::markup::text_value(text)
                    ),
                ));
            }
            *slot = Some(text.clone());
        }
    }
    Ok(run)
}

/// The first second a key is no longer trusted: the instant given (with its offset), or the
/// midnight (UTC) after a bare date. A time without an offset is ambiguous and refused.
fn end_of_validity(v: &toml::value::Datetime) -> std::result::Result<u64, Reason> {
    use toml::value::Offset;
    let date = v.date.ok_or("a time without a date")?;
    let days = crate::util::days_from_civil(i64::from(date.year), date.month, date.day);
    let secs = match (v.time, v.offset) {
        (None, _) => (days + 1) * 86_400,
        (Some(_), None) => {
            return Err("a time without an offset: add Z (UTC) or +HH:MM".into());
        }
        (Some(t), Some(offset)) => {
            let minutes = match offset {
                Offset::Z => 0,
                Offset::Custom { minutes } => i64::from(minutes),
            };
            days * 86_400
                + i64::from(t.hour) * 3600
                + i64::from(t.minute) * 60
                + i64::from(t.second.unwrap_or(0))
                - minutes * 60
        }
    };
    u64::try_from(secs).map_err(|_| "before 1970".into())
}

type Spanned<T> = toml::Spanned<T>;

/// `require_log`, `log_vkey`, `witnesses` and `witness_threshold`, checked together.
fn log_requirement(
    require: &Option<Spanned<bool>>,
    vkey: &Option<Spanned<String>>,
    witnesses: &[Spanned<String>],
    threshold: &Option<Spanned<u64>>,
) -> std::result::Result<Option<crate::trust::log::LogRequirement>, (std::ops::Range<usize>, String)>
{
    use crate::trust::log::{parse_vkey, parse_witness_vkey, LogTrust};
    let required = require.as_ref().is_some_and(|r| *r.get_ref());
    let Some(vkey) = vkey else {
        return match (required, require, witnesses.first()) {
            (true, Some(r), _) => Err((
                r.span(),
                "require_log = true needs log_vkey, the log's verifier key".into(),
            )),
            (_, _, Some(w)) => Err((
                w.span(),
                "witnesses without log_vkey: witnesses cosign a log's checkpoints".into(),
            )),
            _ => Ok(None),
        };
    };
    let log = parse_vkey(vkey.get_ref(), "log_vkey").map_err(|e| (vkey.span(), e.to_string()))?;
    let mut keys = Vec::new();
    for w in witnesses {
        let key =
            parse_witness_vkey(w.get_ref(), "witnesses").map_err(|e| (w.span(), e.to_string()))?;
        if let Some(why) = crate::trust::log::witness_problem(&log, &keys, &key) {
            return Err((w.span(), format!("witnesses: {}: {why}", key.0.name)));
        }
        keys.push(key);
    }
    let n = threshold
        .as_ref()
        .map_or(keys.len() as u64, |t| *t.get_ref()) as usize;
    let trust = LogTrust::new(log, keys, n).map_err(|e| {
        let span = threshold.as_ref().map_or(vkey.span(), |t| t.span());
        (
            span,
            e.to_string()
                .replace("--witness-threshold", "witness_threshold")
                .replace("--witness keys", "witnesses"),
        )
    })?;
    if !required {
        return Ok(None);
    }
    Ok(Some(crate::trust::log::LogRequirement {
        trust,
        log: None,
        pinned: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Policy> {
        Policy::parse(Path::new("keys/policy.toml"), text)
    }

    #[test]
    fn no_file_is_threshold_one_and_no_expiry() {
        let p = Policy::load(Path::new("/nonexistent/keys")).unwrap();
        assert_eq!(p.threshold, 1);
        assert!(p.keys.is_empty());
    }

    #[test]
    fn a_policy_names_keys_and_ends_their_trust() {
        let p = parse(
            "threshold = 2\n[keys.8a1c53b2e07e2b8a]\nname = \"Alice\"\nrole = \"release manager\"\nvalid_until = 2027-12-31\n[keys.0000000000000001]\nvalid_until = 2027-01-01T12:00:00+02:00\n",
        )
        .unwrap();
        assert_eq!(p.threshold, 2);
        let alice = p.key(KeyId::from_hex("8A1C53B2E07E2B8A").unwrap()).unwrap();
        assert_eq!(alice.name.as_deref(), Some("Alice"));
        // Trusted through 2027-12-31: 2028-01-01T00:00:00Z is the first second past.
        assert_eq!(alice.expires_at, Some(1_830_297_600));
        let other = p.key(KeyId::from_hex("0000000000000001").unwrap()).unwrap();
        // 2027-01-01T10:00:00Z.
        assert_eq!(other.expires_at, Some(1_798_797_600));
        assert!(p.expired(alice.key_id, 1_830_297_599).is_none());
        assert!(p.expired(alice.key_id, 1_830_297_600).is_some());
    }

    /// The repository's policy on top of the verifier's: the stricter of each, never looser.
    #[test]
    fn the_stricter_of_two_policies() {
        let alice = KeyId::from_hex("8A1C53B2E07E2B8A").unwrap();
        let bob = KeyId::from_hex("0000000000000001").unwrap();
        let mine = parse(
            "[keys.8a1c53b2e07e2b8a]\nname = \"Alice\"\nvalid_until = 2030-01-01\n[keys.0000000000000001]\nvalid_until = 2026-01-01\n",
        )
        .unwrap();
        let theirs = parse(
            "threshold = 2\nenvironment = \"release\"\n[keys.8a1c53b2e07e2b8a]\nname = \"A.\"\nvalid_until = 2027-12-31\n[keys.0000000000000001]\nvalid_until = 2029-01-01\n",
        )
        .unwrap();
        let both = mine
            .with_stricter(theirs, "keys/policy.toml of o/r")
            .unwrap();
        assert_eq!(both.threshold, 2);
        assert_eq!(both.origin(), "keys/policy.toml of o/r");
        let a = both.key(alice).unwrap();
        // The earlier end wins; the name stays the verifier's.
        assert_eq!(
            (a.name.as_deref(), a.valid_until.as_deref()),
            (Some("Alice"), Some("2027-12-31"))
        );
        assert_eq!(
            both.key(bob).unwrap().valid_until.as_deref(),
            Some("2026-01-01")
        );
        assert_eq!(both.run.environment.as_deref(), Some("release"));
        // Nothing in theirs: the verifier's policy as it was.
        let same = parse("threshold = 3\n").unwrap();
        let kept = same
            .clone()
            .with_stricter(Policy::default(), "keys/policy.toml of o/r")
            .unwrap();
        assert_eq!(format!("{kept:?}"), format!("{same:?}"));
    }

    #[test]
    fn mistakes_name_the_line() {
        let cases = [
            ("threshold = 0\n", "keys/policy.toml: line 1: threshold 0 is not between 1 and 64"),
            ("threshold = 1\n[keys.alice]\nname = \"A\"\n", "keys/policy.toml: line 2: [keys.alice]: not a key id (16 hex digits, as `warden keys list` shows)"),
            ("[keys.0000000000000001]\nvalid_until = 2027-01-01T00:00:00\n", "keys/policy.toml: line 2: [keys.0000000000000001] valid_until 2027-01-01T00:00:00: a time without an offset: add Z (UTC) or +HH:MM"),
            ("threshold = 1\nthreshhold = 2\n", "keys/policy.toml: line 2: not a key policy statement: unknown field `threshhold`, expected one of `threshold`, `require_run`, `workflow`, `environment`, `require_log`, `log_vkey`, `witnesses`, `witness_threshold`, `require_attestation`, `keys`"),
            ("environment = \"prod env\"\n", "keys/policy.toml: line 1: environment prod env: one word, no spaces"),
        ];
        for (text, message) in cases {
            assert_eq!(parse(text).unwrap_err().to_string(), message, "{text}");
        }
    }
}
