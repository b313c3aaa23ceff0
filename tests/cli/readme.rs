//! Every ```console block of README.md and of the reference in docs/ runs here (README first,
//! then `DOCS` in order, in one sandbox), so the documentation and warden cannot drift apart.
//!
//! A block is `$ command` lines (a trailing `\` continues one), each followed by the output it
//! must print (stdout and stderr, in order). A line that is only `…` stands for any number of
//! lines, and `…` inside a line for any text. The blocks run in order, in one sandbox, through bash, with `warden` on PATH:
//!
//! - the working directory holds `dist/` (two artifacts), `known_issues/` and `workspace/logs/`
//!   (a hive run), `runs/1`…`runs/3` (that run three times, some failures passing in the first
//!   two), `tests.tsv`, `release-snapshot/` (a recorded `verify --release`),
//!   `inventory-snapshot/` (a recorded organisation for `audit --org --inventory`) and
//!   `monitor-snapshot/` (a log and GitHub's records of it, for `log monitor`); `../ethrex` is
//!   an ethrex-like checkout; `HOME` is a folder of
//!   the sandbox, written `~` in outputs;
//! - `cargo run --release --` runs the `warden` under test.
//!
//! HTML comments right before a block steer it (GitHub does not show them):
//! - `<!-- readme-test: skip: REASON -->`: not run (it needs the network or a secret), with why;
//! - `<!-- readme-test: in repo -->`: run in this repository (read-only commands);
//! - `<!-- readme-test: any REGEX -->`: output text matching REGEX may differ (a random key id);
//! - `<!-- readme-test: setup demo-key -->`: first write the fixed demo key pair to
//!   `keys/minisign.pub` and `~/.minisign/demo.key`, so later signatures are reproducible;
//! - `<!-- readme-test: setup foreign-releases -->`: first write other projects' releases in
//!   their own layouts (`foreign/`), signed with the `minisign` crate by a fixed key whose public
//!   half is `upstream.pub` (the shapes of `tests/release/layouts.rs`);
//! - `<!-- readme-test: setup fix-corpus -->`: first copy three cases of
//!   `tests/fixtures/fix-corpus-2` to `fix/goreleaser`, `fix/dnscrypt` and `fix/git-lfs`;
//! - `<!-- readme-test: setup actions-server -->`: start a local GitHub Actions
//!   (tests/common/actions_server.rs: the 40-commit history of `acme/ethrex` and its
//!   `hive-probe.yml`) and set `GITHUB_API_URL` and `GH_TOKEN` for the commands after it.
//!
//! To update an example, `README_PRINT=1 cargo test --test integration cli::readme -- --nocapture`
//! prints what every command prints now, in the README's form, instead of comparing.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

const DIRECTIVE: &str = "<!-- readme-test:";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[derive(Debug, Default)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    skip: Option<String>,
    in_repo: bool,
    any: Vec<String>,
    setup: Vec<String>,
    /// Each command and the output lines it must print.
    steps: Vec<(String, Vec<String>)>,
}

/// The console blocks of `readme`, with their directives.
fn blocks_of(readme: &str) -> Vec<Block> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```console" {
            i += 1;
            continue;
        }
        let mut block = Block {
            line: i + 1,
            ..Block::default()
        };
        for d in lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.starts_with(DIRECTIVE))
        {
            let d = d[DIRECTIVE.len()..].trim_end_matches("-->").trim();
            if let Some(reason) = d.strip_prefix("skip:") {
                assert!(
                    !reason.trim().is_empty(),
                    "README line {}: a skip needs a reason",
                    i + 1
                );
                block.skip = Some(reason.trim().to_string());
            } else if d == "in repo" {
                block.in_repo = true;
            } else if let Some(re) = d.strip_prefix("any ") {
                block.any.push(re.to_string());
            } else if let Some(name) = d.strip_prefix("setup ") {
                block.setup.push(name.to_string());
            } else {
                panic!("README line {}: unknown directive {d:?}", i + 1);
            }
        }
        i += 1;
        while i < lines.len() && lines[i].trim() != "```" {
            let line = lines[i];
            if let Some(cmd) = line.strip_prefix("$ ") {
                let mut cmd = cmd.to_string();
                while cmd.ends_with('\\') {
                    i += 1;
                    cmd.push('\n');
                    cmd.push_str(lines[i]);
                }
                block.steps.push((cmd, Vec::new()));
            } else {
                let step = block.steps.last_mut().unwrap_or_else(|| {
                    panic!("README line {}: output before any `$ ` command", i + 1)
                });
                step.1.push(line.to_string());
            }
            i += 1;
        }
        out.push(block);
        i += 1;
    }
    out
}

