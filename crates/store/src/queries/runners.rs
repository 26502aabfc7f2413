//! Runners and their tokens; compiled into each backend.

use super::{Backend, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::RUNNER_COLUMNS;
use const_format::concatcp;
use sqlx::Row as _;
use sqlx::types::Json;

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::RunnerStore for Backend {
    async fn add_runner(&self, name: &str, labels: &[String]) -> Result<NewRunner, StoreError> {
        let pool = &self.pool;
        let token = crate::token::generate();
        let inserted = sqlx::query(concatcp!(
            "INSERT INTO runners (name, labels, token_hash, created_at) \
             VALUES ($1, $2, $3, $4) RETURNING ",
            RUNNER_COLUMNS
        ))
        .bind(name)
        .bind(Json(labels))
        .bind(crate::token::hash(token.expose()))
        .bind(crate::shared::now())
        .fetch_one(pool)
        .await;
        match inserted {
            Ok(row) => Ok(NewRunner {
                runner: rows::runner(&row)?,
                token,
            }),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::Conflict(
                format!("a runner named {name:?} already exists"),
            )),
            Err(e) => Err(e.into()),
        }
    }
    async fn list_runners(&self) -> Result<Vec<Runner>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            RUNNER_COLUMNS,
            " FROM runners ORDER BY name"
        ))
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::runner)
        .collect()
    }
    async fn runner(&self, id: RunnerId) -> Result<Option<Runner>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            RUNNER_COLUMNS,
            " FROM runners WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(rows::runner)
        .transpose()
    }
    async fn runner_by_name(&self, name: &str) -> Result<Option<Runner>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            RUNNER_COLUMNS,
            " FROM runners WHERE name = $1"
        ))
        .bind(name)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(rows::runner)
        .transpose()
    }
    async fn reset_runner_audit(
        &self,
        runner_id: RunnerId,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE runners SET audit_since = $2 WHERE id = $1")
            .bind(runner_id)
            .bind(at)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("runner {runner_id}")));
        }
        Ok(())
    }
    async fn revoke_runner(&self, name: &str) -> Result<(), StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        let mut tx = pool.begin().await?;
        let done =
            sqlx::query("UPDATE runners SET revoked_at = COALESCE(revoked_at, $2) WHERE name = $1")
                .bind(name)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("runner {name:?}")));
        }
        // Jobs only this runner may take (its A/A calibrations) would wait forever; the one
        // it holds cannot be finished, since its token no longer authenticates.
        sqlx::query(
            "UPDATE jobs SET state = 'cancelled', finished_at = $2, \
             last_error = 'the runner it was pinned to was revoked', \
             lease_token = NULL, lease_expires_at = NULL \
             WHERE pinned_runner_id = (SELECT id FROM runners WHERE name = $1) \
             AND state IN ('queued', 'running')",
        )
        .bind(name)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
    async fn authenticate_runner(&self, token: &str) -> Result<Option<Runner>, StoreError> {
        let pool = &self.pool;
        let presented = crate::token::hash(token);
        let row = sqlx::query(concatcp!(
            "SELECT ",
            RUNNER_COLUMNS,
            ", token_hash FROM runners WHERE token_hash = $1 AND revoked_at IS NULL"
        ))
        .bind(&presented)
        .fetch_optional(pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        // The index lookup already matched; the constant-time compare keeps the final
        // decision independent of where two hashes differ.
        let stored: String = row.try_get("token_hash")?;
        if !crate::token::hashes_match(&stored, &presented) {
            return Ok(None);
        }
        rows::runner(&row).map(Some)
    }
    async fn touch_runner(
        &self,
        id: RunnerId,
        fingerprint: Option<&benchgate_api::MachineFingerprint>,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        sqlx::query(
            "UPDATE runners SET last_seen_at = $2, fingerprint = COALESCE($3, fingerprint) \
             WHERE id = $1",
        )
        .bind(id)
        .bind(crate::shared::now())
        .bind(fingerprint.map(Json))
        .execute(pool)
        .await?;
        Ok(())
    }
}
