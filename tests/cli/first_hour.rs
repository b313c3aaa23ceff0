//! Issue 27, the first hour: one place states the repository, the version and the minimum Rust
//! (Cargo.toml), and README, action.yml and the examples agree with it; minisign's habits work
//! (`-p`/`-P` with a key string, `-s`, `-m`, the default secret key, `./minisign.pub`, a password
//! stored with a line break); `--output FILE`; `exclusions` refuses lists that would lose what a
//! rule means; `summary --post` fails before printing.

use std::path::Path;

use crate::common::*;

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn readme_action_and_examples_name_the_same_version_and_repository() {
    let cargo: toml::Value =
        toml::from_str(&std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap()).unwrap();
    let package = &cargo["package"];
    let version = format!("v{}", package["version"].as_str().unwrap());
    let repository = package["repository"].as_str().unwrap();
    let rust = package["rust-version"].as_str().unwrap();
    let slug = repository.trim_start_matches("https://github.com/");
    // Where warden's own version is named: the Action's input, the install line, release
    // download URLs, `--release` of this repository, and the binaries' names.
    let version_re = regex::Regex::new(&format!(
        r"(?:version: |--git \S+ --tag |releases/download/|warden-)(v\d+\.\d+\.\d+)|--release (v\d+\.\d+\.\d+) --repo {slug}"
    ))
    .unwrap();
    let repo_re = regex::Regex::new(r"github\.com/([\w.-]+/release-warden)").unwrap();
    let docs = std::fs::read_dir(repo_root().join("docs"))
        .unwrap()
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".md"));
    for file in ["README.md".to_string(), "action.yml".to_string()]
        .into_iter()
        .chain(docs)
    {
        let Ok(text) = std::fs::read_to_string(repo_root().join(&file)) else {
            continue;
        };
        for m in version_re.captures_iter(&text) {
            let found = m.get(1).or(m.get(2)).unwrap().as_str();
            assert_eq!(found, version, "{file}: {}", &m[0]);
        }
        for m in repo_re.captures_iter(&text) {
            assert_eq!(&m[1], slug, "{file}");
        }
    }
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!(
            "cargo install --locked --git {repository} --tag {version} release-warden"
        )),
        "README's install line"
    );
    assert!(
        readme.contains(&format!("Rust {rust} or later")),
        "README's minimum Rust"
    );
    // A guide, not the reference: the quick starts on the first screen, a few hundred lines.
    let quick = readme.lines().position(|l| l == "## Quick starts").unwrap();
    assert!(quick < 80, "the quick starts begin at line {}", quick + 1);
    assert!(
        readme.lines().count() < 400,
        "README is {} lines",
        readme.lines().count()
    );
    // The Action's inputs for the common jobs (their steps run in `cli::action`).
    let action = std::fs::read_to_string(repo_root().join("action.yml")).unwrap();
    for input in ["verify-release:", "audit-sarif:"] {
        assert!(action.contains(input), "action.yml: {input}");
    }
}

