//! The job queue's lease lifecycle (heartbeat, complete, release, reap) and listings; compiled
//! into each backend. Claiming differs per dialect and lives in each backend's `dialect.rs`.

use super::{Backend, Conn, Pool, comparisons, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::{CLAIM_ORDER, JOB_COLUMNS};
use crate::shared::dialect::Dialect;
use const_format::concatcp;
use sqlx::Row as _;
use sqlx::types::Json;

pub(super) async fn enqueue_calibration(
    conn: &mut Conn,
    new: &NewCalibration,
) -> Result<JobId, StoreError> {
    let now = crate::shared::now();
    Ok(sqlx::query_scalar(
        "INSERT INTO jobs (kind, repository_id, base_sha, head_sha, config, runner_label, \
         pinned_runner_id, rounds, priority, state, max_attempts, created_at, updated_at) \
         VALUES ('calibration', $1, $2, $2, $3, $4, $5, $6, $7, 'queued', $8, $9, $9) \
         RETURNING id",
    )
    .bind(new.repository_id)
    .bind(&new.sha)
    .bind(Json(&new.config))
    .bind(&new.runner_label)
    .bind(new.runner_id)
    .bind(new.rounds)
    .bind(new.priority.0)
    .bind(new.max_attempts)
    .bind(now)
    .fetch_one(&mut *conn)
    .await?)
}

/// An attempt the runner could not finish for a cause of its own: queued again with the
/// attempt used, as a lost lease is, or failed once out of attempts (cancelled if asked).
async fn interrupted(
    pool: &Pool,
    job_id: JobId,
    lease: &LeaseToken,
    reason: &str,
    log_tail: &str,
) -> Result<(), StoreError> {
    let now = crate::shared::now();
    let mut tx = Backend::begin(pool).await?;
    let row = sqlx::query(
        "UPDATE jobs SET state = CASE WHEN cancel_requested THEN 'cancelled' \
         WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END, \
         last_error = $3, log_tail = $4, lease_token = NULL, lease_expires_at = NULL, \
         claimed_by = CASE WHEN cancel_requested OR attempts >= max_attempts \
           THEN claimed_by ELSE NULL END, \
         finished_at = CASE WHEN cancel_requested OR attempts >= max_attempts THEN $5 END, \
         updated_at = $5 WHERE id = $1 AND lease_token = $2 AND state = 'running' \
         RETURNING comparison_id",
    )
    .bind(job_id)
    .bind(lease.as_str())
    .bind(format!("interrupted: {reason}"))
    .bind(log_tail)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        return Err(StoreError::LeaseLost);
    };
    if let Some(c) = row.try_get::<Option<ComparisonId>, _>("comparison_id")? {
        comparisons::refresh_state(&mut tx, c).await?;
    }
    tx.commit().await?;
    Ok(())
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::QueueStore for Backend {
    async fn enqueue_calibration(&self, new: &NewCalibration) -> Result<JobId, StoreError> {
        enqueue_calibration(&mut *self.pool.acquire().await?, new).await
    }
    async fn enqueue_calibration_unless_since(
        &self,
        new: &NewCalibration,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Option<JobId>, StoreError> {
        // Enqueues `new` unless the runner has a calibration on the repository that did not
        // fail, created at `since` or later (ever, for `None`), as one transaction: the
        // runner's row lock orders concurrent callers, so two of them (on one server or two)
        // enqueue one job.
        let pool = &self.pool;
        let mut tx = Backend::begin(pool).await?;
        sqlx::query("UPDATE runners SET name = name WHERE id = $1")
            .bind(new.runner_id)
            .execute(&mut *tx)
            .await?;
        let epoch = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        let seen: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM jobs WHERE kind = 'calibration' \
             AND pinned_runner_id = $1 AND repository_id = $2 \
             AND state IN ('queued', 'running', 'done') AND created_at >= $3 LIMIT 1",
        )
        .bind(new.runner_id)
        .bind(new.repository_id)
        .bind(since.unwrap_or(epoch))
        .fetch_optional(&mut *tx)
        .await?;
        if seen.is_some() {
            return Ok(None);
        }
        let id = enqueue_calibration(&mut tx, new).await?;
        tx.commit().await?;
        Ok(Some(id))
    }
    async fn latest_calibration(
        &self,
        runner_id: RunnerId,
        repository_id: RepositoryId,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, StoreError> {
        let pool = &self.pool;
        Ok(sqlx::query_scalar(
            "SELECT created_at FROM jobs WHERE kind = 'calibration' \
             AND pinned_runner_id = $1 AND repository_id = $2 \
             AND state IN ('queued', 'running', 'done') \
             ORDER BY created_at DESC LIMIT 1",
        )
        .bind(runner_id)
        .bind(repository_id)
        .fetch_optional(pool)
        .await?)
    }
    async fn heartbeat(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        extend: std::time::Duration,
    ) -> Result<Heartbeat, StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        let row = sqlx::query(
            "UPDATE jobs SET lease_expires_at = $3, updated_at = $4 \
             WHERE id = $1 AND lease_token = $2 AND state = 'running' \
             RETURNING lease_expires_at, cancel_requested",
        )
        .bind(job_id)
        .bind(lease.as_str())
        .bind(crate::shared::after(now, extend))
        .bind(now)
        .fetch_optional(pool)
        .await?
        .ok_or(StoreError::LeaseLost)?;
        Ok(Heartbeat {
            lease_expires_at: row.try_get("lease_expires_at")?,
            cancel_requested: row.try_get("cancel_requested")?,
        })
    }
    async fn complete_job(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        outcome: &JobOutcome,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        let (state, error, log_tail) = match outcome {
            JobOutcome::Succeeded { log_tail } => ("done", None, log_tail.as_deref()),
            JobOutcome::IdenticalBuild { .. } => ("done", None, None),
            JobOutcome::Failed { reason, log_tail } => {
                ("failed", Some(reason.as_str()), Some(log_tail.as_str()))
            }
            JobOutcome::Interrupted { reason, log_tail } => {
                return interrupted(pool, job_id, lease, reason, log_tail).await;
            }
        };
        let now = crate::shared::now();
        let mut tx = Backend::begin(pool).await?;
        // The lease token stays on the finished row so a retried `complete` is recognised.
        let row = sqlx::query(
            "UPDATE jobs SET state = CASE WHEN cancel_requested THEN 'cancelled' ELSE $3 END, \
             last_error = $4, log_tail = $5, lease_expires_at = NULL, finished_at = $6, \
             updated_at = $6, identical_build = $7 \
             WHERE id = $1 AND lease_token = $2 AND state = 'running' \
             RETURNING comparison_id, profile IS NOT NULL AS profiled",
        )
        .bind(job_id)
        .bind(lease.as_str())
        .bind(state)
        .bind(error)
        .bind(log_tail)
        .bind(now)
        .bind(match outcome {
            JobOutcome::IdenticalBuild { build } => Some(Json(build)),
            _ => None,
        })
        .fetch_optional(&mut *tx)
        .await?;
        match row {
            Some(row) => {
                if let Some(c) = row.try_get::<Option<ComparisonId>, _>("comparison_id")? {
                    comparisons::refresh_state(&mut tx, c).await?;
                    // A failed profile job is said in the report; a done one was by its upload.
                    if row.try_get::<bool, _>("profiled")? && state == "failed" {
                        super::profiles::report(&mut tx, c).await?;
                    }
                }
                tx.commit().await?;
                Ok(())
            }
            None => {
                let finished: Option<String> = sqlx::query_scalar(
                    "SELECT state FROM jobs WHERE id = $1 AND lease_token = $2 \
                     AND state IN ('done', 'failed', 'cancelled')",
                )
                .bind(job_id)
                .bind(lease.as_str())
                .fetch_optional(&mut *tx)
                .await?;
                match finished {
                    Some(_) => Ok(()),
                    None => Err(StoreError::LeaseLost),
                }
            }
        }
    }
    async fn calibrations_without_session(
        &self,
        finished_after: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE kind = 'calibration' AND state = 'done' \
             AND finished_at > $1 \
             AND NOT EXISTS (SELECT 1 FROM aa_sessions s WHERE s.job_id = jobs.id) \
             ORDER BY finished_at DESC, id DESC LIMIT $2"
        ))
        .bind(finished_after)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::job)
        .collect()
    }
    async fn finished_calibrations(
        &self,
        runner_id: RunnerId,
        repository_id: RepositoryId,
        before: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE kind = 'calibration' AND state = 'done' \
             AND pinned_runner_id = $1 AND repository_id = $2 AND finished_at < $3 \
             ORDER BY finished_at DESC, id DESC LIMIT $4"
        ))
        .bind(runner_id)
        .bind(repository_id)
        .bind(before)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::job)
        .collect()
    }
    async fn release_job(&self, job_id: JobId, lease: &LeaseToken) -> Result<(), StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        let mut tx = Backend::begin(pool).await?;
        // Attempt numbers are never reused (samples are keyed by them), so a graceful release
        // gives the attempt back by raising the maximum instead of lowering `attempts`.
        let row = sqlx::query(
            "UPDATE jobs SET \
             state = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'queued' END, \
             finished_at = CASE WHEN cancel_requested THEN $3 ELSE NULL END, \
             max_attempts = max_attempts + 1, lease_token = NULL, lease_expires_at = NULL, \
             claimed_by = NULL, updated_at = $3 \
             WHERE id = $1 AND lease_token = $2 AND state = 'running' RETURNING comparison_id",
        )
        .bind(job_id)
        .bind(lease.as_str())
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::LeaseLost)?;
        if let Some(c) = row.try_get::<Option<ComparisonId>, _>("comparison_id")? {
            comparisons::refresh_state(&mut tx, c).await?;
        }
        tx.commit().await?;
        Ok(())
    }
    async fn reap_expired_leases(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<ReapedJob>, StoreError> {
        let pool = &self.pool;
        let mut tx = Backend::begin(pool).await?;
        let rows = sqlx::query(
            "UPDATE jobs SET \
             state = CASE WHEN cancel_requested THEN 'cancelled' \
               WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END, \
             last_error = 'lease expired on attempt ' || attempts || ' of ' || max_attempts, \
             finished_at = CASE WHEN cancel_requested OR attempts >= max_attempts \
               THEN $1 ELSE NULL END, \
             lease_token = NULL, lease_expires_at = NULL, \
             claimed_by = CASE WHEN cancel_requested OR attempts >= max_attempts \
               THEN claimed_by ELSE NULL END, \
             updated_at = $1 \
             WHERE state = 'running' AND lease_expires_at < $1 \
             RETURNING id, attempts, state, comparison_id",
        )
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        let mut reaped = Vec::with_capacity(rows.len());
        let mut touched = Vec::new();
        for row in &rows {
            let state: String = row.try_get("state")?;
            reaped.push(ReapedJob {
                id: row.try_get("id")?,
                attempts: row.try_get("attempts")?,
                state: JobState::parse(&state)
                    .ok_or_else(|| StoreError::Corrupt(format!("job state {state:?}")))?,
            });
            if let Some(c) = row.try_get::<Option<ComparisonId>, _>("comparison_id")? {
                touched.push(c);
            }
        }
        touched.sort();
        touched.dedup();
        for c in touched {
            comparisons::refresh_state(&mut tx, c).await?;
        }
        tx.commit().await?;
        Ok(reaped)
    }
    async fn job(&self, id: JobId) -> Result<Option<Job>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(rows::job)
        .transpose()
    }
    async fn comparison_jobs(&self, comparison_id: ComparisonId) -> Result<Vec<Job>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE comparison_id = $1 ORDER BY created_at, id"
        ))
        .bind(comparison_id)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::job)
        .collect()
    }
    async fn active_jobs(&self) -> Result<Vec<Job>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE state IN ('queued', 'running') \
             ORDER BY CASE WHEN state = 'running' THEN 0 ELSE 1 END, ",
            CLAIM_ORDER
        ))
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::job)
        .collect()
    }
    async fn queue_place(&self, id: ComparisonId) -> Result<Option<QueuePlace>, StoreError> {
        // One transaction, so the comparison's job, the jobs ahead and the running ones are
        // read as of one moment.
        let mut tx = Backend::begin(&self.pool).await?;
        let next = sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE comparison_id = $1 AND profile IS NULL \
             AND state IN ('queued', 'running') \
             ORDER BY CASE WHEN state = 'running' THEN 0 ELSE 1 END, ",
            CLAIM_ORDER,
            " LIMIT 1"
        ))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(job) = next.as_ref().map(rows::job).transpose()? else {
            return Ok(None);
        };
        if job.state != JobState::Queued {
            return Ok(None);
        }
        // The claim's own predicate and order, less the runner's pin: every queued job of the
        // label before this one is taken first by some runner of the label.
        let queued = sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE state = 'queued' AND runner_label = $1 ORDER BY ",
            CLAIM_ORDER
        ))
        .bind(&job.runner_label)
        .fetch_all(&mut *tx)
        .await?;
        let mut ahead = Vec::new();
        for row in &queued {
            let other = rows::job(row)?;
            if other.id == job.id {
                break;
            }
            ahead.push(other);
        }
        let running = sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE state = 'running' ORDER BY ",
            CLAIM_ORDER
        ))
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(rows::job)
        .collect::<Result<Vec<_>, _>>()?;
        tx.commit().await?;
        Ok(Some(QueuePlace {
            job,
            ahead,
            running,
        }))
    }
    async fn round_landings(&self, job_id: JobId) -> Result<Vec<RoundLanding>, StoreError> {
        let rows = sqlx::query(
            "SELECT attempt, round, MIN(recorded_at) AS at FROM samples WHERE job_id = $1 \
             GROUP BY attempt, round ORDER BY attempt, round",
        )
        .bind(job_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(RoundLanding {
                    attempt: row.try_get("attempt")?,
                    round: row.try_get("round")?,
                    at: row.try_get("at")?,
                })
            })
            .collect()
    }
    async fn finished_jobs(
        &self,
        repository_id: RepositoryId,
        runner_label: &str,
        kind: JobKind,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError> {
        sqlx::query(concatcp!(
            "SELECT ",
            JOB_COLUMNS,
            " FROM jobs WHERE repository_id = $1 AND runner_label = $2 AND kind = $3 \
             AND state = 'done' AND finished_at IS NOT NULL \
             ORDER BY finished_at DESC, id DESC LIMIT $4"
        ))
        .bind(repository_id)
        .bind(runner_label)
        .bind(kind.as_str())
        .bind(limit)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(rows::job)
        .collect()
    }
    async fn queue_depth(&self) -> Result<QueueDepth, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(
            "SELECT state, COUNT(*) AS n FROM jobs WHERE state IN ('queued', 'running') \
             GROUP BY state",
        )
        .fetch_all(pool)
        .await?;
        let mut depth = QueueDepth::default();
        for row in rows {
            let state: String = row.try_get("state")?;
            let n: i64 = row.try_get("n")?;
            match state.as_str() {
                "queued" => depth.queued = n,
                _ => depth.running = n,
            }
        }
        Ok(depth)
    }
}
