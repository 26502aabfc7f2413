//! `/benchgate accept REASON` and `/benchgate unaccept` (after the permission check in
//! `handle_command/mod.rs`): record who accepted which failing rows of the PR's current head and
//! why, or take it back; then the head's checks and comments are written again.

use benchgate_store::model::{
    Comparison, ComparisonId, ComparisonState, NewAcceptance, Repository,
};

use super::{GuardedCommand, HandleCommand};
use crate::report;
use crate::tasks::{Context, ReportCheck, ReportComment, TaskError};

/// Carries out an accept or unaccept on the PR's newest head.
#[tracing::instrument(skip_all, fields(repo = %t.repo.full_name, pr = t.pr, commenter = %t.commenter))]
pub async fn run(
    cx: &Context,
    t: &HandleCommand,
    repository: &Repository,
    comparisons: Vec<Comparison>,
) -> Result<(), TaskError> {
    // The newest head's comparisons, one per runner label (newest first from the store).
    let Some(head) = comparisons.first().map(|c| c.head_sha.clone()) else {
        return cx
            .enqueue(t.reply(format!(
                "there is nothing to accept: this {} has no comparison.",
                crate::report::change_word(t.repo.forge)
            )))
            .await;
    };
    let current: Vec<Comparison> = comparisons
        .into_iter()
        .filter(|c| c.head_sha == head && c.state != ComparisonState::Superseded)
        .collect();
    let short = benchgate_stats::words::short_sha(&head).to_owned();
    match &t.command {
        GuardedCommand::Accept { reason } => {
            let mut rows = Vec::new();
            for c in &current {
                if let Some((loaded, _)) = cx.loaded(c.id.0).await? {
                    rows.extend(report::failing_rows(&loaded.input));
                }
            }
            rows.sort();
            rows.dedup();
            if rows.is_empty() {
                return cx
                    .enqueue(t.reply(format!(
                        "nothing fails on commit {short}, so there is nothing to accept; \
                         comment again once the check has failed."
                    )))
                    .await;
            }
            let accepted = cx
                .store
                .accept(&NewAcceptance {
                    repository_id: repository.id,
                    pr_number: t.pr as i64,
                    head_sha: head.clone(),
                    accepted_by: t.commenter.clone(),
                    reason: reason.clone(),
                    rows,
                })
                .await?;
            tracing::info!(
                acceptance = accepted.id,
                rows = accepted.rows.len(),
                "regressions accepted"
            );
        }
        GuardedCommand::Unaccept => {
            let revoked = cx
                .store
                .revoke_acceptance(repository.id, &head, &t.commenter)
                .await?;
            if revoked == 0 {
                return cx
                    .enqueue(t.reply(format!("commit {short} has no acceptance to take back.")))
                    .await;
            }
            tracing::info!(revoked, "acceptance revoked");
        }
        GuardedCommand::Rebench { .. }
        | GuardedCommand::RebenchAa
        | GuardedCommand::Bisect
        | GuardedCommand::Claim { .. }
        | GuardedCommand::Malformed { .. }
        | GuardedCommand::Profile { .. } => {
            unreachable!("only accept and unaccept come here")
        }
    }
    cx.enqueue(t.eyes()).await?;
    for c in &current {
        report_again(cx, c.id).await?;
    }
    Ok(())
}

/// The comparison's check and comment, written again with the acceptance as it now stands.
pub(crate) async fn report_again(cx: &Context, id: ComparisonId) -> Result<(), TaskError> {
    let comparison_id = id.0;
    cx.enqueue(ReportCheck { comparison_id }).await?;
    cx.enqueue(ReportComment { comparison_id }).await
}
