//! Key lineages (issue 25, issue 46): `keys/rotations/<OLD>-<NEW>.toml`, signed by the old key
//! (`<OLD>-<NEW>.toml.<OLD>.minisig`) and by the new one (`….<NEW>.minisig`), says the new key
//! succeeds the old. A downstream user who pinned the old public key follows the chain with
//! `verify --follow-rotations`; a key with two successors is a fork, and fails closed; the chain
//! stops at a key whose trust has ended (revoked, or past its `valid_until`).
//!
//! Which keys are one signer: a statement, signed by both keys, says one holder moved from the
//! old key to the new one, so a key and every key it rotated to (or from) are one signer, and a
//! threshold counts lineages, never keys. Links are made only by checked statements (both
//! signatures verify), so nobody joins two keys without holding both.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::minisign::keys::{KeyId, PublicKey};
use crate::minisign::signature::SignatureError;
use crate::trust::statement;

/// The folder of rotation statements, inside the keys folder.
pub(crate) const ROTATIONS_DIR: &str = "rotations";

/// One checked rotation: `new` succeeds `old`.
#[derive(Clone, Debug)]
pub(crate) struct Rotation {
    pub(crate) old: PublicKey,
    pub(crate) new: PublicKey,
    pub(crate) rotated_at: String,
    pub(crate) file: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Statement {
    old_key_id: String,
    old_public_key: String,
    new_key_id: String,
    new_public_key: String,
    rotated_at: String,
}

/// The statement that `new` succeeds `old`.
pub(crate) fn statement_text(old: &PublicKey, new: &PublicKey, rotated_at: &str) -> String {
    let quote = |s: &str| toml::Value::from(s).to_string();
    format!(
        "# A warden key rotation: the new key succeeds the old one.\nold_key_id = {}\nold_public_key = {}\nnew_key_id = {}\nnew_public_key = {}\nrotated_at = {}\n",
        quote(&old.key_id.to_string()),
        quote(&old.to_base64()),
        quote(&new.key_id.to_string()),
        quote(&new.to_base64()),
        quote(rotated_at)
    )
}

/// The two signature files of a statement: by the old key, by the new key.
pub(crate) fn signature_paths(statement: &Path, old: KeyId, new: KeyId) -> (PathBuf, PathBuf) {
    let with = |id: KeyId| PathBuf::from(format!("{}.{id}.minisig", statement.display()));
    (with(old), with(new))
}

/// Checks one statement and its two signatures.
pub(crate) fn check_statement(file: &Path) -> Result<Rotation> {
    let text = statement::read(file)?;
    let bad =
        |line: Option<usize>, why: String| Error::input(file.display().to_string(), line, why);
    let s: Statement = statement::parse(file, &text, "rotation")?;
    let key = |b64: &str, id: &str, field: &str| -> Result<PublicKey> {
        let k = PublicKey::from_base64(b64).map_err(|e| bad(None, format!("{field}: {e}")))?;
        if !k.key_id.to_string().eq_ignore_ascii_case(id) {
            return Err(bad(None, format!("{field} is key {}, not {id}", k.key_id)));
        }
        Ok(k)
    };
    let old = key(&s.old_public_key, &s.old_key_id, "old_public_key")?;
    let new = key(&s.new_public_key, &s.new_key_id, "new_public_key")?;
    if old.key_id == new.key_id {
        return Err(bad(None, "a key cannot succeed itself".into()));
    }
    let expected = format!("{}-{}", old.key_id, new.key_id);
    if file.file_stem().and_then(|n| n.to_str()) != Some(expected.as_str()) {
        return Err(bad(
            None,
            format!(
                "a rotation from {} to {} must be named {expected}.toml",
                old.key_id, new.key_id
            ),
        ));
    }
    let (by_old, by_new) = signature_paths(file, old.key_id, new.key_id);
    // Each signature by its own key: another key's is a mismatch, as minisign says it.
    for (sig_file, key) in [(&by_old, &old), (&by_new, &new)] {
        statement::check_signature(sig_file, &text, &[key], |signed| {
            let e = SignatureError::KeyMismatch {
                signed,
                trusted: key.key_id,
            };
            format!("does not verify: {e}")
        })?;
    }
    Ok(Rotation {
        old,
        new,
        rotated_at: s.rotated_at,
        file: file.to_path_buf(),
    })
}

/// Every rotation of `keys_dir/rotations/` (none when absent), each checked.
pub(crate) fn load(keys_dir: &Path) -> Result<Vec<Rotation>> {
    let files = statement::files(&keys_dir.join(ROTATIONS_DIR))?;
    files.iter().map(|f| check_statement(f)).collect()
}

/// Why trust stops at a key of a chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ChainEnd {
    Revoked,
    /// Past its `valid_until` (as written).
    Expired(String),
}

