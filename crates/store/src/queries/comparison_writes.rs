//! What is written beside a comparison whenever it gains jobs or changes state: the jobs
//! themselves, and the report rows that follow each change; compiled into each backend and
//! run inside the caller's transaction (creation, more rounds, cancel, refresh, profiles).

use super::{Conn, outbox};
use crate::StoreError;
use crate::model::*;
use sqlx::Row as _;

/// Records the report rows of a PR comparison whose state just changed, in the
/// transaction that changed it: the check run (and, once rounds may have run, the
/// comment) then follows every change, however many comparisons came after it and
/// whichever server restarts. The keys coalesce them with the watcher's progress rows.
pub(super) async fn report_state_change(
    conn: &mut Conn,
    id: ComparisonId,
    state: ComparisonState,
) -> Result<(), StoreError> {
    outbox::insert(
        conn,
        &NewOutboxMessage::comparison_report(REPORT_CHECK, Priority::NORMAL, id),
    )
    .await?;
    // A comparison no job has started has no rounds to show; its check run says enough.
    if state != ComparisonState::Queued {
        outbox::insert(
            conn,
            &NewOutboxMessage::comparison_report(REPORT_COMMENT, Priority::NORMAL, id),
        )
        .await?;
    }
    Ok(())
}

/// Inserts jobs for a comparison, copying its repository, shas, config and label.
pub(super) async fn insert_jobs(
    conn: &mut Conn,
    comparison_id: ComparisonId,
    jobs: &[NewJob],
) -> Result<Vec<JobId>, StoreError> {
    let now = crate::shared::now();
    let mut ids = Vec::with_capacity(jobs.len());
    for job in jobs {
        let row = sqlx::query(
            "INSERT INTO jobs (kind, comparison_id, repository_id, base_sha, head_sha, \
             config, runner_label, rounds, priority, state, max_attempts, created_at, \
             updated_at, origin, pinned_runner_id) \
             SELECT 'comparison', id, repository_id, base_sha, head_sha, config, \
             runner_label, $2, $3, 'queued', $4, $5, $5, $6, pinned_runner_id \
             FROM comparisons WHERE id = $1 RETURNING id",
        )
        .bind(comparison_id)
        .bind(job.rounds)
        .bind(job.priority.0)
        .bind(job.max_attempts)
        .bind(now)
        .bind(&job.origin)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("comparison {comparison_id}")))?;
        ids.push(row.try_get("id")?);
    }
    Ok(ids)
}
