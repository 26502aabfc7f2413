//! The flags of `benchgate serve`, with `BENCHGATE_*` environment fallbacks (clap), and the
//! running configuration made from them ([`ServerConfig`]). Only `main` and tests that parse a
//! command line see these structs; the server reads the configuration.

use std::net::SocketAddr;
use std::time::Duration;

use benchgate_github::client::DEFAULT_API_URL;

use crate::config::{GitHubConfig, ServerConfig};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable, for a terminal.
    Pretty,
    /// One JSON object per line, for a log collector.
    Json,
}

/// Flags of `benchgate serve`.
#[derive(Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "BENCHGATE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Database URL: `sqlite://FILE` (created if missing) or `postgres://USER@HOST/DB`.
    #[arg(
        long,
        env = "BENCHGATE_DATABASE_URL",
        default_value = "sqlite://benchgate.db"
    )]
    pub database_url: String,

    /// Connections to Postgres this server holds at most (SQLite keeps its own 8). Size it to
    /// the agents uploading at once and what the database allows, across all replicas.
    #[arg(long, env = "BENCHGATE_DATABASE_POOL_SIZE", default_value_t = benchgate_store::DEFAULT_POOL_SIZE,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub database_pool_size: u32,

    /// Log format.
    #[arg(long, env = "BENCHGATE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,

    /// Largest request body accepted, in bytes (webhooks can be large).
    #[arg(long, env = "BENCHGATE_BODY_LIMIT", default_value_t = 25 * 1024 * 1024)]
    pub body_limit: usize,

    /// Memory, in MiB, that webhook bodies being received may hold at once; a delivery past it
    /// gets 503 with Retry-After (GitHub redelivers), so a flood of large unsigned posts cannot
    /// exhaust the server.
    #[arg(long, env = "BENCHGATE_WEBHOOK_MEMORY_MIB", default_value_t = 100)]
    pub webhook_memory_mib: u32,

    /// Seconds a request may take before it is answered 408.
    #[arg(long, env = "BENCHGATE_REQUEST_TIMEOUT", default_value_t = 60)]
    pub request_timeout_secs: u64,

    /// File holding the admin API token (`POST /api/v1/comparisons`, `/github/setup`); the
    /// admin API answers 401 without one. Or set BENCHGATE_ADMIN_TOKEN to the token itself;
    /// `--admin-token TOKEN` is refused, since every local user can read a process's arguments.
    #[arg(long, env = "BENCHGATE_ADMIN_TOKEN_FILE", value_name = "PATH", value_parser = secret_file,
          conflicts_with = "admin_token")]
    pub admin_token_file: Option<SecretFromFile>,

    /// The admin token from BENCHGATE_ADMIN_TOKEN; on the command line it is refused.
    #[arg(long, env = "BENCHGATE_ADMIN_TOKEN", hide = true)]
    pub admin_token: Option<String>,

    /// Seconds a job's lease lasts without a heartbeat before the reaper requeues the job.
    #[arg(long, env = "BENCHGATE_LEASE_SECS", default_value_t = 60)]
    pub lease_secs: u64,

    /// Claims a job may use before it fails (each expired lease uses one).
    #[arg(long, env = "BENCHGATE_MAX_ATTEMPTS", default_value_t = 3)]
    pub max_attempts: i64,

    /// How often each runner re-measures its A/A noise floor per repository ("24h", "30m", "90s").
    #[arg(long, env = "BENCHGATE_CALIBRATION_INTERVAL", default_value = "24h", value_parser = crate::calibration::parse_interval)]
    pub calibration_interval: std::time::Duration,

    /// Longest a job claim waits for work before answering 204, in seconds.
    #[arg(long, env = "BENCHGATE_CLAIM_WAIT", default_value_t = 25)]
    pub claim_wait_secs: u64,

    /// File holding the token the dashboard and its read API require (bearer, `?token=` or
    /// cookie); unset, they are public and read-only. Or set BENCHGATE_DASHBOARD_TOKEN;
    /// `--dashboard-token TOKEN` is refused, since every local user can read a process's arguments.
    #[arg(long, env = "BENCHGATE_DASHBOARD_TOKEN_FILE", value_name = "PATH", value_parser = secret_file,
          conflicts_with = "dashboard_token")]
    pub dashboard_token_file: Option<SecretFromFile>,

    /// The dashboard token from BENCHGATE_DASHBOARD_TOKEN; on the command line it is refused.
    #[arg(long, env = "BENCHGATE_DASHBOARD_TOKEN", hide = true)]
    pub dashboard_token: Option<String>,

    /// Profiled runs per side after a PR comparison ends slower (perf on the runner; never
    /// samples). 0 turns automatic profiles off; `/benchgate profile` still asks for them.
    #[arg(long, env = "BENCHGATE_PROFILE_RUNS", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub profile_runs: u32,

    /// Most rounds one probe of a culprit search runs before it is called undecided (a probe
    /// stops as soon as its interval answers; Pinpoint runs 20 to 160 per probe). 0 turns
    /// searches off.
    #[arg(long, env = "BENCHGATE_BISECT_MAX_ROUNDS", default_value_t = 160, value_parser = clap::value_parser!(u32).range(0..=2000))]
    pub bisect_max_rounds: u32,

    /// How often each idle runner runs a canary (its own commit against itself, or with
    /// planted extra work) for its audit, at the lowest priority: "6h" for every label, per
    /// label as "quiet=2h,gpu=off,*=6h", or "off".
    #[arg(long, env = "BENCHGATE_CANARY_EVERY", default_value = "6h", value_parser = crate::audit::parse_canary_every)]
    pub canary_every: crate::audit::CanaryEvery,

    /// Planted changes (percent more work) the canaries cycle through after two A/A ones.
    #[arg(long, env = "BENCHGATE_CANARY_PLANTED", default_value = "2,5", value_delimiter = ',', value_parser = planted_pct)]
    pub canary_planted: Vec<f64>,

    /// Rounds of each canary (it is scored at the first round that decides).
    #[arg(long, env = "BENCHGATE_CANARY_ROUNDS", default_value_t = 20, value_parser = clap::value_parser!(u32).range(2..=500))]
    pub canary_rounds: u32,

    /// How often the canary pass looks for idle runners, in milliseconds (measurements that
    /// run canaries back to back lower it).
    #[arg(long, env = "BENCHGATE_CANARY_TICK_MS", default_value_t = 5000, hide = true, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub canary_tick_ms: u64,

    #[command(flatten)]
    pub github: GitHubArgs,

    #[command(flatten)]
    pub gitlab: GitlabArgs,
}

