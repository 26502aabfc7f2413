//! Uploading rounds of samples (fenced, idempotent) and reading them per runner, expanded once
//! per backend.

macro_rules! samples_sql {
    () => {
        use super::{Pool, begin, rows};
        use crate::StoreError;
        use crate::model::*;
        use crate::shared::columns::sample_columns;
        use sqlx::Row as _;

        pub(super) async fn upload_round(
            pool: &Pool,
            job_id: JobId,
            lease: &LeaseToken,
            upload: &RoundUpload,
        ) -> Result<UploadReceipt, StoreError> {
            let now = crate::shared::now();
            let mut tx = begin(pool).await?;
            // The fence: touching the job row under its lease both proves the lease is held and
            // (on Postgres) locks the row, so the reaper cannot requeue it mid-upload. Attempt
            // and runner come from the job row, never from the caller.
            let job = sqlx::query(
                "UPDATE jobs SET updated_at = $3 \
                 WHERE id = $1 AND lease_token = $2 AND state = 'running' \
                 RETURNING attempts, claimed_by",
            )
            .bind(job_id)
            .bind(lease.as_str())
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::LeaseLost)?;
            let attempt: i64 = job.try_get("attempts")?;
            let runner: RunnerId = job.try_get("claimed_by")?;
            let mut receipt = UploadReceipt::default();
            for sample in &upload.samples {
                let m = &sample.measurement;
                let done = sqlx::query(
                    "INSERT INTO samples (job_id, attempt, runner_id, round, side, position, \
                     benchmark, metric, unit, value, lower, upper, recorded_at, direction) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
                     ON CONFLICT (job_id, attempt, round, side, benchmark, metric) DO NOTHING",
                )
                .bind(job_id)
                .bind(attempt)
                .bind(runner)
                .bind(upload.round)
                .bind(sample.side.as_str())
                .bind(sample.position)
                .bind(&m.benchmark)
                .bind(&m.metric)
                .bind(&m.unit)
                .bind(m.value)
                .bind(m.lower)
                .bind(m.upper)
                .bind(now)
                .bind(m.direction.as_str())
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() == 0 {
                    receipt.duplicates += 1;
                } else {
                    receipt.inserted += 1;
                }
            }
            tx.commit().await?;
            Ok(receipt)
        }

        pub(super) async fn of_comparison(
            pool: &Pool,
            comparison_id: ComparisonId,
        ) -> Result<Vec<RunnerSeries>, StoreError> {
            let rows = sqlx::query(concat!(
                "SELECT ",
                sample_columns!(),
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

        pub(super) async fn of_job(
            pool: &Pool,
            job_id: JobId,
        ) -> Result<Vec<RunnerSeries>, StoreError> {
            let rows = sqlx::query(concat!(
                "SELECT ",
                sample_columns!(),
                " FROM samples s JOIN runners rn ON rn.id = s.runner_id WHERE s.job_id = $1 \
                 ORDER BY s.runner_id, s.attempt, s.round, s.position, s.benchmark, s.metric"
            ))
            .bind(job_id)
            .fetch_all(pool)
            .await?;
            group_by_runner(&rows)
        }

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
    };
}

pub(crate) use samples_sql;
