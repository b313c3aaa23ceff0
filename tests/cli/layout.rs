//! The shape of the code, as the restructure left it: no import cycle between files (of the
//! library or of the binary), no function over 100 lines, and a `main.rs` that only dispatches.
//! These read the sources; they fail with the cycle or the function named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LONGEST_FUNCTION: usize = 100;
const LONGEST_MAIN: usize = 100;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A file's module path: `crate::audit::settings` (library) or `bin::cmd::audit` (the binary),
/// with the root the file's `crate::` means.
fn module_of(file: &Path) -> (Vec<String>, &'static str) {
    let rel = file.strip_prefix(src()).unwrap();
    let (root, rel) = match rel.strip_prefix("bin/warden") {
        Ok(rest) => ("bin", rest.to_path_buf()),
        Err(_) => ("crate", rel.to_path_buf()),
    };
    let mut parts: Vec<String> = vec![root.to_string()];
    for c in rel.components() {
        parts.push(c.as_os_str().to_string_lossy().into_owned());
    }
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    (parts, root)
}

/// The code of a file without comments, string literals and its `#[cfg(test)]` module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    match (escaped, c) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
                out.push_str("\"\"");
            }
            c => out.push(c),
        }
    }
    out
}

/// `a::{b, c::{d, self}}` → `a::b`, `a::c::d`, `a::c`.
fn expand(tree: &str) -> Vec<String> {
    // One space between words, none around punctuation: `a::{b as c, d}`.
    let mut tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    for p in ["::", "{", "}", ","] {
        tree = tree
            .replace(&format!(" {p}"), p)
            .replace(&format!("{p} "), p);
    }
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or(&tree).to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.len() - 1];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|i| !i.is_empty())
        .flat_map(expand)
        .map(|i| {
            if i == "self" {
                prefix.trim_end_matches("::").to_string()
            } else {
                format!("{prefix}{i}")
            }
        })
        .collect()
}

/// Every path a file names: its `use` trees, expanded, and the paths in its code.
fn paths_named(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(end) = rest.find(';') {
            out.extend(expand(&rest[..end]));
        }
    }
    // Paths in code: `crate::…`, `super::…`, and `child::…` (kept only if `child` is a module
    // of the file's own, by `resolve`).
    let re = regex::Regex::new(r"\b([a-z_][a-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+)").unwrap();
    out.extend(re.captures_iter(code).map(|c| c[1].to_string()));
    out
}

/// The module files of the library and the binary, by module path.
fn modules() -> BTreeMap<Vec<String>, PathBuf> {
    rust_files(&src())
        .into_iter()
        .map(|f| (module_of(&f).0, f))
        .collect()
}

/// The file a path leads to from the module `here`: the longest module prefix it names.
fn resolve(
    path: &str,
    here: &[String],
    root: &str,
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<PathBuf> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut full: Vec<String> = match segs.first()? {
        &"crate" => vec![root.to_string()],
        &"release_warden" => vec!["crate".to_string()],
        &"super" => {
            let mut m = here.to_vec();
            while segs.first() == Some(&"super") {
                segs.remove(0);
                m.pop();
            }
            segs.insert(0, "super");
            m
        }
        &"self" => here.to_vec(),
        first => {
            // A child module of this one (`use rules::x;` in a mod.rs), else an extern crate.
            let mut child = here.to_vec();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
            segs.insert(0, "self");
            here.to_vec()
        }
    };
    full.extend(segs.iter().skip(1).map(|s| s.to_string()));
    (1..=full.len())
        .rev()
        .find_map(|n| modules.get(&full[..n]).cloned())
}

/// The code without its `pub use child::…;` lines: a module that re-exports what its own child
/// modules hold declares them (as `mod child;` does), it does not depend on them. What a child
/// itself imports of its parent is an edge still.
fn without_child_reexports(code: &str) -> String {
    let reexport =
        regex::Regex::new(r"(?ms)^pub(\(crate\))? use ([a-z_][a-z0-9_]*)::[^;]*;").unwrap();
    reexport
        .replace_all(code, |c: &regex::Captures| {
            if matches!(&c[2], "crate" | "super" | "self") {
                c[0].to_string()
            } else {
                String::new()
            }
        })
        .into_owned()
}

/// Which file names which: the import graph of the library and the binary.
fn import_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let modules = modules();
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (module, file) in &modules {
        let (_, root) = module_of(file);
        let code = without_child_reexports(&code(&std::fs::read_to_string(file).unwrap()));
        let deps = graph.entry(file.clone()).or_default();
        for p in paths_named(&code) {
            if let Some(target) = resolve(&p, module, root, &modules) {
                if &target != file {
                    deps.insert(target);
                }
            }
        }
    }
    graph
}

