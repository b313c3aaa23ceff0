//! The log's keys and checkpoints: C2SP signed notes signed by the log's Ed25519 key (type
//! `0x01`), and witnesses' timestamped cosignatures (C2SP tlog-cosignature, type `0x04`).
//! Parsing and the log signature are `signed_note`'s; the cosignature algorithm is not in that
//! crate, so it is here, as a `signed_note::Verifier` and `Signer`.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use signed_note::{Note, NoteError, Signer, Verifier, VerifierList};
use tlog_tiles::{Checkpoint, Hash};
use zeroize::Zeroizing;

use crate::error::Reason;

const TYPE_ED25519: u8 = 0x01;
const TYPE_COSIGNATURE: u8 = 0x04;

/// The largest checkpoint warden reads (signed-note's verifiers must take 16 signatures; a
/// checkpoint with a hundred cosignatures is still under 16 KiB).
pub(crate) const MAX_CHECKPOINT_BYTES: u64 = 64 * 1024;

/// Whether `name` can name a log or a witness (signed-note: non-empty, no spaces, no `+`), and
/// holds nothing a terminal or a markdown page would interpret.
pub(crate) fn check_name(name: &str) -> Result<(), Reason> {
    if !signed_note::is_key_name_valid(name) || name.chars().any(char::is_control) {
        return Err(format!(
            "{name:?} is not a key name: it must be non-empty, without spaces, `+` or control characters (a URL without its scheme, such as example.com/log)"
        )
        .into());
    }
    Ok(())
}

/// What a key is for: the log's checkpoints or a witness's cosignatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyRole {
    Log,
    Witness,
}

impl KeyRole {
    fn type_byte(self) -> u8 {
        match self {
            KeyRole::Log => TYPE_ED25519,
            KeyRole::Witness => TYPE_COSIGNATURE,
        }
    }
    fn what(self) -> &'static str {
        match self {
            KeyRole::Log => "a log key",
            KeyRole::Witness => "a witness key",
        }
    }
}

fn key_id(name: &str, type_byte: u8, key: &VerifyingKey) -> u32 {
    let mut encoded = vec![type_byte];
    encoded.extend_from_slice(key.as_bytes());
    signed_note::key_id(name, &encoded)
}

/// A verifier key (`name+id+base64(type ‖ key)`), compared by its bytes.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct VerifierKey {
    pub(crate) name: String,
    pub(crate) id: u32,
    pub(crate) role: KeyRole,
    pub(crate) key: VerifyingKey,
}

impl VerifierKey {
    /// Parses a vkey of the given role; the id must be the one the name and key give.
    pub(crate) fn parse(text: &str, role: KeyRole) -> Result<Self, Reason> {
        let text = text.trim();
        let bad = || -> Reason {
            format!(
                "not {}: expected NAME+ID+KEY (8 hex digits, then base64 of the type byte and the Ed25519 key)",
                role.what()
            )
            .into()
        };
        let mut parts = text.splitn(3, '+');
        let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad());
        };
        check_name(name)?;
        if id.len() != 8 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let id = u32::from_str_radix(id, 16).map_err(|_| bad())?;
        let bytes = BASE64.decode(key).map_err(|_| bad())?;
        let [t, rest @ ..] = bytes.as_slice() else {
            return Err(bad());
        };
        if *t != role.type_byte() {
            let other = match role {
                KeyRole::Log => "a witness's cosignature key (type 0x04), not a log key",
                KeyRole::Witness => "a log's key (type 0x01), not a witness's cosignature key",
            };
            return Err(if [TYPE_ED25519, TYPE_COSIGNATURE].contains(t) {
                format!("this is {other}").into()
            } else {
                format!("key type 0x{t:02x} is not supported (Ed25519 only)").into()
            });
        }
        let key: [u8; 32] = rest.try_into().map_err(|_| bad())?;
        let key = VerifyingKey::from_bytes(&key).map_err(|_| bad())?;
        if key_id(name, role.type_byte(), &key) != id {
            return Err("the key id does not match the name and key (altered verifier key)".into());
        }
        Ok(VerifierKey {
            name: name.to_string(),
            id,
            role,
            key,
        })
    }

    fn verifier(&self) -> Box<dyn Verifier> {
        Box::new(NoteVerifier(self.clone()))
    }
}

