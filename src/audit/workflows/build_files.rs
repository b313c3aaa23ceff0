//! The repository's build files a `run:` step starts, followed for what they sign with: the
//! Gradle build (`./gradlew`, `gradle`: `build.gradle(.kts)` at the root and one folder down,
//! where `signingConfigs` and the signing plugin read their key from the environment) and the
//! make targets the step names (their recipes and prerequisites, in `Makefile`). A secret the
//! step hands such a build counts as flowing into the signing only when the build reads the
//! variable it is in: a Gradle file that signs and also publishes reads both, and the
//! publishing password is told apart by its name, as everywhere else.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

/// At most this many build files read per step, this many bytes each.
const MAX_FILES: usize = 16;
const MAX_BYTES: u64 = 1 << 20;
/// Make targets followed through prerequisites and `$(MAKE) target`, per step.
const MAX_TARGETS: usize = 64;

/// A build file the step runs: its path, and the part of it that runs (a Gradle file whole, a
/// Makefile's recipes of the targets followed).
pub(super) struct Build {
    pub(super) path: String,
    pub(super) text: String,
    /// The signing it does, when it is Gradle's own (`signingConfigs`, the signing plugin);
    /// a recipe's commands are judged by the caller with the `[[tool]]` list.
    pub(super) gradle_signs: bool,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex"))
}

/// The builds `run` starts that the repository holds.
pub(super) fn builds(root: &Path, run: &str) -> Vec<Build> {
    let mut out = gradle(root, run);
    out.extend(make(root, run));
    out.truncate(MAX_FILES);
    out
}

fn read(root: &Path, rel: &str) -> Option<String> {
    crate::files::guarded::read_text_inside(root, &root.join(rel), MAX_BYTES).ok()
}

/// Gradle's build files: the root project's and each folder's one level down (`app/`), or
/// those of the project `-p DIR` names.
fn gradle(root: &Path, run: &str) -> Vec<Build> {
    static START: OnceLock<Regex> = OnceLock::new();
    static DIR: OnceLock<Regex> = OnceLock::new();
    static SIGNS: OnceLock<Regex> = OnceLock::new();
    let start = re(
        &START,
        r"(?:^|[\s;&|(])(?:\./)?(?:gradlew(?:\.bat)?|gradle)(?:\s|$)",
    );
    let Some(m) = start.find(run) else {
        return Vec::new();
    };
    let line_end = run[m.end()..].find('\n').map_or(run.len(), |e| m.end() + e);
    let args = &run[m.start()..line_end];
    let dir = re(&DIR, r"\s(?:-p|--project-dir)[\s=]+([A-Za-z0-9_./-]+)")
        .captures(args)
        .map(|c| c[1].trim_end_matches('/').to_string())
        .filter(|d| crate::files::paths::is_repo_relative(d));
    let base = dir.unwrap_or_default();
    let prefix = |name: &str| {
        if base.is_empty() || base == "." {
            name.to_string()
        } else {
            format!("{base}/{name}")
        }
    };
    let mut candidates: Vec<String> = ["build.gradle", "build.gradle.kts"]
        .iter()
        .map(|n| prefix(n))
        .collect();
    if let Ok(entries) = std::fs::read_dir(root.join(prefix("."))) {
        let mut dirs: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| !n.starts_with('.') && n != "build" && n != "node_modules")
            .collect();
        dirs.sort();
        for d in dirs.into_iter().take(MAX_FILES) {
            candidates.push(prefix(&format!("{d}/build.gradle")));
            candidates.push(prefix(&format!("{d}/build.gradle.kts")));
        }
    }
    let signs = re(
        &SIGNS,
        r"(?m)\bsigningConfigs?\b|\buseInMemoryPgpKeys\b|\buseGpgCmd\b|\bsignAllPublications\b|^\s*signing\s*\{",
    );
    candidates
        .into_iter()
        .filter_map(|path| {
            let text = read(root, &path)?;
            Some(Build {
                gradle_signs: signs.is_match(&text),
                path,
                text,
            })
        })
        .collect()
}