/// The sandbox the blocks share: `work/` (the working directory), `ethrex/` and `home/`.
fn sandbox() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    let fixtures = repo().join("tests/fixtures");
    write(
        &work.join("dist/ethrex-linux-x86_64"),
        b"ethrex binary (README example)\n",
    );
    write(
        &work.join("dist/ethrex-linux-x86_64.tar.gz"),
        b"ethrex release tarball (README example)\n",
    );
    copy_dir(
        &fixtures.join("hive/registry-current"),
        &work.join("known_issues"),
    );
    copy_dir(
        &fixtures.join("hive/current-format"),
        &work.join("workspace/logs"),
    );
    copy_dir(
        &fixtures.join("release-snapshot"),
        &work.join("release-snapshot"),
    );
    copy_dir(
        &fixtures.join("inventory-snapshot"),
        &work.join("inventory-snapshot"),
    );
    copy_dir(
        &fixtures.join("monitor-snapshot"),
        &work.join("monitor-snapshot"),
    );
    std::fs::copy(
        fixtures.join("hive/tests-033ca6e6.tsv"),
        work.join("tests.tsv"),
    )
    .unwrap();
    // runs/1..3: the same run three times, the first two with some of its failures passing.
    for (run, passing) in [
        ("runs/1", &["eth_call/call-simple (ethrex)"][..]),
        (
            "runs/2",
            &[
                "eth_call/call-simple (ethrex)",
                "eth_getLogs/no-topics (ethrex)",
            ][..],
        ),
        ("runs/3", &[][..]),
    ] {
        let dir = work.join(run);
        copy_dir(&fixtures.join("hive/current-format"), &dir);
        let file = dir.join("1780000000-0123456789abcdef0123456789abcdef.json");
        let mut suite: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        for case in suite["testCases"].as_object_mut().unwrap().values_mut() {
            if passing.contains(&case["name"].as_str().unwrap()) {
                case["summaryResult"] = serde_json::json!({"pass": true});
            }
        }
        write(&file, suite.to_string().as_bytes());
    }
    copy_dir(&fixtures.join("ethrex"), &t.path().join("ethrex"));
    copy_dir(
        &fixtures.join("workflows/ethrex-release"),
        &t.path().join("ethrex"),
    );
    std::fs::create_dir_all(t.path().join("home")).unwrap();
    t
}

/// Runs one command as a reader would type it; stdout and stderr together, `$HOME` as `~`.
fn shell(cmd: &str, dir: &Path, home: &Path, env: &[(String, String)]) -> String {
    let bin = warden_bin();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = cmd.replace("cargo run --release --", "warden");
    let out = without_developer_env(Command::new("bash").current_dir(dir))
        .arg("-c")
        .arg(format!("{{\n{script}\n}} 2>&1"))
        .env("PATH", path)
        .env("HOME", home)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).replace(&home.display().to_string(), "~")
}

/// Whether `actual` reads as `expected`: `…` lines match any run of lines, and text matching
/// an `any` pattern may differ.
fn matches(expected: &[String], actual: &[&str], any: &[regex::Regex]) -> bool {
    let Some((first, rest)) = expected.split_first() else {
        return actual.is_empty();
    };
    if first.trim() == "…" {
        return (0..=actual.len()).any(|n| matches(rest, &actual[n..], any));
    }
    let Some((line, more)) = actual.split_first() else {
        return false;
    };
    let mut pattern = regex::escape(first).replace('…', ".*");
    for re in any {
        // What the README shows for it stands for anything the pattern matches.
        for m in re.find_iter(first) {
            pattern = pattern.replace(&regex::escape(m.as_str()), re.as_str());
        }
    }
    regex::Regex::new(&format!("^{pattern}$"))
        .unwrap()
        .is_match(line)
        && matches(rest, more, any)
}