impl fmt::Display for VerifierKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut encoded = vec![self.role.type_byte()];
        encoded.extend_from_slice(self.key.as_bytes());
        write!(
            f,
            "{}+{:08x}+{}",
            self.name,
            self.id,
            BASE64.encode(encoded)
        )
    }
}

impl fmt::Debug for VerifierKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerifierKey({self})")
    }
}

/// The message a cosignature signs (tlog-cosignature `cosignature/v1`).
fn cosigned_message(timestamp: u64, text: &[u8]) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {timestamp}\n").into_bytes();
    m.extend_from_slice(text);
    m
}

struct NoteVerifier(VerifierKey);

impl Verifier for NoteVerifier {
    fn name(&self) -> &str {
        &self.0.name
    }
    fn key_id(&self) -> u32 {
        self.0.id
    }
    fn verify(&self, msg: &[u8], sig: &[u8]) -> bool {
        let (message, sig) = match self.0.role {
            KeyRole::Log => (msg.to_vec(), sig),
            KeyRole::Witness => {
                let Some((time, sig)) = sig.split_first_chunk::<8>() else {
                    return false;
                };
                (cosigned_message(u64::from_be_bytes(*time), msg), sig)
            }
        };
        let Ok(sig) = <[u8; 64]>::try_from(sig) else {
            return false;
        };
        let sig = ed25519_dalek::Signature::from_bytes(&sig);
        self.0.key.verify_strict(&message, &sig).is_ok()
    }
}

/// A log's or a witness's secret key, in the `PRIVATE+KEY+name+id+base64(type ‖ seed)` text of
/// Go's note package. Wiped on drop (ed25519-dalek's `zeroize`); never printed.
pub(crate) struct NoteSigner {
    public: VerifierKey,
    key: SigningKey,
    /// The cosignature's time; only for a witness key.
    timestamp: u64,
}

impl fmt::Debug for NoteSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NoteSigner({}, secret key not shown)", self.public)
    }
}

impl NoteSigner {
    /// A new key for `name`; its secret text is returned for the caller to store.
    pub(crate) fn generate(
        name: &str,
        role: KeyRole,
    ) -> Result<(NoteSigner, Zeroizing<String>), Reason> {
        check_name(name)?;
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(seed.as_mut())
            .map_err(|e| format!("no randomness from the system: {e}"))?;
        let key = SigningKey::from_bytes(&seed);
        let mut encoded = Zeroizing::new(vec![role.type_byte()]);
        encoded.extend_from_slice(seed.as_ref());
        let public = VerifierKey {
            name: name.to_string(),
            id: key_id(name, role.type_byte(), &key.verifying_key()),
            role,
            key: key.verifying_key(),
        };
        let text = Zeroizing::new(format!(
            "PRIVATE+KEY+{name}+{:08x}+{}\n",
            public.id,
            BASE64.encode(encoded.as_slice())
        ));
        Ok((
            NoteSigner {
                public,
                key,
                timestamp: 0,
            },
            text,
        ))
    }

    /// Parses a secret key text; nothing of the text is ever quoted in an error.
    pub(crate) fn parse(text: &str, role: KeyRole) -> Result<NoteSigner, Reason> {
        let bad = || -> Reason {
            format!(
                "not {}'s secret key: expected PRIVATE+KEY+NAME+ID+KEY (as `warden log init` writes)",
                role.what()
            )
            .into()
        };
        let text = text.trim();
        let rest = text.strip_prefix("PRIVATE+KEY+").ok_or_else(bad)?;
        let mut parts = rest.splitn(3, '+');
        let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad());
        };
        check_name(name)?;
        let id = (id.len() == 8)
            .then(|| u32::from_str_radix(id, 16).ok())
            .flatten()
            .ok_or_else(bad)?;
        let bytes = Zeroizing::new(BASE64.decode(key).map_err(|_| bad())?);
        let [t, seed @ ..] = bytes.as_slice() else {
            return Err(bad());
        };
        if *t != role.type_byte() {
            return Err(format!("{} (key type 0x{t:02x})", bad()).into());
        }
        let seed: Zeroizing<[u8; 32]> = Zeroizing::new(seed.try_into().map_err(|_| bad())?);
        let key = SigningKey::from_bytes(&seed);
        let public = VerifierKey {
            name: name.to_string(),
            id: key_id(name, role.type_byte(), &key.verifying_key()),
            role,
            key: key.verifying_key(),
        };
        if public.id != id {
            return Err("the key id does not match the name and key (altered secret key)".into());
        }
        Ok(NoteSigner {
            public,
            key,
            timestamp: 0,
        })
    }

    pub(crate) fn public(&self) -> &VerifierKey {
        &self.public
    }

    /// This witness key, cosigning at `timestamp`.
    pub(crate) fn at(mut self, timestamp: u64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// A copy of this witness key cosigning at `timestamp` (a server cosigns many times).
    pub(crate) fn clone_at(&self, timestamp: u64) -> Self {
        NoteSigner {
            public: self.public.clone(),
            key: self.key.clone(),
            timestamp,
        }
    }
}