#[test]
fn minisign_habits_work() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // keygen's default secret key is sign's default too.
    run(warden(t.path()).env("HOME", &home).args([
        "keygen",
        "--unencrypted",
        "--public-key",
        "minisign.pub",
    ]))
    .expect(0);
    write(&t.path().join("app"), b"the app");
    // -m alone is minisign's -Sm: app.minisig and nothing else.
    let out = run(warden(t.path())
        .env("HOME", &home)
        .args(["sign", "-m", "app"]))
    .expect(0);
    let key =
        release_warden::minisign::PublicKey::from_file(&t.path().join("minisign.pub")).unwrap();
    let id = key.key_id.to_string();
    assert_eq!(
        out.stdout,
        format!("signed  app  -> app.minisig\n1 artifact signed with key {id}\n")
    );
    let mut names: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["app", "app.minisig", "home", "minisign.pub"]);
    // No keys/ here: ./minisign.pub, said, for a file in another folder; -m names the file as
    // minisign's -Vm does.
    std::fs::create_dir(t.path().join("dist")).unwrap();
    for f in ["app", "app.minisig"] {
        std::fs::copy(t.path().join(f), t.path().join("dist").join(f)).unwrap();
    }
    let out = run(warden(t.path()).args(["verify", "-m", "dist/app"])).expect(0);
    assert_eq!(
        out.stdout,
        format!(
            "OK    dist/app  key {id} (minisign.pub)  file app\n1 verified, 0 failed, 0 errors\n"
        )
    );
    assert_eq!(
        out.stderr,
        "warden: warning: no keys/ folder here: trusting ./minisign.pub\n"
    );
    // `cd download && warden verify app`: the minisign.pub beside the file came with it.
    let out = run(warden(t.path()).args(["verify", "-m", "app"])).expect(2);
    assert_eq!(
        out.all(),
        "warden: the key minisign.pub is beside app, in the folder it came in: a download cannot vouch for itself; name the key you trust (-P KEY, or --public-key FILE)\n"
    );
    // The key string inline, as `minisign -P` takes it.
    let text = std::fs::read_to_string(t.path().join("minisign.pub")).unwrap();
    let inline = text.lines().nth(1).unwrap().to_string();
    let out = run(warden(t.path()).args(["verify", "app", "-P", &inline])).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    app  key {id} ({inline})  file app\n1 verified, 0 failed, 0 errors\n")
    );
    // -x: the signature somewhere else, as minisign takes it.
    std::fs::rename(t.path().join("app.minisig"), t.path().join("sig")).unwrap();
    let out =
        run(warden(t.path()).args(["verify", "-m", "app", "-x", "sig", "-P", &inline])).expect(0);
    assert_eq!(
        out.stdout,
        format!("OK    app  key {id} ({inline})  file app\n1 verified, 0 failed, 0 errors\n")
    );
    std::fs::rename(t.path().join("sig"), t.path().join("app.minisig")).unwrap();
    // Without a key anywhere, sign says where it looked.
    let out = run(warden(t.path()).env("HOME", t.path().join("nobody")).args([
        "sign",
        "--no-checksums",
        "--force",
        "app",
    ]))
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: no secret key: pass --secret-key FILE (-s), --secret-key-env VAR or --secret-key-stdin (~/.minisign/minisign.key, where `warden keygen` writes one, does not exist)\n"
    );
    // A password stored with a trailing line break works, and is said.
    run(warden(t.path()).env("PW", "hunter2").args([
        "keygen",
        "--password-env",
        "PW",
        "--public-key",
        "enc.pub",
        "--secret-key",
        "enc.key",
    ]))
    .expect(0);
    let out = run(warden(t.path()).env("PW", "hunter2\n").args([
        "sign",
        "--no-checksums",
        "--force",
        "-s",
        "enc.key",
        "--password-env",
        "PW",
        "app",
    ]))
    .expect(0);
    assert_eq!(
        out.stderr,
        "warden: warning: the password ends with a line break; it worked without it (store the secret without one)\n"
    );
}

#[test]
fn output_writes_the_report_to_a_file() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/app"), b"the app");
    run(warden(t.path()).args(["sign", "dist", "-s", "secret/demo.key"])).expect(0);
    let out =
        run(warden(t.path()).args(["verify", "dist", "--format", "json", "-o", "report.json"]))
            .expect(0);
    assert_eq!(out.stdout, "");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(doc["exit_code"], 0);
    // A failed check still writes its report (exit 1); an error writes none (exit 2).
    write(&t.path().join("dist/extra"), b"not listed");
    run(warden(t.path()).args(["verify", "dist", "--output", "failed.txt"])).expect(1);
    assert!(std::fs::read_to_string(t.path().join("failed.txt"))
        .unwrap()
        .contains("FAIL  dist/extra"));
    run(warden(t.path()).args([
        "verify",
        "dist",
        "--expect-commit",
        "12",
        "--output",
        "none.txt",
    ]))
    .expect(2);
    assert!(!t.path().join("none.txt").exists());
}

