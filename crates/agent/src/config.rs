//! `benchgate agent` configuration: flags with `BENCHGATE_*` environment fallbacks. The token is
//! read from a file or `BENCHGATE_TOKEN` (see [`crate::token`]), never from the command line, and
//! never appears in `Debug` output.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Flags of `benchgate agent`.
#[derive(Clone, clap::Args)]
pub struct AgentArgs {
    /// Base URL of the benchgate server, e.g. `https://bench.example.com`.
    #[arg(long, env = "BENCHGATE_SERVER")]
    pub server: String,

    /// File holding this runner's token, as `benchgate runner add` printed it (mode 600; the
    /// text is trimmed). Alternatively set BENCHGATE_TOKEN to the token itself; `--token` on
    /// the command line is refused, since every local user can read an agent's arguments.
    #[arg(long, env = "BENCHGATE_TOKEN_FILE", value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// Refused (see `--token-file`); parsed only so the refusal can say what to do instead.
    /// The value is dropped at once: it is never stored, shown or logged.
    #[arg(long = "token", hide = true, value_name = "TOKEN", value_parser = drop_argv_token)]
    pub argv_token: Option<ArgvToken>,

    /// Directory for cached clones and worktrees; kept between jobs so builds are incremental.
    #[arg(long, env = "BENCHGATE_WORK_DIR")]
    pub work_dir: PathBuf,

    /// Only claim jobs for these runner labels (comma-separated); default: all of the runner's.
    #[arg(long, env = "BENCHGATE_LABELS", value_delimiter = ',')]
    pub labels: Vec<String>,

    /// Pin every benchmarked process to these logical CPUs, e.g. `2,3` or `4-7`.
    #[arg(long, env = "BENCHGATE_PIN_CPUS", value_parser = parse_cpus)]
    pub pin_cpus: Option<CpuList>,

    /// Run benchmarked processes with address-space randomisation disabled.
    #[arg(long, env = "BENCHGATE_NO_ASLR")]
    pub no_aslr: bool,

    /// Environment variables the build gets besides PATH, HOME, LANG and TMPDIR (comma-separated
    /// `NAME` or `NAME=VALUE`). Nothing else of the agent's environment reaches a build or a run.
    #[arg(long, env = "BENCHGATE_BUILD_ENV", value_delimiter = ',')]
    pub build_env: Vec<String>,

    /// Seconds one benchmark run may take before its process group is killed.
    #[arg(
        long = "run-timeout",
        env = "BENCHGATE_RUN_TIMEOUT",
        default_value_t = 600
    )]
    pub run_timeout_secs: u64,

    /// Longest wait, in seconds, between retries while the server is unreachable.
    #[arg(
        long = "max-backoff",
        env = "BENCHGATE_MAX_BACKOFF",
        default_value_t = 30.0
    )]
    pub max_backoff_secs: f64,

    /// How PR builds and runs are isolated (bubblewrap).
    #[command(flatten)]
    pub sandbox: crate::isolation::SandboxArgs,

    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
    /// Seconds a stop (SIGTERM, SIGINT) may take: the current round may finish and pending
    /// uploads are retried for the first four fifths (up to N−1 s), the lease is released in
    /// the rest; rounds still not uploaded are logged and left to the lease expiry. A second
    /// signal ends the drain at once.
    #[arg(long = "drain-secs", env = "BENCHGATE_DRAIN_SECS", default_value_t = DEFAULT_DRAIN_SECS)]
    pub drain_secs: u64,
}

/// The default `--drain-secs`: well inside docker's 10 s stop timeout and systemd's 90 s.
pub const DEFAULT_DRAIN_SECS: u64 = 5;

/// That `--token` was given on the command line; deliberately holds nothing of the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgvToken;

fn drop_argv_token(_value: &str) -> Result<ArgvToken, String> {
    Ok(ArgvToken)
}

/// A parsed `--pin-cpus` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

fn parse_cpus(text: &str) -> Result<CpuList, String> {
    benchgate_harness::quieting::parse_cpu_list(text)
        .map(CpuList)
        .map_err(|e| e.to_string())
}

impl AgentArgs {
    /// The longest pause between retries.
    pub fn max_backoff(&self) -> Duration {
        Duration::from_secs_f64(self.max_backoff_secs.max(0.01))
    }

    /// How long a requested stop may take before the agent exits.
    pub fn drain(&self) -> Duration {
        Duration::from_secs(self.drain_secs)
    }

    /// Where the token comes from; refuses `--token` on the command line and ambiguity.
    pub fn token_source(&self) -> Result<crate::token::TokenSource, crate::token::TokenError> {
        crate::token::token_source(
            self.argv_token.is_some(),
            self.token_file.as_deref(),
            std::env::var_os(crate::token::TOKEN_ENV).is_some(),
        )
    }

    /// The CPUs to pin runs to; empty: no pinning.
    pub fn cpus(&self) -> Vec<usize> {
        self.pin_cpus.clone().map(|c| c.0).unwrap_or_default()
    }
}

impl fmt::Debug for AgentArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentArgs")
            .field("server", &self.server)
            .field("token_file", &self.token_file)
            .field("argv_token", &self.argv_token.map(|_| "***"))
            .field("work_dir", &self.work_dir)
            .field("labels", &self.labels)
            .field("pin_cpus", &self.pin_cpus)
            .field("no_aslr", &self.no_aslr)
            .field("build_env", &self.build_env)
            .field("run_timeout_secs", &self.run_timeout_secs)
            .field("max_backoff_secs", &self.max_backoff_secs)
            .field("sandbox", &self.sandbox)
            .field("drain_secs", &self.drain_secs)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: AgentArgs,
    }

    #[test]
    fn a_token_on_the_command_line_is_parsed_only_to_be_refused() {
        let cli = Cli::try_parse_from([
            "agent",
            "--server",
            "http://s",
            "--token",
            "tok-very-secret",
            "--work-dir",
            "/tmp/w",
            "--pin-cpus",
            "0,2-3",
            "--labels",
            "a,b",
        ])
        .unwrap();
        let shown = format!("{:?}", cli.args);
        assert!(!shown.contains("tok-very-secret"), "{shown}");
        let refusal = cli.args.token_source().unwrap_err().to_string();
        assert!(refusal.contains("--token-file"), "{refusal}");
        assert!(!refusal.contains("tok-very-secret"), "{refusal}");
        assert_eq!(cli.args.cpus(), vec![0, 2, 3]);
        assert_eq!(cli.args.labels, vec!["a", "b"]);
        assert_eq!(cli.args.drain(), Duration::from_secs(DEFAULT_DRAIN_SECS));
    }
}
