//! `benchgate serve` configuration: flags with `BENCHGATE_*` environment fallbacks.

use std::fmt;
use std::net::SocketAddr;

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

    /// Admin API token (`POST /api/v1/comparisons`); the admin API answers 401 without one.
    #[arg(long, env = "BENCHGATE_ADMIN_TOKEN", hide_env_values = true)]
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

    /// Token the dashboard and its read API require (bearer, `?token=` or cookie); unset, they
    /// are public and read-only.
    #[arg(long, env = "BENCHGATE_DASHBOARD_TOKEN", hide_env_values = true)]
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
    pub github: crate::github_args::GitHubArgs,
}

fn planted_pct(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!(
            "expected a percentage above 0 and at most 100, found {text:?}"
        )),
    }
}

impl fmt::Debug for ServeArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeArgs")
            .field("listen", &self.listen)
            .field(
                "database_url",
                &benchgate_store::mask_url(&self.database_url),
            )
            .field("database_pool_size", &self.database_pool_size)
            .field("log_format", &self.log_format)
            .field("body_limit", &self.body_limit)
            .field("request_timeout_secs", &self.request_timeout_secs)
            .field("admin_token", &self.admin_token.as_ref().map(|_| "***"))
            .field("lease_secs", &self.lease_secs)
            .field("max_attempts", &self.max_attempts)
            .field("calibration_interval", &self.calibration_interval)
            .field("claim_wait_secs", &self.claim_wait_secs)
            .field("profile_runs", &self.profile_runs)
            .field("bisect_max_rounds", &self.bisect_max_rounds)
            .field("canary_every", &self.canary_every.to_string())
            .field("canary_planted", &self.canary_planted)
            .field("canary_rounds", &self.canary_rounds)
            .field(
                "dashboard_token",
                &self.dashboard_token.as_ref().map(|_| "***"),
            )
            .field("github", &self.github)
            .finish()
    }
}
