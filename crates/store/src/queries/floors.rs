//! A/A sessions and noise floors with their history; compiled into each backend.

use super::{Backend, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::FLOOR_COLUMNS;
use crate::shared::dialect::Dialect;
use const_format::concatcp;

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::FloorStore for Backend {
    async fn record_aa_session(&self, session: &AaSession) -> Result<(), StoreError> {
        let pool = &self.pool;
        let s = session;
        sqlx::query(
            "INSERT INTO aa_sessions (job_id, runner_id, repository_id, benchmark, metric, \
             pairs, mean, spread, recorded_at, layout) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (job_id, benchmark, metric) DO UPDATE SET pairs = excluded.pairs, \
             mean = excluded.mean, spread = excluded.spread, recorded_at = excluded.recorded_at, \
             layout = excluded.layout",
        )
        .bind(s.job_id)
        .bind(s.key.runner_id)
        .bind(s.key.repository_id)
        .bind(&s.key.benchmark)
        .bind(&s.key.metric)
        .bind(s.pairs)
        .bind(s.mean)
        .bind(s.spread)
        .bind(s.recorded_at)
        .bind(s.layout)
        .execute(pool)
        .await?;
        Ok(())
    }
    async fn aa_sessions(&self, key: &FloorKey) -> Result<Vec<AaSession>, StoreError> {
        let pool = &self.pool;
        sqlx::query(
            "SELECT job_id, runner_id, repository_id, benchmark, metric, pairs, mean, \
             spread, layout, recorded_at FROM aa_sessions WHERE runner_id = $1 \
             AND repository_id = $2 AND benchmark = $3 AND metric = $4 \
             ORDER BY recorded_at, id",
        )
        .bind(key.runner_id)
        .bind(key.repository_id)
        .bind(&key.benchmark)
        .bind(&key.metric)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::aa_session)
        .collect()
    }
    async fn update_noise_floor(&self, floor: &NoiseFloor) -> Result<(), StoreError> {
        let pool = &self.pool;
        let f = floor;
        // The current floor and its history row take the same values, in one transaction.
        const CURRENT: &str = "INSERT INTO noise_floors (runner_id, repository_id, benchmark, \
             metric, pairs, sessions, within_spread, between_bias, computed_at, layout_bias, \
             layout_lower, layout_upper, mode_slow_runs, mode_runs, mode_sessions, mode_excess) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
             ON CONFLICT (runner_id, repository_id, benchmark, metric) DO UPDATE SET \
             pairs = excluded.pairs, sessions = excluded.sessions, \
             within_spread = excluded.within_spread, between_bias = excluded.between_bias, \
             computed_at = excluded.computed_at, layout_bias = excluded.layout_bias, \
             layout_lower = excluded.layout_lower, layout_upper = excluded.layout_upper, \
             mode_slow_runs = excluded.mode_slow_runs, mode_runs = excluded.mode_runs, \
             mode_sessions = excluded.mode_sessions, mode_excess = excluded.mode_excess";
        const HISTORY: &str = "INSERT INTO noise_floor_history (runner_id, repository_id, \
             benchmark, metric, pairs, sessions, within_spread, between_bias, computed_at, \
             layout_bias, layout_lower, layout_upper, mode_slow_runs, mode_runs, mode_sessions, \
             mode_excess) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
        let mode = f.slow_mode.as_ref();
        let mut tx = Backend::begin(pool).await?;
        for sql in [CURRENT, HISTORY] {
            sqlx::query(sql)
                .bind(f.key.runner_id)
                .bind(f.key.repository_id)
                .bind(&f.key.benchmark)
                .bind(&f.key.metric)
                .bind(f.pairs)
                .bind(f.sessions)
                .bind(f.within_spread)
                .bind(f.between_bias)
                .bind(f.computed_at)
                .bind(f.layout_bias)
                .bind(f.layout_lower)
                .bind(f.layout_upper)
                .bind(mode.map(|m| m.slow_runs))
                .bind(mode.map(|m| m.runs))
                .bind(mode.map(|m| m.sessions))
                .bind(mode.and_then(|m| m.excess))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
    async fn noise_floor(&self, key: &FloorKey) -> Result<Option<NoiseFloor>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            FLOOR_COLUMNS,
            " FROM noise_floors WHERE runner_id = $1 AND repository_id = $2 \
             AND benchmark = $3 AND metric = $4"
        ))
        .bind(key.runner_id)
        .bind(key.repository_id)
        .bind(&key.benchmark)
        .bind(&key.metric)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(rows::noise_floor)
        .transpose()
    }
    async fn runner_noise_floors(
        &self,
        runner_id: RunnerId,
    ) -> Result<Vec<NoiseFloor>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            FLOOR_COLUMNS,
            " FROM noise_floors WHERE runner_id = $1 \
             ORDER BY repository_id, benchmark, metric"
        ))
        .bind(runner_id)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::noise_floor)
        .collect()
    }
    async fn noise_floor_history(&self, key: &FloorKey) -> Result<Vec<NoiseFloor>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            FLOOR_COLUMNS,
            " FROM noise_floor_history WHERE runner_id = $1 AND repository_id = $2 \
             AND benchmark = $3 AND metric = $4 ORDER BY computed_at, id"
        ))
        .bind(key.runner_id)
        .bind(key.repository_id)
        .bind(&key.benchmark)
        .bind(&key.metric)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::noise_floor)
        .collect()
    }
}
