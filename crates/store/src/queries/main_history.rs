//! The default branch's comparisons and regression episodes; compiled into each backend.

use super::{Backend, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::COMPARISON_COLUMNS;
use const_format::concatcp;
use sqlx::Row as _;

type DbRow = <super::Db as sqlx::Database>::Row;

const REGRESSION_COLUMNS: &str = "id, repository_id, branch, runner_label, main_suite, benchmark, metric, kind, \
     state, opened_by, base_sha, head_sha, change, change_lower, change_upper, \
     last_seen_by, closed_by, issue_number, created_at, updated_at";

fn regression(row: &DbRow) -> Result<Regression, StoreError> {
    let kind: String = row.try_get("kind")?;
    let state: String = row.try_get("state")?;
    Ok(Regression {
        id: row.try_get("id")?,
        series: MainSeries {
            repository_id: row.try_get("repository_id")?,
            branch: row.try_get("branch")?,
            runner_label: row.try_get("runner_label")?,
            suite: row.try_get("main_suite")?,
        },
        benchmark: row.try_get("benchmark")?,
        metric: row.try_get("metric")?,
        kind: RegressionKind::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt(format!("regression kind {kind:?}")))?,
        open: state == "open",
        opened_by: row.try_get("opened_by")?,
        base_sha: row.try_get("base_sha")?,
        head_sha: row.try_get("head_sha")?,
        change: row.try_get("change")?,
        lower: row.try_get("change_lower")?,
        upper: row.try_get("change_upper")?,
        last_seen_by: row.try_get("last_seen_by")?,
        closed_by: row.try_get("closed_by")?,
        issue_number: row.try_get("issue_number")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::MainHistoryStore for Backend {
    async fn main_comparisons(
        &self,
        repository_id: RepositoryId,
        branch: &str,
    ) -> Result<Vec<Comparison>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            COMPARISON_COLUMNS,
            " FROM comparisons c JOIN repositories r ON r.id = c.repository_id \
             WHERE c.repository_id = $1 AND c.branch = $2 ORDER BY c.id"
        ))
        .bind(repository_id)
        .bind(branch)
        .fetch_all(pool)
        .await?;
        rows.iter().map(rows::comparison).collect()
    }
    async fn main_series(&self) -> Result<Vec<MainSeries>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(
            "SELECT DISTINCT repository_id, branch, runner_label, main_suite FROM comparisons \
             WHERE branch IS NOT NULL ORDER BY repository_id, branch, runner_label, main_suite",
        )
        .fetch_all(pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(MainSeries {
                    repository_id: row.try_get("repository_id")?,
                    branch: row.try_get("branch")?,
                    runner_label: row.try_get("runner_label")?,
                    suite: row
                        .try_get::<Option<String>, _>("main_suite")?
                        .unwrap_or_default(),
                })
            })
            .collect()
    }
    async fn open_regression(&self, new: &NewRegression) -> Result<Regression, StoreError> {
        // Opens an episode, or, when one of the benchmark, metric and kind is open already,
        // notes that this comparison saw it too. Returns the episode either way.
        let pool = &self.pool;
        let now = crate::shared::now();
        let row = sqlx::query(concatcp!(
            "INSERT INTO main_regressions (repository_id, branch, runner_label, main_suite, \
             benchmark, metric, kind, state, opened_by, base_sha, head_sha, change, \
             change_lower, change_upper, last_seen_by, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'open', $8, $9, $10, $11, $12, $13, $8, \
             $14, $14) \
             ON CONFLICT (repository_id, branch, runner_label, main_suite, benchmark, \
             metric, kind) WHERE state = 'open' DO UPDATE SET \
             last_seen_by = excluded.last_seen_by, updated_at = excluded.updated_at \
             RETURNING ",
            REGRESSION_COLUMNS
        ))
        .bind(new.series.repository_id)
        .bind(&new.series.branch)
        .bind(&new.series.runner_label)
        .bind(&new.series.suite)
        .bind(&new.benchmark)
        .bind(&new.metric)
        .bind(new.kind.as_str())
        .bind(new.comparison)
        .bind(&new.base_sha)
        .bind(&new.head_sha)
        .bind(new.change)
        .bind(new.lower)
        .bind(new.upper)
        .bind(now)
        .fetch_one(pool)
        .await?;
        regression(&row)
    }
    async fn close_regression(&self, id: i64, by: ComparisonId) -> Result<bool, StoreError> {
        let pool = &self.pool;
        let done = sqlx::query(
            "UPDATE main_regressions SET state = 'closed', closed_by = $2, updated_at = $3 \
             WHERE id = $1 AND state = 'open'",
        )
        .bind(id)
        .bind(by)
        .bind(crate::shared::now())
        .execute(pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }
    async fn set_regression_issue(&self, id: i64, number: i64) -> Result<(), StoreError> {
        let pool = &self.pool;
        let issue_number = number;
        sqlx::query("UPDATE main_regressions SET issue_number = $2, updated_at = $3 WHERE id = $1")
            .bind(id)
            .bind(issue_number)
            .bind(crate::shared::now())
            .execute(pool)
            .await?;
        Ok(())
    }
    async fn regression(&self, id: i64) -> Result<Option<Regression>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            REGRESSION_COLUMNS,
            " FROM main_regressions WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(regression)
        .transpose()
    }
    async fn regressions(
        &self,
        repository_id: RepositoryId,
    ) -> Result<Vec<Regression>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            REGRESSION_COLUMNS,
            " FROM main_regressions WHERE repository_id = $1 ORDER BY id DESC"
        ))
        .bind(repository_id)
        .fetch_all(pool)
        .await?;
        rows.iter().map(regression).collect()
    }
}