/// The keys that succeed `pinned`, in order, following `rotations`: each rotation's old key must
/// be the current key by its bytes (a key carrying its id is another key), and the chain stops
/// at a key `ends` says trust ends at (revoked, or past its `valid_until`): trust never passes
/// through one, whatever the rotations out of it say (its holder, or its thief, may have written
/// them, and may have dated them as they liked). A key with two successors is a fork: an error
/// naming both, never a guess.
pub(crate) fn successors(
    pinned: &PublicKey,
    rotations: &[Rotation],
    ends: impl Fn(&PublicKey) -> Option<ChainEnd>,
) -> Result<Vec<Rotation>> {
    let mut chain: Vec<Rotation> = Vec::new();
    let mut current = pinned.clone();
    loop {
        if ends(&current).is_some() {
            return Ok(chain);
        }
        let next: Vec<&Rotation> = rotations.iter().filter(|r| r.old == current).collect();
        match next.as_slice() {
            [] => return Ok(chain),
            [one] => {
                if one.new == *pinned || chain.iter().any(|r| r.new == one.new) {
                    return Err(Error::input(
                        one.file.display().to_string(),
                        None,
                        "the rotations go round in a circle: refused",
                    ));
                }
                if ends(&one.new) == Some(ChainEnd::Revoked) {
                    return Ok(chain);
                }
                chain.push((*one).clone());
                current = one.new.clone();
            }
            [a, b, ..] => {
                return Err(Error::input(
                    a.file.display().to_string(),
                    None,
                    format!(
                        "key {} has two successors ({} in {}, {} in {}): a forked chain is not followed",
                        current.key_id,
                        a.new.key_id,
                        a.file.display(),
                        b.new.key_id,
                        b.file.display()
                    ),
                ))
            }
        }
    }
}

/// What is wrong with `rotations` against the keys of their folder (`folder`), its revocations
/// and its policy, as `keys list` says it: a rotation whose old key carries the id of a key of
/// the folder but is another key (a look-alike: not followed), and one out of a key trust has
/// ended at (revoked, or past its date: trust does not pass on from it).
pub(crate) fn problems(
    rotations: &[Rotation],
    folder: &[PublicKey],
    ends: impl Fn(&PublicKey) -> Option<ChainEnd>,
) -> Vec<String> {
    let mut out = Vec::new();
    for r in rotations {
        if folder
            .iter()
            .any(|k| k.key_id == r.old.key_id && *k != r.old)
        {
            out.push(format!(
                "{}: its old key carries the id {} but is not the folder's key under that id (a look-alike): not followed",
                r.file.display(),
                r.old.key_id
            ));
        }
        match ends(&r.old) {
            Some(ChainEnd::Revoked) => out.push(format!(
                "{}: a rotation out of revoked key {}: trust does not pass through a revoked key, so it is not followed",
                r.file.display(),
                r.old.key_id
            )),
            Some(ChainEnd::Expired(until)) => out.push(format!(
                "{}: a rotation out of key {}, trusted until {}: trust does not pass on from a key past its date, so it is not followed",
                r.file.display(),
                r.old.key_id,
                crate::markup::text_value(&until)
            )),
            None => {}
        }
    }
    out
}

/// The rotations that join keys into lineages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lineages {
    links: Vec<Rotation>,
}

impl Lineages {
    /// Also joins the keys of `rotations` (each already checked).
    pub(crate) fn extend(&mut self, rotations: &[Rotation]) {
        for r in rotations {
            let known = self.links.iter().any(|l| l.old == r.old && l.new == r.new);
            if !known {
                self.links.push(r.clone());
            }
        }
    }