/// GitLab flags of `benchgate serve` (docs/gitlab.md). Without --gitlab-url, GitLab is off and
/// `/webhooks/gitlab` refuses every delivery.
#[derive(Clone, clap::Args)]
pub struct GitlabArgs {
    /// The GitLab instance whose merge requests benchgate gates: `https://gitlab.com` or a
    /// self-managed host's URL.
    #[arg(long, env = "BENCHGATE_GITLAB_URL", value_name = "URL")]
    pub gitlab_url: Option<String>,

    /// File holding the token benchgate writes notes and statuses with: a project or group
    /// access token, or a bot user's personal one (scope `api`, Developer or above). Or set
    /// BENCHGATE_GITLAB_TOKEN to the token itself; `--gitlab-token` is refused.
    #[arg(long, env = "BENCHGATE_GITLAB_TOKEN_FILE", value_name = "PATH", value_parser = secret_file,
          conflicts_with = "gitlab_token", requires = "gitlab_url")]
    pub gitlab_token_file: Option<SecretFromFile>,

    /// The GitLab token from BENCHGATE_GITLAB_TOKEN; on the command line it is refused.
    #[arg(long = "gitlab-token", env = "BENCHGATE_GITLAB_TOKEN", hide = true)]
    pub gitlab_token: Option<String>,

    /// File holding the webhook's secret token(s), comma-separated (rotation): what GitLab
    /// sends as X-Gitlab-Token, and the HMAC secret of an external status check. Or set
    /// BENCHGATE_GITLAB_HOOK_TOKEN to the list itself.
    #[arg(long, env = "BENCHGATE_GITLAB_HOOK_TOKEN_FILE", value_name = "PATH", value_parser = secret_file,
          conflicts_with = "gitlab_hook_token")]
    pub gitlab_hook_token_file: Option<SecretFromFile>,

    /// The hook tokens from BENCHGATE_GITLAB_HOOK_TOKEN; on the command line they are refused.
    #[arg(
        long = "gitlab-hook-token",
        env = "BENCHGATE_GITLAB_HOOK_TOKEN",
        hide = true
    )]
    pub gitlab_hook_token: Option<String>,
}

