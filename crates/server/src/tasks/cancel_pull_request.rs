//! A closed PR (or one back to draft): cancel its comparisons again, after any schedule of it
//! that was being carried out meanwhile.

use benchgate_store::model::OutboxId;
use benchgate_store::model::Priority;
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};

/// The PR was closed: cancel its comparisons again, after a schedule that was being carried out
/// when it closed (the row shares the schedule's dedupe key, so it runs after it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelPullRequest {
    pub repo: RepoName,
    pub pr: u64,
}

impl OutboxTask for CancelPullRequest {
    const KIND: &'static str = "pr.cancel";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        Some(super::pull_request_key(&self.repo, self.pr))
    }

    /// Cancels the PR's comparisons again. The webhook cancelled them already; this row runs
    /// after any schedule of the PR that was being carried out meanwhile, and undoes it.
    #[tracing::instrument(skip_all, fields(repo = %self.repo.full_name, pr = self.pr))]
    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        let Some(repository) = cx.store.repository_by_name(&self.repo.full_name).await? else {
            return Ok(());
        };
        let jobs = cx
            .store
            .cancel_pull_request(repository.id, self.pr as i64)
            .await?;
        if jobs > 0 {
            tracing::info!(jobs, "comparison scheduled while the PR closed; cancelled");
        }
        Ok(())
    }
}
