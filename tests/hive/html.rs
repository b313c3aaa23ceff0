//! `hive history --format html` and `hive check --format html` in a real browser: headless
//! Chromium loads the page, runs its script, and the DOM it dumps is checked (rows, counts, a
//! filter applied from the address); hostile test names and failure text show as text and run
//! nothing. Chromium is required under CI=true (`.ci/run` installs it); without it locally the
//! test says so and does not run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The Chromium binary: `None` locally when absent, a failure under CI=true.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|p| p.join(name))
                    .find(|p| p.is_file())
            })
        });
    if found.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("headless Chromium is required under CI=true (apt-get install -y chromium)");
    }
    if found.is_none() {
        eprintln!(
            "chromium not on PATH: the browser test is not run (it is required under CI=true)"
        );
    }
    found
}

/// The DOM after the page's script ran, for `page` with `hash` (`#class=flaky`).
fn dump_dom(chromium: &Path, page: &Path, hash: &str) -> String {
    let out = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("file://{}{hash}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn rows(dom: &str) -> (usize, usize) {
    let all = dom.matches("<tr class=\"row\"").count();
    let hidden = dom.matches("hidden=\"\"").count();
    (all, hidden)
}

#[test]
fn the_history_page_works_in_a_browser_and_runs_nothing_from_its_input() {
    let Some(chromium) = chromium() else { return };
    let t = tempfile::tempdir().unwrap();
    super::history::four_runs(t.path());
    super::history::registry(t.path());
    let page = t.path().join("history.html");
    run(warden(t.path())
        .args(["hive", "history", "runs/1", "runs/2", "runs/3", "runs/4"])
        .args(["--format", "html", "--output"])
        .arg(&page))
    .expect(0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network reference"
    );
    let dom = dump_dom(&chromium, &page, "");
    let (all, hidden) = rows(&dom);
    assert!(all >= 6, "{all} rows");
    // What matters first: the known failures (broken, listed in the registry) are hidden until
    // their box is ticked, and come last.
    let known = dom.matches("data-class=\"known\"").count();
    assert_eq!(known, 36);
    assert_eq!(hidden, known);
    assert!(
        dom.contains(&format!("<span id=\"shown\">{}</span>", all - known)),
        "the script counted the rows"
    );
    let first_known = dom.find("data-class=\"known\"").unwrap();
    assert!(
        !dom[first_known..].contains("data-class=\"flaky\""),
        "known rows last"
    );
    let dom_known = dump_dom(&chromium, &page, "#class=known");
    let (all_k, hidden_k) = rows(&dom_known);
    assert_eq!(all_k - hidden_k, known);
    // A filter from the address: only the flaky rows stay.
    let dom = dump_dom(&chromium, &page, "#class=flaky");
    let flaky = dom.matches("data-class=\"flaky\"").count();
    let (all, hidden) = rows(&dom);
    assert_eq!(all - hidden, flaky);
    assert!(flaky >= 1 && hidden >= 1);
    // The known failure links to its entry, with its title.
    assert!(dom.contains("<a href=\"#entry-"), "entry links");
    // A screenshot renders (docs/hive-history.png is one).
    let shot = t.path().join("shot.png");
    let status = Command::new(&chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,700")
        .arg(format!("file://{}", page.display()))
        .status()
        .unwrap();
    assert!(status.success());
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
    if std::env::var_os("UPDATE_SCREENSHOT").is_some() {
        std::fs::copy(
            &shot,
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hive-history.png"),
        )
        .unwrap();
    }
}

/// Issue 52: `hive check --format html` leads with what fails the check; what the registry
/// excuses comes last, hidden until its box is ticked (or asked for in the address).
#[test]
fn the_check_page_shows_what_fails_the_check_first() {
    let Some(chromium) = chromium() else { return };
    let t = tempfile::tempdir().unwrap();
    super::history::four_runs(t.path());
    super::history::registry(t.path());
    let page = t.path().join("check.html");
    run(warden(t.path())
        .args(["hive", "check", "runs/4", "--format", "html", "--output"])
        .arg(&page))
    .expect(1);
    let dom = dump_dom(&chromium, &page, "");
    let (all, hidden) = rows(&dom);
    let fails = dom.matches("data-class=\"fails\"").count();
    let excused = dom.matches("data-class=\"excused\"").count();
    assert!(
        fails >= 1 && excused >= 1,
        "{fails} failing, {excused} excused"
    );
    assert_eq!(all, fails + excused);
    assert_eq!(hidden, excused, "the excused rows are hidden at first");
    assert!(
        dom.contains(&format!("<b id=\"shown\">{fails}</b>")),
        "the script counted the rows"
    );
    let first_excused = dom.find("data-class=\"excused\"").unwrap();
    assert!(
        !dom[first_excused..].contains("data-class=\"fails\""),
        "what fails the check comes first"
    );
    let both = dump_dom(&chromium, &page, "#class=fails,excused");
    assert_eq!(rows(&both), (all, 0));
}

#[test]
fn hostile_names_and_failure_text_stay_text() {
    let Some(chromium) = chromium() else { return };
    let t = tempfile::tempdir().unwrap();
    write(
        &t.path().join("known_issues/registry.toml"),
        b"clients = [\"ethrex\"]\n",
    );
    let hostile = [
        "<script>document.title='pwned'</script>",
        "\" onmouseover=\"document.title='pwned'",
        "javascript:document.title='pwned'",
        "<img src=x onerror=\"document.title='pwned'\">",
    ];
    for run_dir in ["r1", "r2"] {
        let cases: serde_json::Map<String, serde_json::Value> = hostile
            .iter()
            .enumerate()
            .map(|(i, name)| {
                (
                    i.to_string(),
                    serde_json::json!({"name": format!("{name} (ethrex)"), "summaryResult": {"pass": run_dir == "r1", "details": "</pre><script>document.title='pwned'</script>"}}),
                )
            })
            .collect();
        write(
            &t.path().join(run_dir).join("1.json"),
            serde_json::json!({"name": "rpc-compat", "testCases": cases})
                .to_string()
                .as_bytes(),
        );
    }
    for (args, page) in [
        (vec!["hive", "history", "r1", "r2"], "history.html"),
        (vec!["hive", "check", "r2"], "check.html"),
    ] {
        let out = t.path().join(page);
        let code = run(warden(t.path())
            .args(&args)
            .args(["--format", "html", "--output"])
            .arg(&out))
        .code;
        // history reports (exit 0); check fails on the new failures (exit 1).
        assert_eq!(code, i32::from(page == "check.html"), "{page}");
        let dom = dump_dom(&chromium, &out, "");
        assert!(!dom.contains("pwned</title>"), "{page}: a script ran");
        assert!(!dom.contains("<img"), "{page}: markup from the input");
        assert!(
            dom.matches("<script>").count() <= 1,
            "{page}: only the page's own script"
        );
        assert!(
            dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"),
            "{page}: the name as text"
        );
    }
}
