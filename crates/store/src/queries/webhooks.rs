//! Webhook deliveries: de-duplicated and recorded with their effects in one transaction,
//! compiled into each backend.

use super::{Backend, Pool, comparisons, creation, outbox, pull_requests, queue, repositories};
use crate::StoreError;
use crate::model::*;
use crate::shared::dialect::Dialect;

pub(super) async fn record(
    pool: &Pool,
    delivery: &Delivery,
    effects: &[DeliveryEffect],
) -> Result<DeliveryRecord, StoreError> {
    let mut tx = Backend::begin(pool).await?;
    let inserted = sqlx::query(
        "INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (delivery_id) DO NOTHING",
    )
    .bind(&delivery.delivery_id)
    .bind(&delivery.event)
    .bind(&delivery.action)
    .bind(crate::shared::now())
    .bind(&delivery.outcome)
    .execute(&mut *tx)
    .await?;
    if inserted.rows_affected() == 0 {
        tx.rollback().await?;
        return Ok(DeliveryRecord::Duplicate);
    }
    let mut created_comparisons = Vec::new();
    let mut jobs = Vec::new();
    let mut cancelled_jobs = 0;
    let mut outbox_ids = Vec::new();
    for effect in effects {
        match effect {
            DeliveryEffect::UpsertInstallation(i) => {
                repositories::upsert_installation(&mut tx, i).await?;
            }
            DeliveryEffect::RemoveInstallation { installation_id } => {
                repositories::remove_installation(&mut tx, *installation_id).await?;
            }
            DeliveryEffect::UpsertRepository(r) => {
                repositories::ensure(&mut tx, r).await?;
            }
            DeliveryEffect::SuspendInstallation { installation_id } => {
                cancelled_jobs +=
                    comparisons::cancel_installation(&mut tx, *installation_id).await?;
            }
            DeliveryEffect::RecordPullRequestHead {
                full_name,
                pr_number,
                head_sha,
            } => {
                pull_requests::record_head(&mut tx, full_name, *pr_number, head_sha).await?;
            }
            DeliveryEffect::CreateComparison(c) => {
                let created = creation::create(&mut tx, c).await?;
                created_comparisons.push(created.id);
                jobs.extend(created.jobs);
            }
            DeliveryEffect::AddRounds {
                comparison_id,
                jobs: new_jobs,
            } => {
                jobs.extend(comparisons::add_rounds(&mut tx, *comparison_id, new_jobs).await?);
            }
            DeliveryEffect::EnqueueCalibration(c) => {
                jobs.push(queue::enqueue_calibration(&mut tx, c).await?);
            }
            DeliveryEffect::CancelPullRequest {
                repository_id,
                pr_number,
            } => {
                cancelled_jobs +=
                    comparisons::cancel_pull_request(&mut tx, *repository_id, *pr_number).await?;
            }
            DeliveryEffect::Outbox(m) => {
                outbox_ids.push(outbox::insert(&mut tx, m).await?);
            }
        }
    }
    tx.commit().await?;
    Ok(DeliveryRecord::Recorded {
        comparisons: created_comparisons,
        jobs,
        cancelled_jobs,
        outbox: outbox_ids,
    })
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::WebhookStore for Backend {
    async fn record_delivery(
        &self,
        delivery: &Delivery,
        effects: &[DeliveryEffect],
    ) -> Result<DeliveryRecord, StoreError> {
        // A connection that broke since its last use fails once and is dropped; the
        // delivery is tried again on another (it is idempotent on its delivery id,
        // so a retry after a commit whose answer was lost reports a duplicate).
        // Each try drops the broken connection it got, and a restart can break every
        // connection in the pool.
        let retries = self.pool.options().get_max_connections();
        let mut tries = 0;
        loop {
            match super::dialect::record_delivery(&self.pool, delivery, effects).await {
                Err(e) if e.is_broken_connection() && tries < retries => {
                    tries += 1;
                    tracing::info!(error = %e, tries, "database connection broke; recording the delivery again");
                }
                done => return done,
            }
        }
    }
}
