//! Which keys are one signer. A rotation statement, signed by both keys, says one holder moved
//! from the old key to the new one: a key and every key it rotated to (or from) are one signer,
//! so a threshold counts lineages, never keys. Links are made only by checked statements (both
//! signatures verify), so nobody joins two keys without holding both.

use super::keys::PublicKey;
use super::rotation::Rotation;

/// The rotations that join keys into lineages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lineages {
    links: Vec<Rotation>,
}

impl Lineages {
    /// Also joins the keys of `rotations` (each already checked).
    pub(crate) fn extend(&mut self, rotations: &[Rotation]) {
        for r in rotations {
            let known = self
                .links
                .iter()
                .any(|l| l.old == r.old && l.new == r.new);
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
    use crate::release::keys::generate;
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
