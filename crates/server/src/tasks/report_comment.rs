//! The PR comment of a comparison: rendered when sent, so the newest numbers go out, and
//! written to the one comment benchgate keeps per PR, suite and runner label.

use benchgate_store::model::OutboxId;
use benchgate_store::model::{ComparisonId, Priority, REPORT_COMMENT, comparison_key};
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, TaskError};
use crate::report;

/// Render a comparison now and write its PR comment; every pending one of a comparison is one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportComment {
    pub comparison_id: i64,
}

impl OutboxTask for ReportComment {
    const KIND: &'static str = REPORT_COMMENT;
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        Some(comparison_key(Self::KIND, ComparisonId(self.comparison_id)))
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        run(cx, self.comparison_id).await
    }
}

/// Renders comparison `id` and writes its PR comment, unless a newer comparison of the same
/// PR, suite and label speaks there now.
pub async fn run(cx: &Context, id: i64) -> Result<(), TaskError> {
    let Some((loaded, repo)) = cx.loaded(id).await? else {
        return Ok(());
    };
    let c = &loaded.comparison;
    let Some(pr) = c.pr_number else { return Ok(()) };
    let key = super::comment_key_of(c);
    let newest = cx
        .store
        .pull_request_comparisons(c.repository_id, pr)
        .await?
        .into_iter()
        .find(|other| super::comment_key_of(other) == key);
    if newest.is_some_and(|n| n.id != c.id) {
        tracing::debug!(comparison = id, "superseded; its comment is not edited");
        return Ok(());
    }
    crate::profile::after_verdict(cx, &loaded).await?;
    let body = report::render_comment(&loaded.input);
    let comment = cx
        .forge(&repo)?
        .upsert_comment(pr as u64, &key, &body)
        .await?;
    cx.store
        .set_pull_request_comment_id(c.repository_id, pr, &key, comment)
        .await?;
    tracing::info!(comparison = id, comment, "PR comment written");
    Ok(())
}
