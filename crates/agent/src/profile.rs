//! A profile job: after a verdict, each side's run command runs a few times under perf (outside
//! the sandbox, which still holds the benchmark) and the folded stacks are uploaded. These runs
//! are never samples; a runner without a usable profiler uploads the one-line reason instead.

use std::path::Path;

use crate::checkout::Confine;
use benchgate_api::Format;
use benchgate_api::agent::{ProfileRequest, ProfileUpload};
use benchgate_harness::profile::{
    CALLGRIND_EVENT, Profiler, SideProfile, callgrind_side, profile_side, profiler,
};
use benchgate_harness::rounds::RunnerConfig;

use crate::settings::JobSettings;

/// Profiles base then head, `request.runs` runs each; `Err` with what failed.
pub fn profile_both(
    settings: &JobSettings,
    confine: Confine<'_>,
    base: &Path,
    head: &Path,
    request: &ProfileRequest,
    lease_token: &str,
) -> Result<ProfileUpload, String> {
    if settings.format == Format::Gungraun {
        return callgrind_both(settings, confine, base, head, lease_token);
    }
    let event = match profiler() {
        Profiler::Perf { event } => event.clone(),
        Profiler::Unavailable { reason } => {
            tracing::warn!(%reason, "no profiler on this runner; the report says so");
            return Ok(ProfileUpload {
                lease_token: lease_token.to_owned(),
                event: None,
                unavailable: Some(reason.clone()),
                runs: 0,
                base: String::new(),
                head: String::new(),
            });
        }
    };
    let config = runner_config(settings, confine);
    let mut sides = Vec::with_capacity(2);
    for (name, dir) in [("base", base), ("head", head)] {
        let command = as_profiled(settings).in_dir(dir);
        let side = profile_side(
            &command,
            &config,
            &event,
            request.runs,
            benchgate_profile::Limits::default(),
        )
        .map_err(|e| format!("profiling {name}: {e}"))?;
        tracing::info!(
            side = name,
            runs = side.runs,
            samples = side.folded.total(),
            %event,
            "side profiled"
        );
        sides.push(side.folded.to_text());
    }
    let head = sides.pop().unwrap_or_default();
    let base = sides.pop().unwrap_or_default();
    Ok(ProfileUpload {
        lease_token: lease_token.to_owned(),
        event: Some(event),
        unavailable: None,
        runs: request.runs,
        base,
        head,
    })
}

/// A gungraun suite: its own callgrind output, exact, from one more run of each side.
fn callgrind_both(
    settings: &JobSettings,
    confine: Confine<'_>,
    base: &Path,
    head: &Path,
    lease_token: &str,
) -> Result<ProfileUpload, String> {
    let config = runner_config(settings, confine);
    let side = |name: &str, dir: &Path| -> Result<SideProfile, String> {
        let command = as_profiled(settings).in_dir(dir);
        callgrind_side(&command, &config, benchgate_profile::Limits::default())
            .map_err(|e| format!("profiling {name}: {e}"))
    };
    let (base, head) = (side("base", base)?, side("head", head)?);
    tracing::info!(
        base = base.folded.total(),
        head = head.folded.total(),
        "both sides' callgrind output folded"
    );
    Ok(ProfileUpload {
        lease_token: lease_token.to_owned(),
        event: Some(CALLGRIND_EVENT.to_owned()),
        unavailable: None,
        runs: 1,
        base: base.folded.to_text(),
        head: head.folded.to_text(),
    })
}

/// The run command with its placeholders set as a full round sets them: every benchmark, the
/// suite's run length.
fn as_profiled(settings: &JobSettings) -> benchgate_harness::command::BenchCommand {
    use benchgate_harness::rounds::{benchmarks_filter, with_benchmarks, with_measure};
    with_measure(
        &with_benchmarks(&settings.run, &benchmarks_filter(None)),
        settings.measure_secs,
    )
}

/// How the profiled runs are made: as the job's rounds are, within the same limits.
fn runner_config(settings: &JobSettings, confine: Confine<'_>) -> RunnerConfig {
    RunnerConfig {
        format: settings.format,
        env: settings.run_env.clone(),
        timeout: Some(settings.timeout),
        quieting: settings.quieting.clone(),
        sandbox: crate::isolation::for_runs(confine.sandbox, settings.network),
        containment: confine.limits.cloned(),
        measure_secs: settings.measure_secs,
        ..RunnerConfig::default()
    }
}
