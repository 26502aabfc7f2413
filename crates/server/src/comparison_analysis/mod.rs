//! A comparison's results, recomputed after each upload and stored, so pages and the PR comment
//! read them instead of recomputing. Samples of two machines are never pooled into one pair:
//! runners of one hardware class ([`MachineFingerprint::hardware_class`](benchgate_api::MachineFingerprint::hardware_class)) are combined stratified by runner
//! ([`benchgate_stats::analyze_strata`]), each keeping its own pairs and floor; any other
//! runner's series is analysed alone. The margin comes from the runners' current A/A floors;
//! `n*` was planned from the floors when the comparison was created and is never re-tuned.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use benchgate_api::agent::{ComparisonStatus, RunnerReport};
use benchgate_api::{AnalysisReport, BenchmarkResult, Direction, Side, VerdictKind};
use benchgate_stats::{
    AnalysisOptions, RoundOrder, StatsError, StrataMemo, Stratum, analyze_strata,
    analyze_strata_with,
};
use benchgate_store::{ComparisonId, RepositoryId, RunnerId, Sample, Store, StoreError};

mod gate_progress;
mod plan;

pub use gate_progress::{
    GateProgress, MAX_UNDECIDED_NAMED, counted_already, gate_answered, gate_progress,
    stops_when_decided,
};
pub use plan::{RoundPlan, plan_rounds};

use crate::series_cache::{ComparisonPairs, Pairs, RunnerPairs, SeriesCache, SeriesMemos};

/// Error level of every interval (the documented policy).
pub const ALPHA: f64 = benchgate_api::agent::GATE_ALPHA;
/// `n*` when no floor was known at creation.
pub const DEFAULT_N_STAR: f64 = 20.0;
/// Past this many rounds a runner cannot resolve the change.
pub const ROUNDS_CAP: u64 = 1000;

/// The level a comparison's rows are judged at: [`ALPHA`], or for a merge group's step its
/// share of the group's budget (docs/statistics.md §7c).
pub fn alpha_of(config: &benchgate_api::agent::StoredComparisonConfig) -> f64 {
    let split = config
        .merge_group
        .as_ref()
        .and_then(|g| g.alpha_split)
        .filter(|k| *k > 1);
    split.map_or(ALPHA, |k| ALPHA / f64::from(k))
}

/// Pairs one runner's samples per (benchmark, metric): the base and head value of the same
/// (job, attempt, round). A round missing a side is no pair; a series with no pair at all is
/// left out (its side is in [`one_side`]).
pub fn pair_samples(samples: &[Sample]) -> BTreeMap<(String, String), Pairs> {
    let mut runner = RunnerPairs::default();
    runner.add(samples);
    runner.pairs()
}

/// Per (benchmark, metric) that one side reported and the other never did: which side, with
/// the unit and direction of its samples.
pub fn one_side(samples: &[Sample]) -> BTreeMap<(String, String), (Side, String, Direction)> {
    let mut runner = RunnerPairs::default();
    runner.add(samples);
    runner.one_side()
}

/// The stats crate's view of a stored floor.
pub fn stats_floor(floor: &benchgate_store::NoiseFloor) -> benchgate_stats::NoiseFloor {
    benchgate_stats::NoiseFloor {
        s_aa: floor.within_spread,
        tau_b: floor.between_bias,
        // The lower end: an unlucky estimate must not silence real changes (§3).
        tau_layout: floor.layout_lower.unwrap_or(0.0),
        sessions: usize::try_from(floor.sessions).unwrap_or(0),
        pairs: usize::try_from(floor.pairs).unwrap_or(0),
    }
}

/// Recomputes and stores a comparison's results; failures are logged, never returned, because
/// the upload that triggered it already succeeded. Timed for `/metrics`.
pub async fn refresh_comparison(app: &crate::Domain, id: ComparisonId) {
    let started = std::time::Instant::now();
    match analyze_comparison_cached(&app.store, &app.series, id).await {
        Ok(done) if done.covered => {
            tracing::debug!(
                comparison = %id,
                waited_ms = done.waited.as_secs_f64() * 1e3,
                "comparison already analysed with this upload"
            );
        }
        Ok(done) => {
            // The wait for another analysis of the same comparison is not analysis time.
            let work = started.elapsed().saturating_sub(done.waited);
            tracing::debug!(
                comparison = %id,
                samples = done.samples,
                read = done.read_samples,
                rows = done.rows,
                pairs = done.pairs,
                waited_ms = done.waited.as_secs_f64() * 1e3,
                read_ms = done.read.as_secs_f64() * 1e3,
                store_ms = done.stored.as_secs_f64() * 1e3,
                elapsed_ms = work.as_secs_f64() * 1e3,
                "comparison analysed"
            );
            app.metrics.analysed(work);
        }
        Err(e) => {
            tracing::error!(comparison = %id, error = ?e, "analysis failed");
            app.metrics.analysed(started.elapsed());
        }
    }
}

