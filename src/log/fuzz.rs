//! What the fuzz target `log_reads` drives: everything a log served by someone else makes warden
//! read (a checkpoint note with its signatures and cosignatures, hash tiles, entry bundles and
//! the entries in them, a proof beside a signature), from one input, through the same functions
//! `verify --require-log --log URL`, `log verify`, `log witness` and the monitor call. Nothing
//! here may panic, loop or allocate without bound whatever the bytes are.

use std::collections::HashMap;

use super::note::{self, CheckpointPolicy, KeyRole, NoteSigner, VerifierKey};
use super::tiles::Store;
use super::tree;
use crate::error::Error;

/// The fixed keys the fuzz input's notes are signed with: a log and a witness, made from fixed
/// seeds (not secrets: they sign nothing but fuzz inputs).
pub(crate) fn keys() -> (NoteSigner, NoteSigner) {
    let key = |name: &str, role: KeyRole, seed: u8| {
        let signing = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
        let type_byte = match role {
            KeyRole::Log => 0x01,
            KeyRole::Witness => 0x04,
        };
        let mut public = vec![type_byte];
        public.extend_from_slice(signing.verifying_key().as_bytes());
        let id = signed_note::key_id(name, &public);
        let mut secret = vec![type_byte];
        secret.extend_from_slice(&[seed; 32]);
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
        NoteSigner::parse(&format!("PRIVATE+KEY+{name}+{id:08x}+{b64}"), role).expect("a fixed key")
    };
    (
        key("fuzz.example/log", KeyRole::Log, 1),
        key("fuzz.example/witness", KeyRole::Witness, 2),
    )
}

/// The log's files in memory.
struct Files(HashMap<String, Vec<u8>>);

impl Store for Files {
    fn read(&self, path: &str, cap: u64) -> Result<Option<Vec<u8>>, Error> {
        match self.0.get(path) {
            Some(b) if b.len() as u64 > cap => Err(Error::input(path, None, "too large")),
            b => Ok(b.cloned()),
        }
    }
    fn name(&self, path: &str) -> String {
        path.to_string()
    }
}

/// The parts of `data` split at `\0\n`: the checkpoint, a level-0 hash tile, an entry bundle,
/// a proof, and more tiles (`path\n` then bytes).
pub(crate) fn run(data: &[u8]) {
    let mut parts = data.split(|b| *b == 0);
    let checkpoint = parts.next().unwrap_or_default().to_vec();
    let tile = parts.next().unwrap_or_default().to_vec();
    let bundle = parts.next().unwrap_or_default().to_vec();
    let proof = parts.next().unwrap_or_default().to_vec();
    let mut files = HashMap::new();
    files.insert(tree::CHECKPOINT.to_string(), checkpoint.clone());
    files.insert("tile/0/000".to_string(), tile);
    files.insert("tile/entries/000".to_string(), bundle.clone());
    for extra in parts {
        if let Some(i) = extra.iter().position(|b| *b == b'\n') {
            let path = String::from_utf8_lossy(&extra[..i]).into_owned();
            files.insert(path, extra[i + 1..].to_vec());
        }
    }
    let store = Files(files);
    if let Ok(text) = std::str::from_utf8(data) {
        for role in [KeyRole::Log, KeyRole::Witness] {
            if let Ok(k) = VerifierKey::parse(text, role) {
                assert!(VerifierKey::parse(&k.to_string(), role).is_ok_and(|again| again == k));
            }
        }
    }
    let _ = super::entry::Entry::parse(&bundle);
    let (log, witness) = keys();
    let policy = CheckpointPolicy {
        log: log.public().clone(),
        witnesses: vec![witness.public().clone()],
        threshold: 0,
    };
    let Ok(cp) = tree::read_checkpoint(&store, &policy) else {
        return;
    };
    let _ = note::cosign(&cp.note, &witness.at(1));
    let proof = std::str::from_utf8(&proof)
        .ok()
        .and_then(|t| super::proof::LogProof::parse(t).ok());
    if let Some(proof) = proof {
        if let Ok(at) = tree::checked_checkpoint(&proof.checkpoint, "proof", &policy) {
            let leaf = tlog_tiles::record_hash(b"");
            let _ = tree::check_inclusion(&at, proof.index, leaf, &proof.hashes);
            let _ = tree::check_consistency(&store, &at, &cp);
        }
    }
    // Bounded by the tiles at hand: a hostile size fails at the first tile missing.
    let _ = tree::entry_at(&store, &cp, 0);
    let _ = tree::prove_inclusion(&store, &cp, 0);
    let _ = tree::prove_consistency(&store, cp.size / 2, &cp);
    let _ = tree::find_leaf(&store, &cp, tlog_tiles::record_hash(b""));
    let _ = tree::verify_all(&store, &cp);
}

