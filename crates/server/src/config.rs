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

    /// Log format.
    #[arg(long, env = "BENCHGATE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,

    /// Largest request body accepted, in bytes (webhooks can be large).
    #[arg(long, env = "BENCHGATE_BODY_LIMIT", default_value_t = 25 * 1024 * 1024)]
    pub body_limit: usize,

    /// Seconds a request may take before it is answered 408.
    #[arg(long, env = "BENCHGATE_REQUEST_TIMEOUT", default_value_t = 60)]
    pub request_timeout_secs: u64,
}

impl fmt::Debug for ServeArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeArgs")
            .field("listen", &self.listen)
            .field(
                "database_url",
                &benchgate_store::mask_url(&self.database_url),
            )
            .field("log_format", &self.log_format)
            .field("body_limit", &self.body_limit)
            .field("request_timeout_secs", &self.request_timeout_secs)
            .finish()
    }
}
