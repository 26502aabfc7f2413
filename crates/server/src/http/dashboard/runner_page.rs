//! `/runners/{name}`: the machine's fingerprint and, per (repository, benchmark, metric), its
//! stored A/A noise floor, what that floor can resolve, how often its A/A runs ran in a slow
//! mode, and how it moved over time.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, State};
use axum::response::Html;
use benchgate_stats::modes::MIN_RUNS;
use benchgate_store::{FloorKey, NoiseFloor, RepositoryId, SlowModeTally, Store};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::format::log_spread_pct;
use super::overview::RunnerSummary;
use super::plot::{self, FloorLine};
use super::render;
use super::rounds::{ROUNDS_CAP, rounds_to_resolve};
use crate::{ApiError, AppState};
use benchgate_stats::words;

/// Effects the page says the runner can (or cannot) resolve, as fractions.
const EFFECTS: [f64; 3] = [0.01, 0.02, 0.05];
/// Policy minimum of the margin when a repository sets none (1%).
const DEFAULT_MIN_EFFECT: f64 = 0.01;
/// Floors drawn in the history plot; more lines than this stop being readable.
const PLOTTED_FLOORS: usize = 8;

/// One point of a floor's history.
#[derive(Debug, Clone, Serialize)]
pub struct FloorPoint {
    pub computed_at: DateTime<Utc>,
    pub spread_pct: f64,
    pub between_bias_pct: f64,
    pub sessions: i64,
    pub pairs: i64,
}

/// Whether an effect of `effect_pct` can be told apart on this runner, and in how many rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Resolution {
    pub effect_pct: f64,
    /// `None` when the floor's between-session bias or the round cap rules it out.
    pub rounds: Option<u64>,
    #[serde(skip)]
    pub words: String,
}

/// One stored floor with what it means.
#[derive(Debug, Clone, Serialize)]
pub struct FloorRow {
    pub repository: String,
    pub benchmark: String,
    pub metric: String,
    /// Within-session spread of one pair, `100(e^s_aa − 1)`.
    pub spread_pct: f64,
    /// Between-session bias, `100(e^tau_b − 1)`.
    pub between_bias_pct: f64,
    /// Margin `M = max(1%, 2·tau_b, 2·tau_layout_lower)` in percent.
    pub margin_pct: f64,
    /// Spread between builds that differ only in layout, `100(e^tau_layout − 1)`; `None`
    /// without a layout calibration of enough salted builds.
    pub layout_pct: Option<f64>,
    /// Its 95% interval; M widens by the lower end.
    pub layout_lower_pct: Option<f64>,
    pub layout_upper_pct: Option<f64>,
    pub sessions: i64,
    pub pairs: i64,
    /// How often its A/A runs ran in a slow mode; `None` for a floor computed before that was
    /// counted.
    pub slow_mode: Option<SlowModeRow>,
    pub computed_at: DateTime<Utc>,
    pub resolves: Vec<Resolution>,
    pub history: Vec<FloorPoint>,
    #[serde(skip)]
    pub age: String,
}

impl FloorRow {
    /// The spread per pair as the page shows it.
    pub fn spread(&self) -> String {
        words::spread(self.spread_pct)
    }

    /// The between-session bias as the page shows it.
    pub fn bias(&self) -> String {
        words::spread(self.between_bias_pct)
    }

    /// The margin M as the comment states it.
    pub fn margin(&self) -> String {
        words::margin(self.margin_pct)
    }

    /// The slow mode of its A/A runs as the page shows it, or a dash for a floor from before
    /// it was counted.
    pub fn slow_mode_words(&self) -> String {
        self.slow_mode
            .as_ref()
            .map_or_else(|| "—".to_owned(), SlowModeRow::words)
    }

    /// The layout spread as the page shows it: its lower end (what M uses) to its upper end,
    /// or a dash.
    pub fn layout(&self) -> String {
        match (self.layout_lower_pct, self.layout_upper_pct) {
            (Some(lo), Some(hi)) => format!("{}–{}", words::spread(lo), words::spread(hi)),
            _ => "—".to_owned(),
        }
    }
}

/// The runs of a floor's A/A sessions that ran in a slow mode (`benchgate_stats::modes`).
#[derive(Debug, Clone, Serialize)]
pub struct SlowModeRow {
    /// Runs in the slow mode, both sides of every session counted.
    pub slow_runs: i64,
    /// Runs classified, both sides of every session counted.
    pub runs: i64,
    /// A/A sessions counted: those with at least 6 runs a side.
    pub sessions: i64,
    /// How much slower a slow run is than its side's typical run, `100(e^excess − 1)`
    /// (median over the slow runs; the worse way for a metric where higher is better).
    pub slow_pct: Option<f64>,
}

