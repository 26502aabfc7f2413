//! The default branch's history: its series of comparisons and the regressions found on it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{ComparisonId, RepositoryId};

/// One chain of the default branch: the steps of one suite on one runner label.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MainSeries {
    pub repository_id: RepositoryId,
    pub branch: String,
    pub runner_label: String,
    /// The suite key (`""` for a lone `[benchmark]`).
    pub suite: String,
}

/// How a regression on the default branch was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegressionKind {
    /// One step (a push, or a few folded) made it slower.
    Step,
    /// An anchor comparison found the branch slower than the anchor, spread over several steps.
    Creep,
}

impl RegressionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RegressionKind::Step => "step",
            RegressionKind::Creep => "creep",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "step" => RegressionKind::Step,
            "creep" => RegressionKind::Creep,
            _ => return None,
        })
    }
}

/// What a comparison found for one benchmark: the episode it opens or confirms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRegression {
    pub series: MainSeries,
    pub benchmark: String,
    pub metric: String,
    pub kind: RegressionKind,
    pub comparison: ComparisonId,
    pub base_sha: String,
    pub head_sha: String,
    /// ratio − 1, and its interval.
    pub change: f64,
    pub lower: f64,
    pub upper: f64,
}

/// A regression episode as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    pub id: i64,
    pub series: MainSeries,
    pub benchmark: String,
    pub metric: String,
    pub kind: RegressionKind,
    pub open: bool,
    pub opened_by: ComparisonId,
    pub base_sha: String,
    pub head_sha: String,
    pub change: f64,
    pub lower: f64,
    pub upper: f64,
    pub last_seen_by: ComparisonId,
    pub closed_by: Option<ComparisonId>,
    pub issue_number: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
