//! One claimed job from start to end: check out and build both sides, run the warm-up and the
//! measured rounds through the harness, upload each round as it finishes, and end the job the
//! way the circumstances demand (complete, fail, release, or walk away when the lease is lost).
//! Once a stop is requested every wait here is bounded by the drain ([`crate::shutdown::Drain`]):
//! what is not done by then is named in the log and left to the lease expiry.

mod count;
mod finish;
mod prepare;

use finish::finish;
pub(crate) use finish::work_dir_full;
use prepare::{Prepared, env_name, prepare, side_build_envs};

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use benchgate_api::agent::ClaimedJob;
use benchgate_harness::rounds::{RoundRunner, RunnerConfig};
use benchgate_harness::sandbox::isolation_name;
use tracing::Instrument;

use crate::checkout::{self};
use crate::client::{ClientError, with_retry};
use crate::heartbeat::{self, JobSignals};
use crate::round_upload::{build_time_samples, round_upload};
use crate::settings;
use crate::upload::{Uploader, UploadsEnd};
use crate::{AgentContext, JobEnd};

/// Longest wait for a round's receipt before the next round starts anyway.
const DECISION_WAIT: Duration = Duration::from_secs(10);

/// Why the round loop stopped.
#[derive(Debug)]
enum Stop {
    /// Every round ran and the server stored it.
    Done { rounds: u32 },
    /// Both sides built to byte-identical `artifacts`: nothing to measure.
    IdenticalBuild(benchgate_api::agent::IdenticalBuild),
    /// The build or a run failed, or the job cannot run on this agent.
    Failed { reason: String, log_tail: String },
    /// The server cancelled the job; what ran is uploaded.
    Cancelled,
    /// The agent is shutting down; what ran is uploaded, as far as the drain allowed.
    Shutdown,
    /// Another holder has the job: nothing more may be written.
    LeaseLost,
}

/// Runs one claimed job to its end and reports how it ended.
pub async fn run(ctx: &AgentContext, claim: ClaimedJob) -> JobEnd {
    let span = tracing::info_span!("job", job = claim.job_id, attempt = claim.attempt);
    async move {
        tracing::info!(
            repository = %claim.repository.name,
            base = %claim.base_sha,
            head = %claim.head_sha,
            rounds = claim.benchmark.rounds,
            isolation = isolation_name(ctx.sandbox.as_ref()),
            limits = %ctx.containment.describe(),
            "job claimed"
        );
        let signals = Arc::new(JobSignals::default());
        let heartbeat = heartbeat::spawn(
            ctx.client.clone(),
            claim.job_id,
            claim.lease_token.clone(),
            Duration::from_secs(claim.heartbeat_secs.max(1)),
            Arc::clone(&signals),
        );
        let stop = execute(ctx, &claim, &signals).await;
        let end = finish(ctx, &claim, stop).await;
        heartbeat.abort();
        end
    }
    .instrument(span)
    .await
}

