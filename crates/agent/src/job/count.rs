//! A job's counted runs (`counts = "instructions"`): each side under the runner's instruction
//! counter, twice, after the first timed round. A runner without a counter fails the job with
//! the reason: a suite that asks for counts must not pass on time alone without a word.

use benchgate_api::Counts;
use benchgate_api::agent::ClaimedJob;
use std::str::FromStr;

use benchgate_api::counts::check;
use benchgate_harness::counted::CountPlan;
use benchgate_harness::rounds::{Round, RoundRunner};

use super::{Stop, measurement_failed, within_drain};
use crate::AgentContext;

/// The counted runs as rounds of count rows (indexes 0, 1), and the runner back; or how the
/// job stops.
pub(super) async fn counted_runs(
    ctx: &AgentContext,
    claim: &ClaimedJob,
    counts: Counts,
    runner: RoundRunner,
    first: &Round,
) -> (Option<RoundRunner>, Result<Vec<Round>, Stop>) {
    let counter = match &ctx.counter {
        Ok(c) => *c,
        Err(why) => {
            let reason = format!("counts = \"{}\": {why}", counts.metric());
            tracing::warn!(%reason, "cannot count on this runner");
            return (None, Err(super::failed(reason)));
        }
    };
    let format = benchgate_harness::formats::Format::from_str(&claim.benchmark.format);
    if let Some((_, why)) = format
        .ok()
        .and_then(|f| check(f, claim.benchmark.count_run.as_deref()).err())
    {
        let reason = format!("counts = \"{}\": {why}", counts.metric());
        return (None, Err(super::failed(reason)));
    }
    let plan = CountPlan {
        counter,
        count_run: claim.benchmark.count_run.clone(),
    };
    let mut names: Vec<String> = Vec::new();
    for m in first.base.iter().chain(&first.head) {
        if !names.contains(&m.benchmark) {
            names.push(m.benchmark.clone());
        }
    }
    tracing::info!(
        counter = counter.name(),
        benchmarks = names.len(),
        "counting both sides"
    );
    let started = std::time::Instant::now();
    let span = tracing::Span::current();
    // A counted run is uploaded as a round of count rows: the job's plan bounds how many.
    let max_runs = benchgate_api::counts::MAX_COUNTED_RUNS.min(claim.benchmark.rounds);
    let counting = tokio::task::spawn_blocking(move || {
        let counted = span.in_scope(|| {
            runner
                .count_runs(&plan, &names, max_runs)
                .map_err(|e| e.to_string())
        });
        (runner, counted)
    });
    match within_drain(ctx, ctx.drain().uploads, counting).await {
        None => (None, Err(Stop::Shutdown)),
        Some(Ok((runner, Ok(counted)))) => {
            tracing::info!(
                counter = counter.name(),
                secs = started.elapsed().as_secs_f64(),
                "counted runs done"
            );
            (Some(runner), Ok(counted))
        }
        Some(Ok((_, Err(_)))) if ctx.shutdown.requested() => (None, Err(Stop::Shutdown)),
        Some(Ok((_, Err(e)))) => (None, Err(measurement_failed(&e))),
        Some(Err(e)) => (None, Err(super::failed(format!("count task: {e}")))),
    }
}
