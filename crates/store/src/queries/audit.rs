//! What a runner's audit reads: canary comparisons and what their rounds said, and the
//! forecasts ("needs N more rounds") every comparison made with what came of them.

use super::{Backend, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::{CANARY_RESULT_COLUMNS, COMPARISON_COLUMNS, FORECAST_COLUMNS};
use const_format::concatcp;

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::AuditStore for Backend {
    async fn record_canary_result(&self, result: &CanaryResult) -> Result<(), StoreError> {
        let pool = &self.pool;
        let r = result;
        let verdict = serde_json::to_value(r.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .ok_or_else(|| StoreError::Corrupt(format!("verdict {:?}", r.verdict)))?;
        sqlx::query(
            "INSERT INTO canary_results (comparison_id, runner_id, benchmark, metric, planted_pct, \
             verdict, rounds, minutes, forecast_at, forecast_rounds, recorded_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (comparison_id, runner_id, benchmark, metric) DO UPDATE SET \
             planted_pct = excluded.planted_pct, verdict = excluded.verdict, \
             rounds = excluded.rounds, minutes = excluded.minutes, \
             forecast_at = excluded.forecast_at, forecast_rounds = excluded.forecast_rounds, \
             recorded_at = excluded.recorded_at",
        )
        .bind(r.comparison_id)
        .bind(r.runner_id)
        .bind(&r.benchmark)
        .bind(&r.metric)
        .bind(r.planted_pct)
        .bind(verdict)
        .bind(r.rounds)
        .bind(r.minutes)
        .bind(r.forecast.map(|f| f.0))
        .bind(r.forecast.map(|f| f.1))
        .bind(r.recorded_at)
        .execute(pool)
        .await?;
        Ok(())
    }
    async fn canary_results(&self, runner_id: RunnerId) -> Result<Vec<CanaryResult>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            CANARY_RESULT_COLUMNS,
            " FROM canary_results WHERE runner_id = $1 ORDER BY recorded_at, comparison_id, \
             benchmark, metric"
        ))
        .bind(runner_id)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::canary_result)
        .collect()
    }
    async fn unscored_canaries(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            COMPARISON_COLUMNS,
            " FROM comparisons c JOIN repositories r ON r.id = c.repository_id \
             WHERE c.pinned_runner_id IS NOT NULL AND c.state = 'done' \
             AND c.updated_at >= $1 \
             AND NOT EXISTS (SELECT 1 FROM canary_results r WHERE r.comparison_id = c.id) \
             ORDER BY c.id LIMIT $2"
        ))
        .bind(since)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::comparison)
        .collect()
    }
    async fn runner_canaries(
        &self,
        runner_id: RunnerId,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            COMPARISON_COLUMNS,
            " FROM comparisons c JOIN repositories r ON r.id = c.repository_id \
             WHERE c.pinned_runner_id = $1 ORDER BY c.id DESC LIMIT $2"
        ))
        .bind(runner_id)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::comparison)
        .collect()
    }
    async fn record_forecasts(&self, forecasts: &[Forecast]) -> Result<(), StoreError> {
        let pool = &self.pool;
        for f in forecasts {
            // The first forecast at a given round count stands; a re-analysis does not rewrite it.
            sqlx::query(
                "INSERT INTO forecasts (comparison_id, runner_id, benchmark, metric, at_rounds, \
                 needed, made_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (comparison_id, runner_id, benchmark, metric, at_rounds) DO NOTHING",
            )
            .bind(f.comparison_id)
            .bind(f.runner_id)
            .bind(&f.benchmark)
            .bind(&f.metric)
            .bind(f.at_rounds)
            .bind(f.needed)
            .bind(f.made_at)
            .execute(pool)
            .await?;
        }
        Ok(())
    }
    async fn settle_forecasts(&self, decided: &[Forecast]) -> Result<u64, StoreError> {
        let pool = &self.pool;
        let mut settled = 0;
        for d in decided {
            settled += sqlx::query(
                "UPDATE forecasts SET decided_rounds = $5, decided_at = $6 \
                 WHERE comparison_id = $1 AND runner_id = $2 AND benchmark = $3 AND metric = $4 \
                 AND decided_rounds IS NULL AND at_rounds < $5",
            )
            .bind(d.comparison_id)
            .bind(d.runner_id)
            .bind(&d.benchmark)
            .bind(&d.metric)
            .bind(d.decided_rounds)
            .bind(d.decided_at)
            .execute(pool)
            .await?
            .rows_affected();
        }
        Ok(settled)
    }
    async fn runner_forecasts(&self, runner_id: RunnerId) -> Result<Vec<Forecast>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            FORECAST_COLUMNS,
            " FROM forecasts WHERE runner_id = $1 ORDER BY made_at, comparison_id, benchmark, \
             metric, at_rounds"
        ))
        .bind(runner_id)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::forecast)
        .collect()
    }
}
