//! A comparison's results, recomputed after each upload and stored, so pages and the PR comment
//! read them instead of recomputing. Each runner's series is analysed alone: samples of two
//! machines are never pooled. The margin comes from the runner's current A/A floor; `n*` was
//! planned from the floors when the comparison was created and is never re-tuned.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use benchgate_api::agent::{BenchmarkSpec, ComparisonStatus, RunnerReport};
use benchgate_api::{AnalysisReport, BenchmarkResult};
use benchgate_stats::{AnalysisOptions, RoundOrder, StatsError, analyze_pairs, plan_n_star};
use benchgate_store::{
    ComparisonId, FloorKey, JobId, RepositoryId, RunnerId, RunnerSeries, Sample, Store, StoreError,
};
use tokio::sync::Mutex;

/// Error level of every interval (the documented policy).
pub const ALPHA: f64 = 0.05;
/// `n*` when no floor was known at creation.
pub const DEFAULT_N_STAR: f64 = 20.0;
/// Past this many rounds a runner cannot resolve the change.
pub const ROUNDS_CAP: u64 = 1000;

/// One lock per comparison: its recomputations are serialised (an older analysis never
/// overwrites a newer one) while different comparisons are analysed at once.
static ANALYSIS: std::sync::LazyLock<std::sync::Mutex<HashMap<ComparisonId, Arc<Mutex<()>>>>> =
    std::sync::LazyLock::new(Default::default);

/// The lock of comparison `id`; the map forgets locks nobody holds or waits for.
fn comparison_lock(id: ComparisonId) -> Arc<Mutex<()>> {
    let mut locks = ANALYSIS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    locks.retain(|_, lock| Arc::strong_count(lock) > 1);
    locks.entry(id).or_default().clone()
}

/// The `[benchmark]` part of a stored comparison/job config (`{"benchmark": {…}, "gate": …}`).
pub fn benchmark_spec(config: &serde_json::Value) -> Result<BenchmarkSpec, serde_json::Error> {
    serde_json::from_value(config.get("benchmark").unwrap_or(config).clone())
}

/// `[gate] min_effect` of a stored config as a fraction; 1% when absent.
pub fn min_effect(config: &serde_json::Value) -> f64 {
    config["gate"]["min_effect"].as_f64().unwrap_or(0.01)
}

/// One benchmark and metric's complete base/head pairs from one runner, in round order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pairs {
    pub unit: String,
    pub base: Vec<f64>,
    pub head: Vec<f64>,
    /// Per pair: base ran first.
    pub base_first: Vec<bool>,
}

/// Pairs one runner's samples per (benchmark, metric): the base and head value of the same
/// (job, attempt, round). A round missing a side is no pair.
pub fn pair_samples(samples: &[Sample]) -> BTreeMap<(String, String), Pairs> {
    // Per (benchmark, metric), per (job, attempt, round): the base and the head sample.
    type Rounds<'a> = BTreeMap<(JobId, i64, i64), [Option<&'a Sample>; 2]>;
    let mut sides: BTreeMap<(String, String), Rounds> = BTreeMap::new();
    for s in samples {
        let slot = sides
            .entry((s.benchmark.clone(), s.metric.clone()))
            .or_default()
            .entry((s.job_id, s.attempt, s.round))
            .or_default();
        slot[usize::from(s.side == benchgate_api::Side::Head)] = Some(s);
    }
    sides
        .into_iter()
        .map(|(key, rounds)| {
            let mut pairs = Pairs::default();
            for [base, head] in rounds.into_values() {
                if let (Some(b), Some(h)) = (base, head) {
                    pairs.unit.clone_from(&b.unit);
                    pairs.base.push(b.value);
                    pairs.head.push(h.value);
                    pairs.base_first.push(b.position <= h.position);
                }
            }
            (key, pairs)
        })
        .filter(|(_, p)| !p.base.is_empty())
        .collect()
}

/// The stats crate's view of a stored floor.
pub fn stats_floor(floor: &benchgate_store::NoiseFloor) -> benchgate_stats::NoiseFloor {
    benchgate_stats::NoiseFloor {
        s_aa: floor.within_spread,
        tau_b: floor.between_bias,
        sessions: usize::try_from(floor.sessions).unwrap_or(0),
        pairs: usize::try_from(floor.pairs).unwrap_or(0),
    }
}

/// Recomputes and stores a comparison's results; failures are logged, never returned, because
/// the upload that triggered it already succeeded.
pub async fn refresh_comparison(store: &Arc<dyn Store>, id: ComparisonId) {
    if let Err(e) = analyze_comparison(store, id).await {
        tracing::error!(comparison = %id, error = ?e, "analysis failed");
    }
}

/// Analyses every runner's series of a comparison and stores the results per runner.
#[tracing::instrument(skip_all, fields(comparison = %id))]
pub async fn analyze_comparison(
    store: &Arc<dyn Store>,
    id: ComparisonId,
) -> Result<(), StoreError> {
    let lock = comparison_lock(id);
    let _one_at_a_time = lock.lock().await;
    let comparison = store
        .comparison(id)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("comparison {id}")))?;
    let options = AnalysisOptions {
        alpha: ALPHA,
        n_star: comparison
            .planned_rounds
            .map_or(DEFAULT_N_STAR, |n| n.max(2) as f64),
        min_effect: min_effect(&comparison.config),
        rounds_cap: ROUNDS_CAP,
        order: RoundOrder::Abba,
    };
    for series in store.comparison_samples(id).await? {
        let results = analyze_series(store, comparison.repository_id, &series, &options).await?;
        // The whole set, even when empty: a result that can no longer be computed must not
        // stay behind for the check to gate on.
        store
            .replace_comparison_results(id, series.runner_id, &results)
            .await?;
    }
    Ok(())
}

