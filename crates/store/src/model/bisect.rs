//! Culprit searches on the default branch: a range of commits bisected by probe comparisons.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{ComparisonId, MainSeries};

/// A search to start: which commits, which benchmark, for which episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewBisection {
    pub series: MainSeries,
    pub benchmark: String,
    pub metric: String,
    pub regression_id: Option<i64>,
    /// A merge group's comparison: the probes run its workload at its priority.
    pub source_comparison: Option<ComparisonId>,
    /// The last commit without the regression, and the first with it.
    pub good_sha: String,
    pub bad_sha: String,
    /// Who asked (a login, `api`), `None` when an episode started it.
    pub requested_by: Option<String>,
}

/// One commit of a searched range, as GitHub listed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeCommit {
    pub sha: String,
    /// The pull request its message names (`Title (#12)`, `Merge pull request #12 …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
    /// The first line of its message.
    #[serde(default)]
    pub title: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BisectionState {
    Running,
    Done,
    /// It could not run at all (the range could not be read, say); `outcome` says why.
    Failed,
}

impl BisectionState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => Self::Running,
            "done" => Self::Done,
            "failed" => Self::Failed,
            _ => return None,
        })
    }
}

/// A search as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bisection {
    pub id: i64,
    pub series: MainSeries,
    pub benchmark: String,
    pub metric: String,
    pub regression_id: Option<i64>,
    pub source_comparison: Option<ComparisonId>,
    pub good_sha: String,
    pub bad_sha: String,
    /// The range, good first, bad last; `None` until read.
    pub commits: Option<Vec<RangeCommit>>,
    pub state: BisectionState,
    /// How it ended, as the server wrote it.
    pub outcome: Option<SearchOutcome>,
    pub requested_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeState {
    /// Rounds still to come.
    Running,
    /// Its interval answered its question.
    Decided,
    /// It stopped at its round limit unanswered.
    Limit,
    /// Its newer commit could not be built or run.
    Skipped,
}

impl ProbeState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Decided => "decided",
            Self::Limit => "limit",
            Self::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => Self::Running,
            "decided" => Self::Decided,
            "limit" => Self::Limit,
            "skipped" => Self::Skipped,
            _ => return None,
        })
    }
}

/// One probe of a search: commit `newer` against `older`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectionProbe {
    pub bisection_id: i64,
    /// 0-based, in the order the search asked.
    pub seq: i64,
    pub older_sha: String,
    pub newer_sha: String,
    pub state: ProbeState,
    /// Its interval (log scale, regression positive) once ended and measured.
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub rounds: i64,
    pub comparisons: Vec<ComparisonId>,
    /// Why it was skipped, or stopped.
    pub note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// How a probe ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeEnd {
    pub state: ProbeState,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub rounds: i64,
    pub comparisons: Vec<ComparisonId>,
    pub note: Option<String>,
}

/// How a search ended, as stored and as the API shows it (the server words it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    pub kind: OutcomeKind,
    /// The named commit (culprit), or the one that takes the regression past τ (spread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<RangeCommit>,
    /// That commit's own change (ratio − 1) and interval; for `no_regression`, the range's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// The commits still suspected: after `after`, up to and including `upto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upto: Option<String>,
    #[serde(default)]
    pub skipped: Vec<SkippedCommit>,
    /// Commits in the range (the good one not counted).
    pub commits: usize,
    pub probes: usize,
    pub rounds: u64,
    /// The search's error budget: a named culprit is wrong with probability at most this.
    pub alpha: f64,
    /// Why a search could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a search concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Culprit,
    Spread,
    NoRegression,
    Undecided,
    Skipped,
    Failed,
}

/// A commit a search could not measure, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedCommit {
    pub sha: String,
    pub note: String,
}