impl Signer for NoteSigner {
    fn name(&self) -> &str {
        &self.public.name
    }
    fn key_id(&self) -> u32 {
        self.public.id
    }
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, ed25519_dalek::SignatureError> {
        Ok(match self.public.role {
            KeyRole::Log => self.key.sign(msg).to_vec(),
            KeyRole::Witness => {
                let mut out = self.timestamp.to_be_bytes().to_vec();
                out.extend_from_slice(
                    &self
                        .key
                        .sign(&cosigned_message(self.timestamp, msg))
                        .to_bytes(),
                );
                out
            }
        })
    }
}

/// Who must have signed a checkpoint: the log key, and `threshold` of the witnesses.
#[derive(Clone, Debug)]
pub(crate) struct CheckpointPolicy {
    pub(crate) log: VerifierKey,
    pub(crate) witnesses: Vec<VerifierKey>,
    pub(crate) threshold: usize,
}

/// A checkpoint whose log signature (and enough cosignatures) verified.
#[derive(Clone, Debug)]
pub(crate) struct VerifiedCheckpoint {
    pub(crate) size: u64,
    pub(crate) root: Hash,
    /// The note as read, signatures and all: the evidence when a later one is inconsistent.
    pub(crate) note: Vec<u8>,
    /// Witnesses whose cosignature verified, with its time.
    pub(crate) cosigned: Vec<(String, u64)>,
}

/// Why a checkpoint is not accepted: not a checkpoint at all (bad input), or one the policy
/// refuses (a failed check).
#[derive(Debug)]
pub(crate) enum CheckpointError {
    Malformed(Reason),
    Refused(Reason),
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Malformed(r) | CheckpointError::Refused(r) => write!(f, "{r}"),
        }
    }
}

/// The largest tree warden accepts (2^48 entries): tile arithmetic stays far from overflow.
pub(crate) const MAX_TREE_SIZE: u64 = 1 << 48;

/// Reads and checks a checkpoint note against the policy.
pub(crate) fn verify_checkpoint(
    bytes: &[u8],
    policy: &CheckpointPolicy,
) -> Result<VerifiedCheckpoint, CheckpointError> {
    let malformed = |why: &str| CheckpointError::Malformed(why.to_string().into());
    if bytes.len() as u64 > MAX_CHECKPOINT_BYTES {
        return Err(malformed("larger than 64 KiB: not a checkpoint"));
    }
    let note = Note::from_bytes(bytes).map_err(|_| {
        malformed("not a signed note (text, an empty line, then lines `— name signature`)")
    })?;
    let checkpoint = Checkpoint::from_bytes(note.text())
        .map_err(|_| malformed("not a checkpoint: expected the origin, the tree size and the base64 root hash, one per line"))?;
    if checkpoint.origin() != policy.log.name {
        return Err(CheckpointError::Refused(
            format!(
                "the checkpoint is for the log {:?}, not {:?} (the log key's name)",
                checkpoint.origin(),
                policy.log.name
            )
            .into(),
        ));
    }
    if checkpoint.size() > MAX_TREE_SIZE {
        return Err(malformed("the tree size is beyond 2^48 entries"));
    }
    let mut keys = vec![policy.log.verifier()];
    keys.extend(policy.witnesses.iter().map(VerifierKey::verifier));
    let (verified, _unknown) = note.verify(&VerifierList::new(keys)).map_err(|e| {
        CheckpointError::Refused(
            match e {
                NoteError::InvalidSignature { name, id } => format!(
                    "the checkpoint's signature by {name}+{id:08x} does not verify (altered or forged checkpoint)"
                ),
                NoteError::UnverifiedNote => format!(
                    "the checkpoint is not signed by the log key {}",
                    policy.log
                ),
                other => format!("the checkpoint's signatures: {other}"),
            }
            .into(),
        )
    })?;
    let signed_by_log = verified
        .iter()
        .any(|s| s.name() == policy.log.name && s.id() == policy.log.id);
    if !signed_by_log {
        return Err(CheckpointError::Refused(
            format!("the checkpoint is not signed by the log key {}", policy.log).into(),
        ));
    }
    let cosigned = count_cosignatures(policy, &verified, checkpoint.size())?;
    Ok(VerifiedCheckpoint {
        size: checkpoint.size(),
        root: *checkpoint.hash(),
        note: bytes.to_vec(),
        cosigned,
    })
}

