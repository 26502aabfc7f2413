//! A runner's audit: canaries run on it when it is idle (one commit against itself, or with
//! planted extra work on head), each scored as someone who stops at the first decision would
//! read it; every "needs N more rounds" is kept with what came. The audit then says, per
//! runner, how often its A/A canaries claimed a change (against α, with the exact interval),
//! how often planted changes were found and how soon, and how well forecasts held.
//! docs/statistics.md §9 explains the rates; docs/operations.md the schedule and its cost.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use benchgate_api::agent::{CanarySpec, PlantedBy, StoredComparisonConfig};
use benchgate_api::{Direction, VerdictKind};
use benchgate_stats::audit::{FirstDecision, Rate, first_decision, score_forecasts_censored};
use benchgate_stats::flag::{FLAG_ALTERNATIVES, Flag, claim_rate_flag};
use benchgate_stats::paired::has_zero_spread;
use benchgate_stats::{AnalysisOptions, RoundOrder};
use benchgate_store::{
    CanaryResult, Comparison, ComparisonId, ComparisonState, Forecast, JobState, NewComparison,
    NewJob, Priority, Runner, RunnerId, Store, StoreError,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::Domain;
use crate::comparison_analysis::{ALPHA, NStarPlan, ROUNDS_CAP, pair_samples};

/// The flag's false-alarm rate over a runner's whole life (until a recalibration by hand): a
/// runner whose A/A canaries claim at α or less is ever flagged at most this often.
pub const FLAG_DELTA: f64 = ALPHA;

/// Canaries queue below everything else, scheduled calibration included.
pub const CANARY_PRIORITY: Priority = Priority(-20);

/// `--canary-every`: one interval for every label, or per label with `*` for the rest;
/// `off` for none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CanaryEvery {
    /// For labels not named; `None`: off.
    pub default: Option<Duration>,
    pub labels: BTreeMap<String, Option<Duration>>,
}

impl CanaryEvery {
    /// The interval of a label; `None` when its canaries are off.
    pub fn of(&self, label: &str) -> Option<Duration> {
        self.labels.get(label).copied().unwrap_or(self.default)
    }
}

impl FromStr for CanaryEvery {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let interval = |t: &str| -> Result<Option<Duration>, String> {
            if t.trim() == "off" {
                Ok(None)
            } else {
                crate::calibration::parse_interval(t).map(Some)
            }
        };
        let mut every = CanaryEvery::default();
        if !text.contains('=') {
            every.default = interval(text)?;
            return Ok(every);
        }
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (label, value) = part.split_once('=').ok_or_else(|| {
                format!("expected LABEL=INTERVAL (or *=INTERVAL), found {part:?}")
            })?;
            match label.trim() {
                "*" => every.default = interval(value)?,
                "" => return Err(format!("a label is missing before {value:?}")),
                label => {
                    every.labels.insert(label.to_owned(), interval(value)?);
                }
            }
        }
        Ok(every)
    }
}

impl fmt::Display for CanaryEvery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word =
            |d: &Option<Duration>| d.map_or("off".to_owned(), |d| format!("{}s", d.as_secs()));
        write!(f, "*={}", word(&self.default))?;
        for (label, d) in &self.labels {
            write!(f, ",{label}={}", word(d))?;
        }
        Ok(())
    }
}

/// clap's parser for `--canary-every`.
pub fn parse_canary_every(text: &str) -> Result<CanaryEvery, String> {
    text.parse()
}