/// What one analysis looked at, for its log line.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Analysed {
    /// Samples analysed.
    pub samples: usize,
    /// Of which read from the store by this analysis (the rest were kept from earlier ones).
    pub read_samples: usize,
    /// Result rows stored.
    pub rows: usize,
    /// The most pairs of any row.
    pub pairs: usize,
    /// Time spent reading the samples.
    pub read: std::time::Duration,
    /// Time spent storing the results.
    pub stored: std::time::Duration,
    /// Time spent waiting for another analysis of the comparison in this process.
    pub waited: std::time::Duration,
    /// Nothing was analysed: an analysis that began after this one was asked for had just
    /// stored its results.
    pub covered: bool,
}

/// Analyses every runner's series of a comparison and stores the results per runner, reading
/// all its samples.
pub async fn analyze_comparison(
    store: &Arc<dyn Store>,
    id: ComparisonId,
) -> Result<Analysed, StoreError> {
    analyze_pairs(store, id, &mut ComparisonPairs::default()).await
}

/// [`analyze_comparison`], reading only the samples `cache` does not keep yet. Uploads of one
/// comparison that arrive while it is being analysed wait for it, and then one analysis
/// serves them all: it began after each of them was stored, so nothing is left out.
pub async fn analyze_comparison_cached(
    store: &Arc<dyn Store>,
    cache: &SeriesCache,
    id: ComparisonId,
) -> Result<Analysed, StoreError> {
    let kept = cache.get(id);
    let asked = std::time::Instant::now();
    let mut pairs = kept.lock().await;
    let waited = asked.elapsed();
    if pairs.covers(asked) {
        return Ok(Analysed {
            waited,
            covered: true,
            samples: pairs.samples(),
            ..Analysed::default()
        });
    }
    let from = std::time::Instant::now();
    let done = analyze_pairs(store, id, &mut pairs).await;
    if done.is_ok() {
        pairs.analysed(from);
    }
    cache.kept(id, pairs.weight());
    done.map(|done| Analysed { waited, ..done })
}

#[tracing::instrument(skip_all, fields(comparison = %id))]
async fn analyze_pairs(
    store: &Arc<dyn Store>,
    id: ComparisonId,
    kept: &mut ComparisonPairs,
) -> Result<Analysed, StoreError> {
    let comparison = store
        .comparison(id)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("comparison {id}")))?;
    let stored = &comparison.config;
    let rules = Arc::new(benchgate_api::RuleSet::of(&stored.config));
    let plan = NStarPlan {
        per_benchmark: stored.n_star.clone(),
        fallback: comparison.planned_rounds,
    };
    let options = AnalysisOptions {
        alpha: alpha_of(stored),
        n_star: DEFAULT_N_STAR,
        min_effect: stored.config.gate.min_effect,
        rounds_cap: ROUNDS_CAP,
        order: RoundOrder::Abba,
        direction: Direction::LowerIsBetter,
        tolerance: stored.config.gate.tolerance,
        // Interleaved rounds are pairs: every side has its runs.
        assume_equal_spread: false,
        rare_slow_runs: stored.config.gate.rare_slow_runs,
    };
    let reading = std::time::Instant::now();
    let read_samples = kept.refresh(store, id).await?;
    let mut done = Analysed {
        samples: kept.samples(),
        read_samples,
        read: reading.elapsed(),
        ..Analysed::default()
    };
    let mut memos = std::mem::take(&mut kept.memos);
    let runners: Vec<(RunnerId, &RunnerPairs)> =
        kept.runners().iter().map(|(id, r)| (*id, r)).collect();
    for group in hardware_groups(store, &runners).await? {
        let members: Vec<(RunnerId, &RunnerPairs)> = group.iter().map(|&i| runners[i]).collect();
        let mut results = analyze_group(
            store,
            comparison.repository_id,
            &members,
            &options,
            &plan,
            &rules,
            &mut memos,
        )
        .await?;
        let lead = members[0].0;
        // A row the last analysis gave up on stays given up until its interval decides: the
        // comment is rewritten after every upload and must not flip back and forth.
        let mut given_up: std::collections::BTreeSet<(String, String)> = store
            .comparison_results(id)
            .await?
            .into_iter()
            .filter(|s| s.runner_id == lead)
            .map(|s| s.result)
            .filter(|r| {
                r.verdict == VerdictKind::BelowResolution
                    && r.n >= benchgate_stats::gate::MIN_PAIRS_TO_GIVE_UP
            })
            .map(|r| (r.name, r.metric))
            .collect();
        benchgate_stats::gate::hold_given_up(&mut results, &mut given_up);
        done.rows += results.len();
        done.pairs = results.iter().map(|r| r.n).fold(done.pairs, usize::max);
        // The whole set, even when empty, under the group's first runner; the other members'
        // earlier sets of their own are emptied. Replicas analyse at once; the store keeps the
        // set computed from the most samples, so an older view never overwrites a newer one.
        let basis = members.iter().map(|(_, m)| m.samples).sum::<usize>();
        let basis = i64::try_from(basis).unwrap_or(i64::MAX);
        let storing = std::time::Instant::now();
        let stored = store
            .replace_comparison_results(id, lead, basis, &results)
            .await?;
        if !stored {
            tracing::debug!(runner = %lead, basis, "a newer analysis was stored first");
        }
        for (member, _) in &members[1..] {
            store
                .replace_comparison_results(id, *member, basis, &[])
                .await?;
        }
        done.stored += storing.elapsed();
    }
    kept.memos = memos;
    Ok(done)
}

