//! Profiled runs after a verdict: the job that asks for them and the stacks it uploaded.

use super::{ComparisonId, JobId, Priority, RunnerId};
use benchgate_api::agent::ProfileRequest;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A profile job to add to a comparison (its shas, config and label are the comparison's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewProfileJob {
    pub request: ProfileRequest,
    pub priority: Priority,
    pub max_attempts: i64,
    /// What asked for it (unique): asking again with a stored origin adds nothing.
    pub origin: String,
}

/// What a profile job's holder uploads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewProfile {
    pub event: Option<String>,
    pub unavailable: Option<String>,
    pub runs: i64,
    pub base_folded: String,
    pub head_folded: String,
}

/// A stored profile of one comparison, made by one runner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredProfile {
    pub job_id: JobId,
    pub comparison_id: ComparisonId,
    pub runner_id: RunnerId,
    pub event: Option<String>,
    pub unavailable: Option<String>,
    pub runs: i64,
    pub base_folded: String,
    pub head_folded: String,
    pub created_at: DateTime<Utc>,
}