/// The witnesses' cosignatures among `verified` that count toward the policy's threshold, with
/// their times, or why the checkpoint (of `size` entries) is refused. Witnesses are counted by
/// their keys' bytes: one key under two names is one witness (`trust::log` refuses such a set
/// when it is given; this holds whatever set a policy holds).
fn count_cosignatures(
    policy: &CheckpointPolicy,
    verified: &[signed_note::Signature],
    size: u64,
) -> Result<Vec<(String, u64)>, CheckpointError> {
    // Witnesses are counted by their keys' bytes: one key under two names is one witness.
    let mut cosigned: Vec<(String, u64)> = Vec::new();
    let mut counted: Vec<&VerifyingKey> = Vec::new();
    let mut twice: Vec<&str> = Vec::new();
    for w in &policy.witnesses {
        let Some(s) = verified
            .iter()
            .find(|s| s.name() == w.name && s.id() == w.id)
        else {
            continue;
        };
        if counted.contains(&&w.key) {
            twice.push(&w.name);
            continue;
        }
        let time = s
            .signature()
            .first_chunk::<8>()
            .map(|t| u64::from_be_bytes(*t));
        counted.push(&w.key);
        cosigned.push((w.name.clone(), time.unwrap_or(0)));
    }
    if cosigned.len() < policy.threshold {
        let names: Vec<&str> = cosigned.iter().map(|(n, _)| n.as_str()).collect();
        let mut verified = if names.is_empty() {
            "none verified".to_string()
        } else {
            format!("verified: {}", names.join(", "))
        };
        if !twice.is_empty() {
            verified.push_str(&format!(
                "; {} is a key already counted under another name: one witness",
                twice.join(", ")
            ));
        }
        return Err(CheckpointError::Refused(
            format!(
                "{} of {} required witness cosignatures on the checkpoint of size {} ({verified})",
                cosigned.len(),
                policy.threshold,
                size,
            )
            .into(),
        ));
    }
    Ok(cosigned)
}

/// The checkpoint text for a tree, signed by the log key.
pub(crate) fn sign_checkpoint(origin: &str, size: u64, root: Hash, key: &NoteSigner) -> Vec<u8> {
    let text = format!("{origin}\n{size}\n{}\n", BASE64.encode(root.0));
    let mut note = Note::new(text.as_bytes(), &[]).expect("origin checked as a key name");
    note.add_sigs(&[key]).expect("the key's name is the origin");
    note.to_bytes()
}

/// The cosignature line `witness` adds to `note` (`— name base64`), as the witness protocol
/// answers it.
pub(crate) fn cosignature_line(note: &[u8], witness: &NoteSigner) -> Result<String, Reason> {
    let n = Note::from_bytes(note).map_err(|_| Reason::from("not a signed note"))?;
    let sig = witness
        .sign(n.text())
        .map_err(|e| format!("cosigning: {e}"))?;
    let line = signed_note::Signature::new(witness.public.name.clone(), witness.public.id, sig)
        .map_err(|e| format!("cosigning: {e}"))?;
    Ok(String::from_utf8_lossy(&line.to_bytes()).into_owned())
}