/// A cycle of `graph`, if it has one: depth-first search for a back edge; the path to it is
/// the cycle.
fn find_cycle<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Option<Vec<N>> {
    fn visit<N: Ord + Clone>(
        node: &N,
        graph: &BTreeMap<N, BTreeSet<N>>,
        stack: &mut Vec<N>,
        done: &mut BTreeSet<N>,
    ) -> Option<Vec<N>> {
        if let Some(i) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(node.clone());
            return Some(cycle);
        }
        if !done.insert(node.clone()) {
            return None;
        }
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_import_cycles_between_files() {
    let graph = import_graph();
    if let Some(cycle) = find_cycle(&graph) {
        let names: Vec<String> = cycle
            .iter()
            .map(|p| p.strip_prefix(src()).unwrap().display().to_string())
            .collect();
        panic!("import cycle: {}", names.join(" -> "));
    }
    // The check sees real edges: the binary's main reaches its commands, and a command the
    // library.
    let main = src().join("bin/warden/main.rs");
    assert!(graph[&main].contains(&src().join("bin/warden/cmd/keygen.rs")));
    assert!(graph[&src().join("bin/warden/cmd/audit.rs")].contains(&src().join("audit/mod.rs")));
}

/// The folder of a file under `src/` (`audit/settings`; `` for `lib.rs`, `markup.rs`, …).
fn folder_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap();
    rel.parent().unwrap().display().to_string()
}

/// The folder graph at `depth` components (1: `audit`, `github`, …; 2: `audit/settings`, …):
/// an edge where a file of one folder names a file of another, neither inside the other. Files
/// at the top (`lib.rs`, `markup.rs`, `error.rs`) are one-file folders of their own.
fn folder_graph(
    files: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    depth: usize,
) -> BTreeMap<String, BTreeSet<String>> {
    let key = |f: &Path| folder_key(f, depth);
    let inside = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}/"));
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, deps) in files {
        let from = key(file);
        let out = graph.entry(from.clone()).or_default();
        for dep in deps {
            let to = key(dep);
            if !inside(&from, &to) && !inside(&to, &from) && to != "lib.rs" {
                out.insert(to);
            }
        }
    }
    graph
}

#[test]
fn no_import_cycles_between_folders() {
    let files = import_graph();
    for depth in [1, 2, 3] {
        let graph = folder_graph(&files, depth);
        if let Some(cycle) = find_cycle(&graph) {
            // The files behind each edge, so the fix is clear.
            let mut edges = Vec::new();
            for pair in cycle.windows(2) {
                for (file, deps) in &files {
                    for dep in deps {
                        let key = |f: &Path| folder_key(f, depth);
                        if key(file) == pair[0] && key(dep) == pair[1] {
                            edges.push(format!(
                                "{} -> {}",
                                file.strip_prefix(src()).unwrap().display(),
                                dep.strip_prefix(src()).unwrap().display()
                            ));
                        }
                    }
                }
            }
            panic!(
                "import cycle between folders: {}\n{}",
                cycle.join(" -> "),
                edges.join("\n")
            );
        }
    }
    // The check sees real folder edges: the binary uses the library's folders.
    let top = folder_graph(&files, 1);
    assert!(top["bin"].contains("audit") && top["audit"].contains("github"));
    // And a cycle through two files of different folders is one (the shape `audit/org.rs` ->
    // `report/audit.rs` -> `audit/findings.rs` had).
    let mut files = files;
    let (org, report) = (src().join("audit/org.rs"), src().join("report/audit.rs"));
    files.get_mut(&org).unwrap().insert(report);
    assert_eq!(
        find_cycle(&folder_graph(&files, 1)),
        Some(vec!["audit".into(), "report".into(), "audit".into()])
    );
}

/// A file's folder cut to `depth` components; a file at the top is its own folder.
fn folder_key(f: &Path, depth: usize) -> String {
    let folder = folder_of(f);
    if folder.is_empty() {
        return f.strip_prefix(src()).unwrap().display().to_string();
    }
    folder.split('/').take(depth).collect::<Vec<_>>().join("/")
}

#[test]
fn a_cycle_would_be_found() {
    // The resolver on the shapes the sources use.
    let modules = modules();
    let here: Vec<String> = ["crate", "audit", "workflows"].map(String::from).to_vec();
    assert_eq!(
        resolve("calls::call_jobs", &here, "crate", &modules),
        Some(src().join("audit/workflows/calls.rs"))
    );
    assert_eq!(
        resolve("super::findings::Finding", &here, "crate", &modules),
        Some(src().join("audit/findings.rs"))
    );
    assert_eq!(resolve("serde::Serialize", &here, "crate", &modules), None);
    assert_eq!(
        expand("crate::audit::{self, findings::{Finding, Severity as S}}"),
        [
            "crate::audit",
            "crate::audit::findings::Finding",
            "crate::audit::findings::Severity"
        ]
    );
}