/// The Makefile a `make` in `run` reads (`-C DIR`, `-f FILE`), with the recipes of the targets
/// it names (the first target when it names none), their prerequisites, and the targets their
/// recipes make again (`$(MAKE) sign`).
fn make(root: &Path, run: &str) -> Vec<Build> {
    static START: OnceLock<Regex> = OnceLock::new();
    let start = re(&START, r"(?m)(?:^|[\s;&|(])g?make((?:[ \t]+[^\s;&|()]+)*)");
    let mut out = Vec::new();
    for c in start.captures_iter(run).take(4) {
        // `make` the command, not the start of a word (`make_release.sh`, `makefile-lint`).
        let after = run[c.get(1).map_or(run.len(), |m| m.end())..]
            .chars()
            .next();
        if c[1].is_empty() && after.is_some_and(|ch| !ch.is_whitespace() && !";&|)".contains(ch)) {
            continue;
        }
        let words: Vec<&str> = c[1].split_whitespace().collect();
        let (mut dir, mut file, mut targets) = (String::new(), None, Vec::new());
        let mut i = 0;
        while i < words.len() {
            match words[i] {
                "-C" | "--directory" => {
                    dir = words.get(i + 1).map_or(String::new(), |d| d.to_string());
                    i += 1;
                }
                "-f" | "--file" | "--makefile" => {
                    file = words.get(i + 1).map(|f| f.to_string());
                    i += 1;
                }
                w if w.starts_with('-') || w.contains('=') || w.contains('$') => {}
                w => targets.push(w.to_string()),
            }
            i += 1;
        }
        let dir = dir.trim_end_matches('/');
        let names: Vec<String> = match file {
            Some(f) => vec![f],
            None => ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .map(|n| n.to_string())
                .collect(),
        };
        let Some((path, text)) = names.into_iter().find_map(|n| {
            let path = if dir.is_empty() || dir == "." {
                n
            } else {
                format!("{dir}/{n}")
            };
            if !crate::files::paths::is_repo_relative(&path) {
                return None;
            }
            read(root, &path).map(|t| (path, t))
        }) else {
            continue;
        };
        out.push(Build {
            path,
            text: recipes(&text, &targets),
            gradle_signs: false,
        });
    }
    out
}

/// The recipe lines of `wanted` (the first target when empty) and of what they depend on.
pub(super) fn recipes(makefile: &str, wanted: &[String]) -> String {
    static RULE: OnceLock<Regex> = OnceLock::new();
    static SUBMAKE: OnceLock<Regex> = OnceLock::new();
    let rule = re(&RULE, r"^([^\s:#=][^:=#]*?)\s*::?((?:[^=].*)?)$");
    let submake = re(&SUBMAKE, r"\$[({]MAKE[)}]((?:\s+[A-Za-z0-9_./-]+)*)");
    // Target → (prerequisites, recipe lines).
    let mut rules: Vec<(Vec<String>, Vec<String>, Vec<String>)> = Vec::new();
    for line in makefile.lines() {
        if let Some(recipe) = line.strip_prefix('\t') {
            if let Some(last) = rules.last_mut() {
                last.2.push(recipe.to_string());
            }
        } else if let Some(c) = rule.captures(line) {
            let targets = c[1].split_whitespace().map(str::to_string).collect();
            let prereqs = c[2]
                .split(['|', ';'])
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect();
            let inline: Vec<String> = c[2]
                .split_once(';')
                .map(|(_, r)| vec![r.to_string()])
                .unwrap_or_default();
            rules.push((targets, prereqs, inline));
        } else if !line.trim().is_empty() && !line.starts_with('#') {
            // A variable or a directive ends the rule above.
            rules.push((Vec::new(), Vec::new(), Vec::new()));
        }
    }
    let mut todo: Vec<String> = wanted.to_vec();
    if todo.is_empty() {
        todo.extend(
            rules
                .iter()
                .flat_map(|r| r.0.iter())
                .find(|t| !t.starts_with('.'))
                .cloned(),
        );
    }
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut text = Vec::new();
    while let Some(t) = todo.pop() {
        if done.len() >= MAX_TARGETS || !done.insert(t.clone()) {
            continue;
        }
        for (_, prereqs, lines) in rules.iter().filter(|r| r.0.contains(&t)) {
            todo.extend(prereqs.iter().cloned());
            for l in lines {
                for c in submake.captures_iter(l) {
                    todo.extend(
                        c[1].split_whitespace()
                            .filter(|w| !w.starts_with('-'))
                            .map(str::to_string),
                    );
                }
                text.push(l.clone());
            }
        }
    }
    text.join("\n")
}

