//! A PR's description was edited: the claims it states are read again. The new text is stored
//! with the comparisons of the PR that still count, and their checks and comments are written
//! again; nothing is measured.

use benchgate_store::model::OutboxId;
use benchgate_store::model::{ComparisonState, Priority, PullRequestEdit};
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, ReportCheck, ReportComment, TaskError};

/// Store the PR's new description and report its claims again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditDescription {
    pub repo: RepoName,
    pub pr: u64,
    /// The description as edited (capped as the schedule caps it).
    pub body: String,
}

impl OutboxTask for EditDescription {
    const KIND: &'static str = "pr.description";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        // Its own key: a burst of edits becomes one write, and a schedule pending under the
        // PR's key is never replaced by an edit.
        Some(format!(
            "pr-description:{}#{}",
            self.repo.full_name, self.pr
        ))
    }

    #[tracing::instrument(skip_all, fields(repo = %self.repo.full_name, pr = self.pr))]
    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        let Some(repository) = cx.store.repository_by_name(&self.repo.full_name).await? else {
            tracing::info!("description edited in a repository benchgate has not seen yet");
            return Ok(());
        };
        let comparisons = cx
            .store
            .pull_request_comparisons(repository.id, self.pr as i64)
            .await?;
        let edit = PullRequestEdit::Description(self.body);
        let mut reported = 0;
        for c in comparisons.iter().filter(|c| {
            !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled
            )
        }) {
            if cx
                .store
                .edit_pull_request_context(c.id, &edit)
                .await?
                .is_none()
            {
                continue;
            }
            let comparison_id = c.id.0;
            cx.enqueue(ReportCheck { comparison_id }).await?;
            cx.enqueue(ReportComment { comparison_id }).await?;
            reported += 1;
        }
        tracing::info!(
            comparisons = reported,
            "description read again for its claims"
        );
        Ok(())
    }
}