/// "runner-a + runner-b" when the rows combine several runners.
pub fn combined_name(rows: &[BenchmarkResult]) -> Option<String> {
    rows.iter()
        .find(|r| !r.runners.is_empty())
        .map(|r| r.runners.join(" + "))
}

/// Indices of `runners` grouped by hardware class, each group in runner-id order, groups in
/// the order of their first runner.
async fn hardware_groups(
    store: &Arc<dyn Store>,
    runners: &[(RunnerId, &RunnerPairs)],
) -> Result<Vec<Vec<usize>>, StoreError> {
    let mut groups: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    let mut order: Vec<usize> = (0..runners.len()).collect();
    order.sort_by_key(|&i| runners[i].0);
    for i in order {
        let class = store
            .runner(runners[i].0)
            .await?
            .and_then(|r| r.fingerprint)
            .and_then(|f| f.hardware_class());
        match groups
            .iter_mut()
            .find(|(c, _)| class.is_some() && *c == class)
        {
            Some((_, members)) => members.push(i),
            None => groups.push((class, vec![i])),
        }
    }
    Ok(groups.into_iter().map(|(_, members)| members).collect())
}

/// The n* each benchmark's boundary is tuned for, fixed when the comparison was created.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NStarPlan {
    pub per_benchmark: BTreeMap<String, i64>,
    /// The comparison's `planned_rounds`, for comparisons planned before per-benchmark plans.
    pub fallback: Option<i64>,
}

impl NStarPlan {
    /// n* of `benchmark`: its own plan, else the comparison's, else the default.
    pub fn n_star(&self, benchmark: &str) -> f64 {
        self.per_benchmark
            .get(benchmark)
            .copied()
            .or(self.fallback)
            .map_or(DEFAULT_N_STAR, |n| n.max(2) as f64)
    }
}

/// One group's results: each benchmark and metric, its margin from the runners' current
/// floors (and its rule's `min_effect`) and its own n*. A series that cannot be analysed is
/// kept as a row that says why, and one that only one side reported as "only in base/head".
/// A group of several runners names them on every row.
async fn analyze_group(
    store: &Arc<dyn Store>,
    repository_id: RepositoryId,
    members: &[(RunnerId, &RunnerPairs)],
    options: &AnalysisOptions,
    plan: &NStarPlan,
    rules: &Arc<benchgate_api::RuleSet>,
    memos: &mut SeriesMemos,
) -> Result<Vec<BenchmarkResult>, StoreError> {
    let mut keyed: BTreeMap<(String, String), Vec<Measured>> = BTreeMap::new();
    for (runner_id, member) in members {
        // One read of the runner's floors, not one per series: a suite of thousands of
        // series made that thousands of queries per upload.
        let floors: HashMap<(String, String), benchgate_stats::NoiseFloor> = store
            .runner_noise_floors(*runner_id)
            .await?
            .into_iter()
            .filter(|f| f.key.repository_id == repository_id)
            .map(|f| {
                let stats = stats_floor(&f);
                ((f.key.benchmark, f.key.metric), stats)
            })
            .collect();
        for ((benchmark, metric), pairs) in member.pairs() {
            let floor = floors.get(&(benchmark.clone(), metric.clone())).copied();
            keyed
                .entry((benchmark, metric))
                .or_default()
                .push((pairs, floor));
        }
    }
    let names: Vec<String> = if members.len() > 1 {
        members.iter().map(|(_, m)| m.name.clone()).collect()
    } else {
        Vec::new()
    };
    let mut one_sided: BTreeMap<(String, String), (Side, String, Direction)> = BTreeMap::new();
    for (_, member) in members {
        for (key, found) in member.one_side() {
            if !keyed.contains_key(&key) {
                one_sided.entry(key).or_insert(found);
            }
        }
    }
    let runners: Vec<i64> = members.iter().map(|(id, _)| id.0).collect();
    // Thousands of series are tens of milliseconds of CPU: off the async workers, so claims
    // and long polls are not held up behind an analysis.
    // Only a group of several runners keeps memos; the lead runner names the group's.
    let lead = members[0].0;
    let mut group_memos: BTreeMap<(String, String), StrataMemo> = BTreeMap::new();
    if members.len() > 1 {
        for (benchmark, metric) in keyed.keys() {
            let memo = memos
                .remove(&(lead, benchmark.clone(), metric.clone()))
                .unwrap_or_default();
            group_memos.insert((benchmark.clone(), metric.clone()), memo);
        }
    }
    let (options, plan, rules) = (options.clone(), plan.clone(), Arc::clone(rules));
    let computed = tokio::task::spawn_blocking(move || {
        let results = analyze_series(
            keyed,
            one_sided,
            (&names, &runners),
            &options,
            &plan,
            &rules,
            &mut group_memos,
        );
        (results, group_memos)
    })
    .await;
    match computed {
        Ok((results, group_memos)) => {
            for ((benchmark, metric), memo) in group_memos {
                if !memo.is_empty() {
                    memos.insert((lead, benchmark, metric), memo);
                }
            }
            Ok(results)
        }
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(StoreError::Corrupt(format!("analysis task ended: {e}"))),
    }
}

