//! A comment that is not a report (a reply to a command, an invalid config): created once per
//! label, edited after.

use benchgate_store::model::OutboxId;
use benchgate_store::model::Priority;
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};

/// Create or edit the comment carrying `label`'s hidden marker; exactly one exists per label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkedComment {
    pub repo: RepoName,
    pub pr: u64,
    pub label: String,
    pub body: String,
}

impl OutboxTask for MarkedComment {
    const KIND: &'static str = "comment.upsert";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        Some(format!(
            "comment:{}#{}:{}",
            self.repo.full_name, self.pr, self.label
        ))
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        let body = crate::report::fit_bytes(self.body, crate::report::COMMENT_LIMIT);
        cx.forge(&self.repo)?
            .upsert_comment(self.pr, &self.label, &body)
            .await?;
        Ok(())
    }
}
