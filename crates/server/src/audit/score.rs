//! Scoring a finished canary as someone who stops at the first decision would read it, and
//! keeping every "needs N more rounds" forecast with what came of it.

use benchgate_store::model::ComparisonKind;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use benchgate_api::agent::{CanarySpec, PlantedBy};
use benchgate_api::{Direction, VerdictKind};
use benchgate_stats::audit::{FirstDecision, first_decision};
use benchgate_stats::paired::has_zero_spread;
use benchgate_stats::{AnalysisOptions, RoundOrder};
use benchgate_store::{
    CanaryResult, Comparison, ComparisonId, ComparisonState, Forecast, RunnerId, Store, StoreError,
};
use chrono::{DateTime, Utc};

use crate::comparison_analysis::{ALPHA, NStarPlan, ROUNDS_CAP, pair_samples};

/// Scores the canaries that finished without a result (a crash between the last round and
/// scoring), as the completion would have.
pub async fn score_unscored(store: &Arc<dyn Store>) -> Result<usize, StoreError> {
    let since = Utc::now() - chrono::TimeDelta::days(7);
    let mut scored = 0;
    for c in store.unscored_canaries(since, 50).await? {
        scored += score_canary(store, &c).await?;
    }
    Ok(scored)
}

/// After a comparison's job ended: a done canary is scored; every comparison's forecasts are
/// kept and settled. Failures are logged: the job's completion already stands.
pub async fn after_job(store: &Arc<dyn Store>, id: ComparisonId) {
    let work = async {
        let Some(c) = store.comparison(id).await? else {
            return Ok(());
        };
        note_forecasts(store, &c).await?;
        if c.kind() == ComparisonKind::Canary && c.state == ComparisonState::Done {
            score_canary(store, &c).await?;
        }
        Ok::<(), StoreError>(())
    };
    if let Err(e) = work.await {
        tracing::error!(comparison = %id, error = %e, "cannot record the audit of this comparison");
    }
}

/// Keeps each gated row's "needs N more rounds" with the rounds it was said at, and settles
/// earlier ones of rows that reached a verdict.
pub async fn note_forecasts(store: &Arc<dyn Store>, c: &Comparison) -> Result<(), StoreError> {
    let now = Utc::now();
    let mut said = Vec::new();
    let mut decided = Vec::new();
    for stored in store.comparison_results(c.id).await? {
        let r = &stored.result;
        if !r.gated {
            continue;
        }
        let forecast = Forecast {
            comparison_id: c.id,
            runner_id: stored.runner_id,
            benchmark: r.name.clone(),
            metric: r.metric.clone(),
            at_rounds: i64::try_from(r.n).unwrap_or(i64::MAX),
            needed: 0,
            made_at: now,
            decided_rounds: None,
            decided_at: None,
        };
        match (r.verdict, r.rounds_needed) {
            (VerdictKind::NoResultYet, Some(n)) => said.push(Forecast {
                needed: i64::try_from(n).unwrap_or(i64::MAX),
                ..forecast
            }),
            (VerdictKind::Slower | VerdictKind::Faster | VerdictKind::Equivalent, _) => decided
                .push(Forecast {
                    decided_rounds: Some(forecast.at_rounds),
                    decided_at: Some(now),
                    ..forecast
                }),
            _ => {}
        }
    }
    store.record_forecasts(&said).await?;
    store.settle_forecasts(&decided).await?;
    Ok(())
}

