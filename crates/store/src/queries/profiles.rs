//! Profile jobs and their stacks. A profile job is a job of its comparison with `profile` set:
//! it shares the queue and the lease, but adds no round and never changes the comparison's
//! state (see `comparisons::refresh_state`).

use super::{Backend, Conn, comparison_writes, comparisons, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::PROFILE_COLUMNS;
use crate::shared::dialect::Dialect;
use const_format::concatcp;
use sqlx::Row as _;
use sqlx::types::Json;

/// Adds a profile job to a comparison; `None` when its origin was added before.
pub(super) async fn request(
    conn: &mut Conn,
    comparison_id: ComparisonId,
    job: &NewProfileJob,
) -> Result<Option<JobId>, StoreError> {
    let seen: Option<i64> = sqlx::query_scalar("SELECT id FROM jobs WHERE origin = $1")
        .bind(&job.origin)
        .fetch_optional(&mut *conn)
        .await?;
    if seen.is_some() {
        return Ok(None);
    }
    comparisons::still_open(conn, comparison_id).await?;
    let now = crate::shared::now();
    let id: JobId = sqlx::query_scalar(
        "INSERT INTO jobs (kind, comparison_id, repository_id, base_sha, head_sha, config, \
         runner_label, rounds, priority, state, max_attempts, created_at, updated_at, origin, \
         profile) \
         SELECT 'comparison', id, repository_id, base_sha, head_sha, config, runner_label, 0, \
         $2, 'queued', $3, $4, $4, $5, $6 FROM comparisons WHERE id = $1 RETURNING id",
    )
    .bind(comparison_id)
    .bind(job.priority.0)
    .bind(job.max_attempts)
    .bind(now)
    .bind(&job.origin)
    .bind(Json(&job.request))
    .fetch_one(&mut *conn)
    .await?;
    report(conn, comparison_id).await?;
    Ok(Some(id))
}

/// A PR comparison's report follows its profile (asked, stored, failed): the comment and the
/// check say where the time went, in the transaction that changed it.
pub(super) async fn report(conn: &mut Conn, comparison_id: ComparisonId) -> Result<(), StoreError> {
    let state: Option<(String, Option<i64>)> =
        sqlx::query_as("SELECT state, pr_number FROM comparisons WHERE id = $1")
            .bind(comparison_id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((state, Some(_))) = state else {
        return Ok(());
    };
    let state = ComparisonState::parse(&state)
        .ok_or_else(|| StoreError::Corrupt(format!("comparison state {state:?}")))?;
    comparison_writes::report_state_change(conn, comparison_id, state).await
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::ProfileStore for Backend {
    async fn request_profile(
        &self,
        comparison_id: ComparisonId,
        job: &NewProfileJob,
    ) -> Result<Option<JobId>, StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        let id = request(&mut tx, comparison_id, job).await?;
        tx.commit().await?;
        Ok(id)
    }
    async fn record_profile(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        profile: &NewProfile,
    ) -> Result<(), StoreError> {
        // Stores what a profile job uploaded, fenced by its lease; a later attempt's upload replaces
        // an earlier one's.
        let pool = &self.pool;
        let new = profile;
        let now = crate::shared::now();
        let mut tx = Backend::begin(pool).await?;
        let job = sqlx::query(
            "UPDATE jobs SET updated_at = $3 WHERE id = $1 AND lease_token = $2 \
             AND state = 'running' RETURNING claimed_by, comparison_id, profile IS NOT NULL AS profiled",
        )
        .bind(job_id)
        .bind(lease.as_str())
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::LeaseLost)?;
        if !job.try_get::<bool, _>("profiled")? {
            return Err(StoreError::Conflict(format!(
                "job {job_id} measures rounds; it has no profile to upload"
            )));
        }
        let runner: RunnerId = job.try_get("claimed_by")?;
        let comparison: ComparisonId = job.try_get("comparison_id")?;
        sqlx::query(
            "INSERT INTO profiles (job_id, comparison_id, runner_id, event, unavailable, runs, \
             base_folded, head_folded, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (job_id) DO UPDATE SET runner_id = $3, event = $4, unavailable = $5, \
             runs = $6, base_folded = $7, head_folded = $8, created_at = $9",
        )
        .bind(job_id)
        .bind(comparison)
        .bind(runner)
        .bind(&new.event)
        .bind(&new.unavailable)
        .bind(new.runs)
        .bind(&new.base_folded)
        .bind(&new.head_folded)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        report(&mut tx, comparison).await?;
        tx.commit().await?;
        Ok(())
    }
    async fn comparison_profiles(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<StoredProfile>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            PROFILE_COLUMNS,
            " FROM profiles WHERE comparison_id = $1 ORDER BY created_at DESC, job_id DESC"
        ))
        .bind(comparison_id)
        .fetch_all(pool)
        .await?;
        rows.iter().map(rows::profile).collect()
    }
}
