//! The outbox worker: claims due rows, carries out their [`Task`], and reports each as
//! delivered, to retry (exponential backoff, never sooner than GitHub's `Retry-After` or
//! rate-limit reset), or given up (a permanent error, logged with its reason). Rows live in
//! the database, so a restart loses nothing; every write is safe to repeat (comments are found
//! again by their hidden marker).

mod deliver;
pub mod task;

use std::sync::Arc;
use std::time::Duration;

use benchgate_github::client::{GitHubClient, GitHubError};
use benchgate_store::model::OutboxMessage;
use benchgate_store::{Store, StoreError};
use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::github_app::GitHubArgs;
pub use task::Task;

/// Rows claimed per poll.
const BATCH: i64 = 8;
/// How long a claimed row stays ours; a worker that dies lets it go after this.
const LEASE: Duration = Duration::from_secs(120);
/// Pause between polls when nothing was due.
const IDLE: Duration = Duration::from_millis(250);
/// Failed attempts before a row is given up.
pub const MAX_ATTEMPTS: i64 = 12;
/// The longest backoff between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

/// What a task needs to run.
#[derive(Clone)]
pub struct Worker {
    pub app: crate::AppState,
    pub store: Arc<dyn Store>,
    pub github: GitHubClient,
    pub args: Arc<GitHubArgs>,
}

/// Why a task did not finish.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The row cannot succeed however often it is tried.
    #[error("{0}")]
    Permanent(String),
}

impl TaskError {
    fn is_retryable(&self) -> bool {
        match self {
            TaskError::GitHub(e) => e.is_retryable(),
            TaskError::Store(_) => true,
            TaskError::Permanent(_) => false,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            TaskError::GitHub(e) => e.retry_after(),
            _ => None,
        }
    }
}

/// Runs until `cancel` fires; a row in flight is finished first.
pub async fn run(worker: Worker, cancel: CancellationToken) {
    loop {
        let claimed = match worker.store.claim_outbox(BATCH, LEASE).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "outbox: cannot claim rows");
                Vec::new()
            }
        };
        let idle = claimed.is_empty();
        for row in claimed {
            if cancel.is_cancelled() {
                // Unfinished rows come back when their lease expires.
                return;
            }
            worker.process(row).await;
        }
        if idle {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(IDLE) => {}
            }
        }
    }
}

impl Worker {
    #[tracing::instrument(skip_all, fields(outbox = %row.id, kind = %row.kind, attempts = row.attempts))]
    async fn process(&self, row: OutboxMessage) {
        let outcome = match Task::from_row(&row.kind, &row.payload) {
            Ok(task) => self.execute(task).await,
            Err(e) => Err(TaskError::Permanent(format!("unreadable payload: {e}"))),
        };
        let report = match outcome {
            Ok(()) => self.store.outbox_delivered(row.id, &row.lease).await,
            Err(e) => {
                let attempts = row.attempts + 1;
                let retry_at = (e.is_retryable() && attempts < MAX_ATTEMPTS).then(|| {
                    let wait = backoff(self.args.outbox_backoff_ms, attempts)
                        .max(e.retry_after().unwrap_or_default());
                    Utc::now() + wait
                });
                match retry_at {
                    Some(at) => {
                        tracing::info!(error = %e, retry_at = %at, "GitHub write failed; will retry")
                    }
                    None => tracing::warn!(error = %e, attempts, "GitHub write given up"),
                }
                let message = e.to_string();
                self.store
                    .outbox_failed(row.id, &row.lease, &message, retry_at)
                    .await
            }
        };
        if let Err(e) = report {
            // Lease lost: another worker has the row now; it will send it again, harmlessly.
            tracing::warn!(error = %e, "outbox: could not record the result");
        }
    }

    async fn execute(&self, task: Task) -> Result<(), TaskError> {
        match task {
            Task::SchedulePullRequest(t) => crate::scheduler::pull_request::schedule(self, t).await,
            Task::CancelPullRequest(t) => crate::scheduler::pull_request::cancel(self, t).await,
            Task::HandleCommand(t) => crate::scheduler::commands::handle(self, t).await,
            Task::RerunCheck(t) => crate::scheduler::commands::rerun_check(self, t).await,
            Task::ReportComment(c) => self.report_comment(c.comparison_id).await,
            Task::ReportCheck(c) => self.report_check(c.comparison_id).await,
            Task::UpsertComment(c) => self.upsert_comment(c).await,
            Task::NeutralCheck(c) => self.neutral_check(c).await,
            Task::AddReaction(r) => self.add_reaction(r).await,
        }
    }

    /// Records a follow-up write.
    pub async fn enqueue(&self, task: Task) -> Result<(), TaskError> {
        self.store.enqueue_outbox(&task.message()).await?;
        Ok(())
    }
}

/// `base · 2^(attempts−1)`, capped.
fn backoff(base_ms: u64, attempts: i64) -> Duration {
    let exp = u32::try_from(attempts.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
    Duration::from_millis(base_ms.saturating_mul(1u64 << exp)).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(2000, 1), Duration::from_secs(2));
        assert_eq!(backoff(2000, 3), Duration::from_secs(8));
        assert_eq!(backoff(2000, 30), MAX_BACKOFF);
    }
}
