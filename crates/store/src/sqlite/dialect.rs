//! SQLite's claims: one `UPDATE … RETURNING` picks and takes the row under the write lock, so
//! two claimers can never take the same row.

use super::{Backend, Pool, comparisons, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::{CLAIM_ORDER, JOB_COLUMNS, OUTBOX_COLUMNS};
use crate::shared::dialect::Dialect;
use crate::shared::{after, now};
use const_format::concatcp;
use sqlx::types::Json;

/// A webhook delivery, its effects applied one by one (a statement costs no round trip here).
pub(super) async fn record_delivery(
    pool: &Pool,
    delivery: &Delivery,
    effects: &[DeliveryEffect],
) -> Result<DeliveryRecord, StoreError> {
    super::webhooks::record(pool, delivery, effects).await
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::ClaimStore for Backend {
    async fn claim_job(
        &self,
        runner_id: RunnerId,
        labels: &[String],
        lease: std::time::Duration,
    ) -> Result<Option<ClaimedJob>, StoreError> {
        let pool = &self.pool;
        let now = now();
        let token = LeaseToken::generate();
        let expires = after(now, lease);
        let mut tx = Backend::begin(pool).await?;
        let row = sqlx::query(concatcp!(
            "UPDATE jobs SET state = 'running', lease_token = $1, lease_expires_at = $2, \
             claimed_by = $3, attempts = attempts + 1, started_at = COALESCE(started_at, $4), \
             updated_at = $4 \
             WHERE id = (SELECT id FROM jobs WHERE state = 'queued' \
               AND runner_label IN (SELECT value FROM json_each($5)) \
               AND (pinned_runner_id IS NULL OR pinned_runner_id = $3) \
               ORDER BY ",
            CLAIM_ORDER,
            " LIMIT 1) \
             RETURNING ",
            JOB_COLUMNS
        ))
        .bind(token.as_str())
        .bind(expires)
        .bind(runner_id)
        .bind(now)
        .bind(Json(labels))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(None);
        };
        let job = rows::job(&row)?;
        if let Some(c) = job.comparison_id {
            comparisons::refresh_state(&mut tx, c).await?;
        }
        tx.commit().await?;
        Ok(Some(ClaimedJob {
            job,
            lease: token,
            lease_expires_at: expires,
        }))
    }
    async fn claim_outbox(
        &self,
        limit: i64,
        lease: std::time::Duration,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        let pool = &self.pool;
        let now = now();
        let token = LeaseToken::generate();
        let rows = sqlx::query(concatcp!(
            "UPDATE outbox SET lease_token = $1, lease_expires_at = $2, claimed_revision = revision \
             WHERE id IN (SELECT id FROM outbox WHERE done_at IS NULL AND next_attempt_at <= $3 \
               AND (lease_expires_at IS NULL OR lease_expires_at < $3) \
               ORDER BY priority DESC, next_attempt_at, id LIMIT $4) \
             RETURNING ",
            OUTBOX_COLUMNS
        ))
        .bind(token.as_str())
        .bind(after(now, lease))
        .bind(now)
        .bind(limit)
        .fetch_all(pool)
        .await?;
        let mut messages = rows
            .iter()
            .map(|row| rows::outbox_message(row, &token))
            .collect::<Result<Vec<_>, _>>()?;
        messages.sort_by_key(|m| (std::cmp::Reverse(m.priority), m.id));
        Ok(messages)
    }
}