/// One pass of the canary loop (public for tests, which pass the clock).
pub async fn tick(app: &Domain, now: DateTime<Utc>) -> Result<(), StoreError> {
    score_unscored(&app.store).await?;
    let jobs = app.store.active_jobs().await?;
    let runners = app.store.list_runners().await?;
    for runner in runners.iter().filter(|r| r.revoked_at.is_none()) {
        let running = jobs
            .iter()
            .find(|j| j.state == JobState::Running && j.claimed_by == Some(runner.id));
        let waiting = jobs
            .iter()
            .any(|j| j.state == JobState::Queued && !is_canary_job(j) && claimable(j, runner));
        if let Some(job) = running {
            if is_canary_job(job) && waiting {
                // A canary never delays work someone waits for: it ends, unscored.
                if let Some(id) = job.comparison_id {
                    app.store.cancel_comparison(id).await?;
                    tracing::info!(runner = %runner.name, comparison = %id, "canary yields to waiting work");
                }
            }
            continue;
        }
        let queued_canary = jobs
            .iter()
            .any(|j| j.state == JobState::Queued && is_canary_job(j) && claimable(j, runner));
        if waiting || queued_canary {
            continue;
        }
        if let Err(e) = start_due(app, runner, now).await {
            tracing::warn!(runner = %runner.name, error = %e, "cannot start a canary");
        }
    }
    Ok(())
}

fn is_canary_job(job: &benchgate_store::Job) -> bool {
    job.config.canary.is_some()
}

fn claimable(job: &benchgate_store::Job, runner: &Runner) -> bool {
    runner.labels.contains(&job.runner_label)
        && job.pinned_runner_id.is_none_or(|pin| pin == runner.id)
}

/// Starts a canary on an idle runner when one of its labels is due: A/A twice, then each
/// planted size, on the base of the newest comparison of that label.
async fn start_due(app: &Domain, runner: &Runner, now: DateTime<Utc>) -> Result<(), StoreError> {
    let every = &app.config.canary_every;
    let past = app.store.runner_canaries(runner.id, 1_000).await?;
    let source = app
        .store
        .recent_comparisons(200)
        .await?
        .into_iter()
        .filter(|c| c.config.canary.is_none() && c.config.layout.is_none())
        .find(|c| runner.labels.contains(&c.runner_label) && every.of(&c.runner_label).is_some());
    let Some(source) = source else {
        return Ok(());
    };
    let interval = every.of(&source.runner_label).unwrap_or(Duration::MAX);
    let last = past.iter().map(|c| c.created_at).max();
    let due = last.is_none_or(|t| {
        chrono::Duration::from_std(interval).is_ok_and(|d| now.signed_duration_since(t) >= d)
    });
    if !due {
        return Ok(());
    }
    let cycle: Vec<Option<f64>> = [None, None]
        .into_iter()
        .chain(app.config.canary_planted.iter().map(|p| Some(*p)))
        .collect();
    let planted_pct = cycle[past.len() % cycle.len()];
    let spec = CanarySpec {
        runner_id: runner.id.0,
        planted_pct,
        planted_by: if source.config.config.benchmark.canary_work {
            PlantedBy::Work
        } else {
            PlantedBy::Scale
        },
    };
    let config = StoredComparisonConfig {
        canary: Some(spec),
        ..source.config.clone().without_context()
    };
    let rounds = i64::from(app.config.canary_rounds);
    let created = app
        .store
        .create_comparison(&NewComparison {
            repository_id: source.repository_id,
            pr_number: None,
            base_sha: source.base_sha.clone(),
            head_sha: source.base_sha.clone(),
            runner_label: source.runner_label.clone(),
            config,
            planned_rounds: source.planned_rounds,
            jobs: vec![NewJob {
                rounds,
                priority: CANARY_PRIORITY,
                max_attempts: app.config.max_attempts,
                // One canary per runner and count: a second replica's pass adds nothing.
                origin: Some(format!("canary:{}:{}", runner.id, past.len())),
            }],
            main: None,
            notify: Vec::new(),
        })
        .await;
    match created {
        Ok(c) => {
            tracing::info!(runner = %runner.name, comparison = %c.id, planted = ?planted_pct, rounds, "canary started");
            Ok(())
        }
        Err(StoreError::Conflict(_)) => Ok(()),
        Err(e) if e.to_string().contains("origin") || e.to_string().contains("UNIQUE") => Ok(()),
        Err(e) => Err(e),
    }
}