fn setup(name: &str, work: &Path, home: &Path) {
    match name {
        "demo-key" => demo_keypair(
            &work.join("keys/minisign.pub"),
            &home.join(".minisign/demo.key"),
        ),
        "foreign-releases" => foreign_releases(work, home),
        // Issue 49: cases of the fix corpus, each a checkout of its own.
        "fix-corpus" => {
            let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fix-corpus-2");
            for (case, to) in [
                ("goreleaser-main-and-tags", "goreleaser"),
                ("dnscrypt-proxy-minisign-split", "dnscrypt"),
                ("git-lfs-make-codesign", "git-lfs"),
            ] {
                copy_dir(&corpus.join(case), &work.join("fix").join(to));
            }
        }
        other => panic!("unknown setup {other:?}"),
    }
}

/// Other projects' releases, each in its own layout, signed by `upstream.pub`'s key with the
/// `minisign` crate (deterministic: a fixed key, fixed comments).
fn foreign_releases(work: &Path, home: &Path) {
    use sha2::Digest as _;
    let secret = home.join("upstream.key");
    seeded_keypair(
        &work.join("upstream.pub"),
        &secret,
        b"upstream project release key!!!!",
        "5EED0F0F0F0F0F5E",
    );
    let text = std::fs::read_to_string(&secret).unwrap();
    let sk = minisign::SecretKey::from_unencrypted_box(
        minisign::SecretKeyBox::from_string(&text).unwrap(),
    )
    .unwrap();
    let f = work.join("foreign");
    let file = |rel: &str| {
        let bytes = format!("{rel}\n").repeat(40).into_bytes();
        write(&f.join(rel), &bytes);
        bytes
    };
    let sign = |rel: &str, sig: &str, comment: &str| {
        let bytes = std::fs::read(f.join(rel)).unwrap();
        let s = minisign::sign(None, &sk, &bytes[..], Some(comment), None).unwrap();
        write(&f.join(sig), s.to_string().as_bytes());
    };
    let sha = |b: &[u8], len: usize| -> String {
        if len == 64 {
            format!("{:x}", sha2::Sha256::digest(b))
        } else {
            format!("{:x}", sha2::Sha512::digest(b))
        }
    };
    // zig: a default comment beside each tarball.
    let zig = "zig/zig-x86_64-linux-0.14.1.tar.xz";
    file(zig);
    sign(
        zig,
        &format!("{zig}.minisig"),
        "timestamp:1740000000\tfile:zig-x86_64-linux-0.14.1.tar.xz\thashed",
    );
    // goreleaser: <project>_<version>_checksums.txt signed with "name tag".
    let (a, b) = (file("kes/kes-darwin-arm64"), file("kes/kes-linux-amd64"));
    let list = format!(
        "{}  kes-darwin-arm64\n{}  kes-linux-amd64\n",
        sha(&a, 64),
        sha(&b, 64)
    );
    write(&f.join("kes/kes_0.22.0_checksums.txt"), list.as_bytes());
    sign(
        "kes/kes_0.22.0_checksums.txt",
        "kes/kes_0.22.0_checksums.txt.minisig",
        "kes v0.22.0",
    );
    // ethrex's zkEVM guest programs: "<file> ethrex <tag> <commit>".
    for ext in ["elf", "vk"] {
        let name = format!("stateless-validator-ethrex-zisk-v1.0.0-alpha.{ext}");
        let rel = format!("ethrex/{name}");
        file(&rel);
        sign(
            &rel,
            &format!("{rel}.minisig"),
            &format!("{name} ethrex v10.0.0-rc.1 3470838ef50e566f292860fb1d8aee4937d11849"),
        );
    }
    // cargo-binstall: a minisign signature named .sig.
    let tgz = "binstall/cargo-binstall-x86_64-unknown-linux-musl.tgz";
    file(tgz);
    sign(tgz, &format!("{tgz}.sig"), "gh=cargo-bins/cargo-binstall git=3470838ef50e566f292860fb1d8aee4937d11849 ts=2025-01-01T00:00:00+00:00 run=42");
    // mise: SHASUMS256.txt and SHASUMS512.txt with ./ names, both signed.
    let (m1, m2) = (
        file("mise/mise-v2026.9.1-linux-x64"),
        file("mise/mise-v2026.9.1-macos-arm64"),
    );
    let l256 = format!(
        "{}  ./mise-v2026.9.1-linux-x64\n{}  ./mise-v2026.9.1-macos-arm64\n",
        sha(&m1, 64),
        sha(&m2, 64)
    );
    write(&f.join("mise/SHASUMS256.txt"), l256.as_bytes());
    let l512 = format!(
        "{}  ./SHASUMS256.txt\n{}  ./mise-v2026.9.1-linux-x64\n{}  ./mise-v2026.9.1-macos-arm64\n",
        sha(l256.as_bytes(), 128),
        sha(&m1, 128),
        sha(&m2, 128)
    );
    write(&f.join("mise/SHASUMS512.txt"), l512.as_bytes());
    for l in ["SHASUMS256.txt", "SHASUMS512.txt"] {
        sign(
            &format!("mise/{l}"),
            &format!("mise/{l}.minisig"),
            &format!("timestamp:1740000000\tfile:{l}\thashed"),
        );
    }
    // One downloaded binary of a release signed by its SHA256SUMS.
    let (d1, d2) = (
        file("download/app-linux-x86_64"),
        "app-macos-aarch64\n".repeat(40),
    );
    let sums = format!(
        "{}  app-linux-x86_64\n{}  app-macos-aarch64\n",
        sha(&d1, 64),
        sha(d2.as_bytes(), 64)
    );
    write(&f.join("download/SHA256SUMS"), sums.as_bytes());
    sign(
        "download/SHA256SUMS",
        "download/SHA256SUMS.minisig",
        "app v2.0.0",
    );
    // Issue 48: release v6 of bdehamer/delme (GitHub's own test release), its asset as GitHub
    // attests it, a SHA256SUMS signed for v6, and GitHub's real release attestation beside it
    // (tests/fixtures/attestations, as `gh attestation download` saves one).
    let attestations = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/attestations");
    let zip = std::fs::read(attestations.join("github_release_artifact.zip")).unwrap();
    write(&f.join("delme/artifact.zip"), &zip);
    let list = format!("{}  artifact.zip\n", sha(&zip, 64));
    write(&f.join("delme/SHA256SUMS"), list.as_bytes());
    sign(
        "delme/SHA256SUMS",
        "delme/SHA256SUMS.minisig",
        "SHA256SUMS tag:v6 repo:bdehamer/delme commit:c5e17a62e06a1d201570249c61fae531e9244e1b",
    );
    std::fs::copy(
        attestations.join("github_release_bundle.json"),
        f.join("delme-v6.sigstore.json"),
    )
    .unwrap();
}