impl From<GitlabArgs> for crate::config::GitlabConfig {
    fn from(a: GitlabArgs) -> Self {
        crate::config::GitlabConfig {
            url: a.gitlab_url,
            token: a.gitlab_token_file.map(|f| f.0).or(a.gitlab_token),
            hook_token: a
                .gitlab_hook_token_file
                .map(|f| f.0)
                .or(a.gitlab_hook_token),
        }
    }
}

fn planted_pct(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!(
            "expected a percentage above 0 and at most 100, found {text:?}"
        )),
    }
}

/// GitHub flags of `benchgate serve`; each, when set, wins over the App stored by `/github/setup`.
/// With neither, `/webhooks/github` answers 401 and the outbox keeps every GitHub write.
#[derive(Clone, clap::Args)]
pub struct GitHubArgs {
    /// File holding the webhook secret(s), comma-separated; any of them verifies a delivery
    /// (for rotation). Or set BENCHGATE_WEBHOOK_SECRET to the list itself; `--webhook-secret`
    /// is refused, since every local user can read a process's arguments.
    #[arg(long, env = "BENCHGATE_WEBHOOK_SECRET_FILE", value_name = "PATH", value_parser = secret_file,
          conflicts_with = "webhook_secret")]
    pub webhook_secret_file: Option<SecretFromFile>,

    /// The webhook secrets from BENCHGATE_WEBHOOK_SECRET; on the command line they are refused.
    #[arg(long = "webhook-secret", env = "BENCHGATE_WEBHOOK_SECRET", hide = true)]
    pub webhook_secret: Option<String>,

    /// GitHub App id (with --github-private-key-file).
    #[arg(
        long,
        env = "BENCHGATE_GITHUB_APP_ID",
        requires = "github_private_key_file"
    )]
    pub github_app_id: Option<u64>,

    /// PEM file of the GitHub App's private key.
    #[arg(
        long,
        env = "BENCHGATE_GITHUB_PRIVATE_KEY_FILE",
        requires = "github_app_id"
    )]
    pub github_private_key_file: Option<std::path::PathBuf>,

    /// File holding a single GitHub token (personal or fine-grained) to use instead of App
    /// authentication. Or set BENCHGATE_GITHUB_TOKEN to the token itself; `--github-token` is
    /// refused, since every local user can read a process's arguments.
    #[arg(long, env = "BENCHGATE_GITHUB_TOKEN_FILE", value_name = "PATH", value_parser = secret_file,
          conflicts_with_all = ["github_token", "github_app_id"])]
    pub github_token_file: Option<SecretFromFile>,

    /// The GitHub token from BENCHGATE_GITHUB_TOKEN; on the command line it is refused.
    #[arg(
        long,
        env = "BENCHGATE_GITHUB_TOKEN",
        conflicts_with = "github_app_id",
        hide = true
    )]
    pub github_token: Option<String>,

    /// GitHub REST API base URL (GitHub Enterprise: `https://HOST/api/v3`).
    #[arg(long, env = "BENCHGATE_GITHUB_API_URL", default_value = DEFAULT_API_URL)]
    pub github_api_url: String,

    /// GitHub's web URL, where `/github/setup` creates the App; unset, derived from
    /// --github-api-url (`https://github.com`, or `https://HOST` for `https://HOST/api/v3`).
    #[arg(long, env = "BENCHGATE_GITHUB_WEB_URL")]
    pub github_web_url: Option<String>,

    /// This server's public base URL, for links to the dashboard in comments and check runs.
    #[arg(
        long,
        env = "BENCHGATE_PUBLIC_URL",
        default_value = "http://localhost:8080"
    )]
    pub public_url: String,

    /// Seconds between edits of a PR's comment while rounds land (edits are coalesced).
    #[arg(long, env = "BENCHGATE_COMMENT_INTERVAL", default_value_t = 5)]
    pub comment_interval_secs: u64,

    /// First retry delay of a failed GitHub write, in milliseconds; doubles per attempt.
    #[arg(long, env = "BENCHGATE_OUTBOX_BACKOFF_MS", default_value_t = 2000)]
    pub outbox_backoff_ms: u64,
}

