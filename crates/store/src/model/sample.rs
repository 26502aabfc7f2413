//! Samples: measured values, uploaded a round at a time, read back per runner.

use super::{JobId, RunnerId};
use benchgate_api::{Measurement, Side};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One value in an upload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleInput {
    pub side: Side,
    /// 0 when this side ran first in its round, 1 when second.
    pub position: i64,
    pub measurement: Measurement,
}

/// One finished round of a job, as the agent uploads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundUpload {
    pub round: i64,
    pub samples: Vec<SampleInput>,
}

/// What an upload stored: re-sent values are counted as duplicates and left as first written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UploadReceipt {
    pub inserted: u64,
    pub duplicates: u64,
}

/// One stored value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub job_id: JobId,
    pub attempt: i64,
    pub runner_id: RunnerId,
    pub round: i64,
    pub side: Side,
    pub position: i64,
    pub benchmark: String,
    pub metric: String,
    pub unit: String,
    pub value: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// Which way is better, as the parser said.
    #[serde(default)]
    pub direction: benchgate_api::Direction,
    pub recorded_at: DateTime<Utc>,
}

/// Every sample one runner produced for a comparison (or job); series of two runners are never
/// merged, so no estimate pools machines. Ordered by job, attempt, round, position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunnerSeries {
    pub runner_id: RunnerId,
    pub runner_name: String,
    pub samples: Vec<Sample>,
}

/// Per job of a comparison: the last upload a reader has read (see
/// [`crate::Store::comparison_samples_since`]).
pub type UploadMarks = std::collections::BTreeMap<JobId, i64>;

/// The samples of uploads a reader had not seen, and its marks after reading them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SamplesSince {
    /// One series per runner and job read; a runner may appear more than once.
    pub series: Vec<RunnerSeries>,
    pub marks: UploadMarks,
}
