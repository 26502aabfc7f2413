//! 👀 on a command's comment: the command was accepted.

use benchgate_store::model::OutboxId;
use benchgate_store::model::Priority;
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};

/// A 👀 reaction on a comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reaction {
    pub repo: RepoName,
    pub comment_id: u64,
    /// The change the comment is on: GitLab's award needs its merge request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
}

impl OutboxTask for Reaction {
    const KIND: &'static str = "reaction.add";
    const PRIORITY: Priority = Priority::INTERACTIVE;
    fn dedupe_key(&self) -> Option<String> {
        // Each comment gets its reaction once; GitHub answers a repeated one with the same reaction.
        None
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        cx.forge(&self.repo)?
            .add_eyes(self.pr, self.comment_id)
            .await?;
        Ok(())
    }
}