/// A bash array or lines are bare names of one suite: several suites without `--suite`, or a
/// glob gated on a failure signature, are refused with what to do instead.
#[test]
fn flat_exclusion_lists_refuse_what_they_would_lose() {
    let t = tempfile::tempdir().unwrap();
    let k = t.path().join("known_issues");
    write(&k.join("registry.toml"), b"clients = [\"ethrex\"]\n");
    write(
        &k.join("logs.toml"),
        b"title = \"t\"\nwhy = \"w\"\nremoval = \"r\"\n\n[[exclude]]\nsuite = \"rpc-compat\"\ntest = \"eth_getLogs/no-topics\"\n",
    );
    write(
        &k.join("timeouts.toml"),
        b"title = \"t\"\nwhy = \"w\"\nremoval = \"r\"\n\n[[exclude]]\nsuite = \"engine\"\ntest = \"*\"\nmatch = \"glob\"\nsignature = \"context deadline exceeded\"\n",
    );
    let ki = |args: &[&str]| run(warden(t.path()).arg("known-issues").args(args));
    let out = ki(&["exclusions", "--format", "bash"]).expect(2);
    assert_eq!(
        out.stderr,
        "warden: the rules cover 2 suites (engine, rpc-compat): a bash array or lines name tests of one suite; pass --suite NAME, or --format json / reth-yaml, which keep the suites\n"
    );
    let out = ki(&["exclusions", "--format", "lines", "--suite", "engine"]).expect(2);
    assert_eq!(
        out.stderr,
        "warden: timeouts: the glob rule '*' applies only to failures matching its signature; as a bare name it would exclude every test it matches: use --format json (which keeps the signature), or --expect to leave it out\n"
    );
    let out = ki(&["exclusions", "--format", "lines", "--suite", "rpc-compat"]).expect(0);
    assert_eq!(out.stdout, "eth_getLogs/no-topics\n");
}

/// `summary --post` settles where to post before printing: no repository fails at once.
#[test]
fn summary_post_fails_before_printing() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    let out = run(warden(t.path()).env("GH_TOKEN", "t").args([
        "known-issues",
        "summary",
        "--post",
        "--pr",
        "1",
    ]))
    .expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "warden: --post: pass --repo OWNER/NAME (GITHUB_REPOSITORY is not set)\n"
    );
    let out = run(warden(t.path()).args([
        "known-issues",
        "summary",
        "--post",
        "--pr",
        "1",
        "--repo",
        "o/r",
    ]))
    .expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, "warden: --post: no GH_TOKEN or GITHUB_TOKEN\n");
}