/// The documents whose examples run, in order: each may build on what the ones before left in
/// the sandbox (the signed `dist/` of release.md, say).
const DOCS: [&str; 7] = [
    "README.md",
    "docs/release.md",
    "docs/audit.md",
    "docs/registry-and-hive.md",
    "docs/performance.md",
    "docs/contributing.md",
    "docs/transparency-log.md",
];

#[test]
fn every_console_block_of_the_readme_runs() {
    let mut blocks = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(repo().join(doc)).unwrap();
        blocks.extend(blocks_of(&text).into_iter().map(|b| (doc, b)));
    }
    assert!(blocks.len() >= 8, "{} console blocks", blocks.len());
    let t = sandbox();
    let (work, home) = (t.path().join("work"), t.path().join("home"));
    let mut ran = 0;
    // Servers a setup started (kept while the blocks run), and the variables they set.
    let mut servers = Vec::new();
    let mut env: Vec<(String, String)> = Vec::new();
    for (doc, block) in &blocks {
        if let Some(why) = &block.skip {
            eprintln!("{doc} line {}: not run: {why}", block.line);
            continue;
        }
        for name in &block.setup {
            if name == "actions-server" {
                // Issue 52: a local GitHub Actions for `hive bisect` (tests/common/actions_server.rs).
                let server = crate::common::actions_server::serve_instant(1);
                env.push(("GITHUB_API_URL".into(), server.uri()));
                env.push(("GH_TOKEN".into(), "docs-example-token".into()));
                servers.push(server);
                continue;
            }
            setup(name, &work, &home);
        }
        let any: Vec<regex::Regex> = block
            .any
            .iter()
            .map(|re| regex::Regex::new(re).unwrap())
            .collect();
        let dir: PathBuf = if block.in_repo {
            repo().to_path_buf()
        } else {
            work.clone()
        };
        for (cmd, expected) in &block.steps {
            let actual = shell(cmd, &dir, &home, &env);
            if std::env::var_os("README_PRINT").is_some() {
                eprint!("{doc} line {}:\n$ {cmd}\n{actual}", block.line);
                ran += 1;
                continue;
            }
            let lines: Vec<&str> = actual.lines().collect();
            assert!(
                matches(expected, &lines, &any),
                "{doc} line {}: `{cmd}` printed:\n{actual}\nbut {doc} shows:\n{}",
                block.line,
                expected.join("\n")
            );
            ran += 1;
        }
    }
    assert!(ran >= 15, "only {ran} documented commands ran");
}