/// What a recalibration by hand did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recalibrated {
    /// The A/A calibration jobs enqueued, one per repository the runner has a floor for.
    pub calibrations: Vec<i64>,
    /// The audit flag counts A/A canaries from then on.
    pub audit_since: DateTime<Utc>,
}

/// Recalibrates a runner by hand: an A/A calibration (with layout sessions where the suite has
/// `layout_salt`) of the newest compared base of each repository it has a floor for, ahead of
/// other work, and its audit flag counted afresh.
pub async fn recalibrate(app: &Domain, runner: &Runner) -> Result<Recalibrated, StoreError> {
    let repositories: std::collections::BTreeSet<_> = app
        .store
        .runner_noise_floors(runner.id)
        .await?
        .into_iter()
        .map(|f| f.key.repository_id)
        .collect();
    let recent = app.store.recent_comparisons(200).await?;
    let mut calibrations = Vec::new();
    for repository in repositories {
        let Some(source) = recent.iter().find(|c| {
            c.repository_id == repository
                && c.config.canary.is_none()
                && runner.labels.contains(&c.runner_label)
        }) else {
            continue;
        };
        let job = crate::calibration::request_calibration(
            app,
            runner.id,
            repository,
            &source.base_sha,
            &source.runner_label,
            &source.config,
            Priority::INTERACTIVE,
        )
        .await?;
        calibrations.push(job.0);
    }
    let now = Utc::now();
    app.store.reset_runner_audit(runner.id, now).await?;
    tracing::info!(runner = %runner.name, jobs = calibrations.len(), "recalibrated by hand; the audit flag starts afresh");
    Ok(Recalibrated {
        calibrations,
        audit_since: now,
    })
}

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
        if c.config.canary.is_some() && c.state == ComparisonState::Done {
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
    let rules = benchgate_api::RuleSet::new(&c.config.config.rules);
    let plan = NStarPlan {
        per_benchmark: c.config.n_star.clone(),
        fallback: c.planned_rounds,
    };
    let mut recorded = 0;
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
        for (((benchmark, metric), pairs), gated) in paired.iter().zip(gated) {
            if !gated || (has_zero_spread(&pairs.base) && has_zero_spread(&pairs.head)) {
                continue;
            }
            let head = planted_head(spec, &pairs.head, pairs.direction);
            let opts = AnalysisOptions {
                alpha: ALPHA,
                n_star: plan.n_star(benchmark),
                min_effect: rules
                    .min_effect(benchmark)
                    .unwrap_or(c.config.config.gate.min_effect),
                rounds_cap: ROUNDS_CAP,
                order: RoundOrder::BaseFirst(pairs.base_first.clone()),
                direction: pairs.direction,
                // Canaries score claims of a change; the gate's tolerance decides no claim.
                tolerance: None,
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
    }
    tracing::info!(comparison = %c.id, runner = %runner_id, rows = recorded, planted = ?spec.planted_pct, "canary scored");
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

/// One runner's audit, as the page and `/api/v1/runners/{id}/audit` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunnerAudit {
    pub runner: String,
    pub runner_id: i64,
    pub alpha: f64,
    /// A/A canaries that claimed a change (any of their rows slower or faster), of all A/A
    /// canaries: the canary is the unit, as a PR is.
    pub aa: RateView,
    /// The same over rows; the rows of one canary share its rounds and the machine's state,
    /// so they are not independent trials and this interval is too narrow.
    pub aa_rows: RateView,
    /// A/A canaries since the last recalibration by hand: what the flag is decided on.
    pub aa_since_recalibration: RateView,
    /// The flag: the sequential test of "A/A canaries claim at most α of the time" fired since
    /// the last recalibration by hand.
    pub flagged: bool,
    pub flag: FlagView,
    pub planted: Vec<PlantedView>,
    /// Median rounds and minutes to a verdict over every decided canary row.
    pub median_rounds: Option<f64>,
    pub median_minutes: Option<f64>,
    /// Canaries scored (each has a row per gated benchmark).
    pub canaries: usize,
    /// When the newest canary was started.
    pub last_canary: Option<DateTime<Utc>>,
    pub forecasts: ForecastView,
}

/// The flag's test, as the page and the JSON show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlagView {
    /// Evidence against "claims at most α" after the newest canary (1 before any).
    pub evidence: f64,
    /// The bar the evidence must reach: 1/δ.
    pub bar: f64,
    /// The canary since the recalibration (1-based) at which the evidence first reached the bar.
    pub fired_at_canary: Option<usize>,
    /// The rule in words.
    pub rule: String,
}