impl SlowModeRow {
    fn new(t: &SlowModeTally) -> Self {
        Self {
            slow_runs: t.slow_runs,
            runs: t.runs,
            sessions: t.sessions,
            slow_pct: t.excess.map(log_spread_pct),
        }
    }

    /// "slow mode: 1 process in 6 (+30%) over 4 A/A sessions", "no slow mode in 120 runs".
    pub fn words(&self) -> String {
        let (k, n) = (self.slow_runs, self.runs);
        if self.sessions == 0 {
            return format!("A/A sessions too short to tell (under {MIN_RUNS} runs a side)");
        }
        if k == 0 {
            return format!("no slow mode in {n} runs");
        }
        let share = benchgate_stats::mode_words::process_share(
            usize::try_from(k).unwrap_or(usize::MAX),
            usize::try_from(n).unwrap_or(usize::MAX),
        );
        let slower = self
            .slow_pct
            .map(|p| format!(" ({})", words::percent(p)))
            .unwrap_or_default();
        let sessions = words::count(usize::try_from(self.sessions).unwrap_or(0), "A/A session");
        format!("slow mode: {share}{slower} over {sessions}")
    }
}

/// What a runner's A/A session of one suite says about run length.
#[derive(Debug, Clone, Serialize)]
pub struct RunLengthRow {
    pub repository: String,
    #[serde(flatten)]
    pub advice: crate::run_length::RunLengthAdvice,
}

/// A runner with its floors, as the page and `GET /api/v1/runners/{name}` show it.
#[derive(Debug, Clone, Serialize)]
pub struct RunnerDetail {
    #[serde(flatten)]
    pub runner: RunnerSummary,
    pub floors: Vec<FloorRow>,
    /// Per suite of each repository it has floors for: the run length its newest A/A session
    /// says answers soonest.
    pub run_lengths: Vec<RunLengthRow>,
    /// What its canaries and forecasts say about its verdicts.
    pub audit: crate::audit::RunnerAudit,
}

/// What an A/A spread `s_aa` and bias `tau_b` can resolve: an effect under `2·tau_b` never,
/// a larger one in the rounds its half-width needs.
fn resolutions(s_aa: f64, tau_b: f64) -> Vec<Resolution> {
    EFFECTS
        .iter()
        .map(|&effect| {
            let pct = effect * 100.0;
            let under_bias = effect.ln_1p() < 2.0 * tau_b;
            let rounds = if under_bias {
                None
            } else {
                rounds_to_resolve(s_aa, effect)
            };
            let words = match rounds {
                Some(n) => format!("{pct:.0}% in ~{n} rounds"),
                None if under_bias => format!("{pct:.0}%: no (under session bias)"),
                None => format!("{pct:.0}%: not within {ROUNDS_CAP} rounds"),
            };
            Resolution {
                effect_pct: pct,
                rounds,
                words,
            }
        })
        .collect()
}

fn floor_point(f: &NoiseFloor) -> FloorPoint {
    FloorPoint {
        computed_at: f.computed_at,
        spread_pct: log_spread_pct(f.within_spread),
        between_bias_pct: log_spread_pct(f.between_bias),
        sessions: f.sessions,
        pairs: f.pairs,
    }
}