#[test]
fn no_function_is_over_100_lines() {
    let re =
        regex::Regex::new(r"^(\s*)(?:pub(?:\([a-z]+\))? )?(?:async )?(?:const )?fn (\w+)").unwrap();
    let mut long = Vec::new();
    for file in rust_files(&src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(c) = re.captures(line) else { continue };
            if line.trim_end().ends_with(';') {
                continue;
            }
            let end = format!("{}}}", &c[1]);
            let len = lines[i..]
                .iter()
                .position(|l| *l == end)
                .map_or(0, |n| n + 1);
            if len > LONGEST_FUNCTION {
                long.push(format!(
                    "{}:{} {} ({len} lines)",
                    file.strip_prefix(src()).unwrap().display(),
                    i + 1,
                    &c[2]
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION} lines: {long:#?}"
    );
}

#[test]
fn main_only_dispatches() {
    let main = std::fs::read_to_string(src().join("bin/warden/main.rs")).unwrap();
    let lines = main.lines().count();
    assert!(
        lines <= LONGEST_MAIN,
        "src/bin/warden/main.rs has {lines} lines: commands go in cmd/, logic in the library"
    );
}

/// The first sentence of a file's `//!` doc (its first paragraph when it has no full stop).
fn first_sentence(text: &str) -> String {
    let mut paragraph = Vec::new();
    for line in text.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            break;
        };
        let doc = doc.trim();
        if doc.is_empty() {
            break;
        }
        paragraph.push(doc);
    }
    let joined = paragraph.join(" ");
    let end = joined
        .match_indices(". ")
        .map(|(i, _)| i + 1)
        .next()
        .unwrap_or(joined.len());
    joined[..end].to_string()
}

const LAYOUT_BEGIN: &str = "<!-- layout: generated from each file's first //! sentence; tests/cli/layout.rs checks it (UPDATE_README_LAYOUT=1 rewrites it) -->";
const LAYOUT_END: &str = "<!-- layout end -->";

/// README's list of source files: every file under `src/`, with the first sentence of its own
/// module doc, so the list cannot drift from the code.
#[test]
fn readme_layout_is_each_files_own_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut block = vec![LAYOUT_BEGIN.to_string(), String::new()];
    for file in rust_files(&src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let sentence = first_sentence(&text);
        let rel = file.strip_prefix(root).unwrap().display().to_string();
        assert!(!sentence.is_empty(), "{rel} has no //! module doc");
        block.push(format!("- `{rel}`: {sentence}"));
    }
    block.push(String::new());
    block.push(LAYOUT_END.to_string());
    let expected = block.join("\n");
    let readme_path = root.join("docs/contributing.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let begin = readme
        .find(LAYOUT_BEGIN)
        .expect("README has the layout markers");
    let end = readme
        .find(LAYOUT_END)
        .expect("README has the layout end marker")
        + LAYOUT_END.len();
    let current = &readme[begin..end];
    if current != expected && std::env::var_os("UPDATE_README_LAYOUT").is_some() {
        let updated = format!("{}{expected}{}", &readme[..begin], &readme[end..]);
        std::fs::write(&readme_path, updated).unwrap();
        return;
    }
    // Only the lines that differ, so the failure reads at a glance.
    let now: Vec<&str> = current.lines().collect();
    let want: Vec<&str> = expected.lines().collect();
    let stale: Vec<&&str> = now.iter().filter(|l| !want.contains(l)).collect();
    let missing: Vec<&&str> = want.iter().filter(|l| !now.contains(l)).collect();
    assert!(
        stale.is_empty() && missing.is_empty(),
        "README's layout drifted from the files' //! docs (UPDATE_README_LAYOUT=1 cargo test --test integration cli::layout rewrites it)\nin README, not in the code: {stale:#?}\nin the code, not in README: {missing:#?}"
    );
}

#[test]
fn a_first_sentence_ends_at_the_first_full_stop_or_paragraph() {
    assert_eq!(
        first_sentence("//! One thing. Then more\n//! text.\n\nuse x;"),
        "One thing."
    );
    assert_eq!(
        first_sentence("//! `warden x`: a, b\n//! and c\n//!\n//! Later."),
        "`warden x`: a, b and c"
    );
    assert_eq!(first_sentence("use x;"), "");
}

/// No source file holds a raw control character: a `\b` that a script wrote as a backspace once
/// sat unseen inside a regex of the audit (it matched nothing), and looked right in an editor.
#[test]
fn no_raw_control_characters_in_the_sources() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = rust_files(&src());
    files.extend(rust_files(&root.join("tests")));
    files.push(src().join("audit/signing.toml"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if let Some(c) = line.chars().find(|c| c.is_control() && *c != '\t') {
                panic!("{}:{}: a raw {c:?} in the source", file.display(), i + 1);
            }
        }
    }
}

