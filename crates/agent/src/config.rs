//! `benchgate agent` configuration: flags with `BENCHGATE_*` environment fallbacks. The token
//! never appears in `Debug` output or in `--help` (its environment value is hidden).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Flags of `benchgate agent`.
#[derive(Clone, clap::Args)]
pub struct AgentArgs {
    /// Base URL of the benchgate server, e.g. `https://bench.example.com`.
    #[arg(long, env = "BENCHGATE_SERVER")]
    pub server: String,

    /// This runner's bearer token, as `benchgate runner add` printed it.
    #[arg(long, env = "BENCHGATE_TOKEN", hide_env_values = true)]
    pub token: String,

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

    /// The CPUs to pin runs to; empty: no pinning.
    pub fn cpus(&self) -> Vec<usize> {
        self.pin_cpus.clone().map(|c| c.0).unwrap_or_default()
    }
}

impl fmt::Debug for AgentArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentArgs")
            .field("server", &self.server)
            .field("token", &"***")
            .field("work_dir", &self.work_dir)
            .field("labels", &self.labels)
            .field("pin_cpus", &self.pin_cpus)
            .field("no_aslr", &self.no_aslr)
            .field("build_env", &self.build_env)
            .field("run_timeout_secs", &self.run_timeout_secs)
            .field("max_backoff_secs", &self.max_backoff_secs)
            .field("sandbox", &self.sandbox)
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
    fn debug_masks_the_token_and_cpu_lists_parse() {
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
        assert_eq!(cli.args.cpus(), vec![0, 2, 3]);
        assert_eq!(cli.args.labels, vec!["a", "b"]);
    }
}