/// What the fuzz target `witness_requests` drives: an `add-checkpoint` body from the network,
/// parsed and decided as `log witness --serve` does, against no state and against a state of
/// size 1; and bytes offered as a witness's cosignature line, merged into a checkpoint as
/// `log cosign` does. The input is used three ways: as the whole body; as the proof lines and
/// old size before a valid checkpoint; and as signature lines after a valid checkpoint.
pub(crate) fn run_witness_request(data: &[u8]) {
    use super::witness::{decide, with_cosignature, AddCheckpoint};
    let (log, witness) = keys();
    let policy = CheckpointPolicy {
        log: log.public().clone(),
        witnesses: Vec::new(),
        threshold: 0,
    };
    let leaf = tlog_tiles::record_hash(b"an entry");
    let one = note::sign_checkpoint("fuzz.example/log", 1, leaf, &log);
    let last = note::verify_checkpoint(&one, &policy).ok();
    let two_root = tlog_tiles::Hash(crate::minisign::hash::hash_bytes(data).sha256);
    let two = note::sign_checkpoint("fuzz.example/log", 2, two_root, &log);
    let mut bodies = vec![data.to_vec()];
    let old = data.first().copied().unwrap_or(0) % 4;
    let mut proof_body = format!("old {old}\n").into_bytes();
    for chunk in data.chunks(32).take(70) {
        use base64::Engine as _;
        proof_body.extend_from_slice(
            base64::engine::general_purpose::STANDARD
                .encode(chunk)
                .as_bytes(),
        );
        proof_body.push(b'\n');
    }
    proof_body.push(b'\n');
    proof_body.extend_from_slice(&two);
    bodies.push(proof_body);
    let mut sig_body = b"old 1\n\n".to_vec();
    sig_body.extend_from_slice(&two);
    sig_body.extend_from_slice(data);
    bodies.push(sig_body);
    for body in &bodies {
        if let Ok(req) = AddCheckpoint::parse(body) {
            let _ = decide(&req, &policy, None);
            let _ = decide(&req, &policy, last.as_ref());
            assert_eq!(AddCheckpoint::parse(&req.to_bytes()), Ok(req));
        }
    }
    if let Ok(line) = std::str::from_utf8(data) {
        if let Ok(merged) = with_cosignature(&one, line) {
            let _ = note::verify_checkpoint(&merged, &policy);
        }
    }
    let signer = witness.clone_at(1);
    if let Ok(line) = note::cosignature_line(&two, &signer) {
        let _ = with_cosignature(&two, &line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of one entry signed by the fixed key reaches every read (the fuzz target's seed is
    /// this input: `UPDATE_FUZZ_SEED=1` writes it to `fuzz/corpus/log_reads/`).
    #[test]
    fn a_valid_log_reaches_every_read() {
        let (log, _) = keys();
        let entry = b"an entry".to_vec();
        let leaf = tlog_tiles::record_hash(&entry);
        let checkpoint = note::sign_checkpoint("fuzz.example/log", 1, leaf, &log);
        let mut bundle = (entry.len() as u16).to_be_bytes().to_vec();
        bundle.extend_from_slice(&entry);
        let proof = super::super::proof::LogProof {
            index: 0,
            hashes: Vec::new(),
            checkpoint: checkpoint.clone(),
        }
        .to_string();
        let mut input = checkpoint.clone();
        for part in [&leaf.0[..], &bundle, proof.as_bytes()] {
            input.push(0);
            input.extend_from_slice(part);
        }
        let policy = CheckpointPolicy {
            log: log.public().clone(),
            witnesses: Vec::new(),
            threshold: 0,
        };
        assert!(note::verify_checkpoint(&checkpoint, &policy).is_ok());
        run(&input);
        if std::env::var_os("UPDATE_FUZZ_SEED").is_some() {
            let dir =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/log_reads");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("one-entry"), &input).unwrap();
        }
        // Every prefix of it: a truncated file at every place.
        for n in (0..input.len()).step_by(7) {
            run(&input[..n]);
        }
    }

    #[test]
    fn witness_requests_of_every_shape_are_decided_without_a_panic() {
        for data in [&b""[..], b"old 0\n\n", b"\xff\x00old 2\n", &[7u8; 500]] {
            run_witness_request(data);
        }
    }
}