impl From<Flag> for FlagView {
    fn from(f: Flag) -> Self {
        let multiples = FLAG_ALTERNATIVES.map(|m| format!("{m}"));
        FlagView {
            evidence: f.evidence,
            bar: f.bar,
            fired_at_canary: f.fired_at,
            rule: format!(
                "flagged once the evidence against \"A/A canaries claim a change at most α = {:.0}% \
                 of the time\" reaches {:.0}: the mean likelihood ratio for claim rates of {}× α, \
                 over the canaries since the last recalibration in the order they ran. A runner \
                 at α or better reaches it with probability at most {:.0}% over its whole life, \
                 however often it is looked at",
                100.0 * ALPHA,
                f.bar,
                multiples.join(", "),
                100.0 * FLAG_DELTA
            ),
        }
    }
}

/// A rate with its exact 95% interval, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RateView {
    pub hits: u64,
    pub trials: u64,
    pub rate_pct: Option<f64>,
    pub lower_pct: f64,
    pub upper_pct: f64,
}

impl RateView {
    /// The rate as the page shows it: `5.0%`, or a dash without trials.
    pub fn rate(&self) -> String {
        self.rate_pct
            .map_or_else(|| "—".to_owned(), |p| format!("{p:.1}%"))
    }
}

impl From<Rate> for RateView {
    fn from(r: Rate) -> Self {
        RateView {
            hits: r.hits,
            trials: r.trials,
            rate_pct: r.point().map(|p| 100.0 * p),
            lower_pct: 100.0 * r.lower,
            upper_pct: 100.0 * r.upper,
        }
    }
}

/// Power at one planted size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlantedView {
    pub planted_pct: f64,
    /// Canaries with a row called slower, of all canaries with this planted change.
    pub found: RateView,
    /// Canaries with a row called faster: the wrong way.
    pub wrong_way: u64,
    pub median_rounds: Option<f64>,
    pub median_minutes: Option<f64>,
}

/// How forecasts held: within ±30% of what they said.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ForecastView {
    /// Forecasts whose horizon passed: decided, or undecided past said + 30%.
    pub scored: usize,
    pub within: usize,
    /// Of `scored`, those still undecided past their horizon: they took longer than said.
    pub took_longer_undecided: usize,
    pub within_pct: Option<f64>,
    /// Median of took/said, undecided forecasts included as censored (Kaplan–Meier): above 1,
    /// forecasts promise too soon.
    pub median_ratio: Option<f64>,
    /// Forecasts still waiting for a verdict (some of them past their horizon).
    pub open: usize,
}

