//! Every flag of `warden`, in one place. Library code never sees these types: the value enums
//! convert to the library's with `From`.

use std::path::{Path, PathBuf};

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use release_warden::audit::Severity;
use release_warden::audit::SigningSecrets;
use release_warden::files::under_root;
use release_warden::hive::HistoryOptions;
use release_warden::known_issues::ExclusionFormat;
use release_warden::known_issues::{Expect, DEFAULT_DIR};
use release_warden::report::AuditFormat;
use release_warden::report::HiveCheckFormat;
use release_warden::report::SummaryFormat;
use release_warden::report::TextOrJson;
use release_warden::report::{DiffFormat, RunsFormat};

const EXIT_CODES: &str = "\
Exit status:
  0  success (all verified, all checks passed)
  1  a verification or check failed
  2  bad input, usage error, or an operation refused (nothing was written)";

#[derive(Debug, Parser)]
#[command(
    name = "warden",
    version,
    about = "Release integrity for maintainers: minisign signatures, signed SHA256SUMS, repository checks",
    after_help = EXIT_CODES
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print nothing when the command succeeds; on failure, print everything as usual.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Write the report to FILE instead of standard output (written whole, once the command
    /// has its answer; warnings stay on standard error). For `--format sarif` in the Action.
    #[arg(short, long, global = true, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Colour: on a terminal (auto, and NO_COLOR unset), always, or never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: ColorChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Keygen(KeygenArgs),
    #[command(subcommand)]
    Keys(KeysCommand),
    Sign(SignArgs),
    Verify(Box<VerifyArgs>),
    Check(CheckArgs),
    #[command(subcommand)]
    KnownIssues(KnownIssuesCommand),
    #[command(subcommand)]
    Hive(HiveCommand),
    Audit(Box<AuditArgs>),
    #[command(subcommand)]
    Log(LogCommand),
    Completions(CompletionsArgs),
    Man(ManArgs),
}

/// The keys folder's lifecycle: which keys are trusted and which are revoked, and revocation.
#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    List(KeysListArgs),
    Revoke(KeysRevokeArgs),
    Rotate(KeysRotateArgs),
}

/// Rotate to a new key: add its public key to the folder and a statement, signed by the old key
/// and by the new one, that the new key succeeds the old. Downstream users who pinned the old
/// key follow it with `verify --follow-rotations`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden keys rotate --old-secret-key ~/.minisign/release.key --new-secret-key ~/.minisign/release-2.key --revoke-old --reason \"moved to a hardware token\""
)]
pub(crate) struct KeysRotateArgs {
    /// The old key's secret half.
    #[arg(long, value_name = "FILE")]
    pub old_secret_key: PathBuf,
    /// The new key's secret half (`warden keygen` makes one).
    #[arg(long, value_name = "FILE")]
    pub new_secret_key: PathBuf,
    /// Password of the old key, from environment variable VAR.
    #[arg(long, value_name = "VAR")]
    pub old_password_env: Option<String>,
    /// Password of the new key, from environment variable VAR.
    #[arg(long, value_name = "VAR")]
    pub new_password_env: Option<String>,
    /// Also revoke the old key (its signatures stop verifying).
    #[arg(long, requires = "reason")]
    pub revoke_old: bool,
    /// Why the old key is revoked (with --revoke-old).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// The keys folder.
    #[arg(long, value_name = "DIR", default_value = "keys")]
    pub keys_dir: PathBuf,
}

/// List the keys folder: trusted keys (with their names and `valid_until` from
/// `keys/policy.toml`), revoked keys with when, why and who signed the revocation, rotations,
/// and the threshold. Exit 1 when the folder is inconsistent: a statement that does not verify,
/// two successors for one key, a policy naming a missing key, a threshold above the usable keys.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  warden keys list --keys-dir keys")]
pub(crate) struct KeysListArgs {
    /// The keys folder.
    #[arg(long, value_name = "DIR", default_value = "keys")]
    pub keys_dir: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Revoke a key: write `KEYS/revoked/KEYID.toml` and its signature by the key itself, or by
/// other keys of the folder (as many as `keys/policy.toml`'s threshold: each further holder runs
/// the same command to co-sign). Commit it complete: every `warden verify` with this keys folder
/// then refuses the key's signatures.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("secret").required(true).args(["secret_key_env", "secret_key", "secret_key_stdin", "statement"])),
    after_help = "Examples:\n  warden keys revoke 8F457D1A3C3B50B5 --reason \"printed in a CI log\" --secret-key ~/.minisign/release.key\n  warden keys revoke 8F457D1A3C3B50B5 --statement backup/release.key.revoke.toml   # the key is lost"
)]
pub(crate) struct KeysRevokeArgs {
    /// The key id to revoke (16 hex digits, as `keys list` shows it).
    #[arg(value_name = "KEYID")]
    pub key_id: String,
    /// Why, for people reading the statement (one line).
    #[arg(long, value_name = "TEXT", required_unless_present = "statement")]
    pub reason: Option<String>,
    /// Install the statement `warden keygen` wrote beside the secret key (for a lost key).
    #[arg(long, value_name = "FILE", conflicts_with = "reason")]
    pub statement: Option<PathBuf>,
    /// The keys folder.
    #[arg(long, value_name = "DIR", default_value = "keys")]
    pub keys_dir: PathBuf,
    /// Read the signing secret key (the revoked key's, or another key's of the folder) from
    /// environment variable VAR.
    #[arg(long, value_name = "VAR")]
    pub secret_key_env: Option<String>,
    /// Read the signing secret key (the revoked key's, or another key's of the folder) from FILE.
    #[arg(long, value_name = "FILE")]
    pub secret_key: Option<PathBuf>,
    /// Read the key's secret half from standard input.
    #[arg(long)]
    pub secret_key_stdin: bool,
    /// Password of an encrypted secret key, from environment variable VAR.
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
}

/// Print a shell completion script.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden completions bash > /etc/bash_completion.d/warden\n  warden completions zsh > \"${fpath[1]}/_warden\"\n  warden completions fish > ~/.config/fish/completions/warden.fish"
)]
pub(crate) struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Print the man page (roff), generated from these definitions.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  warden man > /usr/local/share/man/man1/warden.1")]
pub(crate) struct ManArgs {}

/// `--fix-mode`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum FixModeArg {
    WholeJob,
    Split,
    Plan,
}

impl From<FixModeArg> for release_warden::audit::FixMode {
    fn from(m: FixModeArg) -> Self {
        match m {
            FixModeArg::WholeJob => Self::WholeJob,
            FixModeArg::Split => Self::Split,
            FixModeArg::Plan => Self::Plan,
        }
    }
}

