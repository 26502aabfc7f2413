//! "Re-run" on benchgate's check run, or "Re-run all checks" on its suite: the same rounds again
//! for the comparisons of that head, reported on a new check run (a completed run is final).

use benchgate_store::model::{Comparison, ComparisonState, OutboxId, Priority};
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};

/// Someone asked GitHub to re-run benchgate's check of a head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RerunCheck {
    pub repo: RepoName,
    pub head_sha: String,
    /// The PRs GitHub named; empty for a fork PR, whose comparison is found by `head_sha`.
    pub prs: Vec<u64>,
    /// The check run re-run (one suite and label); `None` for "Re-run all checks" (and rows
    /// recorded before suites), which re-runs every comparison of the head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_name: Option<String>,
}

impl OutboxTask for RerunCheck {
    const KIND: &'static str = "check.rerun";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        None
    }

    #[tracing::instrument(skip_all, fields(repo = %self.repo.full_name, head = %self.head_sha))]
    async fn run(self, cx: &Context, row: OutboxId) -> Result<(), TaskError> {
        let Some(repository) = cx.store.repository_by_name(&self.repo.full_name).await? else {
            tracing::info!("re-run of a repository benchgate has not recorded; nothing to do");
            return Ok(());
        };
        let mut found: Vec<Comparison> = Vec::new();
        if self.prs.is_empty() {
            found = cx
                .store
                .head_comparisons(repository.id, &self.head_sha)
                .await?;
        } else {
            for pr in &self.prs {
                found.extend(
                    cx.store
                        .pull_request_comparisons(repository.id, *pr as i64)
                        .await?
                        .into_iter()
                        .filter(|c| c.head_sha == self.head_sha),
                );
            }
        }
        let active: Vec<_> = found
            .into_iter()
            .filter(|c| {
                !matches!(
                    c.state,
                    ComparisonState::Superseded | ComparisonState::Cancelled
                ) && self
                    .check_name
                    .as_ref()
                    .is_none_or(|name| *name == super::check_name_of(c))
            })
            .collect();
        if active.is_empty() {
            tracing::info!("no active comparison of this head; the re-run changes nothing");
        }
        for comparison in active {
            let config = &comparison.config.config;
            let job = cx.job(config.gate_rounds(), Priority::NORMAL, row, comparison.id);
            cx.store.add_rounds(comparison.id, &[job]).await?;
            tracing::info!(comparison = %comparison.id, "check re-requested; rounds added");
        }
        Ok(())
    }
}
