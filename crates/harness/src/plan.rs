//! A suite as the harness runs it: the spec the scheduler stores with a comparison
//! (`BenchmarkSpec`, from `.benchgate.toml`) turned into the run command, format, schedule,
//! warm-up and environment. The agent and `benchgate compare --config` both start here, so a
//! laptop runs what CI runs.

use std::time::Duration;

use benchgate_api::agent::{BenchmarkSpec, ScheduleKind};

use crate::command::BenchCommand;
use crate::env::ScrubbedEnv;
use crate::formats::Format;
use crate::schedule::Schedule;

/// What one suite builds and runs on each side.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    /// Run once per side before the rounds, through `sh -c` in the side's worktree.
    pub build: Option<String>,
    /// The run command, through `sh -c` (its directory is set per side).
    pub run: BenchCommand,
    pub format: Format,
    pub schedule: Schedule,
    /// Leading rounds run and discarded.
    pub warmup: u32,
    /// The suite's own per-run timeout, when it sets one.
    pub timeout: Option<Duration>,
    /// The environment of benchmarked processes: the allow-list plus the suite's entries.
    pub run_env: ScrubbedEnv,
}

/// The plan of `spec`; the error says which part of the suite is wrong.
pub fn suite_plan(spec: &BenchmarkSpec) -> Result<SuitePlan, String> {
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
    Ok(SuitePlan {
        build: spec.build.clone(),
        run,
        format,
        schedule,
        warmup: spec.warmup,
        timeout: spec.timeout_secs.map(Duration::from_secs),
        run_env: run_env(&spec.env)?,
    })
}

/// The allow-list plus the suite's entries. Only `NAME=VALUE` entries are taken: a bare `NAME`
/// would copy the runner's own variable, and a suite must never be able to ask for a token.
fn run_env(entries: &[String]) -> Result<ScrubbedEnv, String> {
    let literal: Vec<String> = entries
        .iter()
        .filter(|entry| {
            let keep = entry.contains('=');
            if !keep {
                tracing::warn!(name = %entry, "suite env entry without a value ignored: the runner's own variables are never passed");
            }
            keep
        })
        .cloned()
        .collect();
    ScrubbedEnv::from_parent(&literal).map_err(|e| format!("suite env: {e}"))
}
