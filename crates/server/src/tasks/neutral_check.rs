//! A completed check that needs no comparison: neutral for a missing or invalid
//! `.benchgate.toml`, a success for a change that touches only files the suite ignores.

use benchgate_github::client::{CheckConclusion, CheckStatus};
use benchgate_store::model::OutboxId;
use benchgate_store::model::Priority;
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};
use crate::commit_check::{self, CheckWrite};

/// A completed check on a head that has nothing to compare (neutral unless said otherwise).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeutralCheck {
    pub repo: RepoName,
    pub head_sha: String,
    pub title: String,
    pub summary: String,
    /// The check's name when it stands for one suite and label (`benchgate / …`); `None`:
    /// `benchgate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `None`: neutral.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<CheckConclusion>,
    /// The change the head belongs to: GitLab's status goes into its merge request's pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
}

impl OutboxTask for NeutralCheck {
    const KIND: &'static str = "check_run.neutral";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        Some(match &self.name {
            None => format!("check:{}@{}", self.repo.full_name, self.head_sha),
            Some(name) => format!("check:{}@{}:{name}", self.repo.full_name, self.head_sha),
        })
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        let forge = cx.forge(&self.repo)?;
        let pr = self.pr;
        forge.write_gate(pr, &self.check_write(), None).await?;
        Ok(())
    }
}

impl NeutralCheck {
    /// The check as GitHub receives it.
    pub(super) fn check_write(self) -> CheckWrite {
        let external_id = match &self.name {
            None => format!("benchgate-neutral-{}", self.head_sha),
            Some(name) => format!("benchgate-skipped-{}-{name}", self.head_sha),
        };
        CheckWrite {
            name: self.name.unwrap_or_else(|| super::CHECK_NAME.to_owned()),
            external_id,
            head_sha: self.head_sha,
            status: CheckStatus::Completed,
            conclusion: Some(self.conclusion.unwrap_or(CheckConclusion::Neutral)),
            title: self.title,
            summary: commit_check::summary(self.summary),
            details_url: None,
        }
    }
}