async fn execute(ctx: &AgentContext, claim: &ClaimedJob, signals: &Arc<JobSignals>) -> Stop {
    let settings = match settings::job_settings(&ctx.args, &claim.benchmark) {
        Ok(s) => s,
        Err(reason) => {
            return Stop::Failed {
                log_tail: reason.clone(),
                reason,
            };
        }
    };

    let sides = claim.sides.clone().unwrap_or_default();
    let build_envs = match side_build_envs(&settings.build_env, &sides) {
        Ok(envs) => envs,
        Err(reason) => return failed(reason),
    };
    // Git and the builds block; they run on a blocking thread while heartbeats go on.
    let prepared = {
        let work_dir = ctx.args.work_dir.clone();
        let claim = claim.clone();
        let build_env = build_envs;
        let sandbox = ctx.sandbox.clone();
        let containment = ctx.containment.clone();
        let span = tracing::Span::current();
        let building = tokio::task::spawn_blocking(move || {
            span.in_scope(|| {
                prepare(
                    &work_dir,
                    &claim,
                    &build_env,
                    sandbox.as_ref(),
                    Some(&containment),
                )
            })
        });
        match within_drain(ctx, ctx.drain().uploads, building).await {
            Some(prepared) => prepared,
            None => {
                tracing::warn!("the drain ended during checkout or build; abandoned");
                return Stop::Shutdown;
            }
        }
    };
    let prepared = match prepared {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "checkout or build failed");
            return Stop::Failed {
                reason: first_line(&e.to_string()),
                log_tail: e.log_tail(),
            };
        }
        Err(e) => return failed(format!("checkout task: {e}")),
    };
    if let Some(stop) = interruption(ctx, signals) {
        return stop;
    }
    if let Some(request) = &claim.profile {
        return profile(ctx, claim, settings, prepared, request.clone()).await;
    }
    if let Some(stop) = identical_build(claim, &prepared).await {
        return stop;
    }

    let (base_run, head_run) = match (
        settings
            .run
            .clone()
            .in_dir(&prepared.base)
            .with_env(&sides.base.run),
        settings
            .run
            .clone()
            .in_dir(&prepared.head)
            .with_env(&sides.head.run),
    ) {
        (Ok(base), Ok(head)) => (base, head),
        (Err(e), _) | (_, Err(e)) => return failed(format!("the job's side environment: {e}")),
    };
    if claim.sides.is_some() {
        tracing::info!(
            base = ?sides.base.run.iter().chain(&sides.base.build).map(|e| env_name(e)).collect::<Vec<_>>(),
            head = ?sides.head.run.iter().chain(&sides.head.build).map(|e| env_name(e)).collect::<Vec<_>>(),
            "the sides differ beyond their commits (canary or layout session)"
        );
    }
    // A length the server chose that a side's harness cannot read would fail every run.
    let measure_secs = settings.measure_secs.map(|secs| {
        let (taken, why) = benchgate_harness::run_lengths::length_taken(
            secs,
            settings.format,
            &[prepared.base.as_path(), prepared.head.as_path()],
        );
        if let Some(why) = why {
            tracing::warn!(measure_secs = secs, taken, "{why}");
        }
        taken
    });
    let mut runner = RoundRunner::new(
        base_run,
        head_run,
        RunnerConfig {
            format: settings.format,
            env: settings.run_env.clone(),
            timeout: Some(settings.timeout),
            quieting: settings.quieting.clone(),
            sandbox: crate::isolation::for_runs(ctx.sandbox.as_ref(), settings.network),
            containment: Some(ctx.containment.clone()),
            measure_secs,
            ..RunnerConfig::default()
        },
        settings.schedule,
    );
    let warmup = claim.benchmark.warmup;
    let warming = tokio::task::spawn_blocking(move || {
        // The error as text: the runner is moved back only on success.
        runner
            .warm_up(warmup)
            .map(|()| runner)
            .map_err(|e| e.to_string())
    });
    let Some(warmed) = within_drain(ctx, ctx.drain().uploads, warming).await else {
        tracing::warn!("the drain ended during the warm-up; abandoned");
        return Stop::Shutdown;
    };
    runner = match warmed {
        Ok(Ok(r)) => r,
        Ok(Err(_)) if ctx.shutdown.requested() => return stopped_run(),
        Ok(Err(message)) => return measurement_failed(&message),
        Err(e) => return failed(format!("warm-up task: {e}")),
    };
    tracing::info!(warmup, "warm-up done and discarded");

    let uploader = Uploader::spawn(
        ctx.client.clone(),
        claim.job_id,
        Arc::clone(signals),
        ctx.args.max_backoff(),
    );
    let mut interrupted = None;
    // Uploads of counted runs, beside the timed rounds' own.
    let mut extra_uploads = 0;
    let measuring = std::time::Instant::now();
    let budget = claim.benchmark.budget_secs.map(Duration::from_secs);
    for k in 0..claim.benchmark.rounds {
        if let Some(stop) = interruption(ctx, signals) {
            interrupted = Some(stop);
            break;
        }
        if k >= 2
            && let Some(budget) = budget
            && measuring.elapsed() >= budget
        {
            // Two rounds at least: one pair has no spread to judge.
            tracing::info!(
                rounds = k,
                planned = claim.benchmark.rounds,
                budget_secs = budget.as_secs(),
                "the suite's time budget is spent; the check concludes with these rounds"
            );
            break;
        }
        if claim.stop_when_decided && runner.can_narrow() {
            // Only what the gate still waits on; decided rows keep their interval. Jobs that
            // run their planned rounds (main's history, merge groups) keep every benchmark.
            if let Some(filter) = runner.run_only(signals.undecided().as_deref()) {
                tracing::info!(round = k, benchmarks = %filter, "the rounds from here run only the undecided benchmarks");
            }
        }
        let running = tokio::task::spawn_blocking(move || {
            let round = runner.run_round();
            (runner, round)
        });
        let Some(done) = within_drain(ctx, ctx.drain().uploads, running).await else {
            // The blocking thread goes on until its run ends; the process exits without it.
            tracing::warn!(
                round = k,
                "the drain ended before this round finished; abandoned unmeasured"
            );
            interrupted = Some(Stop::Shutdown);
            break;
        };
        let round = match done {
            Ok((r, Ok(round))) => {
                runner = r;
                round
            }
            Ok((_, Err(_))) if ctx.shutdown.requested() => {
                interrupted = Some(stopped_run());
                break;
            }
            Ok((_, Err(e))) => {
                // Keep what was measured before the failure.
                let _ = uploader
                    .finish_until(ctx.shutdown.deadline(ctx.drain().uploads))
                    .await;
                return measurement_failed(&e.to_string());
            }
            Err(e) => return failed(format!("round task: {e}")),
        };
        if signals.lease_lost() {
            return Stop::LeaseLost;
        }
        tracing::info!(round = round.index, "round measured");
        let mut upload = round_upload(&round, &claim.lease_token, claim.attempt);
        if round.index == 0 {
            upload
                .samples
                .extend(build_time_samples(prepared.build_times));
        }
        uploader.send(upload);
        if k == 0
            && let Some(counts) = claim.benchmark.counts
        {
            // After the first timed round, whose output names the benchmarks to count.
            let (back, counted) = count::counted_runs(ctx, claim, counts, runner, &round).await;
            runner = match (back, counted) {
                (Some(r), Ok(counted)) => {
                    extra_uploads = counted.len() as u32;
                    for c in &counted {
                        uploader.send(round_upload(c, &claim.lease_token, claim.attempt));
                    }
                    r
                }
                (_, Err(stop)) => {
                    let _ = uploader
                        .finish_until(ctx.shutdown.deadline(ctx.drain().uploads))
                        .await;
                    return stop;
                }
                (None, Ok(_)) => unreachable!("the runner comes back with the counts"),
            };
        }
        if claim.stop_when_decided && k + 1 < claim.benchmark.rounds {
            // The receipt of this round says whether another is worth running; the wait is
            // the server's analysis, short beside a round.
            signals
                .wait_uploaded(k + 1 + extra_uploads, DECISION_WAIT)
                .await;
            if signals.decided() {
                tracing::info!(
                    rounds = k + 1,
                    planned = claim.benchmark.rounds,
                    "the gate has its answer; the remaining rounds are not run"
                );
                break;
            }
        }
    }
    match uploader
        .finish_until(ctx.shutdown.deadline(ctx.drain().uploads))
        .await
    {
        UploadsEnd::Stored(uploads) => interrupted.unwrap_or(Stop::Done {
            rounds: uploads.saturating_sub(extra_uploads),
        }),
        UploadsEnd::Refused(ClientError::LeaseLost | ClientError::Unauthorized) => Stop::LeaseLost,
        UploadsEnd::Refused(e) => failed(format!("the server refused a round: {e}")),
        UploadsEnd::GaveUp { unsent } => {
            tracing::warn!(
                job = claim.job_id,
                attempt = claim.attempt,
                rounds = ?unsent,
                "the drain ended with rounds not uploaded; they are left to the lease expiry, which re-runs the job elsewhere"
            );
            Stop::Shutdown
        }
    }
}

