//! A comparison's stored results per runner, replaced after each analysis; compiled into
//! each backend.

use super::{Backend, Conn};
use crate::StoreError;
use crate::model::*;
use crate::shared::dialect::Dialect;
use sqlx::Row as _;
use sqlx::types::Json;

pub(super) async fn replace_results(
    conn: &mut Conn,
    comparison_id: ComparisonId,
    runner_id: RunnerId,
    basis: i64,
    results: &[benchgate_api::BenchmarkResult],
) -> Result<bool, StoreError> {
    let now = crate::shared::now();
    // The row lock this takes orders concurrent writers of one runner's set; a writer
    // whose basis is older changes nothing.
    let newer = sqlx::query(
        "INSERT INTO comparison_result_sets (comparison_id, runner_id, basis) \
         VALUES ($1, $2, $3) \
         ON CONFLICT (comparison_id, runner_id) DO UPDATE SET basis = excluded.basis \
         WHERE comparison_result_sets.basis <= excluded.basis",
    )
    .bind(comparison_id)
    .bind(runner_id)
    .bind(basis)
    .execute(&mut *conn)
    .await?
    .rows_affected()
        > 0;
    if !newer {
        return Ok(false);
    }
    sqlx::query("DELETE FROM comparison_results WHERE comparison_id = $1 AND runner_id = $2")
        .bind(comparison_id)
        .bind(runner_id)
        .execute(&mut *conn)
        .await?;
    // Later rows of one benchmark and metric win, as when each row was its own
    // statement; many rows per statement, since a suite stores thousands per upload.
    let mut last: std::collections::HashMap<(&str, &str), usize> = std::collections::HashMap::new();
    for (i, r) in results.iter().enumerate() {
        last.insert((r.name.as_str(), r.metric.as_str()), i);
    }
    let rows: Vec<&benchgate_api::BenchmarkResult> = results
        .iter()
        .enumerate()
        .filter(|(i, r)| last.get(&(r.name.as_str(), r.metric.as_str())) == Some(i))
        .map(|(_, r)| r)
        .collect();
    for chunk in rows.chunks(RESULTS_PER_STATEMENT) {
        let mut insert = sqlx::QueryBuilder::<super::Db>::new(
            "INSERT INTO comparison_results \
             (comparison_id, runner_id, benchmark, metric, result, updated_at) ",
        );
        insert.push_values(chunk, |mut row, result| {
            row.push_bind(comparison_id)
                .push_bind(runner_id)
                .push_bind(&result.name)
                .push_bind(&result.metric)
                .push_bind(Json(*result))
                .push_bind(now);
        });
        insert.push(
            " ON CONFLICT (comparison_id, runner_id, benchmark, metric) DO UPDATE \
             SET result = excluded.result, updated_at = excluded.updated_at",
        );
        insert.build().execute(&mut *conn).await?;
    }
    Ok(true)
}

/// Rows per multi-row result insert.
pub(crate) const RESULTS_PER_STATEMENT: usize = 1000;

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::ResultStore for Backend {
    async fn replace_comparison_results(
        &self,
        comparison_id: ComparisonId,
        runner_id: RunnerId,
        basis: i64,
        results: &[benchgate_api::BenchmarkResult],
    ) -> Result<bool, StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        let replaced = replace_results(&mut tx, comparison_id, runner_id, basis, results).await?;
        tx.commit().await?;
        Ok(replaced)
    }
    async fn comparison_results(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<StoredResult>, StoreError> {
        let pool = &self.pool;
        sqlx::query(
            "SELECT runner_id, result, updated_at FROM comparison_results \
             WHERE comparison_id = $1 ORDER BY runner_id, benchmark, metric",
        )
        .bind(comparison_id)
        .fetch_all(pool)
        .await?
        .iter()
        .filter_map(|row| {
            let stored = (|| {
                Ok::<_, StoreError>(StoredResult {
                    runner_id: row.try_get("runner_id")?,
                    result: row
                        .try_get::<Json<benchgate_api::BenchmarkResult>, _>("result")?
                        .0,
                    updated_at: row.try_get("updated_at")?,
                })
            })();
            // One unreadable row must not break every page and worker that reads the
            // comparison: it is reported and skipped (the next analysis rewrites it).
            stored
                .inspect_err(|e| {
                    tracing::error!(comparison = %comparison_id, error = %e, "unreadable stored result skipped");
                })
                .ok()
        })
        .map(Ok)
        .collect()
    }
}
