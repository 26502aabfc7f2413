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
    pub computed_at: DateTime<Utc>,
}