/// `Some` when the job's `artifacts` are byte-identical on both sides: nothing that runs
/// differs. Only for a comparison of two commits as they are: an A/A session, a canary (its
/// runs differ by their environment) and a layout session (its builds differ by design) are
/// measured whatever their builds hold. Unreadable outputs are logged and measured.
async fn identical_build(claim: &ClaimedJob, prepared: &Prepared) -> Option<Stop> {
    let globs = &claim.benchmark.artifacts;
    if globs.is_empty() || claim.sides.is_some() || claim.base_sha == claim.head_sha {
        return None;
    }
    let globs = match benchgate_api::paths::PathGlobs::try_from(globs.clone()) {
        Ok(g) => g,
        Err(e) => {
            tracing::warn!(error = %e, "artifacts globs do not compile; measuring");
            return None;
        }
    };
    let (base, head) = (prepared.base.clone(), prepared.head.clone());
    let span = tracing::Span::current();
    let compared = tokio::task::spawn_blocking(move || {
        span.in_scope(|| {
            use benchgate_harness::artifacts;
            let (b, h) = (artifacts::digest(&base, &globs)?, artifacts::digest(&head, &globs)?);
            let same = artifacts::identical(&b, &h);
            if same.is_none() {
                tracing::info!(outputs = %artifacts::difference(&b, &h), "the builds differ; measuring");
            }
            Ok::<_, artifacts::ArtifactError>(same)
        })
    })
    .await;
    match compared {
        Ok(Ok(same)) => same.map(Stop::IdenticalBuild),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "cannot read the artifacts; measuring");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "artifacts task failed; measuring");
            None
        }
    }
}

