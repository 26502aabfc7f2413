//! Jobs: the queue's unit of work, its lease, and how it ends.

use super::{ComparisonId, JobId, LeaseToken, RepositoryId, RunnerId};
use benchgate_api::agent::StoredComparisonConfig;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What a job measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// Rounds of an A/B comparison.
    Comparison,
    /// An A/A session: the same sha on both sides, on one pinned runner.
    Calibration,
}

impl JobKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Comparison => "comparison",
            Self::Calibration => "calibration",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "comparison" => Some(Self::Comparison),
            "calibration" => Some(Self::Calibration),
            _ => None,
        }
    }
}

/// Where a job is in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "queued" => Self::Queued,
            "running" => Self::Running,
            "done" => Self::Done,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }
}

/// Claim order: higher first, then oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Priority(pub i64);

impl Priority {
    /// Scheduled calibration: runs when nothing else waits.
    pub const BACKGROUND: Priority = Priority(-10);
    /// The default branch's history: after PRs, whose authors wait, before calibration.
    pub const HISTORY: Priority = Priority(-5);
    /// A PR push.
    pub const NORMAL: Priority = Priority(0);
    /// A merge group: the merge queue holds people's merges until its check concludes.
    pub const MERGE_QUEUE: Priority = Priority(5);
    /// A person asked and is waiting (`/rebench`, `/rebench aa`).
    pub const INTERACTIVE: Priority = Priority(10);
}

/// A job to enqueue for a comparison (the comparison supplies repository, shas and label).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewJob {
    pub rounds: i64,
    pub priority: Priority,
    /// Claims allowed before the reaper gives up on the job.
    pub max_attempts: i64,
    /// What asked for it (unique): adding rounds with an origin already stored adds nothing,
    /// so a request carried out twice is idempotent.
    pub origin: Option<String>,
}

impl NewJob {
    /// `rounds` rounds at normal priority, 3 attempts, no origin.
    pub fn rounds(rounds: i64) -> Self {
        NewJob {
            rounds,
            priority: Priority::NORMAL,
            max_attempts: 3,
            origin: None,
        }
    }
}

/// An A/A calibration job for one runner on one repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewCalibration {
    pub runner_id: RunnerId,
    pub repository_id: RepositoryId,
    pub sha: String,
    pub runner_label: String,
    /// The config of the comparison it calibrates for (what to build and run).
    pub config: StoredComparisonConfig,
    pub rounds: i64,
    pub priority: Priority,
    pub max_attempts: i64,
}

/// A job as stored (without its lease token, which only the holder knows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: JobId,
    pub kind: JobKind,
    pub comparison_id: Option<ComparisonId>,
    pub repository_id: RepositoryId,
    pub base_sha: String,
    /// Equal to `base_sha` for calibration.
    pub head_sha: String,
    /// Its comparison's config (a calibration: the comparison it calibrates for).
    pub config: StoredComparisonConfig,
    pub runner_label: String,
    /// Only this runner may claim it (calibration measures one machine).
    pub pinned_runner_id: Option<RunnerId>,
    pub rounds: i64,
    pub priority: Priority,
    pub state: JobState,
    /// Set when a newer head or a closed PR cancels a running job; the agent learns it at its
    /// next heartbeat.
    pub cancel_requested: bool,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub claimed_by: Option<RunnerId>,
    /// Claims so far; while running, the number of the current attempt (samples carry it).
    pub attempts: i64,
    pub max_attempts: i64,
    pub last_error: Option<String>,
    pub log_tail: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Set on a profile job: profiled runs of both sides, never samples.
    pub profile: Option<benchgate_api::agent::ProfileRequest>,
    /// Set when the sides built to byte-identical `artifacts` and no round ran.
    pub identical_build: Option<benchgate_api::agent::IdenticalBuild>,
}

/// A job just claimed: the holder fences every later write with `lease`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimedJob {
    pub job: Job,
    pub lease: LeaseToken,
    pub lease_expires_at: DateTime<Utc>,
}

/// The answer to a heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    pub lease_expires_at: DateTime<Utc>,
    /// The job was cancelled (superseded or PR closed): stop and complete it.
    pub cancel_requested: bool,
}

/// How the agent ended a job: the agent protocol's type, stored as it arrives.
pub use benchgate_api::agent::JobOutcome;

/// A job whose lease the reaper found expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReapedJob {
    pub id: JobId,
    /// The attempt that expired.
    pub attempts: i64,
    /// `Queued` (will be tried again), `Failed` (out of attempts) or `Cancelled`.
    pub state: JobState,
}

/// Where a comparison waits: the job of it a runner would claim first, and what the runners of
/// that job's label have to do before they reach it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuePlace {
    /// The comparison's next job to be claimed.
    pub job: Job,
    /// Queued jobs of the same runner label that a claim takes before `job`, in claim order
    /// (pinned ones included: each waits for its own runner).
    pub ahead: Vec<Job>,
    /// Every running job, of any label: a runner of the label may be busy with another.
    pub running: Vec<Job>,
}

/// When one round of a job's attempt first landed: what a round's pace is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundLanding {
    pub attempt: i64,
    pub round: i64,
    pub at: DateTime<Utc>,
}

/// How much work waits and runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueDepth {
    pub queued: i64,
    pub running: i64,
}