/// Audit a repository: is the release-signing key behind an enforced boundary?
///
/// Offline, always: the workflows in .github/workflows (signing jobs without `environment:`,
/// tag gates, dangerous triggers, `secrets: inherit`, write permissions). Online, when a token is
/// present (GH_TOKEN, else GITHUB_TOKEN) or with --snapshot: tag rulesets, the signing
/// environments and where the signing secret is stored. A setting that cannot be read is reported
/// as unverifiable with the permission it needed, never as a pass.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  warden audit --offline\n  GH_TOKEN=… warden audit --repo lambdaclass/ethrex --format sarif > warden.sarif\n  warden audit snapshot --repo lambdaclass/ethrex --out snap/ && warden audit --snapshot snap/\n  GH_TOKEN=… warden audit --org lambdaclass --cache ~/.cache/warden --baseline last.json\n  warden audit --offline --fix --dry-run\n\nExit status: 0 no finding at or above --fail-on, 1 findings, 2 error."
)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    pub command: Option<AuditCommand>,
    /// zizmor's flag, caught to say what warden does instead (hidden).
    #[arg(long, hide = true, value_name = "PERSONA")]
    pub persona: Option<String>,
    #[command(flatten)]
    pub target: AuditTarget,
    /// Exit 1 when a finding is at or above this severity.
    #[arg(long, value_enum, default_value = "medium")]
    pub fail_on: Severity,
    #[arg(long, value_enum, default_value_t)]
    pub format: AuditFormat,
    /// Only the workflow audit: no GitHub API, even with a token.
    #[arg(long, conflicts_with_all = ["snapshot", "org"])]
    pub offline: bool,
    /// Read settings from a snapshot folder (see `warden audit snapshot`) instead of the API.
    #[arg(long, value_name = "DIR")]
    pub snapshot: Option<PathBuf>,
    /// Print, for each settings finding, the JSON body and `gh api` command that closes it.
    #[arg(long, conflicts_with = "org")]
    pub fix_plan: bool,
    /// Apply the fix plan's ruleset and environment changes with the token, after a confirmation
    /// (secrets are moved by hand). Needs the live API, not --snapshot.
    #[arg(long, conflicts_with_all = ["snapshot", "offline", "org"])]
    pub apply: bool,
    /// With --apply: do not ask for confirmation (non-interactive use).
    #[arg(long, requires = "apply")]
    pub yes: bool,
    /// Edit the workflows: each job that holds a signing key outside an environment gets one.
    /// A fix never changes what a workflow builds, signs or publishes, on any trigger; where it
    /// cannot keep that, it is a plan in words. The exit status is the audit's of the files as
    /// they are after the fix.
    #[arg(long, conflicts_with = "org")]
    pub fix: bool,
    /// With --fix: the remedy. `whole-job`: `environment:` on the job (the default for a job
    /// that runs on no pull request); `split`: the steps with the key in a new job behind the
    /// environment, only where every moved step keeps what it used (else a plan); `plan`: words
    /// only (the default for a job that also runs on pull requests).
    #[arg(long, value_enum, value_name = "MODE", requires = "fix")]
    pub fix_mode: Option<FixModeArg>,
    /// With --fix: print the changes as a unified diff and change nothing (`--format patch`:
    /// the diff alone on stdout, for `git apply`).
    #[arg(long, requires = "fix")]
    pub dry_run: bool,
    /// With --fix: the environment the signing jobs run in.
    #[arg(long, value_name = "NAME", default_value = "release", requires = "fix")]
    pub fix_environment: String,
    /// Also append a markdown report to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
    #[command(flatten)]
    pub org_filter: OrgFilter,
    /// With --org: the organisation's signing keys as one inventory (each key by its bytes:
    /// where it is committed, which jobs sign with it, where its secret is stored and who can
    /// read it, the releases it signed, its state, and what a leak would reach), with its own
    /// findings. Reads the latest --releases N releases of each repository (default 5).
    #[arg(long, requires = "org", conflicts_with_all = ["fix", "fix_plan", "apply"])]
    pub inventory: bool,
    /// Keep API answers here with their ETags: a later run asks `If-None-Match` and GitHub's 304
    /// answers cost no rate limit.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// A previous `--format json` report: show only new findings and those that are gone, and
    /// decide the exit status on new findings only. Findings match by rule, repository and
    /// subject (workflow file and job, or API resource), not by line.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Audit even when the root has no workflow file (the settings alone); without it, no
    /// workflow file is a usage error: a wrong --root audits nothing.
    #[arg(long, conflicts_with = "org")]
    pub allow_empty: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    Snapshot(SnapshotArgs),
}

/// Save every API response the online audit needs, for an offline `warden audit --snapshot DIR`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  GH_TOKEN=… warden audit snapshot --repo lambdaclass/ethrex --out snap/\n  GH_TOKEN=… warden audit snapshot --org lambdaclass --out snap/ && warden audit --org lambdaclass --snapshot snap/"
)]
pub(crate) struct SnapshotArgs {
    #[command(flatten)]
    pub target: AuditTarget,
    #[command(flatten)]
    pub org_filter: OrgFilter,
    /// With --org: also save what `audit --org --inventory` reads (public keys beside .github/,
    /// the releases' signatures), so that the inventory replays from the snapshot.
    #[arg(long, requires = "org")]
    pub inventory: bool,
    /// Where to save the responses.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// An organisation instead of one repository (`audit --org`, `audit snapshot --org`).
#[derive(Debug, Args)]
pub(crate) struct OrgFilter {
    /// Audit every repository of this organisation through the API (no checkout): each one's
    /// .github/ and keys/ read through the git trees and blobs endpoints, then its settings.
    #[arg(long, value_name = "ORG", conflicts_with = "repo")]
    pub org: Option<String>,
    /// With --org: also archived repositories.
    #[arg(long, requires = "org")]
    pub include_archived: bool,
    /// With --org: also forks.
    #[arg(long, requires = "org")]
    pub include_forks: bool,
    /// With --org: only repositories whose name matches GLOB (repeatable).
    #[arg(long = "match", value_name = "GLOB", requires = "org")]
    pub matching: Vec<String>,
    /// With --org: only the repositories named in FILE (one NAME or OWNER/NAME per line).
    #[arg(long, value_name = "FILE", requires = "org")]
    pub repos_from: Option<PathBuf>,
    /// With --org: continue the run saved in FILE (written when a run stops before the rate limit
    /// runs out): its audited repositories are kept, the others audited now.
    #[arg(long, value_name = "FILE", requires = "org")]
    pub resume: Option<PathBuf>,
    /// With --org: repositories audited at once (requests in flight are capped at 64 whatever N).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
}

/// What `warden audit` and `warden audit snapshot` look at.
#[derive(Debug, Args)]
pub(crate) struct AuditTarget {
    /// The repository checkout to audit (its .github/workflows).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Also treat this secret as a signing key (repeatable), besides those warden finds by what
    /// they do and by name.
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
    /// Treat only these secrets as signing keys (repeatable): replaces what warden finds.
    #[arg(long = "only-secret", value_name = "NAME")]
    pub only_secrets: Vec<String>,
    /// Online: check that the latest N published releases are signed (SHA256SUMS and its
    /// signature verify against keys/, bound to the release's tag, repository and commit); 0: off.
    /// [default: 3; 5 with --inventory]
    #[arg(long, value_name = "N")]
    pub releases: Option<usize>,
    /// With --releases: download and check every asset against the signed SHA256SUMS (hashed as
    /// it streams), not just the list and its signature.
    #[arg(long)]
    pub deep: bool,
    /// Release tag pattern when no signing workflow has `on.push.tags` (repeatable).
    #[arg(long, value_name = "PATTERN", default_value = "v*")]
    pub release_tag_pattern: Vec<String>,
    /// OWNER/NAME [default: GITHUB_REPOSITORY, else the origin remote of --root].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// API base URL [default: GITHUB_API_URL, else https://api.github.com]; GHES: https://HOST/api/v3.
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
}

impl AuditTarget {
    /// The signing secrets named on the command line (`--secret`, `--only-secret`).
    pub(crate) fn signing_secrets(&self) -> SigningSecrets {
        SigningSecrets {
            extra: self.secrets.clone(),
            only: self.only_secrets.clone(),
            ..SigningSecrets::default()
        }
    }
}

/// The known-issues registry: known_issues/<id>.toml, one file per issue.
#[derive(Debug, Subcommand)]
pub(crate) enum KnownIssuesCommand {
    Init(InitArgs),
    Import(ImportArgs),
    Lint(LintArgs),
    Render(RenderArgs),
    Exclusions(ExclusionsArgs),
    Summary(SummaryArgs),
    Update(UpdateArgs),
}

/// Propose registry edits from hive results (oldest run first).
///
/// Exclusions whose tests pass are removed as fixed (an entry left without one is marked
/// status = "fixed" for review); a listed `fail` test that both passed and failed becomes
/// `flaky`; exclusions that matched no test are reported (removed with --prune-missing); the last
/// run's unlisted failures become draft entries, one file per suite and distinct failure text; a pin
/// the run does not match moves when every failure is listed. Prints a unified diff; --write
/// applies it. Comments and formatting outside the edited lines are kept byte for byte.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden known-issues update --from-results runs/1 runs/2 runs/3\n  warden known-issues update --from-results runs/* --write && warden known-issues lint --allow-draft\n  warden known-issues update --from-results runs/* --bisect bisect.json\n\nExit status: 0 (with or without edits to propose); 2 bad input."
)]
pub(crate) struct UpdateArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// hive results directories, oldest first.
    #[arg(long, value_name = "DIR", num_args = 1.., required = true)]
    pub from_results: Vec<PathBuf>,
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Remove exclusions that matched no test of any run (suites that ran only).
    #[arg(long)]
    pub prune_missing: bool,
    /// The full upstream test list of --expected-suite: a listed test in it is not missing.
    #[arg(long, value_name = "FILE")]
    pub expected_tests: Option<PathBuf>,
    /// The suite --expected-tests describes.
    #[arg(long, value_name = "NAME", default_value = "rpc-compat")]
    pub expected_suite: String,
    /// A `hive bisect --format json` report: the draft for its test says in `why` which commit
    /// the failure began at.
    #[arg(long, value_name = "FILE")]
    pub bisect: Option<PathBuf>,
    /// Write the edits (each file replaced atomically); without it, print the diff.
    #[arg(long)]
    pub write: bool,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Start a registry: a commented registry.toml for the clients, and one example entry.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  warden known-issues init --client reth")]
