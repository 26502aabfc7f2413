//! The outbox's shared part: enqueue (with payload replacement by dedupe key), delivered,
//! failed, backlog. Claiming differs per dialect.

use super::{Backend, Conn};
use crate::StoreError;
use crate::model::*;
use crate::shared::dialect::Dialect;
use sqlx::types::Json;

pub(super) async fn insert(conn: &mut Conn, m: &NewOutboxMessage) -> Result<OutboxId, StoreError> {
    let now = crate::shared::now();
    // A pending row with the same key takes the new payload and a new revision; a worker
    // holding the old revision will see that when it reports delivery.
    Ok(sqlx::query_scalar(
        "INSERT INTO outbox (kind, dedupe_key, payload, next_attempt_at, created_at, priority) \
         VALUES ($1, $2, $3, $4, $4, $5) \
         ON CONFLICT (dedupe_key) WHERE done_at IS NULL DO UPDATE SET \
         kind = excluded.kind, payload = excluded.payload, priority = excluded.priority, \
         revision = outbox.revision + 1 RETURNING id",
    )
    .bind(&m.kind)
    .bind(&m.dedupe_key)
    .bind(Json(&m.payload))
    .bind(now)
    .bind(m.priority.0)
    .fetch_one(&mut *conn)
    .await?)
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::OutboxStore for Backend {
    async fn enqueue_outbox(&self, message: &NewOutboxMessage) -> Result<OutboxId, StoreError> {
        insert(&mut *self.pool.acquire().await?, message).await
    }
    async fn outbox_delivered(&self, id: OutboxId, lease: &LeaseToken) -> Result<(), StoreError> {
        let pool = &self.pool;
        let done = sqlx::query(
            "UPDATE outbox SET \
             done_at = CASE WHEN revision = claimed_revision THEN $3 ELSE NULL END, \
             next_attempt_at = $3, lease_token = NULL, lease_expires_at = NULL, \
             claimed_revision = NULL, last_error = NULL \
             WHERE id = $1 AND lease_token = $2 AND done_at IS NULL",
        )
        .bind(id)
        .bind(lease.as_str())
        .bind(crate::shared::now())
        .execute(pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::LeaseLost);
        }
        Ok(())
    }
    async fn outbox_failed(
        &self,
        id: OutboxId,
        lease: &LeaseToken,
        error: &str,
        retry_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        // Giving up still sends a payload that was replaced meanwhile: that one is new work.
        let give_up = retry_at.is_none();
        let done = sqlx::query(
            "UPDATE outbox SET attempts = attempts + 1, last_error = $3, \
             next_attempt_at = $4, \
             done_at = CASE WHEN $5 AND revision = claimed_revision THEN $6 ELSE NULL END, \
             lease_token = NULL, lease_expires_at = NULL, claimed_revision = NULL \
             WHERE id = $1 AND lease_token = $2 AND done_at IS NULL",
        )
        .bind(id)
        .bind(lease.as_str())
        .bind(error)
        .bind(retry_at.unwrap_or(now))
        .bind(give_up)
        .bind(now)
        .execute(pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::LeaseLost);
        }
        Ok(())
    }
    async fn release_outbox(
        &self,
        ids: &[OutboxId],
        lease: &LeaseToken,
    ) -> Result<u64, StoreError> {
        let pool = &self.pool;
        let mut tx = Backend::begin(pool).await?;
        let mut released = 0;
        for id in ids {
            // Claimed rows were due, so leaving next_attempt_at alone makes them due again.
            released += sqlx::query(
                "UPDATE outbox SET lease_token = NULL, lease_expires_at = NULL, \
                 claimed_revision = NULL WHERE id = $1 AND lease_token = $2 \
                 AND done_at IS NULL",
            )
            .bind(id)
            .bind(lease.as_str())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        }
        tx.commit().await?;
        Ok(released)
    }
    async fn outbox_backlog(&self) -> Result<i64, StoreError> {
        let pool = &self.pool;
        Ok(
            sqlx::query_scalar("SELECT COUNT(*) FROM outbox WHERE done_at IS NULL")
                .fetch_one(pool)
                .await?,
        )
    }
}
