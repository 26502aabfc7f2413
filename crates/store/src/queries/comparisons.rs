//! Comparisons and their jobs: rounds added, cancelled, their state refreshed, found;
//! compiled into each backend. Creation is `creation.rs`. A PR's
//! heads, check runs and comment are `pull_requests.rs`, stored results `results.rs`.
//!
//! Lock order on Postgres is always jobs before comparisons (claim, complete and reap touch a
//! job and then refresh its comparison), so supersede and cancel update jobs first too.

use super::comparison_writes::{insert_jobs, report_state_change};
use super::{Backend, Conn, Pool, outbox, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::COMPARISON_COLUMNS;
use crate::shared::dialect::Dialect;
use const_format::concatcp;
use sqlx::Row as _;
use sqlx::types::Json;

/// `NotFound` for an unknown comparison, `Conflict` for one superseded or cancelled: no job may
/// be added to it.
pub(super) async fn still_open(
    conn: &mut Conn,
    comparison_id: ComparisonId,
) -> Result<(), StoreError> {
    let state: Option<String> = sqlx::query_scalar("SELECT state FROM comparisons WHERE id = $1")
        .bind(comparison_id)
        .fetch_optional(&mut *conn)
        .await?;
    match state.as_deref() {
        None => Err(StoreError::NotFound(format!("comparison {comparison_id}"))),
        Some(s @ ("superseded" | "cancelled")) => Err(StoreError::Conflict(format!(
            "comparison {comparison_id} is {s}"
        ))),
        Some(_) => Ok(()),
    }
}

pub(super) async fn add_rounds(
    conn: &mut Conn,
    comparison_id: ComparisonId,
    jobs: &[NewJob],
) -> Result<Vec<JobId>, StoreError> {
    still_open(conn, comparison_id).await?;
    // Carried out before (a retry whose answer was lost): nothing more to add.
    for origin in jobs.iter().filter_map(|j| j.origin.as_deref()) {
        let seen: Option<i64> = sqlx::query_scalar("SELECT id FROM jobs WHERE origin = $1")
            .bind(origin)
            .fetch_optional(&mut *conn)
            .await?;
        if seen.is_some() {
            return Ok(Vec::new());
        }
    }
    let ids = insert_jobs(conn, comparison_id, jobs).await?;
    sqlx::query("UPDATE comparisons SET rounds_generation = rounds_generation + 1 WHERE id = $1")
        .bind(comparison_id)
        .execute(&mut *conn)
        .await?;
    refresh_state(conn, comparison_id).await?;
    Ok(ids)
}

pub(super) async fn cancel_pull_request(
    conn: &mut Conn,
    repository_id: RepositoryId,
    pr_number: i64,
) -> Result<u64, StoreError> {
    let now = crate::shared::now();
    let queued = sqlx::query(
        "UPDATE jobs SET state = 'cancelled', finished_at = $3, updated_at = $3 \
         WHERE state = 'queued' AND comparison_id IN (SELECT id FROM comparisons \
         WHERE repository_id = $1 AND pr_number = $2 AND state IN ('queued', 'running'))",
    )
    .bind(repository_id)
    .bind(pr_number)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    let running = sqlx::query(
        "UPDATE jobs SET cancel_requested = TRUE, updated_at = $3 \
         WHERE state = 'running' AND cancel_requested = FALSE \
         AND comparison_id IN (SELECT id FROM comparisons \
         WHERE repository_id = $1 AND pr_number = $2 AND state IN ('queued', 'running'))",
    )
    .bind(repository_id)
    .bind(pr_number)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    let cancelled = sqlx::query(
        "UPDATE comparisons SET state = 'cancelled', updated_at = $3 \
         WHERE repository_id = $1 AND pr_number = $2 AND state IN ('queued', 'running') \
         RETURNING id",
    )
    .bind(repository_id)
    .bind(pr_number)
    .bind(now)
    .fetch_all(&mut *conn)
    .await?;
    for row in &cancelled {
        report_state_change(conn, row.try_get("id")?, ComparisonState::Cancelled).await?;
    }
    Ok(queued.rows_affected() + running.rows_affected())
}

/// Cancels one comparison if it is still active (a merge group left the queue, or its deadline
/// passed): queued jobs are cancelled, running ones asked to stop. Returns the jobs affected.
pub(super) async fn cancel_comparison(
    conn: &mut Conn,
    comparison_id: ComparisonId,
) -> Result<u64, StoreError> {
    let now = crate::shared::now();
    let cancelled: Option<ComparisonId> = sqlx::query_scalar(
        "UPDATE comparisons SET state = 'cancelled', updated_at = $2 \
         WHERE id = $1 AND state IN ('queued', 'running') RETURNING id",
    )
    .bind(comparison_id)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if cancelled.is_none() {
        return Ok(0);
    }
    let queued = sqlx::query(
        "UPDATE jobs SET state = 'cancelled', finished_at = $2, updated_at = $2 \
         WHERE state = 'queued' AND comparison_id = $1",
    )
    .bind(comparison_id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    let running = sqlx::query(
        "UPDATE jobs SET cancel_requested = TRUE, updated_at = $2 \
         WHERE state = 'running' AND cancel_requested = FALSE AND comparison_id = $1",
    )
    .bind(comparison_id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    report_state_change(conn, comparison_id, ComparisonState::Cancelled).await?;
    Ok(queued.rows_affected() + running.rows_affected())
}

/// Cancels the active PR comparisons of every repository of an installation.
pub(super) async fn cancel_installation(
    conn: &mut Conn,
    installation_id: i64,
) -> Result<u64, StoreError> {
    let prs = sqlx::query(
        "SELECT DISTINCT c.repository_id, c.pr_number FROM comparisons c \
         JOIN repositories r ON r.id = c.repository_id \
         WHERE r.installation_id = $1 AND c.pr_number IS NOT NULL \
         AND c.state IN ('queued', 'running')",
    )
    .bind(installation_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut jobs = 0;
    for row in &prs {
        jobs += cancel_pull_request(
            conn,
            row.try_get("repository_id")?,
            row.try_get("pr_number")?,
        )
        .await?;
    }
    Ok(jobs)
}

/// Recomputes a comparison's state from its measuring jobs (superseded and cancelled stay so);
/// a profile job runs after the verdict and changes nothing here.
pub(super) async fn refresh_state(
    conn: &mut Conn,
    comparison_id: ComparisonId,
) -> Result<(), StoreError> {
    // Lock the row in a statement of its own first: on Postgres the UPDATE below then
    // takes its snapshot after any concurrent refresh committed. Otherwise two jobs
    // finishing together could each see the other still running, and the comparison
    // would stay "running" for ever.
    let Some(before) = sqlx::query(Backend::LOCK_COMPARISON)
        .bind(comparison_id)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(());
    };
    let was: String = before.try_get("state")?;
    let pr_number: Option<i64> = before.try_get("pr_number")?;
    let after: Option<String> = sqlx::query_scalar(
        "UPDATE comparisons SET updated_at = $2, state = CASE \
         WHEN EXISTS (SELECT 1 FROM jobs WHERE comparison_id = $1 AND profile IS NULL \
           AND state IN ('queued', 'running')) THEN \
           CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE comparison_id = $1 AND profile IS NULL \
             AND started_at IS NOT NULL) THEN 'running' ELSE 'queued' END \
         WHEN EXISTS (SELECT 1 FROM jobs WHERE comparison_id = $1 AND profile IS NULL \
           AND state = 'done') THEN 'done' \
         ELSE 'failed' END \
         WHERE id = $1 AND state NOT IN ('superseded', 'cancelled') RETURNING state",
    )
    .bind(comparison_id)
    .bind(crate::shared::now())
    .fetch_optional(&mut *conn)
    .await?;
    let branch: Option<String> = before.try_get("branch")?;
    if let Some(after) = after
        && after != was
    {
        let state = ComparisonState::parse(&after)
            .ok_or_else(|| StoreError::Corrupt(format!("comparison state {after:?}")))?;
        if state.is_finished() {
            super::bisections::wake(conn, comparison_id).await?;
        }
        if pr_number.is_some() {
            report_state_change(conn, comparison_id, state).await?;
        } else if branch.is_some() && state.is_finished() {
            // A finished comparison of the default branch: its regressions are judged
            // (and raised) by the row, whichever server runs it.
            outbox::insert(
                conn,
                &NewOutboxMessage::comparison_report(MAIN_REPORT, Priority::HISTORY, comparison_id),
            )
            .await?;
        }
    }
    Ok(())
}

pub(super) async fn by_id(pool: &Pool, id: ComparisonId) -> Result<Option<Comparison>, StoreError> {
    sqlx::query(concatcp!(
        "SELECT ",
        COMPARISON_COLUMNS,
        " FROM comparisons c JOIN repositories r ON r.id = c.repository_id WHERE c.id = $1"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await?
    .as_ref()
    .map(rows::comparison)
    .transpose()
}

/// Newest first; each unset field of the filter matches every row.
pub(super) async fn find(
    pool: &Pool,
    filter: &ComparisonFilter,
    limit: i64,
) -> Result<Vec<Comparison>, StoreError> {
    let verdict = filter
        .verdict
        .map(|v| serde_json::to_value(v).map(|j| j.as_str().unwrap_or_default().to_owned()))
        .transpose()
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    sqlx::query(concatcp!(
        "SELECT ",
        COMPARISON_COLUMNS,
        " FROM comparisons c JOIN repositories r ON r.id = c.repository_id \
         WHERE ($1 IS NULL OR r.full_name = $1) \
           AND ($2 IS NULL OR c.pr_number = $2) \
           AND ($3 IS NULL OR EXISTS (SELECT 1 FROM runners ru WHERE ru.name = $3 AND ( \
             EXISTS (SELECT 1 FROM jobs j WHERE j.comparison_id = c.id AND j.claimed_by = ru.id) \
             OR EXISTS (SELECT 1 FROM comparison_results cr \
               WHERE cr.comparison_id = c.id AND cr.runner_id = ru.id)))) \
           AND ($4 IS NULL OR EXISTS (SELECT 1 FROM comparison_results cr \
             WHERE cr.comparison_id = c.id AND ",
        Backend::RESULT_VERDICT,
        " = $4)) \
           AND ($6 IS NULL OR c.kind IN (",
        Backend::JSON_TEXT_ELEMENTS,
        "$6))) \
         ORDER BY c.created_at DESC, c.id DESC LIMIT $5"
    ))
    .bind(filter.repository.as_deref())
    .bind(filter.pr_number)
    .bind(filter.runner.as_deref())
    .bind(verdict)
    .bind(limit)
    .bind(
        (!filter.kinds.is_empty())
            .then(|| Json(filter.kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>())),
    )
    .fetch_all(pool)
    .await?
    .iter()
    .map(rows::comparison)
    .collect()
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::ComparisonStore for Backend {
    async fn create_comparison(
        &self,
        new: &NewComparison,
    ) -> Result<CreatedComparison, StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        let created = super::creation::create(&mut tx, new).await?;
        tx.commit().await?;
        Ok(created)
    }
    async fn comparison(&self, id: ComparisonId) -> Result<Option<Comparison>, StoreError> {
        by_id(&self.pool, id).await
    }
    async fn recent_comparisons(&self, limit: i64) -> Result<Vec<Comparison>, StoreError> {
        find(&self.pool, &ComparisonFilter::default(), limit).await
    }
    async fn find_comparisons(
        &self,
        filter: &ComparisonFilter,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        find(&self.pool, filter, limit).await
    }
    async fn add_rounds(
        &self,
        comparison_id: ComparisonId,
        jobs: &[NewJob],
    ) -> Result<Vec<JobId>, StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        let ids = add_rounds(&mut tx, comparison_id, jobs).await?;
        tx.commit().await?;
        Ok(ids)
    }
    async fn cancel_pull_request(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<u64, StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        let n = cancel_pull_request(&mut tx, repository_id, pr_number).await?;
        tx.commit().await?;
        Ok(n)
    }
    async fn cancel_comparison(&self, id: ComparisonId) -> Result<u64, StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        let n = cancel_comparison(&mut tx, id).await?;
        tx.commit().await?;
        Ok(n)
    }
}
