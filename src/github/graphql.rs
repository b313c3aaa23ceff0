//! An organisation's reads through GraphQL: for a batch of repositories, one query gives what
//! the REST audit asks of each in turn (the default branch's root, `.github` and `keys` trees,
//! the tag rulesets in full, whether there are releases), a second gives the texts of the files
//! the audit fetches. Each answer is turned into the REST answer of the route it stands for and
//! primed into the repository's reads, so the audit itself reads REST routes as always; what a
//! query did not give whole (an error on its path, a list longer than asked for, a tree deeper
//! than the query went, a text that does not hash to its blob id) is left for REST to read.
//!
//! GraphQL answers are GitHub's, checked like REST ones: trees and blobs are bound to the git ids
//! that name them (`git_object`) before they are primed.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::api::{ApiSource, Fetched};
use super::org::{select_files, Tree, TreeEntry, FILE_CAP};
use super::routes;

/// Repositories per query: with up to 25 tag rulesets of 50 rules and 50 bypass actors each,
/// 20 repositories stay far inside GitHub's 500,000-node limit of one query.
pub(crate) const BATCH: usize = 20;

/// The most text asked for in one query, and the largest file asked for by GraphQL (larger
/// ones are read through REST).
const TEXT_PER_QUERY: u64 = 4 << 20;
const TEXT_CAP: u64 = 512 << 10;
const BLOBS_PER_QUERY: usize = 200;

/// How deep the query lists `.github` (`.github/actions/NAME/dist/index.js` is 4) and `keys`
/// (`keys/revoked/X.toml` is 2); a folder found deeper leaves the tree to REST.
const GITHUB_DEPTH: usize = 4;
const KEYS_DEPTH: usize = 2;

/// Per repository (`OWNER/NAME`), REST answers by route.
pub(crate) type Primed = HashMap<String, HashMap<String, Value>>;

/// What the organisation audit asks of each repository besides its files.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wanted {
    /// The key inventory's budget of public keys outside `keys/` (`None`: not asked for).
    pub(crate) key_budget: Option<u64>,
    /// How many releases the audit lists (`routes::releases(repo, n)`; 0: none).
    pub(crate) releases: usize,
}

/// The answers GraphQL gives for `repos` (at most [`BATCH`]), as REST answers by route. A query
/// that fails gives nothing: every read then goes to REST.
pub(crate) async fn prime<S: ApiSource>(api: &S, repos: &[String], wanted: Wanted) -> Primed {
    let mut primed = Primed::new();
    let pairs: Vec<(&str, &str)> = repos.iter().filter_map(|r| r.split_once('/')).collect();
    if pairs.is_empty() {
        return primed;
    }
    let mut variables = serde_json::Map::new();
    for (i, (owner, name)) in pairs.iter().enumerate() {
        variables.insert(format!("o{i}"), json!(owner));
        variables.insert(format!("n{i}"), json!(name));
    }
    let Fetched::Ok(answer) = api
        .graphql(&repositories_query(pairs.len()), &Value::Object(variables))
        .await
    else {
        return primed;
    };
    let errors = ErrorPaths::of(&answer);
    let mut texts_wanted: Vec<(usize, Vec<TreeEntry>)> = Vec::new();
    for (i, (owner, name)) in pairs.iter().enumerate() {
        let repo = format!("{owner}/{name}");
        let alias = format!("r{i}");
        let data = &answer["data"][&alias];
        if data.is_null() || errors.whole(&alias) {
            continue;
        }
        let mut routes_of = HashMap::new();
        if !errors.under(&alias, "rulesets") {
            prime_rulesets(&repo, &data["rulesets"], &mut routes_of);
        }
        if wanted.releases > 0
            && !errors.under(&alias, "releases")
            && data["releases"]["totalCount"].as_u64() == Some(0)
        {
            routes_of.insert(routes::releases(&repo, wanted.releases), json!([]));
        }
        if let Some(files) = prime_trees(&repo, data, &alias, &errors, wanted, &mut routes_of) {
            texts_wanted.push((i, files));
        }
        primed.insert(repo, routes_of);
    }
    prime_texts(api, &pairs, texts_wanted, &mut primed).await;
    primed
}

/// Error paths of a GraphQL answer: a field with an error is not used, nor anything under it.
struct ErrorPaths(Vec<Vec<String>>);