/// A trusted comment README.md shows outside a console block is one a tested example of
/// docs/release.md prints, so it cannot drift from what `warden sign` writes.
#[test]
fn the_readme_s_trusted_comments_are_printed_by_a_tested_example() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let release = std::fs::read_to_string(repo().join("docs/release.md")).unwrap();
    let printed: Vec<String> = blocks_of(&release)
        .into_iter()
        .filter(|b| b.skip.is_none())
        .flat_map(|b| b.steps.into_iter().flat_map(|(_, out)| out))
        .collect();
    let shown: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("trusted comment: "))
        .collect();
    assert!(!shown.is_empty(), "README.md shows no trusted comment");
    for line in shown {
        assert!(
            printed.iter().any(|p| p == line),
            "README.md shows {line:?}, which no tested example of docs/release.md prints"
        );
    }
}

#[test]
fn the_matcher_understands_ellipses_and_wildcards() {
    let exp = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    let any = [regex::Regex::new("[0-9A-F]{16}").unwrap()];
    assert!(matches(
        &exp("key id 8F457D1A3C3B50B5"),
        &["key id 0123456789ABCDEF"],
        &any
    ));
    assert!(!matches(
        &exp("key id 8F457D1A3C3B50B5"),
        &["key id 0123"],
        &any
    ));
    assert!(!matches(&exp("a\nb"), &["a"], &[]));
    assert!(matches(&exp("a\n…\nd"), &["a", "b", "c", "d"], &[]));
    assert!(matches(&exp("a\n  …\nd"), &["a", "d"], &[]));
    assert!(!matches(&exp("a (x)"), &["a (y)"], &[]));
    assert!(matches(&exp("r/^(?:a|…)$"), &["r/^(?:a|b|c)$"], &[]));
    assert!(!matches(&exp("r/^(?:a|…)$"), &["r/^(?:b|c)$"], &[]));
    let readme =
        "<!-- readme-test: skip: needs a token -->\n```console\n$ warden a \\\n  --b\nout\n```\n";
    let b = blocks_of(readme);
    assert_eq!(b[0].skip.as_deref(), Some("needs a token"));
    assert_eq!(
        b[0].steps,
        [("warden a \\\n  --b".to_string(), vec!["out".to_string()])]
    );
}

/// The README's table of audit findings is the rule list: every rule, in list order, with its
/// default severity (`unverifiable` takes that of the check it stands for) and the explanation
/// written in its file. `UPDATE_README_RULES=1` rewrites the table.
#[test]
fn the_findings_table_is_the_rule_list() {
    let path = repo().join("docs/audit.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let section = readme
        .find("## Audit findings")
        .expect("an Audit findings section");
    let start = section + readme[section..].find("| id |").expect("the table");
    let end = start
        + readme[start..]
            .find("\n\n")
            .expect("a blank line after the table");
    let mut expected = vec![
        "| id | severity | meaning |".to_string(),
        "|---|---|---|".into(),
    ];
    for r in release_warden::audit::RULES {
        let severity = if r.id() == "unverifiable" {
            "that of the check".to_string()
        } else {
            r.default_severity().to_string()
        };
        expected.push(format!(
            "| `{}` | {severity} | {} |",
            r.id(),
            r.explanation()
        ));
    }
    let expected = expected.join("\n");
    if readme[start..end] != expected && std::env::var_os("UPDATE_README_RULES").is_some() {
        std::fs::write(
            &path,
            format!("{}{expected}{}", &readme[..start], &readme[end..]),
        )
        .unwrap();
        return;
    }
    assert_eq!(
        readme[start..end],
        expected,
        "README's findings table drifted from src/audit/rules/: UPDATE_README_RULES=1 rewrites it"
    );
}
