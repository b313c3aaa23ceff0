//! Git objects as the API answers them (`git/blobs/SHA`, `git/trees/SHA`), checked against the
//! SHA that names them: a cached answer is trusted without asking GitHub again only when its
//! content hashes to that SHA, so a cache folder that someone else could write (a CI cache a
//! pull request restores) cannot change what the audit reads.

use serde_json::Value;
use sha1::{Digest, Sha1};

/// Whether the answer to `route` (a blob or tree named by its SHA) is that object.
pub(crate) fn answer_matches(route: &str, body: &str) -> bool {
    let Ok(answer) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let named = |kind: &str| {
        route
            .split_once(kind)
            .map(|(_, rest)| rest.split('?').next().unwrap_or(rest).to_ascii_lowercase())
    };
    if let Some(sha) = named("/git/blobs/") {
        return blob_matches(&sha, &answer);
    }
    if let Some(sha) = named("/git/trees/") {
        return tree_matches(&sha, &answer);
    }
    false
}

fn object_id(kind: &str, content: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(format!("{kind} {}\0", content.len()).as_bytes());
    h.update(content);
    crate::util::to_hex(&h.finalize())
}

/// The `content` of a contents or blobs answer: base64 with line breaks, decoded.
pub(crate) fn base64_content(answer: &Value) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let encoded: String = answer["content"]
        .as_str()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
}

fn blob_matches(sha: &str, answer: &Value) -> bool {
    base64_content(answer).is_some_and(|content| object_id("blob", &content) == sha)
}

/// One entry of a tree listing.
struct Entry<'a> {
    path: &'a str,
    mode: &'a str,
    sha: &'a str,
}

/// A tree listing (recursive or not): the tree named `sha` is rebuilt from its direct entries,
/// and each subtree the listing descends into is checked the same way, so every path and blob
/// id in the answer is bound to `sha`. A truncated listing is never trusted.
fn tree_matches(sha: &str, answer: &Value) -> bool {
    if answer["truncated"].as_bool() != Some(false) {
        return false;
    }
    let Some(items) = answer["tree"].as_array() else {
        return false;
    };
    let mut entries = Vec::with_capacity(items.len());
    for item in items {
        let (Some(path), Some(mode), Some(sha)) = (
            item["path"].as_str(),
            item["mode"].as_str(),
            item["sha"].as_str(),
        ) else {
            return false;
        };
        entries.push(Entry { path, mode, sha });
    }
    subtree_matches("", sha, &entries)
}

/// Whether the entries directly under `dir` ("" for the root) make the tree `sha`, and every
/// subtree listed under it matches too.
fn subtree_matches(dir: &str, sha: &str, entries: &[Entry]) -> bool {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut children: Vec<(&str, &Entry)> = entries
        .iter()
        .filter_map(|e| {
            let name = e.path.strip_prefix(prefix.as_str())?;
            (!name.is_empty() && !name.contains('/')).then_some((name, e))
        })
        .collect();
    // Git's order: by name, a tree's name compared as if it ended in `/`.
    let key = |(name, e): &(&str, &Entry)| {
        let mut k = name.as_bytes().to_vec();
        if e.mode == "040000" || e.mode == "40000" {
            k.push(b'/');
        }
        k
    };
    children.sort_by_key(key);
    let mut content = Vec::new();
    for (name, e) in &children {
        let Some(id) = hex20(e.sha) else {
            return false;
        };
        content.extend_from_slice(e.mode.trim_start_matches('0').as_bytes());
        content.push(b' ');
        content.extend_from_slice(name.as_bytes());
        content.push(0);
        content.extend_from_slice(&id);
    }
    if object_id("tree", &content) != sha {
        return false;
    }
    // A subtree whose entries the (recursive) listing includes is bound the same way.
    children.iter().all(|(_, e)| {
        let is_tree = e.mode.trim_start_matches('0') == "40000";
        let listed = entries
            .iter()
            .any(|x| x.path.len() > e.path.len() && x.path.starts_with(&format!("{}/", e.path)));
        !is_tree || !listed || subtree_matches(e.path, &e.sha.to_ascii_lowercase(), entries)
    })
}

fn hex20(s: &str) -> Option<[u8; 20]> {
    if s.len() != 40 {
        return None;
    }
    let mut out = [0u8; 20];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Ids computed with git itself (`git hash-object`, `git mktree`, `git ls-tree -r -t`).
    const HELLO_BLOB: &str = "ce013625030ba8dba906f756967f9e9ca394464a"; // "hello\n"

    #[test]
    fn a_blob_is_its_content_and_a_changed_byte_is_not() {
        let good = json!({"sha": HELLO_BLOB, "encoding": "base64", "content": "aGVsbG8K\n"});
        assert!(answer_matches(
            &format!("repos/o/r/git/blobs/{HELLO_BLOB}"),
            &good.to_string()
        ));
        let bad = json!({"sha": HELLO_BLOB, "encoding": "base64", "content": "aGVsbG8h\n"});
        assert!(!answer_matches(
            &format!("repos/o/r/git/blobs/{HELLO_BLOB}"),
            &bad.to_string()
        ));
        assert!(!answer_matches("repos/o/r/git/blobs/x", "not json"));
    }

    /// `.github` of a repository: a file, a subtree with a file and a link (as the API lists
    /// it with `?recursive=1`).
    fn github_tree() -> serde_json::Value {
        json!({"sha": "e28e14b78addcc969fef3a0d2cb225136fed9c32", "truncated": false, "tree": [
            {"path": "a", "mode": "100644", "type": "blob", "sha": "587be6b4c3f93f93c489c0111bba5596147a26cb"},
            {"path": "workflows", "mode": "040000", "type": "tree", "sha": "0f0346c25bc9557796d27846988459887ae082be"},
            {"path": "workflows/link.yml", "mode": "120000", "type": "blob", "sha": "eda76f7226728b0f13def6ba3452fc35bb8d3961"},
            {"path": "workflows/release.yml", "mode": "100644", "type": "blob", "sha": HELLO_BLOB}
        ]})
    }

    #[test]
    fn a_recursive_tree_binds_every_path_and_blob_id_to_its_sha() {
        let route = "repos/o/r/git/trees/e28e14b78addcc969fef3a0d2cb225136fed9c32?recursive=1";
        assert!(answer_matches(route, &github_tree().to_string()));
        // The same listing without recursion (the subtree's entries absent) matches too.
        let mut flat = github_tree();
        flat["tree"].as_array_mut().unwrap().truncate(2);
        assert!(answer_matches(route, &flat.to_string()));
        // A blob id swapped inside the subtree, a path renamed, a link made a file, an entry
        // added, a truncated answer: none is that tree.
        for change in [
            (
                "/tree/3/sha",
                json!("587be6b4c3f93f93c489c0111bba5596147a26cb"),
            ),
            ("/tree/3/path", json!("workflows/other.yml")),
            ("/tree/2/mode", json!("100644")),
            ("/truncated", json!(true)),
        ] {
            let mut t = github_tree();
            *t.pointer_mut(change.0).unwrap() = change.1.clone();
            assert!(!answer_matches(route, &t.to_string()), "{change:?}");
        }
        let mut t = github_tree();
        t["tree"].as_array_mut().unwrap().push(
            json!({"path": "workflows/evil.yml", "mode": "100644", "type": "blob", "sha": HELLO_BLOB}),
        );
        assert!(!answer_matches(route, &t.to_string()));
    }
}
