//! Acceptances of a head's failing rows (`/benchgate accept`); compiled into each backend.

use super::{Backend, Pool};
use crate::StoreError;
use crate::model::*;
use crate::shared::dialect::Dialect;
use sqlx::Row as _;
use sqlx::types::Json;

const COLUMNS: &str = "a.id, a.repository_id, r.full_name AS repository, a.pr_number, \
     a.head_sha, a.accepted_by, a.reason, a.rows, a.created_at, a.revoked_at, a.revoked_by";

type DbRow = <super::Db as sqlx::Database>::Row;

fn row(row: &DbRow) -> Result<Acceptance, StoreError> {
    Ok(Acceptance {
        id: row.try_get("id")?,
        repository_id: row.try_get("repository_id")?,
        repository: row.try_get("repository")?,
        pr_number: row.try_get("pr_number")?,
        head_sha: row.try_get("head_sha")?,
        accepted_by: row.try_get("accepted_by")?,
        reason: row.try_get("reason")?,
        rows: row.try_get::<Json<Vec<String>>, _>("rows")?.0,
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
        revoked_by: row.try_get("revoked_by")?,
    })
}

async fn by_id(pool: &Pool, id: i64) -> Result<Option<Acceptance>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM acceptances a JOIN repositories r ON r.id = a.repository_id \
         WHERE a.id = $1"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::AcceptanceStore for Backend {
    async fn accept(&self, new: &NewAcceptance) -> Result<Acceptance, StoreError> {
        // Records `new`; an earlier acceptance of the same head still in force is revoked by
        // it (the newest reason and rows are the ones that count).
        let pool = &self.pool;
        let mut tx = Backend::begin(pool).await?;
        let now = crate::shared::now();
        sqlx::query(
            "UPDATE acceptances SET revoked_at = $3, revoked_by = $4 \
             WHERE repository_id = $1 AND head_sha = $2 AND revoked_at IS NULL",
        )
        .bind(new.repository_id)
        .bind(&new.head_sha)
        .bind(now)
        .bind(&new.accepted_by)
        .execute(&mut *tx)
        .await?;
        let id: i64 = sqlx::query(
            "INSERT INTO acceptances (repository_id, pr_number, head_sha, accepted_by, \
             reason, rows, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(new.repository_id)
        .bind(new.pr_number)
        .bind(&new.head_sha)
        .bind(&new.accepted_by)
        .bind(&new.reason)
        .bind(Json(&new.rows))
        .bind(now)
        .fetch_one(&mut *tx)
        .await?
        .try_get("id")?;
        tx.commit().await?;
        by_id(pool, id)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("acceptance {id}")))
    }
    async fn revoke_acceptance(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
        by: &str,
    ) -> Result<u64, StoreError> {
        let pool = &self.pool;
        Ok(sqlx::query(
            "UPDATE acceptances SET revoked_at = $3, revoked_by = $4 \
             WHERE repository_id = $1 AND head_sha = $2 AND revoked_at IS NULL",
        )
        .bind(repository_id)
        .bind(head_sha)
        .bind(crate::shared::now())
        .bind(by)
        .execute(pool)
        .await?
        .rows_affected())
    }
    async fn active_acceptance(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
    ) -> Result<Option<Acceptance>, StoreError> {
        let pool = &self.pool;
        let sql = format!(
            "SELECT {COLUMNS} FROM acceptances a JOIN repositories r ON r.id = a.repository_id \
             WHERE a.repository_id = $1 AND a.head_sha = $2 AND a.revoked_at IS NULL \
             ORDER BY a.id DESC LIMIT 1"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(repository_id)
            .bind(head_sha)
            .fetch_optional(pool)
            .await?
            .as_ref()
            .map(row)
            .transpose()
    }
    async fn acceptances(&self, limit: i64) -> Result<Vec<Acceptance>, StoreError> {
        let pool = &self.pool;
        let sql = format!(
            "SELECT {COLUMNS} FROM acceptances a JOIN repositories r ON r.id = a.repository_id \
             ORDER BY r.full_name, a.id DESC LIMIT $1"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(limit)
            .fetch_all(pool)
            .await?
            .iter()
            .map(row)
            .collect()
    }
}
