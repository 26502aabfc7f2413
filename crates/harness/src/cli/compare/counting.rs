//! `compare --counts`: what a session counts and which benchmarks a round named.

use benchgate_api::agent::ComparisonConfig;

use crate::cli::CliError;
use crate::cli::args::CompareArgs;
use crate::counted::CountPlan;
use crate::counter::Counter;
use crate::formats::Format;
use crate::rounds::Round;

/// What the session counts: `--counts` (or the suite's `counts`), with `--count-run` (or the
/// suite's `count_run`) for a harness; refused where the harness cannot run a benchmark a
/// fixed number of times, or the machine has no counter.
pub(super) fn count_plan(
    args: &CompareArgs,
    suite: Option<&ComparisonConfig>,
    format: Format,
) -> Result<Option<CountPlan>, CliError> {
    let spec = suite.map(|c| &c.benchmark);
    let Some(counts) = args.counts.or(spec.and_then(|b| b.counts)) else {
        return Ok(None);
    };
    let count_run = args
        .count_run
        .clone()
        .or(spec.and_then(|b| b.count_run.clone()));
    benchgate_api::counts::check(format, count_run.as_deref()).map_err(|(_, why)| {
        CliError::Usage(format!(
            "--counts {}: {}",
            counts.metric(),
            why.replace("`count_run`", "--count-run")
        ))
    })?;
    let counter = Counter::detect().map_err(CliError::Input)?;
    Ok(Some(CountPlan { counter, count_run }))
}

/// The benchmarks a round measured, each once, in its order.
pub(super) fn round_benchmarks(round: &Round) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in round.base.iter().chain(&round.head) {
        if !names.contains(&m.benchmark) {
            names.push(m.benchmark.clone());
        }
    }
    names
}