/// The flags whose value is a secret, each with the variable and the file flag to use instead:
/// a process's arguments are readable by every local user (`/proc/PID/cmdline`, `ps`).
const SECRET_FLAGS: [SecretFlag; 6] = [
    SecretFlag::new("admin_token", "--admin-token", "BENCHGATE_ADMIN_TOKEN"),
    SecretFlag::new(
        "dashboard_token",
        "--dashboard-token",
        "BENCHGATE_DASHBOARD_TOKEN",
    ),
    SecretFlag::new(
        "webhook_secret",
        "--webhook-secret",
        "BENCHGATE_WEBHOOK_SECRET",
    ),
    SecretFlag::new("github_token", "--github-token", "BENCHGATE_GITHUB_TOKEN"),
    SecretFlag::new("gitlab_token", "--gitlab-token", "BENCHGATE_GITLAB_TOKEN"),
    SecretFlag::new(
        "gitlab_hook_token",
        "--gitlab-hook-token",
        "BENCHGATE_GITLAB_HOOK_TOKEN",
    ),
];

/// A flag of `benchgate serve` that takes a secret; its file flag is the flag with `-file`.
#[derive(Debug, Clone, Copy)]
struct SecretFlag {
    /// clap's id of the argument (its field's name).
    id: &'static str,
    flag: &'static str,
    env: &'static str,
}

impl SecretFlag {
    const fn new(id: &'static str, flag: &'static str, env: &'static str) -> Self {
        SecretFlag { id, flag, env }
    }
}

/// A secret given as a flag's value on `benchgate serve`'s command line. The message names the
/// flag, never the value.
#[derive(Debug, thiserror::Error)]
#[error(
    "{flag} on the command line is refused: every local user can read it in /proc/PID/cmdline \
     and ps. Set {env} in the server's environment, or put it in a file readable only by the \
     server's user and pass {flag}-file PATH (or {env}_FILE=PATH). If it was on a shared \
     machine's command line, consider it seen and replace it"
)]
pub struct SecretOnCommandLine {
    flag: &'static str,
    env: &'static str,
}

/// Refuses `serve`'s matches when a secret was given as a flag's value rather than by its
/// variable or file (clap parses both into one argument; only the source tells them apart).
pub fn refuse_secrets_on_command_line(serve: &clap::ArgMatches) -> Result<(), SecretOnCommandLine> {
    match SECRET_FLAGS
        .iter()
        .find(|s| serve.value_source(s.id) == Some(clap::parser::ValueSource::CommandLine))
    {
        Some(s) => Err(SecretOnCommandLine {
            flag: s.flag,
            env: s.env,
        }),
        None => Ok(()),
    }
}

/// A secret read from the file a `--*-file` flag names: its text, trimmed (editors add a
/// newline). Shown as `***`.
#[derive(Clone)]
pub struct SecretFromFile(String);

impl std::fmt::Debug for SecretFromFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

fn secret_file(path: &str) -> Result<SecretFromFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(format!("{path} is empty"));
    }
    Ok(SecretFromFile(secret.to_owned()))
}

impl From<ServeArgs> for ServerConfig {
    fn from(a: ServeArgs) -> Self {
        ServerConfig {
            listen: a.listen,
            database_url: a.database_url,
            database_pool_size: a.database_pool_size,
            body_limit: a.body_limit,
            webhook_memory_mib: a.webhook_memory_mib,
            request_timeout: Duration::from_secs(a.request_timeout_secs),
            admin_token: a.admin_token_file.map(|f| f.0).or(a.admin_token),
            lease: Duration::from_secs(a.lease_secs),
            max_attempts: a.max_attempts,
            calibration_interval: a.calibration_interval,
            claim_wait: Duration::from_secs(a.claim_wait_secs),
            dashboard_token: a.dashboard_token_file.map(|f| f.0).or(a.dashboard_token),
            profile_runs: a.profile_runs,
            bisect_max_rounds: a.bisect_max_rounds,
            canary_every: a.canary_every,
            canary_planted: a.canary_planted,
            canary_rounds: a.canary_rounds,
            canary_tick: Duration::from_millis(a.canary_tick_ms),
            github: a.github.into(),
            gitlab: a.gitlab.into(),
        }
    }
}

