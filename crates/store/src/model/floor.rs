//! A/A sessions and the noise floors computed from them.

use super::{JobId, RepositoryId, RunnerId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What a floor is the floor of.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FloorKey {
    pub runner_id: RunnerId,
    pub repository_id: RepositoryId,
    pub benchmark: String,
    pub metric: String,
}

/// One A/A session's summary for one benchmark and metric: the log-ratios of its pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AaSession {
    /// The calibration job it came from (recording it twice replaces it).
    pub job_id: Option<JobId>,
    pub key: FloorKey,
    pub pairs: i64,
    /// Mean of `ln(head/base)`.
    pub mean: f64,
    /// Standard deviation of `ln(head/base)`.
    pub spread: f64,
    /// The two sides were built with different layout salts: the session measures layout
    /// noise, not the runner's A/A floor.
    pub layout: bool,
    pub recorded_at: DateTime<Utc>,
}

/// A runner's noise floor for one (repository, benchmark, metric).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseFloor {
    pub key: FloorKey,
    pub pairs: i64,
    pub sessions: i64,
    /// Pooled within-session standard deviation `s_aa` (log scale).
    pub within_spread: f64,
    /// Between-session bias `tau_b` (log scale).
    pub between_bias: f64,
    /// Spread between builds that differ only in layout (log scale), `tau_layout`; `None`
    /// until enough layout sessions were recorded (`benchgate_stats::floor::MIN_LAYOUT_SESSIONS`).
    pub layout_bias: Option<f64>,
    /// Its 95% interval: M widens by the lower end. `None` as `layout_bias` is, and for floors
    /// computed before the interval was kept.
    pub layout_lower: Option<f64>,
    pub layout_upper: Option<f64>,
    /// How often the floor's A/A runs ran in a slow mode; `None` for floors computed before
    /// it was counted.
    pub slow_mode: Option<SlowModeTally>,
    pub computed_at: DateTime<Utc>,
}

/// Runs of a floor's A/A sessions that ran in a slow mode (`benchgate_stats::modes`), each
/// session's sides classified apart, counted over the sessions with enough runs a side to tell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowModeTally {
    /// Runs in the slow mode, both sides of every counted session.
    pub slow_runs: i64,
    /// Runs classified, both sides of every counted session.
    pub runs: i64,
    /// Sessions counted: those with at least `benchgate_stats::modes::MIN_RUNS` runs a side.
    pub sessions: i64,
    /// Median excess of the slow runs over their side's typical run (log scale, the worse
    /// way); `None` without a slow run.
    pub excess: Option<f64>,
}

/// What one canary's rounds said about one benchmark and metric, to someone who stops at the
/// first decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanaryResult {
    pub comparison_id: super::ComparisonId,
    pub runner_id: RunnerId,
    pub benchmark: String,
    pub metric: String,
    /// `None` for an A/A canary.
    pub planted_pct: Option<f64>,
    pub verdict: benchgate_api::VerdictKind,
    /// Rounds at that verdict.
    pub rounds: i64,
    /// Minutes from the first round to that verdict.
    pub minutes: Option<f64>,
    /// The first "needs N more rounds" before it: at this many rounds, and N.
    pub forecast: Option<(i64, i64)>,
    pub recorded_at: DateTime<Utc>,
}

/// A "needs N more rounds" a comparison said for one runner's row, and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forecast {
    pub comparison_id: super::ComparisonId,
    pub runner_id: RunnerId,
    pub benchmark: String,
    pub metric: String,
    pub at_rounds: i64,
    pub needed: i64,
    pub made_at: DateTime<Utc>,
    /// Total rounds when a verdict came; `None` while none did.
    pub decided_rounds: Option<i64>,
    pub decided_at: Option<DateTime<Utc>>,
}
