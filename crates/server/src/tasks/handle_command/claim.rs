//! `/benchgate claim BENCHMARK CHANGE` (after the permission check in `handle_command/mod.rs`):
//! the claim joins those of the description on the PR's newest head, replacing an earlier
//! comment claim on the same benchmark, and the head's checks and comments are written again.
//! Write permission is asked because under `[gate] claims = "require"` a claim can fail the
//! check; the author states claims in the description.

use benchgate_api::agent::{CommentClaim, MAX_COMMENT_CLAIMS};
use benchgate_store::model::{Comparison, ComparisonState, PullRequestEdit};

use super::HandleCommand;
use crate::tasks::{Context, TaskError};

/// Adds the claim on `line` to the comparisons of the PR's newest head.
#[tracing::instrument(skip_all, fields(repo = %t.repo.full_name, pr = t.pr, commenter = %t.commenter))]
pub async fn run(
    cx: &Context,
    t: &HandleCommand,
    line: &str,
    comparisons: Vec<Comparison>,
) -> Result<(), TaskError> {
    let Some(benchmark) = benchgate_claims::explicit(line)
        .ok()
        .and_then(|claims| claims.into_iter().next())
        .and_then(|claim| claim.benchmark)
    else {
        return Err(TaskError::Permanent(format!(
            "`{line}` was parsed as a claim but does not read as one"
        )));
    };
    let Some(head) = comparisons.first().map(|c| c.head_sha.clone()) else {
        return cx
            .enqueue(t.reply(format!(
                "there is nothing to check a claim against: this {} has no comparison \
                     (is there a `.benchgate.toml` on the base branch?).",
                crate::report::change_word(t.repo.forge)
            )))
            .await;
    };
    let current: Vec<Comparison> = comparisons
        .into_iter()
        .filter(|c| {
            c.head_sha == head
                && !matches!(
                    c.state,
                    ComparisonState::Superseded | ComparisonState::Cancelled
                )
        })
        .collect();
    if current.is_empty() {
        return cx
            .enqueue(t.reply(format!(
                "this {} is closed or a draft; reopen it or mark it ready for review, then \
                     state the claim again.",
                crate::report::change_word(t.repo.forge)
            )))
            .await;
    }
    let edit = PullRequestEdit::Claim(CommentClaim {
        line: line.to_owned(),
        benchmark,
        by: t.commenter.clone(),
        comment_id: t.comment_id,
    });
    let mut edited = Vec::new();
    let mut full = false;
    for c in &current {
        match cx.store.edit_pull_request_context(c.id, &edit).await? {
            Some(_) => edited.push(c.id),
            None => {
                let context = c.config.github.as_ref();
                let seen =
                    context.is_some_and(|g| g.claimed.iter().any(|k| k.comment_id == t.comment_id));
                full |= !seen && context.is_some();
            }
        }
    }
    if edited.is_empty() && full {
        return cx
            .enqueue(t.reply(format!(
                "this {} holds {MAX_COMMENT_CLAIMS} comment claims already; restate one on the \
                 same benchmark to replace it, or list the rest in the description.",
                crate::report::change_word(t.repo.forge)
            )))
            .await;
    }
    tracing::info!(comparisons = edited.len(), "claim added");
    cx.enqueue(t.eyes()).await?;
    for id in edited {
        super::accept::report_again(cx, id).await?;
    }
    Ok(())
}