/// The registry on-ramp: `init`, then `import` of reth's lists and of a bash array, and the
/// round trip: `exclusions --format reth-yaml` gives back the names imported, in their own styles.
#[test]
fn a_project_moves_its_lists_into_the_registry_in_one_command() {
    let t = tempfile::tempdir().unwrap();
    let ki = |args: &[&str]| run(warden(t.path()).arg("known-issues").args(args));
    let out = ki(&["lint"]).expect(1);
    assert_eq!(
        out.stdout,
        "known_issues: no known-issues registry here: pass --registry DIR (or --root DIR), or start one with `warden known-issues init --client NAME`\nknown-issues lint: 0 entries, 1 problem\n"
    );
    let out = ki(&["init", "--client", "reth"]).expect(0);
    assert_eq!(
        out.stdout,
        "wrote known_issues/registry.toml\nwrote known_issues/example.toml\nNext: edit known_issues/example.toml, then `warden known-issues lint`.\n"
    );
    // The example is a draft, named as init's: lint refuses it, the PR summary leaves it out.
    let out = ki(&["lint"]).expect(1);
    assert_eq!(
        out.stdout,
        "known_issues/example.toml:4:1: a draft written by `warden known-issues init`: fill in title, why and removal, then set status = \"open\" (or lint with --allow-draft on a work branch)\nknown-issues lint: 1 entry, 1 problem\n"
    );
    let out = ki(&["summary", "--format", "text"]).expect(0);
    assert_eq!(
        out.stdout,
        "Known issues — intentionally skipped tests\n\n0 known issues, 0 excluded tests (1 draft not shown until written up).\n"
    );
    ki(&["lint", "--allow-draft"]).expect(0);
    ki(&["init", "--client", "reth"]).expect(2);
    let list = repo_root().join("tests/fixtures/reth-lists/expected_failures.yaml");
    let out = ki(&[
        "import",
        "--format",
        "reth-yaml",
        "--client",
        "reth",
        list.to_str().unwrap(),
    ])
    .expect(0);
    assert_eq!(
        out.stdout,
        "wrote known_issues/imported-eels-consume-engine.toml: 2 exclusions of eels/consume-engine (status = \"draft\": review, then lint)\nwrote known_issues/imported-engine-cancun.toml: 2 exclusions of engine-cancun (status = \"draft\": review, then lint)\nwrote known_issues/imported-rpc-compat.toml: 2 exclusions of rpc-compat (status = \"draft\": review, then lint)\nnot imported: a name listed without the client: no client suffix ` (reth)` or `-reth`\n6 tests imported into 3 entries, 1 not imported\n"
    );
    // The list was named by an absolute path outside the work folder: the entry names the file
    // alone, never the importer's folders; the list's comments are its why, their links its
    // links (issue 52).
    let entry =
        std::fs::read_to_string(t.path().join("known_issues/imported-engine-cancun.toml")).unwrap();
    assert_eq!(
        entry.split("\n[[exclude]]").next().unwrap(),
        "# Imported by `warden known-issues import` from expected_failures.yaml: review the title, why and removal,\n# then remove `status = \"draft\"` (lint refuses drafts without --allow-draft).\ntitle = \"engine-cancun: tests listed in expected_failures.yaml\"\nwhy = \"\"\"\nListed in expected_failures.yaml before the registry existed. Its comments:\n\ntracked by https://github.com/example/client/issues/7\"\"\"\nremoval = \"When each test passes: `warden known-issues update` removes fixed exclusions.\"\nstatus = \"draft\"\ndrafted_by = \"import\"\nlinks = [\"https://github.com/example/client/issues/7\"]\n"
    );
    ki(&["lint"]).expect(1);
    ki(&["lint", "--allow-draft"]).expect(0);
    let out = ki(&["exclusions", "--format", "reth-yaml", "--client", "reth"]).expect(0);
    let exported: std::collections::BTreeSet<String> = out
        .stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| serde_json::from_str::<String>(l.split("  #").next().unwrap()).unwrap())
        .collect();
    let original: std::collections::BTreeSet<String> = std::fs::read_to_string(&list)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter(|l| l.ends_with("reth") || l.ends_with("(reth)"))
        .map(str::to_string)
        .collect();
    assert_eq!(exported, original);
    // A bash array: one suite, names as they are.
    write(
        &t.path().join("excluded.sh"),
        b"KNOWN_EXCLUDED_TESTS=(\n  'eth_getLogs/no-topics'  # why\n  \"eth_call/it's\"\n)\n",
    );
    let out = ki(&[
        "import",
        "--format",
        "bash",
        "--client",
        "reth",
        "excluded.sh",
    ])
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: a bash array names tests of one suite: pass --suite NAME\n"
    );
    let out = ki(&[
        "import",
        "--format",
        "bash",
        "--client",
        "reth",
        "--suite",
        "rpc-compat",
        "excluded.sh",
    ])
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: known_issues/imported-rpc-compat.toml exists already: nothing written (move it away to import again)\n"
    );
    // Suites whose ids collide get a file each, planned before anything is written.
    write(
        &t.path().join("colliding.yaml"),
        b"eels/consume-rlp:\n  - a (reth)\neels_consume-rlp:\n  - b (reth)\n",
    );
    let out = ki(&[
        "import",
        "--format",
        "reth-yaml",
        "--client",
        "reth",
        "colliding.yaml",
    ])
    .expect(0);
    assert_eq!(
        out.stdout,
        "wrote known_issues/imported-eels-consume-rlp.toml: 1 exclusion of eels/consume-rlp (status = \"draft\": review, then lint)\nwrote known_issues/imported-eels-consume-rlp-2.toml: 1 exclusion of eels_consume-rlp (status = \"draft\": review, then lint)\n2 tests imported into 2 entries, 0 not imported\n"
    );
    ki(&["lint", "--allow-draft"]).expect(0);
}