impl From<GitHubArgs> for GitHubConfig {
    fn from(a: GitHubArgs) -> Self {
        let web_url = web_url(a.github_web_url.as_deref(), &a.github_api_url);
        GitHubConfig {
            webhook_secret: a.webhook_secret_file.map(|f| f.0).or(a.webhook_secret),
            // clap requires the id and the key file together.
            app: a.github_app_id.zip(a.github_private_key_file),
            token: a.github_token_file.map(|f| f.0).or(a.github_token),
            api_url: a.github_api_url,
            web_url,
            public_url: a.public_url,
            comment_interval: Duration::from_secs(a.comment_interval_secs.max(1)),
            outbox_backoff: Duration::from_millis(a.outbox_backoff_ms),
        }
    }
}

/// GitHub's web URL without a trailing slash: the flag, else derived from the API URL.
fn web_url(flag: Option<&str>, api_url: &str) -> String {
    if let Some(url) = flag {
        return url.trim_end_matches('/').to_owned();
    }
    let api = api_url.trim_end_matches('/');
    if api == DEFAULT_API_URL {
        return "https://github.com".into();
    }
    api.strip_suffix("/api/v3").unwrap_or(api).to_owned()
}

#[cfg(test)]
mod tests {
    fn web_url(flags: &[&str]) -> String {
        #[derive(clap::Parser)]
        struct Serve {
            #[command(flatten)]
            args: crate::ServeArgs,
        }
        use clap::Parser as _;
        let argv = std::iter::once("serve").chain(flags.iter().copied());
        crate::ServerConfig::from(Serve::try_parse_from(argv).unwrap().args)
            .github
            .web_url
    }

    #[test]
    fn the_web_url_follows_the_api_url_unless_given() {
        assert_eq!(web_url(&[]), "https://github.com");
        let ghes = ["--github-api-url", "https://ghe.example/api/v3/"];
        assert_eq!(web_url(&ghes), "https://ghe.example");
        let given = [
            "--github-web-url",
            "https://web.example/",
            "--github-api-url",
            "http://fake:1",
        ];
        assert_eq!(web_url(&given), "https://web.example");
    }

    #[derive(clap::Parser)]
    struct Serve {
        #[command(flatten)]
        args: crate::ServeArgs,
    }

    /// Each secret's flag, variable and file flag are the ones clap parses: the refusal names
    /// what exists.
    #[test]
    fn every_secret_flag_has_its_variable_and_a_file_flag() {
        use clap::CommandFactory as _;
        let command = Serve::command();
        let arg = |id: &str| {
            command
                .get_arguments()
                .find(|a| a.get_id() == id)
                .unwrap_or_else(|| panic!("no argument {id}"))
        };
        for secret in super::SECRET_FLAGS {
            let value = arg(secret.id);
            assert_eq!(format!("--{}", value.get_long().unwrap()), secret.flag);
            assert_eq!(value.get_env().unwrap(), secret.env);
            let file = arg(&format!("{}_file", secret.id));
            let file_flag = format!("--{}", file.get_long().unwrap());
            assert_eq!(file_flag, format!("{}-file", secret.flag));
            assert_eq!(file.get_env().unwrap(), &*format!("{}_FILE", secret.env));
        }
    }

    #[test]
    fn a_secret_on_the_command_line_is_refused_by_name_without_its_value() {
        use clap::CommandFactory as _;
        let matches = |argv: &[&str]| {
            let argv = std::iter::once("serve").chain(argv.iter().copied());
            Serve::command().try_get_matches_from(argv).unwrap()
        };
        let refused = super::refuse_secrets_on_command_line(&matches(&[
            "--listen",
            "127.0.0.1:0",
            "--github-token",
            "ghp_s3cret",
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            refused.starts_with("--github-token on the command line is refused"),
            "{refused}"
        );
        assert!(refused.contains("BENCHGATE_GITHUB_TOKEN"), "{refused}");
        assert!(refused.contains("--github-token-file PATH"), "{refused}");
        assert!(!refused.contains("s3cret"), "{refused}");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, "s3cret\n").unwrap();
        let from_file = matches(&["--webhook-secret-file", file.to_str().unwrap()]);
        super::refuse_secrets_on_command_line(&from_file).unwrap();
        use clap::FromArgMatches as _;
        let config = crate::ServerConfig::from(Serve::from_arg_matches(&from_file).unwrap().args);
        assert_eq!(config.github.webhook_secret.as_deref(), Some("s3cret"));
    }
}
