//! A completed check that needs no comparison (no `.benchgate.toml`, an invalid one).

use benchgate_github::client::{CheckConclusion, CheckStatus};
use benchgate_store::model::Priority;
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};
use crate::commit_check::{self, CheckWrite};

/// A completed, neutral check on a head that has nothing to compare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeutralCheck {
    pub repo: RepoName,
    pub head_sha: String,
    pub title: String,
    pub summary: String,
}

impl OutboxTask for NeutralCheck {
    const KIND: &'static str = "check_run.neutral";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        Some(format!("check:{}@{}", self.repo.full_name, self.head_sha))
    }
}

impl NeutralCheck {
    pub async fn run(self, cx: &Context) -> Result<(), TaskError> {
        let target = self.repo.target()?;
        commit_check::write(&cx.github, &target, &self.check_write(), None).await?;
        Ok(())
    }

    /// The check as GitHub receives it.
    pub(super) fn check_write(self) -> CheckWrite {
        CheckWrite {
            name: super::CHECK_NAME.to_owned(),
            external_id: format!("benchgate-neutral-{}", self.head_sha),
            head_sha: self.head_sha,
            status: CheckStatus::Completed,
            conclusion: Some(CheckConclusion::Neutral),
            title: self.title,
            summary: commit_check::summary(self.summary),
            details_url: None,
        }
    }
}
