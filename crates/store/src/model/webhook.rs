//! Webhook deliveries and what they ask the store to do.

use super::{
    ComparisonId, Installation, JobId, NewCalibration, NewComparison, NewJob, NewOutboxMessage,
    NewRepository, OutboxId, RepositoryId,
};
use serde::{Deserialize, Serialize};

/// A webhook delivery as received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// `X-GitHub-Delivery`.
    pub delivery_id: String,
    pub event: String,
    pub action: Option<String>,
    /// What the server made of it, e.g. `enqueued`, `cancelled`, `ignored` (for metrics).
    pub outcome: String,
}

/// One thing a delivery asks for; all of a delivery's effects commit with it or not at all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DeliveryEffect {
    UpsertInstallation(Installation),
    /// The app was uninstalled: the installation and its repositories are marked removed.
    RemoveInstallation {
        installation_id: i64,
    },
    UpsertRepository(NewRepository),
    /// The App's installation was suspended: its repositories' PR comparisons are cancelled.
    SuspendInstallation {
        installation_id: i64,
    },
    /// A PR's newest head (opened, pushed, reopened); the repository is upserted before.
    RecordPullRequestHead {
        full_name: String,
        pr_number: i64,
        head_sha: String,
    },
    /// A new comparison with its jobs; supersedes older heads of the same PR.
    CreateComparison(NewComparison),
    /// More rounds for an existing comparison (`/rebench`).
    AddRounds {
        comparison_id: ComparisonId,
        jobs: Vec<NewJob>,
    },
    EnqueueCalibration(NewCalibration),
    /// The PR was closed: cancel its comparisons and jobs.
    CancelPullRequest {
        repository_id: RepositoryId,
        pr_number: i64,
    },
    Outbox(NewOutboxMessage),
}

/// What `record_delivery` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeliveryRecord {
    /// Seen before: nothing was done again.
    Duplicate,
    /// Recorded, with the ids of what its effects created.
    Recorded {
        comparisons: Vec<ComparisonId>,
        jobs: Vec<JobId>,
        /// Jobs cancelled (queued) or asked to stop (running).
        cancelled_jobs: u64,
        outbox: Vec<OutboxId>,
    },
}