/// Scores a done canary: per gated row of its runner, the first decision after every round
/// (planted by scaling: head's values scaled first). Returns the rows recorded.
pub async fn score_canary(store: &Arc<dyn Store>, c: &Comparison) -> Result<usize, StoreError> {
    let Some(spec) = &c.config.canary else {
        return Ok(0);
    };
    let runner_id = RunnerId(spec.runner_id);
    let floors: HashMap<(String, String), benchgate_stats::NoiseFloor> = store
        .runner_noise_floors(runner_id)
        .await?
        .into_iter()
        .filter(|f| f.key.repository_id == c.repository_id)
        .map(|f| {
            let stats = crate::comparison_analysis::stats_floor(&f);
            ((f.key.benchmark, f.key.metric), stats)
        })
        .collect();
    let rules = benchgate_api::RuleSet::of(&c.config);
    let plan = NStarPlan {
        per_benchmark: c.config.n_star.clone(),
        fallback: c.planned_rounds,
    };
    // The rows to score first: their count sets each row's level, so the canary's rows are
    // judged as one family.
    let mut rows = Vec::new();
    for series in store
        .comparison_samples(c.id)
        .await?
        .into_iter()
        .filter(|s| s.runner_id == runner_id)
    {
        let times = round_times(&series.samples);
        let paired = pair_samples(&series.samples);
        let keys: Vec<(&str, &str)> = paired
            .keys()
            .map(|(b, m)| (b.as_str(), m.as_str()))
            .collect();
        let gated = benchgate_stats::gated_mask(&keys, &rules);
        for ((key, pairs), gated) in paired.into_iter().zip(gated) {
            if gated && !(has_zero_spread(&pairs.base) && has_zero_spread(&pairs.head)) {
                rows.push((key, pairs, times.clone()));
            }
        }
    }
    let alpha = benchgate_stats::audit::canary_row_alpha(ALPHA, rows.len());
    let mut recorded = 0;
    for ((benchmark, metric), pairs, times) in &rows {
        let head = planted_head(spec, &pairs.head, pairs.direction);
        let opts = AnalysisOptions {
            alpha,
            n_star: plan.n_star(benchmark),
            min_effect: rules
                .min_effect(benchmark)
                .unwrap_or(c.config.gate.min_effect),
            rounds_cap: ROUNDS_CAP,
            order: RoundOrder::BaseFirst(pairs.base_first.clone()),
            direction: pairs.direction,
            // Canaries score claims of a change; the gate's tolerance decides no claim.
            tolerance: None,
            assume_equal_spread: false,
            // Canaries score claims; the guard holds back passes, which score nothing.
            rare_slow_runs: None,
        };
        let floor = floors.get(&(benchmark.clone(), metric.clone()));
        let first = match decision(&pairs.base, &head, &opts, floor) {
            Ok(first) => first,
            Err(e) => {
                tracing::warn!(comparison = %c.id, %benchmark, %metric, error = %e, "canary row not scored");
                continue;
            }
        };
        let minutes = times
            .first()
            .zip(times.get(first.rounds.saturating_sub(1)))
            .map(|(start, at)| (*at - *start).num_milliseconds() as f64 / 60_000.0);
        store
            .record_canary_result(&CanaryResult {
                comparison_id: c.id,
                runner_id,
                benchmark: benchmark.clone(),
                metric: metric.clone(),
                planted_pct: spec.planted_pct,
                verdict: first.verdict.kind(),
                rounds: i64::try_from(first.rounds).unwrap_or(i64::MAX),
                minutes,
                forecast: first.forecast.map(|(at, n)| {
                    (
                        i64::try_from(at).unwrap_or(i64::MAX),
                        i64::try_from(n).unwrap_or(i64::MAX),
                    )
                }),
                recorded_at: Utc::now(),
            })
            .await?;
        recorded += 1;
    }
    tracing::info!(comparison = %c.id, runner = %runner_id, rows = recorded, row_alpha = alpha, planted = ?spec.planted_pct, "canary scored");
    Ok(recorded)
}

fn decision(
    base: &[f64],
    head: &[f64],
    opts: &AnalysisOptions,
    floor: Option<&benchgate_stats::NoiseFloor>,
) -> Result<FirstDecision, benchgate_stats::StatsError> {
    first_decision(base, head, opts, floor, 2)
}

/// Head's values with the planted change made by scaling: more work is worse whichever way
/// the metric points (a throughput drops). Unchanged for an A/A canary or planted work.
fn planted_head(spec: &CanarySpec, head: &[f64], direction: Direction) -> Vec<f64> {
    if spec.planted_by != PlantedBy::Scale || spec.planted_pct.is_none() {
        return head.to_vec();
    }
    let factor = spec.factor();
    head.iter()
        .map(|v| match direction {
            Direction::LowerIsBetter => v * factor,
            Direction::HigherIsBetter => v / factor,
        })
        .collect()
}

/// When each round (job, attempt, round) finished, in round order.
fn round_times(samples: &[benchgate_store::Sample]) -> Vec<DateTime<Utc>> {
    let mut at: BTreeMap<(i64, i64, i64), DateTime<Utc>> = BTreeMap::new();
    for s in samples {
        let slot = at
            .entry((s.job_id.0, s.attempt, s.round))
            .or_insert(s.recorded_at);
        *slot = (*slot).max(s.recorded_at);
    }
    at.into_values().collect()
}
