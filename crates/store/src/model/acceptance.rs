//! `/benchgate accept`: a maintainer's acceptance of a head commit's failing rows, with why.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::RepositoryId;

/// An acceptance to record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewAcceptance {
    pub repository_id: RepositoryId,
    pub pr_number: i64,
    pub head_sha: String,
    /// The login that commented `/benchgate accept`.
    pub accepted_by: String,
    pub reason: String,
    /// The rows that failed when it was given, as `benchmark metric`.
    pub rows: Vec<String>,
}

/// A recorded acceptance; revoked ones stay as the audit trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acceptance {
    pub id: i64,
    pub repository_id: RepositoryId,
    /// The repository's `full_name`, joined for display.
    pub repository: String,
    pub pr_number: i64,
    pub head_sha: String,
    pub accepted_by: String,
    pub reason: String,
    pub rows: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub revoked_by: Option<String>,
}

/// The key of one row in [`Acceptance::rows`].
pub fn acceptance_row(benchmark: &str, metric: &str) -> String {
    format!("{benchmark} {metric}")
}