pub(crate) struct InitArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// A client hive runs (repeatable): the suffix of its test names.
    #[arg(long, value_name = "NAME")]
    pub client: Vec<String>,
}

/// Import the lists a project keeps today as draft entries, one per suite: reth's
/// expected_failures.yaml / ignored_tests.yaml, or a bash array of test names. Names keep
/// everything but the client suffix (` (reth)`, or `-reth` after an EEST node id), so
/// `exclusions --format reth-yaml` gives the same names back. What cannot be mapped is listed.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden known-issues import --format reth-yaml --client reth .github/assets/hive/expected_failures.yaml\n  warden known-issues import --format reth-yaml --client reth --expect flaky .github/assets/hive/ignored_tests.yaml\n  warden known-issues import --format bash --client ethrex --suite rpc-compat excluded.sh"
)]
pub(crate) struct ImportArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// The list to read.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[arg(long, value_enum)]
    pub format: release_warden::known_issues::ImportFormat,
    /// The client the names are for.
    #[arg(long, value_name = "NAME")]
    pub client: String,
    /// The suite of a bash array's names.
    #[arg(long, value_name = "NAME")]
    pub suite: Option<String>,
    /// What the imported tests are expected to do: fail (expected_failures), flaky (ignored
    /// tests: either result is accepted) or skip.
    #[arg(long, value_enum, default_value = "fail")]
    pub expect: ExpectArg,
}

#[derive(Debug, Args)]
pub(crate) struct RegistryArgs {
    /// The registry folder [default: known_issues under --root].
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// The repository root: the registry, `where` and `coverage` paths and the doc are under it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
}

impl RegistryArgs {
    /// `--registry` as given (relative to the working directory), else `known_issues` under
    /// `--root`.
    pub(crate) fn registry_dir(&self) -> PathBuf {
        self.registry
            .clone()
            .unwrap_or_else(|| under_root(&self.root, DEFAULT_DIR))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }
}

/// Check the registry: schema, duplicates, paths, symbols, coverage tests, review dates, regexes.
///
/// Problems are printed as FILE:LINE:COL: MESSAGE; with GITHUB_ACTIONS=true also as
/// `::error file=…,line=…::` annotations.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden known-issues lint\n\nExit status: 0 clean, 1 problems found, 2 usage error."
)]
pub(crate) struct LintArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Accept draft entries (`status = "draft"`, written by `known-issues update`); without it a
    /// draft is a problem, so one cannot reach the main branch unnoticed.
    #[arg(long)]
    pub allow_draft: bool,
}

/// Generate the known-issues markdown doc from the registry.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden known-issues render\n  warden known-issues render --check   # in CI: exit 1 when the doc is stale"
)]
pub(crate) struct RenderArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Where to write [default: the `doc` setting, docs/known_issues.md].
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Do not write; exit 1 when the file on disk differs from what would be generated.
    #[arg(long)]
    pub check: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExpectArg {
    Fail,
    Flaky,
    Skip,
}

impl From<ExpectArg> for Expect {
    fn from(e: ExpectArg) -> Self {
        match e {
            ExpectArg::Fail => Expect::Fail,
            ExpectArg::Flaky => Expect::Flaky,
            ExpectArg::Skip => Expect::Skip,
        }
    }
}

/// Print the excluded tests for other tools: a bash array, lines, JSON, reth's YAML, or an
/// include regex for hive's --sim.limit.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden known-issues exclusions --format bash --suite rpc-compat > excluded.sh\n  warden known-issues exclusions --format reth-yaml --expect fail > expected_failures.yaml\n  hive --sim ethereum/rpc-compat --sim.limit \"$(warden known-issues exclusions --format sim-limit --suite rpc-compat --tests-from tests.tsv)\""
)]
pub(crate) struct ExclusionsArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[arg(long, value_enum)]
    pub format: ExclusionFormat,
    /// Only this hive suite.
    #[arg(long, value_name = "NAME")]
    pub suite: Option<String>,
    /// Only exclusions that apply to this client (reth-yaml: suffix names with it).
    #[arg(long, value_name = "NAME")]
    pub client: Option<String>,
    /// Only these kinds (comma-separated) [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub expect: Vec<ExpectArg>,
    /// The full upstream test list (first TAB column, `#` comments), to expand prefix and glob
    /// rules; required by sim-limit.
    #[arg(long, value_name = "FILE")]
    pub tests_from: Option<PathBuf>,
}

/// The PR comment body: every known issue and, with --results, how its tests fared.
///
/// Ends with the hidden marker <!-- warden:known-issues --> (markdown) so a later step can
/// update the comment in place.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden known-issues summary --results hive/workspace/logs --step-summary\n  warden known-issues summary --results hive/workspace/logs --history runs/1 runs/2 --post"
)]
pub(crate) struct SummaryArgs {
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// A hive results directory.
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Earlier results directories, oldest first: each test of --results gains its strip of
    /// marks over them and this run (✓ passed, ✗ failed, · absent).
    /// None is fine: the first run has no history.
    #[arg(long, value_name = "DIR", num_args = 0.., requires = "results")]
    pub history: Vec<PathBuf>,
    /// With --results: only this client's cases.
    #[arg(long, value_name = "NAME")]
    pub client: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: SummaryFormat,
    /// Also append the summary to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
    /// Create or update the sticky comment on the pull request (--repo, else GITHUB_REPOSITORY;
    /// the PR from --pr or the event payload at GITHUB_EVENT_PATH; token from GH_TOKEN, else
    /// GITHUB_TOKEN). What it needs is checked before anything is printed.
    /// Where the token cannot comment (fork PRs), the summary goes to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub post: bool,
    /// The pull request number for --post.
    #[arg(long, value_name = "N", requires = "post")]
    pub pr: Option<u64>,
    /// The repository for --post [default: GITHUB_REPOSITORY].
    #[arg(long, value_name = "OWNER/NAME", requires = "post")]
    pub repo: Option<String>,
    /// Link the full hive report (`hive history --format html`, uploaded as a workflow
    /// artifact: its https:// URL).
    #[arg(long, value_name = "URL")]
    pub report_url: Option<String>,
    /// API base URL for --post [default: GITHUB_API_URL, else https://api.github.com].
    #[arg(long, value_name = "URL", requires = "post")]
    pub api_url: Option<String>,
}