impl ErrorPaths {
    fn of(answer: &Value) -> Self {
        let paths = answer["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                e["path"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| match p {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .collect();
        ErrorPaths(paths)
    }

    /// An error without a path, or on the repository itself.
    fn whole(&self, alias: &str) -> bool {
        self.0.iter().any(|p| p.is_empty() || p == &[alias])
    }

    /// An error on `alias.field` or below it.
    fn under(&self, alias: &str, field: &str) -> bool {
        self.0
            .iter()
            .any(|p| p.len() >= 2 && p[0] == alias && p[1] == field)
    }
}

const ENTRY: &str = "name type mode oid size";

/// `entries { … }` nested `depth` levels: each level lists its entries and, for a folder, the
/// entries below it.
fn nested_entries(depth: usize) -> String {
    if depth <= 1 {
        return format!("entries {{ {ENTRY} }}");
    }
    format!(
        "entries {{ {ENTRY} object {{ ... on Tree {{ {} }} }} }}",
        nested_entries(depth - 1)
    )
}

/// The query for `n` repositories, `$o<i>`/`$n<i>` their owner and name.
pub(crate) fn repositories_query(n: usize) -> String {
    let params: Vec<String> = (0..n)
        .map(|i| format!("$o{i}: String!, $n{i}: String!"))
        .collect();
    let fields: Vec<String> = (0..n)
        .map(|i| format!("  r{i}: repository(owner: $o{i}, name: $n{i}) {{ ...Repo }}"))
        .collect();
    format!(
        "query Repositories({}) {{\n{}\n}}\n\
fragment Repo on Repository {{\n  \
root: object(expression: \"HEAD:\") {{ ... on Tree {{ entries {{ {ENTRY} }} }} }}\n  \
github: object(expression: \"HEAD:.github\") {{ ... on Tree {{ {} }} }}\n  \
keys: object(expression: \"HEAD:keys\") {{ ... on Tree {{ {} }} }}\n  \
rulesets(first: 25, includeParents: true, targets: [TAG]) {{ totalCount nodes {{ ...Ruleset }} }}\n  \
releases(first: 1) {{ totalCount }}\n}}\n\
fragment Ruleset on RepositoryRuleset {{\n  \
databaseId name target enforcement\n  \
source {{ __typename ... on Repository {{ nameWithOwner }} ... on Organization {{ login }} ... on Enterprise {{ slug }} }}\n  \
conditions {{ refName {{ include exclude }} }}\n  \
rules(first: 50) {{ totalCount nodes {{ type }} }}\n  \
bypassActors(first: 50) {{ totalCount nodes {{ bypassMode organizationAdmin deployKey enterpriseOwner repositoryRoleDatabaseId actor {{ __typename ... on App {{ databaseId }} ... on Team {{ databaseId }} }} }} }}\n}}\n",
        params.join(", "),
        fields.join("\n"),
        nested_entries(GITHUB_DEPTH),
        nested_entries(KEYS_DEPTH),
    )
}

/// The query for blob texts: `$o<i>`/`$n<i>` a repository, `$b<i>_<k>` a blob of it.
pub(crate) fn texts_query(blobs: &[(usize, usize)]) -> String {
    let mut params = Vec::new();
    let mut fields = Vec::new();
    let mut repos: Vec<usize> = blobs.iter().map(|(i, _)| *i).collect();
    repos.dedup();
    for i in repos {
        params.push(format!("$o{i}: String!, $n{i}: String!"));
        let mut objects = Vec::new();
        for (_, k) in blobs.iter().filter(|(r, _)| *r == i) {
            params.push(format!("$b{i}_{k}: GitObjectID!"));
            objects.push(format!(
                "f{k}: object(oid: $b{i}_{k}) {{ ... on Blob {{ oid byteSize isTruncated text }} }}"
            ));
        }
        fields.push(format!(
            "  r{i}: repository(owner: $o{i}, name: $n{i}) {{ {} }}",
            objects.join(" ")
        ));
    }
    format!(
        "query Texts({}) {{\n{}\n}}\n",
        params.join(", "),
        fields.join("\n")
    )
}

/// The rulesets list and each ruleset, as REST gives them, when the answer holds them whole.
fn prime_rulesets(repo: &str, rulesets: &Value, out: &mut HashMap<String, Value>) {
    let Some(nodes) = rulesets["nodes"].as_array() else {
        return;
    };
    if rulesets["totalCount"].as_u64() != Some(nodes.len() as u64) {
        return;
    }
    let mut list = Vec::new();
    let mut details = Vec::new();
    for node in nodes {
        let Some(detail) = rest_ruleset(node) else {
            return;
        };
        list.push(json!({
            "id": detail["id"], "name": detail["name"], "target": detail["target"],
            "source_type": detail["source_type"], "source": detail["source"],
            "enforcement": detail["enforcement"],
        }));
        details.push(detail);
    }
    for detail in details {
        let Some(id) = detail["id"].as_u64() else {
            return;
        };
        out.insert(routes::ruleset(repo, id), detail);
    }
    out.insert(routes::rulesets(repo), Value::Array(list));
}

fn lower(v: &Value) -> Value {
    v.as_str()
        .map_or(Value::Null, |s| Value::String(s.to_ascii_lowercase()))
}

/// One ruleset as `GET …/rulesets/ID` gives it; `None` when a list in it is longer than asked.
fn rest_ruleset(node: &Value) -> Option<Value> {
    let id = node["databaseId"].as_u64()?;
    let complete = |c: &Value| {
        c["nodes"]
            .as_array()
            .is_some_and(|n| c["totalCount"].as_u64() == Some(n.len() as u64))
    };
    if !complete(&node["rules"]) {
        return None;
    }
    let rules: Vec<Value> = node["rules"]["nodes"]
        .as_array()?
        .iter()
        .map(|r| json!({"type": lower(&r["type"])}))
        .collect();
    let source = &node["source"];
    let (source_type, source_name) = match source["__typename"].as_str() {
        Some("Repository") => ("Repository", &source["nameWithOwner"]),
        Some("Organization") => ("Organization", &source["login"]),
        Some("Enterprise") => ("Enterprise", &source["slug"]),
        _ => return None,
    };
    let mut detail = json!({
        "id": id,
        "name": node["name"],
        "target": lower(&node["target"]),
        "source_type": source_type,
        "source": source_name,
        "enforcement": lower(&node["enforcement"]),
        "conditions": {"ref_name": {
            "include": node["conditions"]["refName"]["include"].clone(),
            "exclude": node["conditions"]["refName"]["exclude"].clone(),
        }},
        "rules": rules,
    });
    if node["conditions"]["refName"].is_null() {
        detail["conditions"] = json!({});
    }
    // Withheld (a token that may not see them): left out, as REST leaves them out.
    let actors = &node["bypassActors"];
    if !actors.is_null() {
        if !complete(actors) {
            return None;
        }
        let list: Option<Vec<Value>> = actors["nodes"]
            .as_array()?
            .iter()
            .map(rest_bypass_actor)
            .collect();
        detail["bypass_actors"] = Value::Array(list?);
    }
    Some(detail)
}

/// A bypass actor as REST names it (`actor_type`, `actor_id`, `bypass_mode`).
fn rest_bypass_actor(a: &Value) -> Option<Value> {
    let (kind, id) = if a["organizationAdmin"] == true {
        ("OrganizationAdmin", json!(1))
    } else if a["deployKey"] == true {
        ("DeployKey", Value::Null)
    } else if a["enterpriseOwner"] == true {
        ("EnterpriseOwner", Value::Null)
    } else if let Some(role) = a["repositoryRoleDatabaseId"].as_u64() {
        ("RepositoryRole", json!(role))
    } else {
        match a["actor"]["__typename"].as_str() {
            Some("App") => ("Integration", a["actor"]["databaseId"].clone()),
            Some("Team") => ("Team", a["actor"]["databaseId"].clone()),
            _ => return None,
        }
    };
    Some(json!({"actor_id": id, "actor_type": kind, "bypass_mode": lower(&a["bypassMode"])}))
}

/// A tree entry of the answer as REST lists it, at `path`.
fn rest_entry(e: &Value, path: &str) -> Option<Value> {
    let mode = e["mode"].as_u64()?;
    let kind = e["type"].as_str()?;
    let mut entry = json!({
        "path": path,
        "mode": format!("{mode:06o}"),
        "type": kind,
        "sha": e["oid"].as_str()?,
    });
    if kind == "blob" {
        entry["size"] = json!(e["size"].as_u64()?);
    }
    Some(entry)
}

/// A folder's entries, flattened as a recursive REST listing (paths from the folder); `None`
/// when a folder lies deeper than the query listed, or an entry is not whole.
fn flatten(entries: &Value, prefix: &str, depth: usize, out: &mut Vec<Value>) -> Option<()> {
    for e in entries.as_array()? {
        let name = e["name"].as_str()?;
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        out.push(rest_entry(e, &path)?);
        if e["type"] == "tree" {
            if depth <= 1 {
                return None;
            }
            flatten(&e["object"]["entries"], &path, depth - 1, out)?;
        }
    }
    Some(())
}

/// The root tree and the `.github` and `keys` trees of the answer, primed when whole and bound
/// to their ids; returns the files the audit would fetch, when every tree it needs was primed.
fn prime_trees(
    repo: &str,
    data: &Value,
    alias: &str,
    errors: &ErrorPaths,
    wanted: Wanted,
    out: &mut HashMap<String, Value>,
) -> Option<Vec<TreeEntry>> {
    // No root (an empty repository, or no default branch): REST says which.
    if errors.under(alias, "root") || data["root"]["entries"].is_null() {
        return None;
    }
    let mut root_entries = Vec::new();
    for e in data["root"]["entries"].as_array()? {
        root_entries.push(rest_entry(e, e["name"].as_str()?)?);
    }
    let root_json = json!({"tree": root_entries, "truncated": false});
    let root: Tree = serde_json::from_value(root_json.clone()).ok()?;
    out.insert(routes::git_tree(repo, "HEAD", false), root_json);
    let mut below = Vec::new();
    let mut whole = true;
    for dir in super::org::followed_dirs(&root) {
        let (field, depth) = match dir.path.as_str() {
            ".github" => ("github", GITHUB_DEPTH),
            _ => ("keys", KEYS_DEPTH),
        };
        let mut flat = Vec::new();
        let listed = !errors.under(alias, field)
            && flatten(&data[field]["entries"], "", depth, &mut flat).is_some();
        let answer = json!({"sha": dir.sha, "tree": flat, "truncated": false});
        let route = routes::git_tree(repo, &dir.sha, true);
        if !listed || !super::git_object::answer_matches(&route, &answer.to_string()) {
            whole = false;
            continue;
        }
        below.push((
            dir.path.clone(),
            serde_json::from_value::<Tree>(answer.clone()).ok()?,
        ));
        out.insert(route, answer);
    }
    if !whole {
        return None;
    }
    let (files, _) = select_files(root, below, wanted.key_budget).ok()?;
    Some(files)
}

/// Asks for the texts of `files` (by repository index) and primes each blob whose text hashes to
/// its id.
async fn prime_texts<S: ApiSource>(
    api: &S,
    pairs: &[(&str, &str)],
    files: Vec<(usize, Vec<TreeEntry>)>,
    primed: &mut Primed,
) {
    // (repository index, file index, blob id, size), small enough to ask for.
    let mut asked: Vec<(usize, usize, String, u64)> = Vec::new();
    for (i, list) in files {
        let mut seen = std::collections::BTreeSet::new();
        for (k, e) in list.into_iter().enumerate() {
            if e.size <= TEXT_CAP.min(FILE_CAP) && seen.insert(e.sha.clone()) {
                asked.push((i, k, e.sha, e.size));
            }
        }
    }
    let mut chunks: Vec<Vec<(usize, usize, String, u64)>> = Vec::new();
    let mut size = 0;
    for a in asked {
        let full = chunks
            .last()
            .is_none_or(|c| c.len() >= BLOBS_PER_QUERY || size + a.3 > TEXT_PER_QUERY);
        if full {
            chunks.push(Vec::new());
            size = 0;
        }
        size += a.3;
        if let Some(c) = chunks.last_mut() {
            c.push(a);
        }
    }
    let queries = chunks.iter().map(|chunk| async move {
        let mut variables = serde_json::Map::new();
        for (i, k, sha, _) in chunk {
            let (owner, name) = pairs[*i];
            variables.insert(format!("o{i}"), json!(owner));
            variables.insert(format!("n{i}"), json!(name));
            variables.insert(format!("b{i}_{k}"), json!(sha));
        }
        let ids: Vec<(usize, usize)> = chunk.iter().map(|(i, k, _, _)| (*i, *k)).collect();
        let answer = api
            .graphql(&texts_query(&ids), &Value::Object(variables))
            .await;
        (chunk, answer)
    });
    for (chunk, answer) in futures::future::join_all(queries).await {
        let Fetched::Ok(answer) = answer else {
            continue;
        };
        for (i, k, sha, _) in chunk {
            let blob = &answer["data"][format!("r{i}")][format!("f{k}")];
            if blob["isTruncated"] != false {
                continue;
            }
            let Some(text) = blob["text"].as_str() else {
                continue;
            };
            let repo = format!("{}/{}", pairs[*i].0, pairs[*i].1);
            let route = routes::git_blob(&repo, sha);
            let content = {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
            };
            let rest = json!({
                "sha": sha, "size": text.len(), "encoding": "base64", "content": content,
            });
            // GraphQL gives text as UTF-8: a file that is not is left to REST.
            if super::git_object::answer_matches(&route, &rest.to_string()) {
                primed.entry(repo).or_default().insert(route, rest);
            }
        }
    }
}

/// For the fuzz target `graphql_answers`: `data` (JSON, or any bytes as one JSON string) as
/// GitHub's answer to both queries of a batch of two repositories; nothing may panic, and only
/// what hashes to its id may be primed.
pub(crate) fn fuzz_answer(data: &[u8]) {
    struct Answers(Value);
    impl ApiSource for Answers {
        async fn get(&self, _: &str, _: super::api::Shape) -> Fetched {
            Fetched::Failed {
                status: 404,
                message: String::new(),
                permission: None,
            }
        }
        async fn graphql(&self, _: &str, _: &Value) -> Fetched {
            Fetched::Ok(self.0.clone())
        }
    }
    let answer = serde_json::from_slice(data)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(data).into_owned()));
    let repos = ["o/a".to_string(), "o/b".to_string()];
    let wanted = Wanted {
        key_budget: Some(3),
        releases: 3,
    };
    let primed = futures::executor::block_on(prime(&Answers(answer), &repos, wanted));
    for (route, value) in primed.values().flatten() {
        if route.contains("/git/blobs/") {
            assert!(super::git_object::answer_matches(route, &value.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queries_nest_as_deep_as_their_folders_are_read() {
        let q = repositories_query(2);
        assert!(q.starts_with(
            "query Repositories($o0: String!, $n0: String!, $o1: String!, $n1: String!) {\n"
        ));
        assert_eq!(
            nested_entries(2),
            "entries { name type mode oid size object { ... on Tree { entries { name type mode oid size } } } }"
        );
        assert_eq!(
            texts_query(&[(0, 1), (0, 3), (2, 0)]),
            "query Texts($o0: String!, $n0: String!, $b0_1: GitObjectID!, $b0_3: GitObjectID!, $o2: String!, $n2: String!, $b2_0: GitObjectID!) {\n  r0: repository(owner: $o0, name: $n0) { f1: object(oid: $b0_1) { ... on Blob { oid byteSize isTruncated text } } f3: object(oid: $b0_3) { ... on Blob { oid byteSize isTruncated text } } }\n  r2: repository(owner: $o2, name: $n2) { f0: object(oid: $b2_0) { ... on Blob { oid byteSize isTruncated text } } }\n}\n"
        );
    }

    #[test]
    fn a_bypass_actor_is_named_as_rest_names_it() {
        let app = json!({"bypassMode": "ALWAYS", "organizationAdmin": false, "deployKey": false,
                         "enterpriseOwner": false, "repositoryRoleDatabaseId": null,
                         "actor": {"__typename": "App", "databaseId": 42}});
        assert_eq!(
            rest_bypass_actor(&app),
            Some(json!({"actor_id": 42, "actor_type": "Integration", "bypass_mode": "always"}))
        );
        let role = json!({"bypassMode": "PULL_REQUEST", "organizationAdmin": false,
                          "deployKey": false, "enterpriseOwner": false,
                          "repositoryRoleDatabaseId": 4, "actor": null});
        assert_eq!(
            rest_bypass_actor(&role),
            Some(
                json!({"actor_id": 4, "actor_type": "RepositoryRole", "bypass_mode": "pull_request"})
            )
        );
        // An actor of a kind not known here is not guessed at: the ruleset goes to REST.
        let unknown = json!({"bypassMode": "ALWAYS", "organizationAdmin": false, "deployKey": false,
                             "enterpriseOwner": false, "actor": {"__typename": "Bot"}});
        assert_eq!(rest_bypass_actor(&unknown), None);
    }

    #[test]
    fn a_list_longer_than_asked_for_is_left_to_rest() {
        let ruleset = json!({"databaseId": 7, "name": "tags", "target": "TAG",
            "enforcement": "ACTIVE", "source": {"__typename": "Repository", "nameWithOwner": "o/r"},
            "conditions": {"refName": {"include": ["refs/tags/v*"], "exclude": []}},
            "rules": {"totalCount": 51, "nodes": [{"type": "CREATION"}]},
            "bypassActors": {"totalCount": 0, "nodes": []}});
        assert_eq!(rest_ruleset(&ruleset), None);
        let mut out = HashMap::new();
        prime_rulesets(
            "o/r",
            &json!({"totalCount": 1, "nodes": [ruleset]}),
            &mut out,
        );
        assert!(out.is_empty());
    }

    /// Answers GraphQL from two canned answers (repositories, texts); REST is never asked.
    struct Canned(Value, Value);

    impl ApiSource for Canned {
        async fn get(&self, route: &str, _: super::super::api::Shape) -> Fetched {
            panic!("REST asked for {route}")
        }
        async fn graphql(&self, query: &str, _: &Value) -> Fetched {
            Fetched::Ok(if query.starts_with("query Texts") {
                self.1.clone()
            } else {
                self.0.clone()
            })
        }
    }

    fn git_id(kind: &str, content: &[u8]) -> String {
        use sha1::Digest as _;
        let mut h = sha1::Sha1::new();
        h.update(format!("{kind} {}\0", content.len()).as_bytes());
        h.update(content);
        crate::util::to_hex(&h.finalize())
    }

    #[test]
    fn only_what_the_answer_holds_whole_and_bound_to_its_id_is_primed() {
        let workflow = "on: push\n";
        let blob = git_id("blob", workflow.as_bytes());
        let other = git_id("blob", b"not what GraphQL says\n");
        let mut tree = Vec::new();
        for (name, id) in [("a.yml", &blob), ("b.yml", &other)] {
            tree.extend_from_slice(format!("100644 {name}\0").as_bytes());
            tree.extend((0..20).map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).unwrap()));
        }
        let workflows = git_id("tree", &tree);
        let mut gh = b"40000 workflows\0".to_vec();
        gh.extend((0..20).map(|i| u8::from_str_radix(&workflows[2 * i..2 * i + 2], 16).unwrap()));
        let github = git_id("tree", &gh);
        let entry = |name: &str, kind: &str, mode: u32, oid: &str, size: usize| json!({"name": name, "type": kind, "mode": mode, "oid": oid, "size": size});
        let mut folder = entry("workflows", "tree", 0o40000, &workflows, 0);
        folder["object"] = json!({"entries": [
            entry("a.yml", "blob", 0o100644, &blob, workflow.len()),
            entry("b.yml", "blob", 0o100644, &other, 22),
        ]});
        let repositories = json!({
            "data": {"r0": {
                "root": {"entries": [entry(".github", "tree", 0o40000, &github, 0)]},
                "github": {"entries": [folder]},
                "keys": null,
                "rulesets": null,
                "releases": {"totalCount": 0}
            }},
            "errors": [{"type": "FORBIDDEN", "path": ["r0", "rulesets"], "message": "no"}]
        });
        // a.yml's text is its blob; b.yml's is not (a text GraphQL changed): REST reads it.
        let texts = json!({"data": {"r0": {
            "f0": {"oid": blob, "byteSize": workflow.len(), "isTruncated": false, "text": workflow},
            "f1": {"oid": other, "byteSize": 22, "isTruncated": false, "text": "something else\n"}
        }}});
        let primed = futures::executor::block_on(prime(
            &Canned(repositories, texts),
            &["o/r".to_string()],
            Wanted {
                key_budget: None,
                releases: 3,
            },
        ));
        let mut routes: Vec<&str> = primed["o/r"].keys().map(String::as_str).collect();
        routes.sort();
        assert_eq!(
            routes,
            [
                format!("repos/o/r/git/blobs/{blob}").as_str(),
                format!("repos/o/r/git/trees/{github}?recursive=1").as_str(),
                "repos/o/r/git/trees/HEAD",
                "repos/o/r/releases?per_page=3",
            ]
        );
    }

    #[test]
    fn a_folder_deeper_than_the_query_went_is_not_whole() {
        let entries = json!([{"name": "a", "type": "tree", "mode": 16384,
            "oid": "0000000000000000000000000000000000000001", "size": 0,
            "object": {"entries": [{"name": "b", "type": "tree", "mode": 16384,
                "oid": "0000000000000000000000000000000000000002", "size": 0}]}}]);
        let mut out = Vec::new();
        assert_eq!(flatten(&entries, "", 2, &mut out), None);
        let mut out = Vec::new();
        assert_eq!(
            flatten(&entries[0]["object"]["entries"], "a", 1, &mut out),
            None
        );
    }
}
