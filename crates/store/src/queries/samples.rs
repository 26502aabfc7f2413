//! Uploading rounds of samples (fenced, idempotent) and reading them per runner; compiled into
//! each backend.

use super::{Backend, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::SAMPLE_COLUMNS;
use crate::shared::dialect::Dialect;
use const_format::concatcp;
use sqlx::Row as _;

/// Splits rows ordered by runner into one series per runner.
fn group_by_runner(
    rows: &[<super::Db as sqlx::Database>::Row],
) -> Result<Vec<RunnerSeries>, StoreError> {
    let mut series: Vec<RunnerSeries> = Vec::new();
    for row in rows {
        let sample = rows::sample(row)?;
        match series.last_mut() {
            Some(s) if s.runner_id == sample.runner_id => s.samples.push(sample),
            _ => series.push(RunnerSeries {
                runner_id: sample.runner_id,
                runner_name: row.try_get("runner_name")?,
                samples: vec![sample],
            }),
        }
    }
    Ok(series)
}

/// Rows per multi-row sample insert.
pub(crate) const SAMPLES_PER_STATEMENT: usize = 1000;

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::SampleStore for Backend {
    async fn upload_round(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        upload: &RoundUpload,
    ) -> Result<UploadReceipt, StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        let mut tx = Backend::begin(pool).await?;
        // The fence: touching the job row under its lease both proves the lease is held and
        // (on Postgres) locks the row, so the reaper cannot requeue it mid-upload. Attempt
        // and runner come from the job row, never from the caller.
        // Each upload of a job gets the next number; the job's row lock orders them, so
        // readers can take only the uploads they have not seen (`of_comparison_since`).
        let job = sqlx::query(
            "UPDATE jobs SET updated_at = $3, uploads = uploads + 1 \
             WHERE id = $1 AND lease_token = $2 AND state = 'running' \
             RETURNING attempts, claimed_by, uploads",
        )
        .bind(job_id)
        .bind(lease.as_str())
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::LeaseLost)?;
        let attempt: i64 = job.try_get("attempts")?;
        let runner: RunnerId = job.try_get("claimed_by")?;
        let seq: i64 = job.try_get("uploads")?;
        let mut receipt = UploadReceipt::default();
        // Many rows per statement: one statement per sample made a 3,000-sample round
        // 3,000 round trips (15 binds a row stays under SQLite's 32,766 per statement).
        for chunk in upload.samples.chunks(SAMPLES_PER_STATEMENT) {
            let mut insert = sqlx::QueryBuilder::<super::Db>::new(
                "INSERT INTO samples (job_id, attempt, runner_id, round, side, position, \
                 benchmark, metric, unit, value, lower, upper, recorded_at, direction, \
                 upload_seq) ",
            );
            insert.push_values(chunk, |mut row, sample| {
                let m = &sample.measurement;
                row.push_bind(job_id)
                    .push_bind(attempt)
                    .push_bind(runner)
                    .push_bind(upload.round)
                    .push_bind(sample.side.as_str())
                    .push_bind(sample.position)
                    .push_bind(&m.benchmark)
                    .push_bind(&m.metric)
                    .push_bind(&m.unit)
                    .push_bind(m.value)
                    .push_bind(m.lower)
                    .push_bind(m.upper)
                    .push_bind(now)
                    .push_bind(m.direction.as_str())
                    .push_bind(seq);
            });
            insert
                .push(" ON CONFLICT (job_id, attempt, round, side, benchmark, metric) DO NOTHING");
            let inserted = insert.build().execute(&mut *tx).await?.rows_affected();
            receipt.inserted += inserted;
            receipt.duplicates += chunk.len() as u64 - inserted;
        }
        tx.commit().await?;
        Ok(receipt)
    }
    async fn comparison_samples(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<RunnerSeries>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            SAMPLE_COLUMNS,
            " FROM samples s JOIN jobs j ON j.id = s.job_id \
             JOIN runners rn ON rn.id = s.runner_id WHERE j.comparison_id = $1 \
             ORDER BY s.runner_id, s.job_id, s.attempt, s.round, s.position, s.benchmark, \
             s.metric"
        ))
        .bind(comparison_id)
        .fetch_all(pool)
        .await?;
        group_by_runner(&rows)
    }
    async fn comparison_samples_since(
        &self,
        comparison_id: ComparisonId,
        seen: &UploadMarks,
    ) -> Result<SamplesSince, StoreError> {
        // The samples of a comparison's jobs from uploads after `seen` (job → last upload
        // read; a job not in it is read whole), and the marks to pass next time. The list may
        // name a runner more than once (one series per job read).
        let pool = &self.pool;
        let jobs = sqlx::query("SELECT id, uploads FROM jobs WHERE comparison_id = $1 ORDER BY id")
            .bind(comparison_id)
            .fetch_all(pool)
            .await?;
        let mut since = SamplesSince {
            series: Vec::new(),
            marks: seen.clone(),
        };
        for job in jobs {
            let id: JobId = job.try_get("id")?;
            let uploads: i64 = job.try_get("uploads")?;
            let mark = seen.get(&id).copied().unwrap_or(-1);
            if uploads <= mark {
                continue;
            }
            let rows = sqlx::query(concatcp!(
                "SELECT ",
                SAMPLE_COLUMNS,
                ", s.upload_seq FROM samples s JOIN runners rn ON rn.id = s.runner_id \
                 WHERE s.job_id = $1 AND s.upload_seq > $2 \
                 ORDER BY s.runner_id, s.attempt, s.round, s.position, s.benchmark, s.metric"
            ))
            .bind(id)
            .bind(mark)
            .fetch_all(pool)
            .await?;
            // The highest upload read, not the job's counter (read earlier, so possibly
            // lower); an upload of duplicates only leaves no row and is simply read again.
            if let Some(max) = rows
                .iter()
                .map(|r| r.try_get::<i64, _>("upload_seq"))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .max()
            {
                since.marks.insert(id, max);
            }
            since.series.extend(group_by_runner(&rows)?);
        }
        Ok(since)
    }
    async fn job_samples(&self, job_id: JobId) -> Result<Vec<RunnerSeries>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            SAMPLE_COLUMNS,
            " FROM samples s JOIN runners rn ON rn.id = s.runner_id WHERE s.job_id = $1 \
             ORDER BY s.runner_id, s.attempt, s.round, s.position, s.benchmark, s.metric"
        ))
        .bind(job_id)
        .fetch_all(pool)
        .await?;
        group_by_runner(&rows)
    }
}
