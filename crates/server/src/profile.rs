//! Differential profiles: a profile job is asked when a PR comparison ends slower (and by
//! `/benchgate profile`); the agent runs both sides under perf and uploads folded stacks; this
//! module serves the differential flame graph and the function changes. Profiled runs are
//! never samples: the profiler changes timings.

use benchgate_api::agent::ProfileRequest;
use benchgate_store::model::{Comparison, ComparisonState, NewProfileJob, OutboxId, Priority};

use crate::report;
use crate::tasks::{Context, TaskError};

/// Runs per side when a maintainer asks and automatic profiles are off.
const ASKED_RUNS: u32 = 3;

/// Asks for a profile of `comparison` on its runner label, once per `origin`; `true` when a
/// job was added. Priority `NORMAL`, created after the comparison's own jobs: it runs after them.
async fn ask(
    cx: &Context,
    comparison: &Comparison,
    request: ProfileRequest,
    origin: String,
) -> Result<bool, TaskError> {
    let job = NewProfileJob {
        request,
        priority: Priority::NORMAL,
        max_attempts: cx.config.max_attempts,
        origin,
    };
    match cx.store.request_profile(comparison.id, &job).await {
        Ok(id) => Ok(id.is_some()),
        // Superseded or cancelled meanwhile: a newer head will be judged on its own.
        Err(benchgate_store::StoreError::Conflict(why)) => {
            tracing::info!(comparison = %comparison.id, %why, "profile not asked");
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

/// `/benchgate profile [BENCHMARK]` from `by`, carried out by outbox row `row`.
pub async fn request(
    cx: &Context,
    comparison: &Comparison,
    rows: Vec<String>,
    by: &str,
    row: OutboxId,
) -> Result<bool, TaskError> {
    let runs = match cx.config.profile_runs {
        0 => ASKED_RUNS,
        n => n,
    };
    let request = ProfileRequest {
        runs,
        rows,
        requested_by: by.to_owned(),
    };
    ask(
        cx,
        comparison,
        request,
        format!("profile:{}:outbox:{}", comparison.id, row.0),
    )
    .await
}

/// After a PR comparison ended with a gated row decided slower: one profile, asked by the verdict.
pub async fn after_verdict(cx: &Context, loaded: &report::LoadedReport) -> Result<(), TaskError> {
    let c = &loaded.comparison;
    let runs = cx.config.profile_runs;
    if runs == 0 || c.state != ComparisonState::Done || c.pr_number.is_none() {
        return Ok(());
    }
    // Gated rows decided slower, whatever `fail_on` makes of them: report-only suites want to
    // know where the time went too.
    let failing: Vec<String> = loaded
        .input
        .results
        .iter()
        .filter(|r| benchgate_stats::is_regression(r, benchgate_api::FailOn::Regression))
        .map(|r| benchgate_store::model::acceptance_row(&r.name, &r.metric))
        .collect();
    if failing.is_empty() {
        return Ok(());
    }
    let request = ProfileRequest {
        runs,
        rows: failing,
        requested_by: "verdict".to_owned(),
    };
    if ask(cx, c, request, format!("profile:{}:verdict", c.id)).await? {
        tracing::info!(comparison = %c.id, runs, "slower verdict: profile asked");
    }
    Ok(())
}
