//! What `warden` learns from its surroundings, read once before any command runs: the terminal,
//! `NO_COLOR`, `--quiet`, the GitHub token, API URL and rate-limit wait, and the Actions runner
//! (annotations, the step summary, the event payload). Commands read this, never `std::env`;
//! only variables a flag names (`--password-env VAR`) are read where they are used.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use release_warden::github::ActionsEnv;
use release_warden::github::{api_base, ResponseCache, Token, Waiting};
use release_warden::github::{Endpoint, Session};
use release_warden::report::{Format, Report};

pub(crate) struct Context {
    pub quiet: bool,
    /// ANSI colour on stdout: a terminal, and `NO_COLOR` unset or empty.
    pub color: bool,
    /// A progress display on stderr: a terminal, and not `--quiet`.
    pub progress: bool,
    /// Prompts (passwords, `--apply`'s confirmation) need a terminal on stdin.
    pub interactive: bool,
    pub actions: ActionsEnv,
    /// `GH_TOKEN`, else `GITHUB_TOKEN`.
    pub token: Option<Token>,
    /// `GITHUB_API_URL`.
    pub api_url: Option<String>,
    /// `WARDEN_RATE_LIMIT_WAIT`, as given: the longest wait (seconds) for a spent rate limit.
    pub rate_limit_wait: Option<String>,
    pub home: Option<PathBuf>,
    /// `SOURCE_DATE_EPOCH`, as given.
    pub source_date_epoch: Option<String>,
}

impl Context {
    pub(crate) fn from_env(quiet: bool, color: crate::cli::ColorChoice) -> Self {
        use crate::cli::ColorChoice;
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Context {
            quiet,
            color: match color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => io::stdout().is_terminal() && var("NO_COLOR").is_none(),
            },
            progress: !quiet && io::stderr().is_terminal(),
            interactive: io::stdin().is_terminal(),
            actions: ActionsEnv::from_env(),
            token: ["GH_TOKEN", "GITHUB_TOKEN"]
                .iter()
                .find_map(|v| std::env::var(v).ok().and_then(|t| Token::from_var(v, t))),
            api_url: var("GITHUB_API_URL"),
            rate_limit_wait: var("WARDEN_RATE_LIMIT_WAIT"),
            home: std::env::var_os("HOME").map(PathBuf::from),
            source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
        }
    }

    /// Now, as seconds since the epoch: `SOURCE_DATE_EPOCH` when set (reproducible signatures and
    /// statements: Ed25519 is deterministic).
    pub(crate) fn timestamp(&self) -> anyhow::Result<u64> {
        match &self.source_date_epoch {
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("SOURCE_DATE_EPOCH={v:?} is not a unix timestamp")),
            None => Ok(std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_secs()),
        }
    }

    /// `--repo`, else `GITHUB_REPOSITORY`.
    pub(crate) fn repository<'a>(&'a self, flag: Option<&'a str>) -> Option<&'a str> {
        flag.or(self.actions.repository.as_deref())
    }

    /// A session with the API at `--api-url`, else `GITHUB_API_URL`, else github.com.
    pub(crate) fn connect(
        &self,
        api_url: Option<&str>,
        token: Option<&Token>,
    ) -> anyhow::Result<Session> {
        self.connect_cached(api_url, token, None)
    }

    /// The same, with answers kept under `cache` (`--cache DIR`).
    pub(crate) fn connect_cached(
        &self,
        api_url: Option<&str>,
        token: Option<&Token>,
        cache: Option<PathBuf>,
    ) -> anyhow::Result<Session> {
        let (given, url_source) = match (api_url, self.api_url.as_deref()) {
            (Some(flag), _) => (Some(flag), "--api-url"),
            (None, Some(var)) => (Some(var), "GITHUB_API_URL"),
            (None, None) => (None, "the default"),
        };
        let base = api_base(given);
        let rate_limit_wait = match &self.rate_limit_wait {
            None => release_warden::github::DEFAULT_RATE_LIMIT_WAIT,
            Some(v) => v.trim().parse::<u64>().map_err(|_| {
                release_warden::Error::Usage(format!(
                    "WARDEN_RATE_LIMIT_WAIT={:?}: not a whole number of seconds",
                    release_warden::markup::text_value(v)
                ))
            })?,
        };
        let endpoint = Endpoint {
            url: &base,
            url_source,
            token,
            cache: cache.map(ResponseCache::new),
            rate_limit_wait: std::time::Duration::from_secs(rate_limit_wait),
        };
        let notice = (!self.quiet).then(|| wait_notice(self.progress));
        Ok(Session::open(&endpoint, notice)?)
    }

    /// Writes `report` to `out` in `format`, then, in GitHub Actions, its annotations (text
    /// output only, so machine formats stay parseable) and, with `--step-summary`, its markdown
    /// to the step summary. Warnings go to stderr. Returns the report's exit code.
    pub(crate) fn emit(
        &self,
        out: &mut dyn Write,
        report: &impl Report,
        format: Format,
        step_summary: bool,
    ) -> anyhow::Result<u8> {
        // --quiet: nothing on success, warnings and notes included.
        let quiet = self.quiet && report.exit_code() == 0;
        for n in report.notes().into_iter().filter(|_| !quiet) {
            eprintln!("warden: note: {}", release_warden::markup::text_value(&n));
        }
        for w in report.warnings().into_iter().filter(|_| !quiet) {
            eprintln!(
                "warden: warning: {}",
                release_warden::markup::text_value(&w)
            );
        }
        report.render(format, out, self.color && format == Format::Text)?;
        if self.actions.enabled && format == Format::Text {
            report.annotations(out)?;
        }
        if step_summary {
            let mut md = Vec::new();
            report.markdown(&mut md)?;
            self.actions
                .append_step_summary(&String::from_utf8_lossy(&md))?;
        }
        Ok(report.exit_code())
    }
}

/// Tells on stderr that warden is waiting for a rate limit: a countdown rewritten in place on a
/// terminal, else a line when the wait starts and every 10 seconds (CI logs keep every line).
fn wait_notice(terminal: bool) -> release_warden::github::WaitNotice {
    std::sync::Arc::new(move |w: &Waiting| {
        let secs = w.left.as_secs();
        let why = release_warden::markup::text_value(&w.why);
        if terminal {
            eprint!("\r\x1b[2Kwarden: {why}: {secs} s left");
            if secs <= 1 {
                eprintln!();
            }
        } else if secs.is_multiple_of(10) || w.first {
            eprintln!("warden: {why}: {secs} s left");
        }
    })
}