/// A profile job: both sides under the profiler, then one upload; no rounds.
async fn profile(
    ctx: &AgentContext,
    claim: &ClaimedJob,
    settings: settings::JobSettings,
    prepared: Prepared,
    request: benchgate_api::agent::ProfileRequest,
) -> Stop {
    tracing::info!(runs = request.runs, by = %request.requested_by, "profiling both sides");
    let sandbox = ctx.sandbox.clone();
    let containment = ctx.containment.clone();
    let lease = claim.lease_token.clone();
    let span = tracing::Span::current();
    let profiling = tokio::task::spawn_blocking(move || {
        span.in_scope(|| {
            crate::profile::profile_both(
                &settings,
                checkout::Confine {
                    sandbox: sandbox.as_ref(),
                    limits: Some(&containment),
                },
                &prepared.base,
                &prepared.head,
                &request,
                &lease,
            )
        })
    });
    let upload = match within_drain(ctx, ctx.drain().uploads, profiling).await {
        None => return Stop::Shutdown,
        Some(Ok(Ok(upload))) => upload,
        Some(Ok(Err(_))) if ctx.shutdown.requested() => return stopped_run(),
        Some(Ok(Err(message))) => return measurement_failed(&message),
        Some(Err(e)) => return failed(format!("profile task: {e}")),
    };
    let max = ctx.args.max_backoff();
    let sent = within_drain(
        ctx,
        ctx.drain().uploads,
        with_retry("profile upload", max, || {
            ctx.client.upload_profile(claim.job_id, &upload)
        }),
    )
    .await;
    match sent {
        None => Stop::Shutdown,
        Some(Ok(())) => Stop::Done { rounds: 0 },
        Some(Err(ClientError::LeaseLost | ClientError::Unauthorized)) => Stop::LeaseLost,
        Some(Err(e)) => failed(format!("the server refused the profile: {e}")),
    }
}

/// `work`'s output, or `None` when a stop was requested and `limit` (a part of the drain)
/// passed first.
async fn within_drain<F: Future>(
    ctx: &AgentContext,
    limit: Duration,
    work: F,
) -> Option<F::Output> {
    tokio::select! {
        out = work => Some(out),
        () = ctx.shutdown.deadline(limit) => None,
    }
}

/// A run that failed after a stop was requested: a service manager that signals the whole
/// group killed it too, so it says nothing about the benchmark. The job is released, not failed.
fn stopped_run() -> Stop {
    tracing::warn!("a run failed while stopping; the round is abandoned and the job released");
    Stop::Shutdown
}

/// A reason to stop before the next round: the lease is gone, the job was cancelled, or the
/// agent is shutting down.
fn interruption(ctx: &AgentContext, signals: &JobSignals) -> Option<Stop> {
    if signals.lease_lost() {
        Some(Stop::LeaseLost)
    } else if ctx.shutdown.requested() {
        Some(Stop::Shutdown)
    } else if signals.cancelled() {
        Some(Stop::Cancelled)
    } else {
        None
    }
}

fn failed(reason: String) -> Stop {
    Stop::Failed {
        log_tail: reason.clone(),
        reason,
    }
}

/// A failed run: the first line says what, the rest (the stderr tail) goes to the log tail.
fn measurement_failed(message: &str) -> Stop {
    tracing::warn!(reason = %first_line(message), "a benchmark run failed");
    Stop::Failed {
        reason: first_line(message),
        log_tail: checkout::tail_lines(message, 40),
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}