/// The runner named `name` with every current floor and its history; `NotFound` when no
/// runner has that name.
pub async fn runner_detail(
    store: &dyn Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<RunnerDetail, ApiError> {
    let runner = store
        .runner_by_name(name)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no runner named {name:?}")))?;
    let active = store.active_jobs().await?;
    let mut repositories: HashMap<RepositoryId, String> = HashMap::new();
    let mut floors = Vec::new();
    for floor in store.runner_noise_floors(runner.id).await? {
        let repository = match repositories.get(&floor.key.repository_id) {
            Some(name) => name.clone(),
            None => {
                let name = repository_name(store, floor.key.repository_id).await?;
                repositories.insert(floor.key.repository_id, name.clone());
                name
            }
        };
        let history = store.noise_floor_history(&floor.key).await?;
        floors.push(floor_row(&floor, repository, &history, now));
    }
    let mut run_lengths = Vec::new();
    for (id, repository) in &repositories {
        for advice in crate::run_length::latest_advice(store, runner.id, *id, now).await? {
            run_lengths.push(RunLengthRow {
                repository: repository.clone(),
                advice,
            });
        }
    }
    run_lengths
        .sort_by(|a, b| (&a.repository, &a.advice.suite).cmp(&(&b.repository, &b.advice.suite)));
    let audit = crate::audit::runner_audit(store, &runner).await?;
    let mut summary = RunnerSummary::new(&runner, &active, now);
    summary.audit_flag = crate::audit::flag_words(&audit);
    Ok(RunnerDetail {
        runner: summary,
        floors,
        run_lengths,
        audit,
    })
}

async fn repository_name(store: &dyn Store, id: RepositoryId) -> Result<String, ApiError> {
    Ok(store
        .repository(id)
        .await?
        .map_or_else(|| format!("repository {id}"), |r| r.full_name))
}

fn floor_row(
    floor: &NoiseFloor,
    repository: String,
    history: &[NoiseFloor],
    now: DateTime<Utc>,
) -> FloorRow {
    let FloorKey {
        benchmark, metric, ..
    } = &floor.key;
    FloorRow {
        repository,
        benchmark: benchmark.clone(),
        metric: metric.clone(),
        spread_pct: log_spread_pct(floor.within_spread),
        between_bias_pct: log_spread_pct(floor.between_bias),
        margin_pct: log_spread_pct(
            crate::comparison_analysis::stats_floor(floor).margin(DEFAULT_MIN_EFFECT.ln_1p()),
        ),
        layout_pct: floor.layout_bias.map(log_spread_pct),
        layout_lower_pct: floor.layout_lower.map(log_spread_pct),
        layout_upper_pct: floor.layout_upper.map(log_spread_pct),
        sessions: floor.sessions,
        pairs: floor.pairs,
        slow_mode: floor.slow_mode.as_ref().map(SlowModeRow::new),
        computed_at: floor.computed_at,
        resolves: resolutions(floor.within_spread, floor.between_bias),
        history: history.iter().map(floor_point).collect(),
        age: words::age((now - floor.computed_at).num_seconds()),
    }
}

/// The history plot: one line per floor (the first few), x in seconds before now.
fn history_plot(floors: &[FloorRow], now: DateTime<Utc>) -> String {
    let lines: Vec<FloorLine> = floors
        .iter()
        .take(PLOTTED_FLOORS)
        .map(|f| FloorLine {
            label: format!("{} {}", f.benchmark, f.metric),
            points: f
                .history
                .iter()
                .map(|p| {
                    let secs = (p.computed_at - now).num_seconds() as f64;
                    (secs.min(0.0), p.spread_pct)
                })
                .collect(),
        })
        .collect();
    plot::floor_history(&lines)
}

#[derive(Template)]
#[template(path = "dashboard/runner.html")]
struct RunnerPage {
    detail: RunnerDetail,
    fingerprint: Vec<(String, String)>,
    plot: String,
    plotted: usize,
}

/// `GET /api/v1/runners/{name}/audit`: the runner's audit alone.
pub async fn audit_json(
    State(app): State<AppState>,
    Path(name): Path<String>,
) -> Result<axum::Json<crate::audit::RunnerAudit>, ApiError> {
    let runner = app
        .store
        .runner_by_name(&name)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no runner named {name:?}")))?;
    Ok(axum::Json(
        crate::audit::runner_audit(app.store.as_ref(), &runner).await?,
    ))
}

/// A runner's page: fingerprint, floors with what they resolve, and the floors over time.
pub async fn page(
    State(app): State<AppState>,
    Path(name): Path<String>,
) -> Result<Html<String>, ApiError> {
    let now = Utc::now();
    let detail = runner_detail(app.store.as_ref(), &name, now).await?;
    let page = RunnerPage {
        fingerprint: super::fingerprint::lines(detail.runner.fingerprint.as_ref()),
        plot: history_plot(&detail.floors, now),
        plotted: detail.floors.len().min(PLOTTED_FLOORS),
        detail,
    };
    render(&page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_effect_under_twice_the_session_bias_is_never_resolved() {
        let r = resolutions(0.01, 0.015);
        assert_eq!(r[0].rounds, None);
        assert!(r[0].words.contains("session bias"), "{}", r[0].words);
        assert!(r[2].rounds.is_some(), "5% is above 2·tau_b = 3%");
        assert!(r[2].words.starts_with("5% in ~"), "{}", r[2].words);
    }

    #[test]
    fn a_slow_mode_reads_as_a_share_of_processes_over_its_sessions() {
        let row = |slow_runs, runs, sessions, slow_pct| SlowModeRow {
            slow_runs,
            runs,
            sessions,
            slow_pct,
        };
        for (r, want) in [
            (
                row(16, 96, 4, Some(30.2)),
                "slow mode: 1 process in 6 (+30%) over 4 A/A sessions",
            ),
            (
                row(3, 40, 1, Some(7.34)),
                "slow mode: 3 of 40 processes (+7.3%) over 1 A/A session",
            ),
            (row(0, 120, 5, None), "no slow mode in 120 runs"),
            (
                row(0, 0, 0, None),
                "A/A sessions too short to tell (under 6 runs a side)",
            ),
        ] {
            assert_eq!(r.words(), want);
        }
    }
}