/// hive simulator results, checked against the known-issues registry.
#[derive(Debug, Subcommand)]
pub(crate) enum HiveCommand {
    Check(HiveCheckArgs),
    Diff(HiveDiffArgs),
    History(HiveHistoryArgs),
    Bisect(Box<HiveBisectArgs>),
}

/// Find the commit that broke a test: probe runs of a workflow that runs hive for one commit,
/// dispatched through GitHub's API, between a good and a bad commit.
///
/// Each probe's run is judged valid before its result: its results artifact must hold a suite
/// that ran the test, and the run must have tested the candidate (the client's clientVersions
/// entry, or hive.json with --commits-of hive, names the commit). An invalid probe is reported
/// with the step that failed and probed again, never counted. A commit is probed until the 95 %
/// Wilson interval of its failure rate parts from the other side's (at most 10 probes), so a
/// flaky test is bisected by evidence, not by one run per step. Every step is saved to --state
/// and a bisection goes on from it.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden hive bisect --repo lambdaclass/ethrex --workflow hive-probe.yml --ref main \\\n    --good 1a2b3c4 --bad 5d6e7f8 --client ethrex --test 'eth_getBlockByNumber/get-latest' \\\n    --input commit={commit} --input probe={probe} --state bisect.json\n\nExit status: 0 when the first bad commit is found (or --dry-run); 1 when the probes cannot decide;\n2 bad input, or an API that refused us."
)]
pub(crate) struct HiveBisectArgs {
    /// The repository whose probe workflow runs (OWNER/NAME) [default: GITHUB_REPOSITORY].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// The probe workflow's file name; it must run on `workflow_dispatch`.
    #[arg(long, value_name = "FILE")]
    pub workflow: String,
    /// The branch or tag the workflow is dispatched on.
    #[arg(long = "ref", value_name = "REF", default_value = "main")]
    pub git_ref: String,
    /// The last commit known good.
    #[arg(long, value_name = "COMMIT")]
    pub good: String,
    /// The first commit known bad.
    #[arg(long, value_name = "COMMIT")]
    pub bad: String,
    /// The repository whose commits are bisected [default: --repo].
    #[arg(long, value_name = "OWNER/NAME")]
    pub commits_repo: Option<String>,
    /// The client whose commits these are: its clientVersions entry must name the candidate.
    #[arg(long, value_name = "NAME", required_unless_present = "hive_commits")]
    pub client: Option<String>,
    /// The commits are hive's: hive.json's sourceCommit must be the candidate.
    #[arg(long, conflicts_with = "client")]
    pub hive_commits: bool,
    /// A regex of the failing test's name (without its client suffix).
    #[arg(long, value_name = "REGEX", required_unless_present = "suite")]
    pub test: Option<String>,
    /// A regex of the suite's name: with --test, only there; alone, any failure in it.
    #[arg(long, value_name = "REGEX")]
    pub suite: Option<String>,
    /// An input of the workflow (repeatable); `{commit}` in VALUE is the candidate's SHA,
    /// `{probe}` this dispatch's name (put it in the workflow's run-name).
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_input)]
    pub input: Vec<(String, String)>,
    /// The artifact the workflow uploads hive's results folder as.
    #[arg(long, value_name = "NAME", default_value = "hive-results")]
    pub artifact: String,
    /// Where the bisection is kept, step by step; read first when it exists.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Print the range and the first dispatches; dispatch nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The most probes dispatched in all.
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_dispatches: u32,
    /// The most probes running at once: the endpoints' first runs, and the runs a commit that
    /// failed needs, are dispatched together (fewer rounds of waiting, a few more dispatches).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub parallel: u32,
    /// Seconds between reads of a running probe's state (stretched when the rate limit runs low).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = parse_seconds)]
    pub poll: f64,
    /// The longest one probe may run, in minutes from its dispatch; a longer one is invalid.
    #[arg(long, value_name = "MINUTES", default_value_t = 360.0, value_parser = parse_minutes)]
    pub run_timeout: f64,
    /// The largest results artifact downloaded, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub artifact_cap: u64,
    #[arg(long, value_enum, default_value_t)]
    pub format: DiffFormat,
    /// Also append the markdown to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
    /// API base URL [default: GITHUB_API_URL, else https://api.github.com].
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
}

fn parse_input(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("{s:?}: give the input as NAME=VALUE")),
    }
}

fn parse_minutes(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 10080.0 => Ok(v),
        _ => Err(format!(
            "{s:?}: give minutes, more than 0 and at most 10080 (a week)"
        )),
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?}: give seconds between 0 and 3600")),
    }
}

/// Tests across several hive runs (oldest first): new, broken, flaky, undecided, fixed, gone, stale (the known failures folded into one line: --all lists them).
///
/// Every test that failed in some run or that the registry lists, with one mark per run
/// (✓ passed, ✗ failed, · absent), and per registry entry what it excused: an entry whose tests
/// failed in every run is not a flake; one whose tests all pass is stale.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden hive history runs/1 runs/2 runs/3 --format markdown --step-summary\n  hive --sim ethereum/rpc-compat --sim.limit \"$(warden hive history runs/* --rerun-regex)\"\n\nExit status: 0; 1 only with --require-pins and a pin mismatch in the last run; 2 bad input."
)]
pub(crate) struct HiveHistoryArgs {
    /// Results directories, oldest first.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// The registry folder.
    #[arg(long, value_name = "DIR", default_value = "known_issues")]
    pub registry: PathBuf,
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Print only a --sim.limit include regex (one line per suite) of the tests that failed in
    /// the last run, to re-run them.
    #[arg(long, conflicts_with_all = ["format", "step_summary"])]
    pub rerun_regex: bool,
    /// Print what to re-run: per suite, the --sim.limit regex of the undecided and newly failing
    /// tests, and how many repetitions part "flaky at the rate seen" from "broken" at 95 %.
    #[arg(long, conflicts_with_all = ["format", "step_summary", "rerun_regex"])]
    pub plan: bool,
    /// Fail (exit 1) when the last run does not match the registry's [upstream] pins.
    #[arg(long)]
    pub require_pins: bool,
    /// List the known failures too (broken tests the registry lists), which text and markdown
    /// otherwise fold into one line with their count.
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_enum, default_value_t)]
    pub format: RunsFormat,
    /// Also append the markdown to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
}

/// What changed between two hive runs: new failures, fixed tests, failures whose text changed
/// (the first differing lines), and tests added or removed upstream.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden hive diff runs/monday runs/tuesday\n\nExit status: 0 when NEW has no failure OLD did not have; 1 otherwise; 2 bad input."
)]
pub(crate) struct HiveDiffArgs {
    /// The earlier results directory.
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The later results directory.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    pub format: DiffFormat,
    /// Also append the markdown to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
}

