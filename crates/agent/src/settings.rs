//! How one job runs on this agent: the job's `[benchmark]` spec combined with the agent's own
//! flags (CPU pinning, ASLR, timeouts, the build environment), validated before any work starts.

use std::time::Duration;

use benchgate_api::agent::BenchmarkSpec;
use benchgate_harness::command::BenchCommand;
use benchgate_harness::env::ScrubbedEnv;
use benchgate_harness::formats::Format;
use benchgate_harness::plan::suite_plan;
use benchgate_harness::quieting::Quieting;
use benchgate_harness::schedule::Schedule;

use crate::config::AgentArgs;

/// Everything the harness needs for one job.
#[derive(Debug, Clone)]
pub struct JobSettings {
    /// The run command, through `sh -c` (its directory is set per side).
    pub run: BenchCommand,
    pub format: Format,
    pub schedule: Schedule,
    pub timeout: Duration,
    pub quieting: Quieting,
    /// The environment of benchmarked processes: the harness's allow-list plus the job's
    /// `NAME=VALUE` entries.
    pub run_env: ScrubbedEnv,
    /// The environment of builds: the allow-list plus the operator's `--build-env`.
    pub build_env: ScrubbedEnv,
    /// The suite's runs may use the network (`network = true`); a sandboxed run has loopback
    /// only otherwise.
    pub network: bool,
    /// Seconds each run measures a benchmark for, where the run command holds `{measure_secs}`.
    pub measure_secs: Option<f64>,
}

/// Combines the job's spec with the agent's flags; the error says what is wrong with the job.
pub fn job_settings(args: &AgentArgs, spec: &BenchmarkSpec) -> Result<JobSettings, String> {
    let plan = suite_plan(spec)?;
    Ok(JobSettings {
        run: plan.run,
        format: plan.format,
        schedule: plan.schedule,
        timeout: plan
            .timeout
            .unwrap_or(Duration::from_secs(args.run_timeout_secs)),
        quieting: Quieting {
            cpus: args.cpus(),
            disable_aslr: args.no_aslr,
            max_load: None,
        },
        run_env: plan.run_env,
        build_env: ScrubbedEnv::from_parent(&args.build_env)
            .map_err(|e| format!("--build-env: {e}"))?,
        network: spec.network,
        measure_secs: spec.measure_secs,
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> AgentArgs {
        <AgentArgsParser as clap::Parser>::parse_from([
            "a",
            "--server",
            "http://s",
            "--token-file",
            "/t",
            "--work-dir",
            "/w",
        ])
        .args
    }

    #[test]
    fn the_job_cannot_copy_the_agents_variables() {
        let spec: BenchmarkSpec =
            serde_json::from_str(r#"{"run":"./b","env":["BENCHGATE_TOKEN","MODE=fast","HOME"]}"#)
                .unwrap();
        let names = job_settings(&args(), &spec).unwrap().run_env.names();
        assert!(names.contains(&"MODE".to_owned()), "{names:?}");
        assert!(!names.contains(&"BENCHGATE_TOKEN".to_owned()), "{names:?}");
    }

    #[test]
    fn an_unknown_format_is_the_jobs_error() {
        let spec: BenchmarkSpec =
            serde_json::from_str(r#"{"run":"./b","format":"nonsense"}"#).unwrap();
        let err = job_settings(&args(), &spec).unwrap_err();
        assert!(err.contains("format"), "{err}");
    }

    #[derive(clap::Parser)]
    struct AgentArgsParser {
        #[command(flatten)]
        args: AgentArgs,
    }
}
