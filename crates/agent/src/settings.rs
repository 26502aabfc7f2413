//! How one job runs on this agent: the job's `[benchmark]` spec combined with the agent's own
//! flags (CPU pinning, ASLR, timeouts, the build environment), validated before any work starts.

use std::time::Duration;

use benchgate_api::agent::{BenchmarkSpec, ScheduleKind};
use benchgate_harness::command::BenchCommand;
use benchgate_harness::env::ScrubbedEnv;
use benchgate_harness::formats::Format;
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
}

/// Combines the job's spec with the agent's flags; the error says what is wrong with the job.
pub fn job_settings(args: &AgentArgs, spec: &BenchmarkSpec) -> Result<JobSettings, String> {
    let run = BenchCommand::shell(&spec.run).map_err(|e| format!("run command: {e}"))?;
    let format: Format = spec
        .format
        .parse()
        .map_err(|e| format!("benchmark format: {e}"))?;
    let schedule = match spec.schedule {
        ScheduleKind::Abba => Schedule::Abba,
        ScheduleKind::Random => match spec.seed {
            Some(seed) => Schedule::Random { seed },
            None => {
                let schedule = Schedule::random_unseeded();
                tracing::info!(?schedule, "random schedule without a seed; picked one");
                schedule
            }
        },
    };
    Ok(JobSettings {
        run,
        format,
        schedule,
        timeout: Duration::from_secs(spec.timeout_secs.unwrap_or(args.run_timeout_secs)),
        quieting: Quieting {
            cpus: args.cpus(),
            disable_aslr: args.no_aslr,
            max_load: None,
        },
        run_env: run_env(&spec.env)?,
        build_env: ScrubbedEnv::from_parent(&args.build_env)
            .map_err(|e| format!("--build-env: {e}"))?,
    })
}

/// The allow-list plus the job's entries. Only `NAME=VALUE` entries are taken: a bare `NAME`
/// would copy the agent's own variable, and a job must never be able to ask for the token.
fn run_env(entries: &[String]) -> Result<ScrubbedEnv, String> {
    let literal: Vec<String> = entries
        .iter()
        .filter(|entry| {
            let keep = entry.contains('=');
            if !keep {
                tracing::warn!(name = %entry, "job env entry without a value ignored: the agent's own variables are never passed");
            }
            keep
        })
        .cloned()
        .collect();
    ScrubbedEnv::from_parent(&literal).map_err(|e| format!("job env: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_cannot_copy_the_agents_variables() {
        let env = run_env(&["BENCHGATE_TOKEN".into(), "MODE=fast".into(), "HOME".into()]).unwrap();
        let names = env.names();
        assert!(names.contains(&"MODE".to_owned()), "{names:?}");
        assert!(!names.contains(&"BENCHGATE_TOKEN".to_owned()), "{names:?}");
    }

    #[test]
    fn an_unknown_format_is_the_jobs_error() {
        let spec: BenchmarkSpec =
            serde_json::from_str(r#"{"run":"./b","format":"nonsense"}"#).unwrap();
        let args = <AgentArgsParser as clap::Parser>::parse_from([
            "a",
            "--server",
            "http://s",
            "--token-file",
            "/t",
            "--work-dir",
            "/w",
        ])
        .args;
        let err = job_settings(&args, &spec).unwrap_err();
        assert!(err.contains("format"), "{err}");
    }

    #[derive(clap::Parser)]
    struct AgentArgsParser {
        #[command(flatten)]
        args: AgentArgs,
    }
}