/// Reads a runner's canaries and forecasts and computes its audit.
pub async fn runner_audit(store: &dyn Store, runner: &Runner) -> Result<RunnerAudit, StoreError> {
    let results = store.canary_results(runner.id).await?;
    let forecasts = store.runner_forecasts(runner.id).await?;
    let last = store.runner_canaries(runner.id, 1).await?;
    // Where each open forecast's row stands now: an open forecast is scored as censored there.
    let mut rounds_now = RoundsNow::new();
    let open: std::collections::BTreeSet<ComparisonId> = forecasts
        .iter()
        .filter(|f| f.decided_rounds.is_none())
        .map(|f| f.comparison_id)
        .collect();
    for id in open {
        for stored in store.comparison_results(id).await? {
            if stored.runner_id == runner.id {
                let n = i64::try_from(stored.result.n).unwrap_or(i64::MAX);
                rounds_now.insert((id, stored.result.name, stored.result.metric), n);
            }
        }
    }
    Ok(audit_of(
        runner,
        &results,
        &forecasts,
        &rounds_now,
        last.first().map(|c| c.created_at),
    ))
}

/// The pairs a comparison's row has now, by (comparison, benchmark, metric).
pub type RoundsNow = std::collections::HashMap<(ComparisonId, String, String), i64>;

/// The audit from what was recorded (pure, so a test can count by hand).
pub fn audit_of(
    runner: &Runner,
    results: &[CanaryResult],
    forecasts: &[Forecast],
    rounds_now: &RoundsNow,
    last_canary: Option<DateTime<Utc>>,
) -> RunnerAudit {
    let claims = |r: &CanaryResult| matches!(r.verdict, VerdictKind::Slower | VerdictKind::Faster);
    let aa: Vec<&CanaryResult> = results.iter().filter(|r| r.planted_pct.is_none()).collect();
    let rate = |rows: &[&CanaryResult]| by_canary(rows, claims);
    let row_rate = Rate::new(
        aa.iter().filter(|r| claims(r)).count() as u64,
        aa.len() as u64,
        ALPHA,
    );
    let recent: Vec<&CanaryResult> = aa
        .iter()
        .copied()
        .filter(|r| runner.audit_since.is_none_or(|t| r.recorded_at >= t))
        .collect();
    let since = rate(&recent);
    let flag = claim_rate_flag(canary_outcomes(&recent, claims), ALPHA, FLAG_DELTA);
    let mut sizes: Vec<f64> = results.iter().filter_map(|r| r.planted_pct).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let decided = |r: &&CanaryResult| {
        matches!(
            r.verdict,
            VerdictKind::Slower | VerdictKind::Faster | VerdictKind::Equivalent
        )
    };
    let planted = sizes
        .iter()
        .map(|&pct| {
            let rows: Vec<&CanaryResult> = results
                .iter()
                .filter(|r| r.planted_pct == Some(pct))
                .collect();
            let found: Vec<&CanaryResult> = rows
                .iter()
                .copied()
                .filter(|r| r.verdict == VerdictKind::Slower)
                .collect();
            PlantedView {
                planted_pct: pct,
                found: by_canary(&rows, |r| r.verdict == VerdictKind::Slower).into(),
                wrong_way: by_canary(&rows, |r| r.verdict == VerdictKind::Faster).hits,
                median_rounds: median(found.iter().map(|r| r.rounds as f64)),
                median_minutes: median(found.iter().filter_map(|r| r.minutes)),
            }
        })
        .collect();
    let all_decided: Vec<&CanaryResult> = results.iter().filter(decided).collect();
    let mut said_took: Vec<(u64, u64)> = results
        .iter()
        .filter(decided)
        .filter_map(|r| {
            let (at, n) = r.forecast?;
            Some((u64::try_from(n).ok()?, u64::try_from(r.rounds - at).ok()?))
        })
        .collect();
    said_took.extend(forecasts.iter().filter_map(|f| {
        let took = f.decided_rounds? - f.at_rounds;
        Some((u64::try_from(f.needed).ok()?, u64::try_from(took).ok()?))
    }));
    // Undecided: a canary row at its end, a forecast's row where it stands now.
    let mut said_so_far: Vec<(u64, u64)> = results
        .iter()
        .filter(|r| !decided(r))
        .filter_map(|r| {
            let (at, n) = r.forecast?;
            Some((u64::try_from(n).ok()?, u64::try_from(r.rounds - at).ok()?))
        })
        .collect();
    said_so_far.extend(
        forecasts
            .iter()
            .filter(|f| f.decided_rounds.is_none())
            .filter_map(|f| {
                let key = (f.comparison_id, f.benchmark.clone(), f.metric.clone());
                let so_far = rounds_now.get(&key).map_or(0, |n| n - f.at_rounds);
                Some((
                    u64::try_from(f.needed).ok()?,
                    u64::try_from(so_far.max(0)).ok()?,
                ))
            }),
    );
    let score = score_forecasts_censored(&said_took, &said_so_far);
    RunnerAudit {
        runner: runner.name.clone(),
        runner_id: runner.id.0,
        alpha: ALPHA,
        aa: rate(&aa).into(),
        aa_rows: row_rate.into(),
        aa_since_recalibration: since.into(),
        flagged: flag.fired(),
        flag: flag.into(),
        planted,
        median_rounds: median(all_decided.iter().map(|r| r.rounds as f64)),
        median_minutes: median(all_decided.iter().filter_map(|r| r.minutes)),
        canaries: results
            .iter()
            .map(|r| r.comparison_id)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        last_canary,
        forecasts: ForecastView {
            scored: score.scored,
            within: score.within,
            took_longer_undecided: score.censored,
            within_pct: (score.scored > 0)
                .then(|| 100.0 * score.within as f64 / score.scored as f64),
            median_ratio: score.median_ratio,
            open: forecasts
                .iter()
                .filter(|f| f.decided_rounds.is_none())
                .count(),
        },
    }
}