#[test]
fn a_parent_s_reexport_of_its_child_is_not_an_import() {
    let code = "pub use verify::{verify, VerifyOptions};\npub(crate) use trust::Cause;\npub use super::git_object::base64_content;\nuse crate::error::Error;\n";
    assert_eq!(
        without_child_reexports(code),
        "\n\npub use super::git_object::base64_content;\nuse crate::error::Error;\n"
    );
}

/// What reads files, opens sockets or starts runtimes: never named by the verdict, which judges
/// the evidence its readers gathered (issue 46).
const IO: [&str; 20] = [
    "std::fs",
    " fs::",
    "(fs::",
    " File::",
    "std::net",
    "std::process",
    "tokio",
    "hyper",
    "octocrab",
    "walkdir",
    "canonicalize",
    "crate::files::guarded",
    "crate::files::atomic",
    "with_resolved_folder",
    "crate::github::api",
    "crate::github::session",
    "crate::github::releases",
    "crate::github::runs",
    "crate::log::http",
    "crate::log::tiles",
];

/// The verdict's files (and trust's judgement of a signature) name nothing that does I/O: a
/// file, a socket, a process or a runtime. Each line found is named.
#[test]
fn the_verdict_does_no_io() {
    let mut found = Vec::new();
    let mut files = rust_files(&src().join("verdict"));
    files.push(src().join("trust/signer.rs"));
    for file in files {
        let text = code(&std::fs::read_to_string(&file).unwrap());
        for (i, line) in text.lines().enumerate() {
            for io in IO.iter().filter(|io| line.contains(**io)) {
                found.push(format!(
                    "{}:{}: {io}",
                    file.strip_prefix(src()).unwrap().display(),
                    i + 1
                ));
            }
        }
    }
    assert!(found.is_empty(), "the verdict does I/O: {found:#?}");
}

#[test]
fn the_io_check_would_find_a_read() {
    let text = code("use std::fs;\nfn f() { let _ = fs::read(\"x\"); } // File:: in a comment\n");
    let hits: Vec<&str> = IO.iter().copied().filter(|io| text.contains(io)).collect();
    assert_eq!(hits, ["std::fs", " fs::"]);
}

/// One decider: whether a minisign signature verifies under a key, for trust, is asked in
/// `trust/` only (with the formats' own parse-and-verify in `minisign/`). The exceptions are not
/// trust decisions: a signature just made, checked under the key that made it, before it is
/// written (`sign`, `sign --cosign`), and a log entry's own key over its own comment (the log's
/// format: an entry is checkable without trusting the log).
#[test]
fn signatures_are_judged_for_trust_in_trust_only() {
    let allowed = ["release/sign.rs", "release/cosign.rs", "log/entry.rs"];
    let mut found = Vec::new();
    for file in rust_files(&src()) {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        if rel.starts_with("trust/")
            || rel.starts_with("minisign/")
            || allowed.contains(&rel.as_str())
        {
            continue;
        }
        let text = code(&std::fs::read_to_string(&file).unwrap());
        for (i, line) in text.lines().enumerate() {
            if line.contains("verify_comment(") || line.contains("verify_data(") {
                found.push(format!("{rel}:{}", i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a minisign signature is verified outside trust/ (ask trust::signer): {found:#?}"
    );
}

/// The Sigstore verifier comes without a C crypto build: nothing warden builds (for this
/// platform, normal and build dependencies) pulls in aws-lc or OpenSSL (docs/performance.md).
#[test]
fn no_c_crypto_library_is_built() {
    for package in ["aws-lc-sys", "aws-lc-rs", "openssl-sys"] {
        let out = std::process::Command::new(env!("CARGO"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "tree",
                "--locked",
                "--offline",
                "-e",
                "normal,build",
                "-i",
                package,
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Built: a tree. In the lock for a feature warden leaves off: nothing to print. Not in
        // the lock at all: no package matches.
        let absent =
            stderr.contains("nothing to print") || stderr.contains("did not match any packages");
        assert!(
            stdout.is_empty() && absent,
            "{package} is built:\n{stdout}{stderr}"
        );
    }
}