/// Per (benchmark, metric): each member's pairs and floor.
type Measured = (Pairs, Option<benchgate_stats::NoiseFloor>);

/// The rows of [`analyze_group`], computed from what it read.
fn analyze_series(
    keyed: BTreeMap<(String, String), Vec<Measured>>,
    one_sided: BTreeMap<(String, String), (Side, String, Direction)>,
    // The runners' names for the rows of a combined group (none for one runner), and ids.
    (names, runners): (&[String], &[i64]),
    options: &AnalysisOptions,
    plan: &NStarPlan,
    rules: &benchgate_api::RuleSet,
    memos: &mut BTreeMap<(String, String), StrataMemo>,
) -> Vec<BenchmarkResult> {
    let mut results = Vec::new();
    for ((benchmark, metric), per_runner) in keyed {
        let (unit, direction) = (per_runner[0].0.unit.clone(), per_runner[0].0.direction);
        let strata: Vec<Stratum> = per_runner
            .iter()
            .map(|(p, floor)| Stratum {
                base: &p.base,
                head: &p.head,
                base_first: &p.base_first,
                floor: floor.as_ref(),
            })
            .collect();
        let options = AnalysisOptions {
            direction,
            n_star: benchgate_stats::counts::n_star(&metric, plan.n_star(&benchmark)),
            min_effect: rule_min_effect(rules, &benchmark).unwrap_or(options.min_effect),
            rare_slow_runs: benchgate_stats::counts::tail_guard(&metric, options.rare_slow_runs),
            ..options.clone()
        };
        let analysed = match memos.get_mut(&(benchmark.clone(), metric.clone())) {
            Some(memo) => analyze_strata_with(&strata, &options, memo),
            None => analyze_strata(&strata, &options),
        };
        let mut row = match analysed {
            Ok(analysis) => analysis.to_result(&benchmark, &metric, &unit),
            Err(e) => {
                if matches!(e, StatsError::TooFewPairs { .. }) {
                    tracing::debug!(%benchmark, %metric, error = %e, "not analysed yet");
                } else {
                    tracing::warn!(
                        runners = ?runners,
                        %benchmark,
                        %metric,
                        error = %e,
                        "cannot analyse; the row says why and does not pass the gate"
                    );
                }
                let mut row = BenchmarkResult::unanalysed(
                    &benchmark,
                    &metric,
                    &unit,
                    direction,
                    VerdictKind::NotAnalysed,
                    e.to_string(),
                );
                row.n = per_runner.iter().map(|(p, _)| p.base.len()).sum();
                row
            }
        };
        row.runners = names.to_vec();
        results.push(row);
    }
    for ((benchmark, metric), (side, unit, direction)) in one_sided {
        let mut row = BenchmarkResult::only_in(side, &benchmark, &metric, &unit, direction);
        row.runners = names.to_vec();
        results.push(row);
    }
    benchgate_stats::mark_gate(&mut results, options.alpha, rules);
    results
}

/// The `min_effect` of the rule that applies to `benchmark`, when it sets one.
pub fn rule_min_effect(rules: &benchgate_api::RuleSet, benchmark: &str) -> Option<f64> {
    rules.min_effect(benchmark)
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
        .filter(|(_, benchmarks)| !benchmarks.is_empty())
        .map(|(runner_id, benchmarks)| RunnerReport {
            runner: combined_name(&benchmarks)
                .unwrap_or_else(|| names.remove(&runner_id).unwrap_or_default()),
            headline: false,
            report: AnalysisReport {
                alpha: alpha_of(&comparison.config),
                benchmarks,
                claims: Vec::new(),
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