/// hive output: excused failures one line per registry entry (`--verbose` lists them), and a
/// `--client` the run does not have says which clients it has.
#[test]
fn hive_check_rolls_up_excused_failures_and_names_the_runs_clients() {
    let fixtures = repo_root().join("tests/fixtures/hive");
    let t = tempfile::tempdir().unwrap();
    let check = |extra: &[&str]| {
        run(warden(t.path())
            .args(["hive", "check"])
            .arg(fixtures.join("berachain-rpc"))
            .arg("--registry")
            .arg(fixtures.join("registry-polard"))
            .args(extra))
    };
    let short = check(&[]).expect(0);
    let excused: Vec<&str> = short
        .stdout
        .lines()
        .filter(|l| l.starts_with("excused"))
        .collect();
    assert_eq!(
        excused,
        [
            "excused (expected) debug-raw-methods: 11 cases in rpc-compat (--verbose lists them)",
            "excused (expected) fixture-chain-mismatch: 25 cases in rpc-compat (--verbose lists them)",
            "excused (expected) get-proof: 3 cases in rpc-compat (--verbose lists them)",
            "excused (flaky) legacy-rpc-simulator: 37 cases in rpc (--verbose lists them)",
        ]
    );
    let long = check(&["--verbose"]).expect(0);
    let listed = long
        .stdout
        .lines()
        .filter(|l| l.starts_with("excused"))
        .count();
    assert!(listed > 30, "{}", long.stdout);
    let out = run(warden(t.path())
        .args(["hive", "check"])
        .arg(fixtures.join("withdrawals-fail"))
        .arg("--registry")
        .arg(fixtures.join("registry-current"))
        .args(["--client", "reth"]))
    .expect(2);
    assert_eq!(
        out.all(),
        format!(
            "warden: --client reth: the run in {} has no cases of client reth; its clients: erigon\n",
            fixtures.join("withdrawals-fail").display()
        )
    );
}

/// `--color`, quiet that is quiet, `sign --force` without warnings about its own outputs, and
/// zizmor's `--persona` answered.
#[test]
fn colour_quiet_and_familiar_flags() {
    let t = tempfile::tempdir().unwrap();
    demo_keys(t.path());
    write(&t.path().join("dist/app"), b"the app");
    run(warden(t.path()).args(["sign", "dist", "-s", "secret/demo.key"])).expect(0);
    let out =
        run(warden(t.path()).args(["sign", "dist", "-s", "secret/demo.key", "--force"])).expect(0);
    assert_eq!(out.stderr, "", "no warning about the run's own outputs");
    let out = run(warden(t.path()).args(["verify", "dist", "--color", "always"])).expect(0);
    assert!(
        out.stdout
            .starts_with("\x1b[32mOK   \x1b[0m dist/SHA256SUMS"),
        "{:?}",
        out.stdout
    );
    let out = run(warden(t.path())
        .env("TERM", "xterm")
        .args(["verify", "dist", "--color", "never"]))
    .expect(0);
    assert!(!out.stdout.contains('\x1b'));
    // Quiet means quiet: a success prints nothing, its warnings included.
    write(&t.path().join("dist/notes.txt"), b"unlisted");
    let out = run(warden(t.path()).args(["verify", "dist", "--allow-unlisted", "-q"])).expect(0);
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    let out = run(warden(t.path()).args(["audit", "--persona", "pedantic"])).expect(2);
    assert_eq!(
        out.stderr,
        "warden: --persona pedantic: warden has no personas (that is zizmor's flag): every finding is reported, with its severity and confidence; --fail-on SEVERITY sets which fail the run\n"
    );
}

/// The known-issues comment links the uploaded hive report; a URL that is not a plain https one
/// is refused before anything is printed.
#[test]
fn the_summary_links_the_hive_report() {
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    let out = run(warden(t.path()).args([
        "known-issues",
        "summary",
        "--report-url",
        "https://github.com/o/r/actions/runs/1/artifacts/2",
    ]))
    .expect(0);
    assert!(out.stdout.ends_with(
        "[The full hive report](https://github.com/o/r/actions/runs/1/artifacts/2) (heat map of tests × runs).\n\n<!-- warden:known-issues -->\n"
    ), "{}", out.stdout);
    for bad in [
        "javascript:alert(1)",
        "https://x/a) [b](https://evil",
        "http://plain",
    ] {
        let out =
            run(warden(t.path()).args(["known-issues", "summary", "--report-url", bad])).expect(2);
        assert_eq!(out.stdout, "");
    }
}