/// How several runs are read (`hive history`, `known-issues update`).
#[derive(Debug, Args)]
pub(crate) struct RunsArgs {
    /// Only this client's cases (the " (client)" suffix).
    #[arg(long, value_name = "NAME")]
    pub client: Option<String>,
    /// A test that passed in each of the last N runs, after failing earlier, is fixed.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub fixed_after: u32,
}

impl RunsArgs {
    pub(crate) fn options(&self) -> HistoryOptions {
        HistoryOptions {
            client: self.client.clone(),
            fixed_after: self.fixed_after as usize,
        }
    }
}

/// Check a hive results directory against the known-issues registry, strictly.
///
/// Every case is one of: pass, new (failed, not listed), expected (listed, failed), wrong failure
/// (a listed signature did not match), fixed (listed, passed), flaky, missing, infra (client
/// launch / lifecycle failure or timeout) or empty run. Excused failures are named on every run.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden hive check workspace/logs --client ethrex --expected-tests tests.tsv\n\nExit status: 0 when there is no new failure, fixed test, wrong failure, infra failure,\nempty run or (without --allow-missing) missing test; 1 otherwise; 2 bad input."
)]
pub(crate) struct HiveCheckArgs {
    /// The results directory (hive's --results-root).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The registry folder.
    #[arg(long, value_name = "DIR", default_value = "known_issues")]
    pub registry: PathBuf,
    /// Only this client's cases (the " (client)" suffix).
    #[arg(long, value_name = "NAME")]
    pub client: Option<String>,
    /// Tests that must be present (names without suffix, first TAB column).
    #[arg(long, value_name = "FILE")]
    pub expected_tests: Option<PathBuf>,
    /// The suite --expected-tests describes.
    #[arg(long, value_name = "NAME", default_value = "rpc-compat")]
    pub expected_suite: String,
    /// Report missing tests without failing (e.g. a run filtered with --sim.limit).
    #[arg(long)]
    pub allow_missing: bool,
    /// Fail (exit 1) when the run does not match the registry's [upstream] pins (the hive commit
    /// in the results' hive.json); without it, a mismatch is a warning.
    #[arg(long)]
    pub require_pins: bool,
    #[arg(long, value_enum, default_value_t)]
    pub format: HiveCheckFormat,
    /// Also append a markdown report to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
    /// List every excused case (by default, one line per registry entry with its count).
    #[arg(short, long)]
    pub verbose: bool,
}

/// Generate a minisign key pair.
///
/// Writes the public key (commit it) and the secret key (never commit it: warden refuses to
/// write it inside a git work tree; mode 0600). Prints the key id and the commands that store
/// the secret in a GitHub environment.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("protection").args(["password_env", "unencrypted"])),
    after_help = "Examples:\n  MINISIGN_PASSWORD=… warden keygen --password-env MINISIGN_PASSWORD\n  warden keygen --unencrypted --secret-key ~/.minisign/ci.key --public-key keys/minisign.pub"
)]
pub(crate) struct KeygenArgs {
    /// Where to write the public key.
    #[arg(long, value_name = "FILE", default_value = "keys/minisign.pub")]
    pub public_key: PathBuf,
    /// Where to write the secret key [default: ~/.minisign/minisign.key].
    #[arg(long, value_name = "FILE")]
    pub secret_key: Option<PathBuf>,
    /// Encrypt the secret key with the password in environment variable VAR.
    ///
    /// Without this flag or --unencrypted, the password is asked on the terminal; when stdin is
    /// not a terminal warden fails instead of prompting.
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
    /// Write an unencrypted secret key (for a CI secret in a protected environment).
    #[arg(long)]
    pub unencrypted: bool,
    /// Replace existing key files.
    #[arg(long)]
    pub force: bool,
}

/// Sign release artifacts: a .minisig per file, plus a signed SHA256SUMS.
///
/// Every artifact is read once (SHA-256 and minisign's BLAKE2b-512 prehash from the same
/// read), files are processed in parallel, and all outputs are written to temp files and
/// renamed into place only when everything succeeded. The trusted comment is minisign's
/// `timestamp:<unix>\tfile:<name>\thashed`, followed by `tag:`, `commit:`, `repo:` and
/// `dry-run` when given. SOURCE_DATE_EPOCH, when set, is used as the timestamp.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("secret").args(["secret_key_env", "secret_key", "secret_key_stdin"])),
    after_help = "Examples (a tag-release job, then a second maintainer co-signing):\n  warden sign dist/ --secret-key-env MINISIGN_SECRET_KEY --password-env MINISIGN_PASSWORD \\\n    --public-key keys/minisign.pub --tag v1.2.3 --commit \"$GITHUB_SHA\" --repo owner/name\n  warden sign --cosign dist/ --secret-key ~/.minisign/bob.key --keys-dir keys"
)]
pub(crate) struct SignArgs {
    /// Files and/or directories to sign (directories: their regular, non-hidden files).
    #[arg(
        required_unless_present_any = ["cosign", "file"],
        conflicts_with = "cosign",
        value_name = "PATH"
    )]
    pub paths: Vec<PathBuf>,
    /// A file to sign, as `minisign -Sm FILE` takes it: with no PATH, only FILE.minisig is
    /// written (a SHA256SUMS too with --checksums).
    #[arg(short = 'm', value_name = "FILE", conflicts_with = "cosign")]
    pub file: Vec<PathBuf>,
    /// Co-sign the release in DIR: verify it against --keys-dir (below its threshold allowed),
    /// then add this key's signature of its SHA256SUMS as SHA256SUMS.<KEYID>.minisig.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["recursive", "tag", "commit", "repo", "dry_run", "no_checksums", "force", "public_key"]
    )]
    pub cosign: Option<PathBuf>,
    /// With --cosign: the keys folder the release is verified against and the key must be in.
    #[arg(long, value_name = "DIR", default_value = "keys", requires = "cosign")]
    pub keys_dir: PathBuf,
    /// Descend into subdirectories of directory arguments.
    #[arg(short, long)]
    pub recursive: bool,
    /// Read the secret key (box or bare base64 line) from environment variable VAR.
    #[arg(long, value_name = "VAR")]
    pub secret_key_env: Option<String>,
    /// Read the secret key from FILE [default: ~/.minisign/minisign.key, where `warden keygen`
    /// writes it].
    #[arg(short = 's', long, value_name = "FILE")]
    pub secret_key: Option<PathBuf>,
    /// Read the secret key from standard input.
    #[arg(long)]
    pub secret_key_stdin: bool,
    /// Password of an encrypted secret key, from environment variable VAR.
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
    /// Refuse to sign unless the secret key belongs to this public key.
    #[arg(short = 'p', long, value_name = "FILE")]
    pub public_key: Option<PathBuf>,
    /// Bind the release tag into every trusted comment (`tag:TAG`).
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Bind the commit (`commit:SHA`).
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// Bind the repository (`repo:OWNER/NAME`).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// Mark the signatures as a rehearsal: `warden verify` rejects them without --allow-dry-run.
    #[arg(long)]
    pub dry_run: bool,
    /// Inside GitHub Actions: also bind the job's deployment environment (`environment:NAME`),
    /// which `verify --release` checks against the run's deployment.
    #[arg(long, value_name = "NAME", env = "WARDEN_ENVIRONMENT")]
    pub environment: Option<String>,
    /// Inside GitHub Actions, do not bind the workflow run (`run:`, `attempt:`, `workflow:`)
    /// into the trusted comments.
    #[arg(long, conflicts_with = "environment")]
    pub no_run_binding: bool,
    /// Where to write the checksum file [default: SHA256SUMS in the artifacts' directory].
    #[arg(long, value_name = "PATH", conflicts_with = "no_checksums")]
    pub checksums: Option<PathBuf>,
    /// Do not write a checksum file.
    #[arg(long)]
    pub no_checksums: bool,
    /// Replace existing .minisig and checksum files.
    #[arg(long)]
    pub force: bool,
    /// Append the checksum list's signature to the transparency log in DIR and write its proof
    /// beside it (SHA256SUMS.log-proof), signed by --log-key or --log-key-env.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["no_checksums", "dry_run"])]
    pub log: Option<PathBuf>,
    /// The log's secret key (`warden log init` writes one).
    #[arg(
        long,
        value_name = "FILE",
        requires = "log",
        conflicts_with = "log_key_env"
    )]
    pub log_key: Option<PathBuf>,
    /// The log's secret key, from environment variable VAR.
    #[arg(long, value_name = "VAR", requires = "log")]
    pub log_key_env: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Verify artifacts or a release directory against trusted public keys.
