//! `/rebench` and `/rebench aa` (in the outbox worker): check the commenter may write to the
//! repository, then react 👀 and add the rounds, or reply why not. Also the check run's
//! "Re-run" button.

use benchgate_api::agent::ComparisonConfig;
use benchgate_store::model::{
    Comparison, ComparisonId, ComparisonState, NewJob, OutboxId, Priority,
};

use crate::outbox::task::{
    GuardedCommand, HandleCommand, MarkedComment, Reaction, RerunCheck, Task,
};
use crate::outbox::{TaskError, Worker};

/// The label of the reply to comment `comment_id`: one reply per command, however often the
/// write is retried.
pub fn reply_label(comment_id: u64) -> String {
    format!("reply-{comment_id}")
}

/// Associations trusted without asking GitHub for the commenter's permission. Only the owner:
/// an org member or a collaborator may have read access only, and a command can run a fork's code.
const TRUSTED: [&str; 1] = ["OWNER"];

/// Carries out an allowed command; a denied one gets a reply that says why.
#[tracing::instrument(skip_all, fields(repo = %t.repo.full_name, pr = t.pr, commenter = %t.commenter))]
pub async fn handle(worker: &Worker, t: HandleCommand, row: OutboxId) -> Result<(), TaskError> {
    let reply = |body: String| {
        Task::UpsertComment(MarkedComment {
            repo: t.repo.clone(),
            pr: t.pr,
            label: reply_label(t.comment_id),
            body: format!("@{} {body}", t.commenter),
        })
    };
    if let Err(why) = permitted(worker, &t).await? {
        tracing::info!(why = %why, "command denied");
        return worker.enqueue(reply(why)).await;
    }
    let Some(repository) = worker.store.repository_by_name(&t.repo.full_name).await? else {
        return worker
            .enqueue(reply(
                "benchgate has not seen this repository's pull requests yet.".into(),
            ))
            .await;
    };
    let comparisons = worker
        .store
        .pull_request_comparisons(repository.id, t.pr as i64)
        .await?;
    let Some(comparison) = comparisons.into_iter().next() else {
        return worker
            .enqueue(reply(
                "there is nothing to rebench: this PR has no comparison \
                 (is there a `.benchgate.toml` on the base branch?)."
                    .into(),
            ))
            .await;
    };
    if comparison.state == ComparisonState::Cancelled {
        return worker
            .enqueue(reply(
                "this PR is closed; reopen it to benchmark again.".into(),
            ))
            .await;
    }
    worker
        .enqueue(Task::AddReaction(Reaction {
            repo: t.repo.clone(),
            comment_id: t.comment_id,
        }))
        .await?;
    let config = config_of(&comparison)?;
    let rounds = match t.command {
        GuardedCommand::Rebench { rounds } => rounds.unwrap_or(config.benchmark.rounds),
        GuardedCommand::RebenchAa => {
            let jobs = crate::calibration::calibrate_comparison(&worker.app, comparison.id).await?;
            tracing::info!(comparison = %comparison.id, jobs = jobs.len(), "A/A sessions enqueued");
            config.benchmark.rounds
        }
    };
    let jobs = worker
        .store
        .add_rounds(
            comparison.id,
            &[job(
                worker,
                rounds,
                Priority::INTERACTIVE,
                row,
                comparison.id,
            )],
        )
        .await?;
    tracing::info!(comparison = %comparison.id, rounds, jobs = jobs.len(), "rounds added");
    Ok(())
}

/// `Ok(Ok(()))` when allowed, `Ok(Err(reason))` when denied. A failed lookup is a denial.
async fn permitted(worker: &Worker, t: &HandleCommand) -> Result<Result<(), String>, TaskError> {
    if TRUSTED.contains(&t.association.as_str()) {
        return Ok(Ok(()));
    }
    let target = t.repo.target()?;
    Ok(
        match worker
            .github
            .collaborator_permission(&target, &t.commenter)
            .await
        {
            Ok(p) if p.can_write() => Ok(()),
            Ok(p) => Err(format!(
                "only people with write, maintain or admin permission on {} can run benchmark \
                 commands; your permission is {}.",
                t.repo.full_name,
                format!("{p:?}").to_lowercase()
            )),
            Err(e) => {
                tracing::warn!(error = %e, "permission lookup failed; denying");
                Err(format!(
                    "benchgate could not check your permission on {} (GitHub answered: {e}), \
                     so the command was not run. Please try again later.",
                    t.repo.full_name
                ))
            }
        },
    )
}

/// "Re-run" on the check run: the same rounds again for the comparison of that head.
#[tracing::instrument(skip_all, fields(repo = %t.repo.full_name, head = %t.head_sha))]
pub async fn rerun_check(worker: &Worker, t: RerunCheck, row: OutboxId) -> Result<(), TaskError> {
    let Some(repository) = worker.store.repository_by_name(&t.repo.full_name).await? else {
        return Ok(());
    };
    for pr in &t.prs {
        let comparisons = worker
            .store
            .pull_request_comparisons(repository.id, *pr as i64)
            .await?;
        let Some(comparison) = comparisons.into_iter().find(|c| {
            c.head_sha == t.head_sha
                && !matches!(
                    c.state,
                    ComparisonState::Superseded | ComparisonState::Cancelled
                )
        }) else {
            continue;
        };
        let config = config_of(&comparison)?;
        worker
            .store
            .add_rounds(
                comparison.id,
                &[job(
                    worker,
                    config.benchmark.rounds,
                    Priority::NORMAL,
                    row,
                    comparison.id,
                )],
            )
            .await?;
        tracing::info!(comparison = %comparison.id, "check run re-requested; rounds added");
    }
    Ok(())
}

/// A job of `rounds`, keyed by the outbox row that asked for it: the row carried out again
/// (its answer lost, or on a second replica) adds nothing.
fn job(
    worker: &Worker,
    rounds: u32,
    priority: Priority,
    row: OutboxId,
    comparison: ComparisonId,
) -> NewJob {
    NewJob {
        rounds: i64::from(rounds),
        priority,
        max_attempts: worker.app.config.max_attempts,
        origin: Some(format!("outbox:{}:comparison:{}", row.0, comparison.0)),
    }
}

fn config_of(c: &Comparison) -> Result<ComparisonConfig, TaskError> {
    serde_json::from_value(c.config.clone())
        .map_err(|e| TaskError::Permanent(format!("comparison {} config: {e}", c.id)))
}