/// `note` with `witness`'s cosignature added (an earlier one by the same key replaced).
pub(crate) fn cosign(note: &[u8], witness: &NoteSigner) -> Result<Vec<u8>, Reason> {
    let mut n = Note::from_bytes(note).map_err(|_| Reason::from("not a signed note"))?;
    n.add_sigs(&[witness])
        .map_err(|e| format!("cosigning: {e}"))?;
    Ok(n.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(log: &NoteSigner, witnesses: &[&NoteSigner], threshold: usize) -> CheckpointPolicy {
        CheckpointPolicy {
            log: log.public().clone(),
            witnesses: witnesses.iter().map(|w| w.public().clone()).collect(),
            threshold,
        }
    }

    #[test]
    fn keys_round_trip_through_their_texts_and_ids_are_checked() {
        let (signer, text) = NoteSigner::generate("example.org/log", KeyRole::Log).unwrap();
        let again = NoteSigner::parse(&text, KeyRole::Log).unwrap();
        assert_eq!(again.public(), signer.public());
        let vkey = signer.public().to_string();
        assert!(vkey.starts_with("example.org/log+"), "{vkey}");
        assert_eq!(
            VerifierKey::parse(&vkey, KeyRole::Log).unwrap(),
            *signer.public()
        );
        // A log key is not a witness key, and an id that does not match is refused.
        assert_eq!(
            VerifierKey::parse(&vkey, KeyRole::Witness)
                .unwrap_err()
                .to_string(),
            "this is a log's key (type 0x01), not a witness's cosignature key"
        );
        let (name, rest) = vkey.split_once('+').unwrap();
        let tampered = format!("{name}+00000000+{}", rest.split_once('+').unwrap().1);
        assert_eq!(
            VerifierKey::parse(&tampered, KeyRole::Log)
                .unwrap_err()
                .to_string(),
            "the key id does not match the name and key (altered verifier key)"
        );
        assert!(NoteSigner::parse(&text, KeyRole::Witness).is_err());
        // The secret never shows. Its text is `PRIVATE+KEY+name+id+base64`, and base64 has `+`
        // of its own: the whole last field, not what follows its last `+` (a few characters
        // that could turn up anywhere: this assertion failed once in a few hundred runs).
        let secret = text.trim().splitn(5, '+').nth(4).unwrap();
        assert!(secret.len() > 40, "{secret}");
        assert!(!format!("{signer:?}").contains(secret));
    }

    #[test]
    fn cosignatures_count_toward_the_threshold_and_a_bad_one_rejects_the_note() {
        let (log, _) = NoteSigner::generate("example.org/log", KeyRole::Log).unwrap();
        let (w1, w1_text) = NoteSigner::generate("w1.example", KeyRole::Witness).unwrap();
        let (w2, w2_text) = NoteSigner::generate("w2.example", KeyRole::Witness).unwrap();
        let at = |text: &str, t| NoteSigner::parse(text, KeyRole::Witness).unwrap().at(t);
        let note = sign_checkpoint("example.org/log", 3, tlog_tiles::Hash([7; 32]), &log);
        let cosigned = cosign(&note, &at(&w1_text, 1_780_000_000)).unwrap();
        let cp = verify_checkpoint(&cosigned, &policy(&log, &[&w1, &w2], 1)).unwrap();
        assert_eq!((cp.size, cp.root), (3, tlog_tiles::Hash([7; 32])));
        assert_eq!(cp.cosigned, vec![("w1.example".to_string(), 1_780_000_000)]);
        let two = verify_checkpoint(&cosigned, &policy(&log, &[&w1, &w2], 2)).unwrap_err();
        assert_eq!(
            two.to_string(),
            "1 of 2 required witness cosignatures on the checkpoint of size 3 (verified: w1.example)"
        );
        // A cosignature whose time was changed no longer verifies: the whole note is refused.
        let text = String::from_utf8(cosigned).unwrap();
        let (head, sig) = text.trim_end().rsplit_once(' ').unwrap();
        let mut bytes = BASE64.decode(sig).unwrap();
        bytes[11] ^= 1;
        let forged = format!("{head} {}\n", BASE64.encode(bytes));
        let e = verify_checkpoint(forged.as_bytes(), &policy(&log, &[&w1], 0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("the checkpoint's signature by w1.example+{:08x} does not verify (altered or forged checkpoint)", w1.public().id)
        );
        // The line a witness answers is the one it adds.
        let line = cosignature_line(&note, &at(&w2_text, 5)).unwrap();
        assert!(line.starts_with("— w2.example "), "{line}");
    }
}
