//! Webhook deliveries: de-duplicated and recorded with their effects in one transaction,
//! compiled into each backend.

use super::{Pool, begin, comparisons, outbox, pull_requests, queue, repositories};
use crate::StoreError;
use crate::model::*;

pub(super) async fn record(
    pool: &Pool,
    delivery: &Delivery,
    effects: &[DeliveryEffect],
) -> Result<DeliveryRecord, StoreError> {
    let mut tx = begin(pool).await?;
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
                let created = comparisons::create(&mut tx, c).await?;
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