/// One runner's results: each benchmark and metric with at least two valid pairs, its margin
/// from this runner's current floor. One that cannot be analysed is left out, with a warning.
async fn analyze_series(
    store: &Arc<dyn Store>,
    repository_id: RepositoryId,
    series: &RunnerSeries,
    options: &AnalysisOptions,
) -> Result<Vec<BenchmarkResult>, StoreError> {
    let mut results = Vec::new();
    for ((benchmark, metric), pairs) in pair_samples(&series.samples) {
        let key = FloorKey {
            runner_id: series.runner_id,
            repository_id,
            benchmark: benchmark.clone(),
            metric: metric.clone(),
        };
        let floor = store.noise_floor(&key).await?.map(|f| stats_floor(&f));
        let options = AnalysisOptions {
            order: RoundOrder::BaseFirst(pairs.base_first.clone()),
            ..options.clone()
        };
        match analyze_pairs(&pairs.base, &pairs.head, &options, floor.as_ref()) {
            Ok(analysis) => results.push(analysis.to_result(&benchmark, &metric, &pairs.unit)),
            Err(e @ StatsError::TooFewPairs { .. }) => {
                tracing::debug!(%benchmark, %metric, error = %e, "not analysed yet");
            }
            Err(e) => tracing::warn!(
                runner = %series.runner_id,
                %benchmark,
                %metric,
                error = %e,
                "cannot analyse; no result for this benchmark (an earlier one is withdrawn)"
            ),
        }
    }
    benchgate_stats::mark_gate(&mut results, options.alpha);
    Ok(results)
}

/// Plans `n*` for a new comparison from the current floors of the label's runners on this
/// repository, before any A/B data: the rounds the noisiest timing floor needs to resolve its
/// margin. `None` when no runner has a floor yet (the default `n*` applies).
pub async fn plan_rounds(
    store: &Arc<dyn Store>,
    repository_id: RepositoryId,
    runner_label: &str,
    min_effect: f64,
) -> Result<Option<i64>, StoreError> {
    let mut noisiest: Option<benchgate_stats::NoiseFloor> = None;
    for runner in store.list_runners().await? {
        if runner.revoked_at.is_some() || !runner.labels.iter().any(|l| l == runner_label) {
            continue;
        }
        let floors = store.runner_noise_floors(runner.id).await?;
        // Floors of other repositories measure other programs.
        for floor in floors
            .iter()
            .filter(|f| f.key.repository_id == repository_id)
        {
            let floor = stats_floor(floor);
            if floor.s_aa > 0.0 && noisiest.is_none_or(|n| floor.s_aa > n.s_aa) {
                noisiest = Some(floor);
            }
        }
    }
    let Some(floor) = noisiest else {
        return Ok(None);
    };
    let target = floor.margin(min_effect.ln_1p());
    Ok(match plan_n_star(ALPHA, floor.s_aa, target, ROUNDS_CAP) {
        Ok(Some(n)) => Some(n as i64),
        Ok(None) => Some(ROUNDS_CAP as i64),
        Err(e) => {
            tracing::warn!(error = %e, "cannot plan n*; using the default");
            None
        }
    })
}

/// A comparison's state and stored results per runner, headline first (the runner with the
/// most complete pairs); `None` when no such comparison exists. The PR comment, the dashboard
/// and `GET /api/v1/comparisons/{id}` all read this.
pub async fn comparison_report(
    store: &Arc<dyn Store>,
    id: ComparisonId,
) -> Result<Option<ComparisonStatus>, StoreError> {
    let Some(comparison) = store.comparison(id).await? else {
        return Ok(None);
    };
    let mut by_runner: BTreeMap<RunnerId, Vec<BenchmarkResult>> = BTreeMap::new();
    for stored in store.comparison_results(id).await? {
        by_runner
            .entry(stored.runner_id)
            .or_default()
            .push(stored.result);
    }
    let mut names = HashMap::new();
    for runner_id in by_runner.keys() {
        let name = store
            .runner(*runner_id)
            .await?
            .map_or_else(|| format!("runner {runner_id}"), |r| r.name);
        names.insert(*runner_id, name);
    }
    let mut runners: Vec<RunnerReport> = by_runner
        .into_iter()
        .map(|(runner_id, benchmarks)| RunnerReport {
            runner: names.remove(&runner_id).unwrap_or_default(),
            headline: false,
            report: AnalysisReport {
                alpha: ALPHA,
                benchmarks,
            },
        })
        .collect();
    let pairs = |r: &RunnerReport| r.report.benchmarks.iter().map(|b| b.n).max().unwrap_or(0);
    // Most pairs first; the sort is stable, so ties keep runner-id order.
    runners.sort_by_key(|r| std::cmp::Reverse(pairs(r)));
    if let Some(first) = runners.first_mut() {
        first.headline = true;
    }
    Ok(Some(ComparisonStatus {
        id: comparison.id.0,
        state: comparison.state.as_str().to_owned(),
        repository: comparison.repository,
        base_sha: comparison.base_sha,
        head_sha: comparison.head_sha,
        runner_label: comparison.runner_label,
        planned_rounds: comparison.planned_rounds,
        runners,
    }))
}
