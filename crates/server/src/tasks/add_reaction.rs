//! 👀 on a command's comment: the command was accepted.

use serde::{Deserialize, Serialize};

use super::{Context, RepoName, TaskError};

/// A 👀 reaction on a comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reaction {
    pub repo: RepoName,
    pub comment_id: u64,
}

impl Reaction {
    pub async fn run(self, cx: &Context) -> Result<(), TaskError> {
        cx.github
            .add_eyes_reaction(&self.repo.target()?, self.comment_id)
            .await?;
        Ok(())
    }
}
