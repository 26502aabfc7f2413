//! Culprit searches and their probes; compiled into each backend. The server drives a search
//! (`main.bisect` rows); the store keeps what it decided and wakes it when a comparison it waits
//! on ends (`wake`, called where a comparison's state changes).

use super::{Backend, Conn, outbox, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::COMPARISON_COLUMNS;
use crate::shared::dialect::Dialect;
use const_format::concatcp;
use sqlx::Row as _;
use sqlx::types::Json;

type DbRow = <super::Db as sqlx::Database>::Row;

const BISECTION_COLUMNS: &str = "id, repository_id, branch, runner_label, main_suite, benchmark, \
     metric, regression_id, source_comparison, good_sha, bad_sha, commits, state, outcome, requested_by, \
     created_at, updated_at";

const PROBE_COLUMNS: &str = "bisection_id, seq, older_sha, newer_sha, state, lower, upper, \
     rounds, comparisons, note, created_at, updated_at";

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {value:?}"))
}

fn bisection(row: &DbRow) -> Result<Bisection, StoreError> {
    let state: String = row.try_get("state")?;
    let commits: Option<Json<Vec<RangeCommit>>> = row.try_get("commits")?;
    let outcome: Option<Json<SearchOutcome>> = row.try_get("outcome")?;
    Ok(Bisection {
        id: row.try_get("id")?,
        series: MainSeries {
            repository_id: row.try_get("repository_id")?,
            branch: row.try_get("branch")?,
            runner_label: row.try_get("runner_label")?,
            suite: row.try_get("main_suite")?,
        },
        benchmark: row.try_get("benchmark")?,
        metric: row.try_get("metric")?,
        regression_id: row.try_get("regression_id")?,
        source_comparison: row.try_get("source_comparison")?,
        good_sha: row.try_get("good_sha")?,
        bad_sha: row.try_get("bad_sha")?,
        commits: commits.map(|c| c.0),
        state: BisectionState::parse(&state).ok_or_else(|| corrupt("bisection state", &state))?,
        outcome: outcome.map(|o| o.0),
        requested_by: row.try_get("requested_by")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn probe(row: &DbRow) -> Result<BisectionProbe, StoreError> {
    let state: String = row.try_get("state")?;
    let comparisons: Json<Vec<ComparisonId>> = row.try_get("comparisons")?;
    Ok(BisectionProbe {
        bisection_id: row.try_get("bisection_id")?,
        seq: row.try_get("seq")?,
        older_sha: row.try_get("older_sha")?,
        newer_sha: row.try_get("newer_sha")?,
        state: ProbeState::parse(&state).ok_or_else(|| corrupt("probe state", &state))?,
        lower: row.try_get("lower")?,
        upper: row.try_get("upper")?,
        rounds: row.try_get("rounds")?,
        comparisons: comparisons.0,
        note: row.try_get("note")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// In the transaction that ends comparison `comparison_id`: a step row for each running
/// search that waits on it.
pub(super) async fn wake(conn: &mut Conn, comparison_id: ComparisonId) -> Result<(), StoreError> {
    let waiting: Vec<i64> = sqlx::query_scalar(
        "SELECT b.id FROM bisection_comparisons w JOIN bisections b ON b.id = w.bisection_id \
         WHERE w.comparison_id = $1 AND b.state = 'running' ORDER BY b.id",
    )
    .bind(comparison_id)
    .fetch_all(&mut *conn)
    .await?;
    for id in waiting {
        outbox::insert(conn, &NewOutboxMessage::bisection_step(id)).await?;
    }
    Ok(())
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::BisectionStore for Backend {
    async fn create_bisection(&self, new: &NewBisection) -> Result<(Bisection, bool), StoreError> {
        // Starts a search with the row that takes its first step; a search of the same benchmark and
        // range already running is returned instead (`false`: not new).
        let pool = &self.pool;
        let now = crate::shared::now();
        let mut tx = Backend::begin(pool).await?;
        let inserted = sqlx::query(concatcp!(
            "INSERT INTO bisections (repository_id, branch, runner_label, main_suite, benchmark, \
             metric, regression_id, good_sha, bad_sha, state, requested_by, created_at, updated_at, \
             source_comparison) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'running', $10, $11, $11, $12) \
             ON CONFLICT (repository_id, branch, runner_label, main_suite, benchmark, metric, \
             good_sha, bad_sha) WHERE state = 'running' DO NOTHING RETURNING ",
            BISECTION_COLUMNS
        ))
        .bind(new.series.repository_id)
        .bind(&new.series.branch)
        .bind(&new.series.runner_label)
        .bind(&new.series.suite)
        .bind(&new.benchmark)
        .bind(&new.metric)
        .bind(new.regression_id)
        .bind(&new.good_sha)
        .bind(&new.bad_sha)
        .bind(&new.requested_by)
        .bind(now)
        .bind(new.source_comparison)
        .fetch_optional(&mut *tx)
        .await?;
        let (found, created) = match inserted {
            Some(row) => (bisection(&row)?, true),
            None => {
                let row = sqlx::query(concatcp!(
                    "SELECT ",
                    BISECTION_COLUMNS,
                    " FROM bisections WHERE repository_id = $1 AND branch = $2 AND runner_label = $3 \
                     AND main_suite = $4 AND benchmark = $5 AND metric = $6 AND good_sha = $7 \
                     AND bad_sha = $8 AND state = 'running'"
                ))
                .bind(new.series.repository_id)
                .bind(&new.series.branch)
                .bind(&new.series.runner_label)
                .bind(&new.series.suite)
                .bind(&new.benchmark)
                .bind(&new.metric)
                .bind(&new.good_sha)
                .bind(&new.bad_sha)
                .fetch_one(&mut *tx)
                .await?;
                (bisection(&row)?, false)
            }
        };
        if created {
            outbox::insert(&mut tx, &NewOutboxMessage::bisection_step(found.id)).await?;
        }
        tx.commit().await?;
        Ok((found, created))
    }
    async fn bisection(&self, id: i64) -> Result<Option<Bisection>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            BISECTION_COLUMNS,
            " FROM bisections WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(bisection)
        .transpose()
    }
    async fn bisections(&self, repository_id: RepositoryId) -> Result<Vec<Bisection>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            BISECTION_COLUMNS,
            " FROM bisections WHERE repository_id = $1 ORDER BY id DESC"
        ))
        .bind(repository_id)
        .fetch_all(pool)
        .await?;
        rows.iter().map(bisection).collect()
    }
    async fn running_bisections(&self) -> Result<Vec<i64>, StoreError> {
        let pool = &self.pool;
        Ok(
            sqlx::query_scalar("SELECT id FROM bisections WHERE state = 'running' ORDER BY id")
                .fetch_all(pool)
                .await?,
        )
    }
    async fn set_bisection_commits(
        &self,
        id: i64,
        commits: &[RangeCommit],
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        sqlx::query("UPDATE bisections SET commits = $2, updated_at = $3 WHERE id = $1")
            .bind(id)
            .bind(Json(commits))
            .bind(crate::shared::now())
            .execute(pool)
            .await?;
        Ok(())
    }
    async fn finish_bisection(
        &self,
        id: i64,
        state: BisectionState,
        outcome: &SearchOutcome,
    ) -> Result<bool, StoreError> {
        let pool = &self.pool;
        let done = sqlx::query(
            "UPDATE bisections SET state = $2, outcome = $3, updated_at = $4 \
             WHERE id = $1 AND state = 'running'",
        )
        .bind(id)
        .bind(state.as_str())
        .bind(Json(outcome))
        .bind(crate::shared::now())
        .execute(pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }
    async fn bisection_probes(&self, id: i64) -> Result<Vec<BisectionProbe>, StoreError> {
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            PROBE_COLUMNS,
            " FROM bisection_probes WHERE bisection_id = $1 ORDER BY seq"
        ))
        .bind(id)
        .fetch_all(pool)
        .await?;
        rows.iter().map(probe).collect()
    }
    async fn add_bisection_probe(
        &self,
        id: i64,
        seq: i64,
        older: &str,
        newer: &str,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        let done = sqlx::query(
            "INSERT INTO bisection_probes (bisection_id, seq, older_sha, newer_sha, state, \
             created_at, updated_at) VALUES ($1, $2, $3, $4, 'running', $5, $5) \
             ON CONFLICT (bisection_id, seq) DO NOTHING",
        )
        .bind(id)
        .bind(seq)
        .bind(older)
        .bind(newer)
        .bind(now)
        .execute(pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!(
                "probe {seq} of search {id} exists"
            )));
        }
        Ok(())
    }
    async fn end_bisection_probe(
        &self,
        id: i64,
        seq: i64,
        end: &ProbeEnd,
    ) -> Result<bool, StoreError> {
        let pool = &self.pool;
        let done = sqlx::query(
            "UPDATE bisection_probes SET state = $3, lower = $4, upper = $5, rounds = $6, \
             comparisons = $7, note = $8, updated_at = $9 \
             WHERE bisection_id = $1 AND seq = $2 AND state = 'running'",
        )
        .bind(id)
        .bind(seq)
        .bind(end.state.as_str())
        .bind(end.lower)
        .bind(end.upper)
        .bind(end.rounds)
        .bind(Json(&end.comparisons))
        .bind(&end.note)
        .bind(crate::shared::now())
        .execute(pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }
    async fn comparisons_of_pair(
        &self,
        repository_id: RepositoryId,
        runner_label: &str,
        base: &str,
        head: &str,
    ) -> Result<Vec<Comparison>, StoreError> {
        // Comparisons of a repository without a pull request (steps, anchor comparisons, probes) of
        // `head` against `base` on one label, oldest first: what a probe of that pair may reuse.
        let pool = &self.pool;
        let rows = sqlx::query(concatcp!(
            "SELECT ",
            COMPARISON_COLUMNS,
            " FROM comparisons c JOIN repositories r ON r.id = c.repository_id \
             WHERE c.repository_id = $1 AND c.runner_label = $2 AND c.base_sha = $3 \
             AND c.head_sha = $4 AND c.pr_number IS NULL ORDER BY c.id"
        ))
        .bind(repository_id)
        .bind(runner_label)
        .bind(base)
        .bind(head)
        .fetch_all(pool)
        .await?;
        rows.iter().map(rows::comparison).collect()
    }
    async fn bisection_waits_on(
        &self,
        id: i64,
        comparison: ComparisonId,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        let comparison_id = comparison;
        sqlx::query(
            "INSERT INTO bisection_comparisons (bisection_id, comparison_id) VALUES ($1, $2) \
             ON CONFLICT (bisection_id, comparison_id) DO NOTHING",
        )
        .bind(id)
        .bind(comparison_id)
        .execute(pool)
        .await?;
        Ok(())
    }
}