/// Whether `text` reads the environment variable `var`: the name as a word, or, for a Gradle
/// project property handed as `ORG_GRADLE_PROJECT_name`, `name`.
pub(super) fn reads_var(text: &str, var: &str) -> bool {
    let word = |w: &str| {
        !w.is_empty()
            && text.match_indices(w).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + w.len()..].chars().next();
                let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !part(before) && !part(after)
            })
    };
    word(var) || var.strip_prefix("ORG_GRADLE_PROJECT_").is_some_and(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_follow_prerequisites_and_submakes_and_nothing_else() {
        let mk = "VERSION := 1\n\nall: build\n\tcc -o app main.c\n\nbuild:\n\techo build\n\nrelease: dist sign-step\n\ttar czf app.tgz app\n\nsign-step:\n\t$(MAKE) -s sign\n\nsign:\n\tgpg --detach-sign app.tgz\n\ndist: ; mkdir -p dist\n\nclean:\n\trm -rf dist\n";
        assert_eq!(
            recipes(mk, &["release".into()]),
            "tar czf app.tgz app\n$(MAKE) -s sign\ngpg --detach-sign app.tgz\n mkdir -p dist"
        );
        assert_eq!(recipes(mk, &[]), "cc -o app main.c\necho build");
        assert_eq!(recipes(mk, &["clean".into()]), "rm -rf dist");
        // A cycle ends.
        assert_eq!(
            recipes("a: b\n\techo a\nb: a\n\techo b\n", &[]),
            "echo a\necho b"
        );
    }

    #[test]
    fn only_make_the_command_is_followed() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("Makefile"),
            "all:\n\tgpg --detach-sign x\n",
        )
        .unwrap();
        let followed = |run: &str| {
            builds(root.path(), run)
                .into_iter()
                .map(|b| b.text)
                .collect::<Vec<_>>()
        };
        assert_eq!(followed("make"), ["gpg --detach-sign x"]);
        assert_eq!(
            followed("cd x && make all; echo done"),
            ["gpg --detach-sign x"]
        );
        assert!(followed("make_release.sh").is_empty());
        assert!(followed("./scripts/make-dist").is_empty());
        assert!(followed("cmake --build .").is_empty());
        // Outside the repository: not read.
        assert!(followed("make -C ../elsewhere").is_empty());
        assert!(followed("make -f /etc/Makefile").is_empty());
    }

    #[test]
    fn a_variable_is_read_as_a_word_or_as_a_gradle_property() {
        let gradle = r#"storePassword System.getenv("KS_PASS")
signing { useInMemoryPgpKeys(findProperty("signingKey"), findProperty("signingPassword")) }"#;
        assert!(reads_var(gradle, "KS_PASS"));
        assert!(reads_var(gradle, "ORG_GRADLE_PROJECT_signingKey"));
        assert!(!reads_var(gradle, "KS"));
        assert!(!reads_var(gradle, "PASS"));
        assert!(!reads_var(gradle, "OSSRH_PASSWORD"));
    }
}