/// Canaries (comparisons) of which some row is a `hit`, of all canaries among `rows`: a canary
/// claims as a PR would, once, however many of its benchmarks moved.
fn by_canary(rows: &[&CanaryResult], hit: impl Fn(&CanaryResult) -> bool) -> Rate {
    let outcomes = canary_outcomes(rows, hit);
    let hits = outcomes.iter().filter(|h| **h).count() as u64;
    Rate::new(hits, outcomes.len() as u64, ALPHA)
}

/// Whether each canary among `rows` had a `hit` row, in the order the canaries were created.
fn canary_outcomes(rows: &[&CanaryResult], hit: impl Fn(&CanaryResult) -> bool) -> Vec<bool> {
    let mut canaries: BTreeMap<ComparisonId, bool> = BTreeMap::new();
    for r in rows {
        *canaries.entry(r.comparison_id).or_default() |= hit(r);
    }
    canaries.into_values().collect()
}

fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = values.collect();
    benchgate_stats::paired::median(&v)
}

/// The warning the PR comment's runner line carries while a runner is flagged.
pub fn flag_words(audit: &RunnerAudit) -> Option<String> {
    if !audit.flagged {
        return None;
    }
    let r = &audit.aa_since_recalibration;
    let f = &audit.flag;
    Some(format!(
        "A/A canaries on this runner claimed a change in {} of {} canaries since its last recalibration ({:.1}%); the evidence against \"at most α = {:.0}%\" reached {:.0} at canary {} (a runner at α reaches it {:.0}% of the time at most, however long it is watched): treat its verdicts with care until it is recalibrated",
        r.hits,
        r.trials,
        r.rate_pct.unwrap_or(0.0),
        100.0 * audit.alpha,
        f.bar,
        f.fired_at_canary.unwrap_or(r.trials as usize),
        100.0 * FLAG_DELTA
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The caution a flagged runner's PR comments carry (CONVENTIONS 21): from a hand-made
    /// record of 9 claims in 60 A/A rows.
    fn quiet_runner() -> Runner {
        Runner {
            id: RunnerId(1),
            name: "quiet-1".into(),
            labels: vec!["x".into()],
            fingerprint: None,
            created_at: Utc::now(),
            last_seen_at: None,
            revoked_at: None,
            audit_since: None,
        }
    }

    /// 60 A/A canaries of one row each, claiming where `claim(i)` says.
    fn aa_canaries(claim: impl Fn(i64) -> bool) -> Vec<CanaryResult> {
        (0..60)
            .map(|i| CanaryResult {
                comparison_id: ComparisonId(i),
                runner_id: RunnerId(1),
                benchmark: "parse".into(),
                metric: "time".into(),
                planted_pct: None,
                verdict: if claim(i) {
                    VerdictKind::Slower
                } else {
                    VerdictKind::Equivalent
                },
                rounds: 10,
                minutes: None,
                forecast: None,
                recorded_at: Utc::now(),
            })
            .collect()
    }

    #[test]
    fn the_flag_reads_as_pinned() {
        let runner = quiet_runner();
        // 9 of 60 (15%, 3·α), spread: claims at canaries 4, 11, …, 60.
        let audit = audit_of(
            &runner,
            &aa_canaries(|i| i % 7 == 3),
            &[],
            &RoundsNow::new(),
            None,
        );
        assert!(audit.flagged);
        insta::assert_snapshot!(flag_words(&audit).unwrap());
        insta::assert_snapshot!("the_flag_s_rule", audit.flag.rule);
        // 3 of 60 (5%): what α allows.
        let fair = audit_of(
            &runner,
            &aa_canaries(|i| i % 20 == 3),
            &[],
            &RoundsNow::new(),
            None,
        );
        assert_eq!(flag_words(&fair), None);
        assert!(fair.flag.evidence < 1.0, "{:?}", fair.flag);
    }

    /// One drifting canary of 30 benchmarks is one claim, not 30: rows of a canary share its
    /// rounds. Counted by hand: 20 canaries of 30 rows, the first with every row slower, the
    /// eleventh with one row faster; the rest claim nothing.
    #[test]
    fn a_canary_of_thirty_claiming_rows_is_one_claim() {
        let runner = quiet_runner();
        let row = |canary: i64, bench: i64, verdict, planted_pct| CanaryResult {
            comparison_id: ComparisonId(canary),
            runner_id: RunnerId(1),
            benchmark: format!("b{bench}"),
            metric: "time".into(),
            planted_pct,
            verdict,
            rounds: 10,
            minutes: None,
            forecast: None,
            recorded_at: Utc::now(),
        };
        let mut results = Vec::new();
        for canary in 0..20 {
            for bench in 0..30 {
                let verdict = match (canary, bench) {
                    (0, _) => VerdictKind::Slower,
                    (10, 7) => VerdictKind::Faster,
                    _ => VerdictKind::Equivalent,
                };
                results.push(row(canary, bench, verdict, None));
            }
        }
        let a = audit_of(&runner, &results, &[], &RoundsNow::new(), None);
        assert_eq!((a.aa.hits, a.aa.trials), (2, 20));
        assert_eq!((a.aa_rows.hits, a.aa_rows.trials), (31, 600));
        assert_eq!(a.canaries, 20);
        // 2 of 20 canaries, apart, is consistent with α = 5%: the evidence rose to 4.3 at the
        // first and fell after it. As rows, one drifting canary alone was 30 claims.
        assert!(!a.flagged, "{:?}", a.flag);
        assert!(a.flag.evidence < 4.3, "{:?}", a.flag);
        // Planted: a canary is found when a row of it is called slower.
        let mut planted = Vec::new();
        for canary in 100..104 {
            for bench in 0..3 {
                let verdict = match (canary, bench) {
                    (100, 0) | (101, _) => VerdictKind::Slower,
                    (102, 2) => VerdictKind::Faster,
                    _ => VerdictKind::NoResultYet,
                };
                planted.push(row(canary, bench, verdict, Some(5.0)));
            }
        }
        let p = &audit_of(&runner, &planted, &[], &RoundsNow::new(), None).planted[0];
        assert_eq!((p.found.hits, p.found.trials, p.wrong_way), (2, 4, 1));
    }
}