///
/// For a file: checks FILE.minisig. For a directory: checks SHA256SUMS.minisig, every
/// SHA256SUMS line against the files, and each artifact's own .minisig when present; any other
/// entry fails the run. The key is chosen by the key id in each signature, so an old and a new
/// key can both be trusted. The keys may not lie inside a directory being verified.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden verify dist/ --expect-tag v1.2.3\n  warden verify ethrex-linux-x86_64 --public-key minisign.pub\n  warden verify --release v1.2.3 --repo lambdaclass/ethrex --record snap/ && warden verify --release v1.2.3 --repo lambdaclass/ethrex --snapshot snap/\n\nExit status: 0 all verified, 1 a verification failed (including an unlisted entry, a missing\nSHA256SUMS, or a signature bound to no file), 2 bad input or usage (a signature given without\nits artifact, trusted keys inside a verified directory)."
)]
pub(crate) struct VerifyArgs {
    /// Artifacts and/or release directories.
    #[arg(
        required_unless_present_any = ["release", "file"],
        conflicts_with = "release",
        value_name = "PATH"
    )]
    pub paths: Vec<PathBuf>,
    /// A file to verify, as `minisign -Vm FILE` takes it (the same as giving it as a PATH).
    #[arg(short = 'm', value_name = "FILE", conflicts_with = "release")]
    pub file: Vec<PathBuf>,
    /// The signature of the one file verified, as `minisign -x` takes it [default: FILE.minisig].
    #[arg(short = 'x', value_name = "SIGFILE", conflicts_with = "release")]
    pub signature_file: Option<PathBuf>,
    /// Verify the published release TAG of --repo: download its assets (GH_TOKEN/GITHUB_TOKEN when
    /// set, anonymous otherwise) and require tag:TAG, repo:OWNER/NAME and the tag's commit.
    #[arg(long, value_name = "TAG", requires = "repo")]
    pub release: Option<String>,
    /// The repository of --release.
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// Verify only the listed files whose names match NAME (repeatable; globs allowed), plus the
    /// checksum list; with --release, download only those.
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Trust the keys/*.pub of --repo's default branch (fetched through the API) instead of
    /// --public-key / --keys-dir. This trusts the repository itself.
    #[arg(long, requires = "release", conflicts_with = "public_key")]
    pub keys_from_repo: bool,
    /// Keep the downloaded release in DIR (default: a temporary folder, removed afterwards).
    #[arg(long, value_name = "DIR", requires = "release")]
    pub out: Option<PathBuf>,
    /// API base URL [default: GITHUB_API_URL, else https://api.github.com]; GHES: https://HOST/api/v3.
    #[arg(long, value_name = "URL", requires = "release")]
    pub api_url: Option<String>,
    /// Read the release from a folder that --record wrote instead of the API (offline replay).
    #[arg(long, value_name = "DIR", requires = "release", conflicts_with_all = ["record", "keys_from_repo"])]
    pub snapshot: Option<PathBuf>,
    /// Save every API answer (release, assets, tag commit, the downloaded files up to 40 MiB each)
    /// under DIR, for `--snapshot DIR`.
    #[arg(long, value_name = "DIR", requires = "release")]
    pub record: Option<PathBuf>,
    /// No progress bar (one shows on a terminal while a release downloads and hashes).
    #[arg(long)]
    pub no_progress: bool,
    /// Trust this public key (repeatable): a `.pub` file, or the key itself (56 base64
    /// characters, as `minisign -P` takes it). Replaces --keys-dir.
    #[arg(short = 'p', short_alias = 'P', long, value_name = "FILE|KEY")]
    pub public_key: Vec<PathBuf>,
    /// Trust every *.pub in DIR [default: keys]. Without --public-key, and with no keys/ folder
    /// here, ./minisign.pub is trusted (and said). With --public-key, DIR's revocations and
    /// policy apply to the pinned keys.
    #[arg(long, value_name = "DIR")]
    pub keys_dir: Option<PathBuf>,
    /// With --public-key: also trust the keys that succeed it through the rotation statements
    /// of --keys-dir (and honour that folder's revocations). A forked chain, a rotation out of a
    /// revoked key, or one whose old key is not the pinned key's bytes is not followed.
    #[arg(long, requires = "public_key")]
    pub follow_rotations: bool,
    /// Also honour the revocation statements in DIR (`<KEYID>.toml` and its `.minisig`, as in
    /// a repository's keys/revoked/), whatever keys are trusted.
    #[arg(long, value_name = "DIR")]
    pub revocations: Option<PathBuf>,
    /// Require `tag:TAG` in every trusted comment.
    #[arg(long, value_name = "TAG")]
    pub expect_tag: Option<String>,
    /// Require `repo:OWNER/NAME` in every trusted comment.
    #[arg(long, value_name = "OWNER/NAME")]
    pub expect_repo: Option<String>,
    /// Require `commit:` in every trusted comment to be this commit (a full SHA, or a prefix of
    /// at least 12 hex digits).
    #[arg(long, value_name = "SHA")]
    pub expect_commit: Option<String>,
    /// Accept legacy (non-prehashed) signatures; they need the whole file in memory.
    #[arg(long)]
    pub allow_legacy: bool,
    /// Accept signatures made with `warden sign --dry-run`.
    #[arg(long)]
    pub allow_dry_run: bool,
    /// In a release directory, skip (and name) entries SHA256SUMS does not list instead of failing.
    #[arg(long)]
    pub allow_unlisted: bool,
    /// Verify a release directory without SHA256SUMS file by file: every file must carry a valid
    /// signature.
    #[arg(long)]
    pub allow_no_checksums: bool,
    /// No longer needed, and ignored: a trusted comment that binds no file or tag is accepted,
    /// as minisign accepts it, and said in a warning.
    #[arg(long, hide = true)]
    pub allow_unbound: bool,
    /// The checksum list of a release folder, when it is not one found by its name (SHA256SUMS,
    /// SHA256SUMS.txt, SHASUMS256.txt, sha256sums.txt, checksums.txt,
    /// <project>_<version>_checksums.txt, SHA512SUMS, …, with a .minisig or .sig beside it).
    #[arg(long, value_name = "NAME")]
    pub checksums: Option<String>,
    /// GitHub's attestations of the release, downloaded beside it (`*.sigstore.json`,
    /// `*.intoto.jsonl`, `gh attestation download`'s `*.jsonl`), checked offline with the
    /// minisign signatures: no network, no login (repeatable). With --release, GitHub's are read
    /// too.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub attestations: Vec<PathBuf>,
    /// Require GitHub's release attestation, build provenance of every artifact, or both (added
    /// to keys/policy.toml's `require_attestation`).
    #[arg(long, value_name = "WHICH", value_parser = ["release", "provenance", "both"])]
    pub require_attestation: Option<String>,
    /// The Sigstore trusted root GitHub's attestations are verified against, in place of the one
    /// warden carries (a GitHub Enterprise instance's; `gh attestation trusted-root` prints it).
    #[arg(long, value_name = "FILE")]
    pub trusted_root: Option<PathBuf>,
    #[command(flatten)]
    pub log: RequireLogArgs,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
    /// Also append a markdown report to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
}

/// `verify --require-log` and what it checks against.
#[derive(Debug, Args)]
pub(crate) struct RequireLogArgs {
    /// Fail unless every counted signature of the checksum list is in the transparency log:
    /// its .log-proof verifies against a checkpoint signed by --log-vkey (and --witness-threshold
    /// of the --witness keys).
    #[arg(long, requires = "log_vkey")]
    pub require_log: bool,
    /// The log's verifier key (`NAME+ID+KEY`, as `warden log init` prints it), or a file holding it.
    #[arg(long, value_name = "VKEY", requires = "require_log")]
    pub log_vkey: Option<String>,
    /// The log itself (a folder, or the URL it is served from): the proofs' checkpoints must
    /// be consistent with its checkpoint.
    #[arg(long = "log", value_name = "DIR|URL", requires = "require_log")]
    pub log_dir: Option<String>,
    /// An earlier checkpoint of the log, pinned: the log must extend it (needs --log).
    #[arg(long, value_name = "FILE", requires = "log_dir")]
    pub checkpoint: Option<PathBuf>,
    /// A witness's verifier key (repeatable).
    #[arg(long = "witness", value_name = "VKEY", requires = "require_log")]
    pub witnesses: Vec<String>,
    /// How many of the --witness keys must have cosigned the checkpoint [default: all of them].
    #[arg(long, value_name = "N", requires = "witnesses")]
    pub witness_threshold: Option<usize>,
}

/// A transparency log of release signatures: C2SP tiles served as static files, checkpoints
/// signed by the log's key and cosigned by witnesses.
#[derive(Debug, Subcommand)]
pub(crate) enum LogCommand {
    Init(LogInitArgs),
    Append(LogAppendArgs),
    Verify(LogVerifyArgs),
    Witness(LogWitnessArgs),
    Cosign(LogCosignArgs),
    WitnessKey(LogWitnessKeyArgs),
    Monitor(LogMonitorArgs),
}

/// Read the entries appended since the last run (--state), check the log grew append-only, and
/// check each entry of --repo against GitHub's records: the run it binds exists and ran the
/// bound workflow for that tag and commit, and the release holds the signed file with that
/// digest. An entry no release run made is reported with its index and run, exit 1.
#[derive(Debug, Args)]
#[command(
    after_help = "Example (a scheduled workflow):\n  warden log monitor releases-log --log-vkey \"$(cat log.vkey)\" --repo owner/name --state monitor-state/checkpoint\n\nExit status: 0 every entry is backed by a release run, 1 one is not (or the log forked), 2 bad input or an API that refused."
)]
pub(crate) struct LogMonitorArgs {
    /// The log: a folder, or the URL it is served from.
    #[arg(value_name = "DIR|URL")]
    pub dir: String,
    #[arg(long, value_name = "VKEY")]
    pub log_vkey: String,
    #[arg(long = "witness", value_name = "VKEY")]
    pub witnesses: Vec<String>,
    #[arg(long, value_name = "N", requires = "witnesses")]
    pub witness_threshold: Option<usize>,
    /// The repository whose entries are checked (others are counted, not judged).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: String,
    /// The last checkpoint verified: only newer entries are read, and the log must extend it.
    /// Advanced when nothing is flagged.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// The repository's keys folder [default: keys, when it exists]: an entry signed by one of
    /// its keys (revoked ones too) is judged whatever repository its comment names.
    #[arg(long, value_name = "DIR")]
    pub keys_dir: Option<PathBuf>,
    /// GitHub's API [default: $GITHUB_API_URL, else https://api.github.com].
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// Judge against GitHub's answers saved by --record instead of the API (offline replay; the
    /// log is still read from DIR|URL).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["record", "api_url"])]
    pub snapshot: Option<PathBuf>,
    /// Save every answer GitHub gave (runs, deployments, releases, assets) under DIR, for
    /// `--snapshot DIR`.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Create an empty log in DIR, signed by the key in --log-key (created when FILE does not
/// exist), and print its verifier key.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden log init releases-log --origin example.com/releases-log --log-key ~/.warden/log.key"
)]
pub(crate) struct LogInitArgs {
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The log's name, in every checkpoint (a URL without its scheme).
    #[arg(long, value_name = "NAME")]
    pub origin: String,
    #[arg(long, value_name = "FILE")]
    pub log_key: PathBuf,
    /// Also write the verifier key to FILE (commit it, e.g. keys/log.vkey: verifiers and
    /// monitors pass it as --log-vkey FILE).
    #[arg(long, value_name = "FILE")]
    pub vkey: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Append a signed release's checksum-list signatures (those by keys of --keys-dir) to the log
/// in DIR and write each one's proof beside it; a signature logged before gets its proof renewed
/// against the log's current checkpoint.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("key").args(["log_key", "log_key_env"]).required(true)),
    after_help = "Example:\n  warden log append releases-log --release dist/ --log-key-env WARDEN_LOG_KEY"
)]
pub(crate) struct LogAppendArgs {
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The signed release folder.
    #[arg(long, value_name = "RELDIR")]
    pub release: PathBuf,
    #[arg(long, value_name = "NAME", default_value = "SHA256SUMS")]
    pub checksums: String,
    /// The keys whose signatures are logged.
    #[arg(long, value_name = "DIR", default_value = "keys")]
    pub keys_dir: PathBuf,
    #[arg(long, value_name = "FILE")]
    pub log_key: Option<PathBuf>,
    #[arg(long, value_name = "VAR")]
    pub log_key_env: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Check a whole log: its checkpoint's signatures, every entry (signed by the key it names) and
/// every tile (the one its entries give).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden log verify releases-log --log-vkey \"$(cat log.vkey)\"\n\nExit status: 0 the log verifies, 1 it does not, 2 bad input."
)]
pub(crate) struct LogVerifyArgs {
    /// The log: a folder, or the URL it is served from.
    #[arg(value_name = "DIR|URL")]
    pub dir: String,
    #[arg(long, value_name = "VKEY")]
    pub log_vkey: String,
    #[arg(long = "witness", value_name = "VKEY")]
    pub witnesses: Vec<String>,
    #[arg(long, value_name = "N", requires = "witnesses")]
    pub witness_threshold: Option<usize>,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Cosign the log's checkpoint as a witness: only when the log key signed it and it extends
/// the last checkpoint this witness cosigned (kept in --state); a fork is refused, kept as
/// evidence, and exits 1. With --serve, a C2SP tlog-witness server instead: the logs of every
/// --log-vkey send their checkpoints to `POST /add-checkpoint`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  warden log witness releases-log --log-vkey \"$(cat log.vkey)\" --witness-key ~/.warden/witness.key --state ~/.warden/witness-state\n  warden log witness --serve 0.0.0.0:8080 --log-vkey keys/log.vkey --witness-key ~/.warden/witness.key --state ~/.warden/witness-state"
)]
pub(crate) struct LogWitnessArgs {
    /// The log: a folder (the cosigned checkpoint is written back), or the URL it is served
    /// from (the cosignature is printed for the log's operator).
    #[arg(
        value_name = "DIR|URL",
        required_unless_present = "serve",
        conflicts_with = "serve"
    )]
    pub dir: Option<String>,
    /// Serve C2SP tlog-witness on ADDR (`HOST:PORT`; port 0 picks one), until stopped: prints
    /// the address it listens on, then answers `POST /add-checkpoint`.
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<String>,
    /// The log's verifier key (repeatable with --serve: every log this witness follows).
    #[arg(long, value_name = "VKEY", required = true)]
    pub log_vkey: Vec<String>,
    #[arg(long, value_name = "FILE")]
    pub witness_key: PathBuf,
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Ask witnesses (C2SP tlog-witness) to cosign the log's checkpoint: each is sent the checkpoint
/// with a consistency proof from the size it last cosigned (learnt from its 409), and each
/// cosignature that verifies under a --witness-vkey is added to DIR's checkpoint.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden log cosign releases-log --log-vkey keys/log.vkey --witness https://witness.example.org --witness-vkey \"$(cat witness.vkey)\"\n\nExit status: 0 when at least --threshold witnesses cosigned, 1 otherwise (each one's refusal or\nerror is printed), 2 bad input."
)]
pub(crate) struct LogCosignArgs {
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[arg(long, value_name = "VKEY")]
    pub log_vkey: String,
    /// A witness's submission prefix (`https://…`; `/add-checkpoint` is added). Repeatable.
    #[arg(long = "witness", value_name = "URL", required = true)]
    pub witnesses: Vec<String>,
    /// A witness's verifier key: only cosignatures that verify under one join the checkpoint.
    #[arg(long = "witness-vkey", value_name = "VKEY", required = true)]
    pub witness_vkeys: Vec<String>,
    /// How many witnesses must cosign [default: 1].
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threshold: usize,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Create a witness's key in FILE and print its verifier key (for --witness).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden log witness-key ~/.warden/witness.key --name witness.example.org"
)]
pub(crate) struct LogWitnessKeyArgs {
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The witness's name (a URL without its scheme).
    #[arg(long, value_name = "NAME")]
    pub name: String,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
}

/// Run every check of a repository: keys, no committed secret key, known issues, workflows.
///
/// keys/*.pub parse and their key ids are unique; no file holds a minisign secret key; the
/// known-issues registry lints clean and its doc is in sync; the workflow audit has no finding
/// at medium or above. With GH_TOKEN or GITHUB_TOKEN, the online settings audit too.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  warden check --root ../ethrex\n\nExit status: 0 when every check passes, 1 when one fails, 2 bad input."
)]
pub(crate) struct CheckArgs {
    /// The repository to check.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    pub format: TextOrJson,
    /// Also append a markdown report to $GITHUB_STEP_SUMMARY.
    #[arg(long)]
    pub step_summary: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use release_warden::report::Format;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("warden").chain(args.iter().copied()))
    }

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn each_command_offers_only_the_formats_its_report_has() {
        for ok in [
            &["hive", "check", "d", "--format", "junit"][..],
            &["hive", "history", "d", "--format", "markdown"],
            &["hive", "diff", "a", "b", "--format", "json"],
            &["audit", "--format", "sarif"],
            &["known-issues", "summary", "--format", "text"],
        ] {
            assert!(parse(ok).is_ok(), "{ok:?}");
        }
        for refused in [
            &["hive", "history", "d", "--format", "junit"][..],
            &["hive", "diff", "a", "b", "--format", "junit"],
            &["hive", "diff", "a", "b", "--format", "html"],
            &["verify", "x", "--format", "markdown"],
            &["known-issues", "summary", "--format", "json"],
            &["check", "--format", "sarif"],
        ] {
            let e = parse(refused).map(|_| ()).unwrap_err();
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::InvalidValue,
                "{refused:?}"
            );
        }
    }

    #[test]
    fn sign_takes_at_most_one_secret_key_source() {
        // None: the default key (~/.minisign/minisign.key), looked for when the command runs.
        assert!(parse(&["sign", "dist"]).is_ok());
        assert!(parse(&[
            "sign",
            "dist",
            "--secret-key-env",
            "K",
            "--secret-key-stdin"
        ])
        .is_err());
        let Command::Sign(s) = parse(&["sign", "dist", "--secret-key-env", "K"])
            .unwrap()
            .command
        else {
            panic!()
        };
        assert_eq!(s.secret_key_env.as_deref(), Some("K"));
        assert!(!s.recursive && !s.force && !s.dry_run && !s.no_checksums);
        assert!(parse(&[
            "sign",
            "d",
            "--secret-key-stdin",
            "--checksums",
            "x",
            "--no-checksums"
        ])
        .is_err());
    }

    #[test]
    fn keygen_defaults_and_conflicts() {
        let Command::Keygen(k) = parse(&["keygen", "--unencrypted"]).unwrap().command else {
            panic!()
        };
        assert_eq!(k.public_key, PathBuf::from("keys/minisign.pub"));
        assert!(k.secret_key.is_none());
        assert!(parse(&["keygen", "--unencrypted", "--password-env", "P"]).is_err());
    }

    #[test]
    fn verify_defaults() {
        let Command::Verify(v) = parse(&["verify", "dist"]).unwrap().command else {
            panic!()
        };
        assert_eq!(v.keys_dir, None);
        assert_eq!(v.checksums, None);
        assert!(v.public_key.is_empty() && !v.allow_legacy && !v.allow_dry_run);
        let Command::Verify(v) = parse(&[
            "verify",
            "a",
            "--public-key",
            "x.pub",
            "--public-key",
            "y.pub",
        ])
        .unwrap()
        .command
        else {
            panic!()
        };
        assert_eq!(v.public_key.len(), 2);
        assert!(parse(&["verify"]).is_err());
    }

    #[test]
    fn the_registry_defaults_under_the_root_and_a_given_one_stays_as_given() {
        let lint = |args: &[&str]| match parse(args).unwrap().command {
            Command::KnownIssues(KnownIssuesCommand::Lint(l)) => l.registry.registry_dir(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            lint(&["known-issues", "lint"]),
            PathBuf::from("known_issues")
        );
        assert_eq!(
            lint(&["known-issues", "lint", "--root", "../ethrex"]),
            PathBuf::from("../ethrex/known_issues")
        );
        assert_eq!(
            lint(&[
                "known-issues",
                "lint",
                "--root",
                "../ethrex",
                "--registry",
                "ki"
            ]),
            PathBuf::from("ki")
        );
    }

    #[test]
    fn audit_and_its_snapshot_take_the_same_target() {
        let Command::Audit(a) = parse(&["audit", "snapshot", "--root", "r", "--out", "s"])
            .unwrap()
            .command
        else {
            panic!()
        };
        let Some(AuditCommand::Snapshot(snap)) = a.command else {
            panic!()
        };
        assert_eq!(snap.target.root, PathBuf::from("r"));
        assert_eq!(snap.target.release_tag_pattern, ["v*"]);
        let Command::Audit(a) = parse(&["audit", "--offline", "--release-tag-pattern", "rel-*"])
            .unwrap()
            .command
        else {
            panic!()
        };
        assert_eq!(a.target.root, PathBuf::from("."));
        assert_eq!(a.target.release_tag_pattern, ["rel-*"]);
        assert_eq!(a.fail_on, Severity::Medium);
        assert_eq!(Format::from(a.format), Format::Text);
        assert!(parse(&["audit", "--offline", "--snapshot", "s"]).is_err());
    }
}