    /// The rotations that lead from `a` to `b` (either way round), when they are one lineage
    /// and not one key: the shortest chain of statements.
    fn path(&self, a: &PublicKey, b: &PublicKey) -> Option<Vec<&Rotation>> {
        if a == b {
            return None;
        }
        // Breadth first over the statements; each statement is a link both ways.
        let mut seen: Vec<&PublicKey> = vec![a];
        let mut frontier: Vec<(&PublicKey, Vec<&Rotation>)> = vec![(a, Vec::new())];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for (key, path) in frontier {
                for r in &self.links {
                    let other = if r.old == *key {
                        &r.new
                    } else if r.new == *key {
                        &r.old
                    } else {
                        continue;
                    };
                    if seen.contains(&other) {
                        continue;
                    }
                    let mut path = path.clone();
                    path.push(r);
                    if other == b {
                        return Some(path);
                    }
                    seen.push(other);
                    next.push((other, path));
                }
            }
            frontier = next;
        }
        None
    }

    /// Why `later` is not a signer apart from `earlier`: one key, or one lineage (and the
    /// statements that make it one).
    pub(crate) fn one_signer(&self, earlier: &PublicKey, later: &PublicKey) -> Option<String> {
        if earlier == later {
            return Some("the same key signed twice: counted once".into());
        }
        let path = self.path(earlier, later)?;
        let files: Vec<String> = path.iter().map(|r| r.file.display().to_string()).collect();
        Some(match path.as_slice() {
            [r] => format!(
                "key {} succeeds key {} ({}): one signer",
                r.new.key_id,
                r.old.key_id,
                files.join(", ")
            ),
            _ => format!(
                "keys {} and {} are one lineage ({}): one signer",
                earlier.key_id,
                later.key_id,
                files.join(", ")
            ),
        })
    }

    /// The groups of two or more of `keys` that are one signer, each with the statements that
    /// join it, in the order of `keys`.
    pub(crate) fn groups<'k>(
        &self,
        keys: &[&'k PublicKey],
    ) -> Vec<(Vec<&'k PublicKey>, Vec<String>)> {
        let mut out: Vec<(Vec<&'k PublicKey>, Vec<String>)> = Vec::new();
        for key in keys {
            if out.iter().any(|(g, _)| g.contains(key)) {
                continue;
            }
            let mut group = vec![*key];
            let mut files: Vec<String> = Vec::new();
            for other in keys {
                if let Some(path) = self.path(key, other) {
                    group.push(*other);
                    for r in path {
                        let f = r.file.display().to_string();
                        if !files.contains(&f) {
                            files.push(f);
                        }
                    }
                }
            }
            if group.len() > 1 {
                out.push((group, files));
            }
        }
        out
    }
}

/// Distinct signers among the keys that signed one thing, in the order they are counted.
pub(crate) struct Tally<'l> {
    lineages: &'l Lineages,
    counted: Vec<PublicKey>,
}

impl<'l> Tally<'l> {
    pub(crate) fn new(lineages: &'l Lineages) -> Self {
        Tally {
            lineages,
            counted: Vec::new(),
        }
    }

    /// Counts `key`, or says why it is a signer already counted.
    pub(crate) fn count(&mut self, key: &PublicKey) -> Result<(), String> {
        for earlier in &self.counted {
            if let Some(why) = self.lineages.one_signer(earlier, key) {
                return Err(why);
            }
        }
        self.counted.push(key.clone());
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.counted.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minisign::keys::generate;
    use std::path::PathBuf;

    fn key() -> PublicKey {
        generate(None).unwrap().public
    }

    fn rotation(old: &PublicKey, new: &PublicKey, file: &str) -> Rotation {
        Rotation {
            old: old.clone(),
            new: new.clone(),
            rotated_at: "2026-01-01T00:00:00Z".into(),
            file: PathBuf::from(file),
        }
    }

    #[test]
    fn a_key_and_every_key_it_rotated_to_are_one_signer() {
        let (a, t, u, b) = (key(), key(), key(), key());
        let mut l = Lineages::default();
        l.extend(&[rotation(&a, &t, "a-t.toml"), rotation(&t, &u, "t-u.toml")]);
        let mut tally = Tally::new(&l);
        assert_eq!(tally.count(&u), Ok(()));
        assert_eq!(
            tally.count(&t),
            Err(format!(
                "key {} succeeds key {} (t-u.toml): one signer",
                u.key_id, t.key_id
            ))
        );
        assert_eq!(
            tally.count(&a),
            Err(format!(
                "keys {} and {} are one lineage (t-u.toml, a-t.toml): one signer",
                u.key_id, a.key_id
            ))
        );
        assert_eq!(
            tally.count(&u),
            Err("the same key signed twice: counted once".into())
        );
        assert_eq!(tally.count(&b), Ok(()));
        assert_eq!(tally.len(), 2);
        let groups = l.groups(&[&a, &b, &u]);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].0, vec![&a, &u]);
    }
}
