//! Postgres's claims: the candidate row is locked with `FOR UPDATE SKIP LOCKED`, so concurrent
//! claimers each take a different row without waiting on one another.

use super::{Backend, Pool, comparisons, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::{CLAIM_ORDER, JOB_COLUMNS, OUTBOX_COLUMNS};
use crate::shared::dialect::Dialect;
use crate::shared::{after, now};
use const_format::concatcp;
use sqlx::types::Json;

/// A usual `pull_request` delivery (its installation, its repository, the PR's newest head and
/// one outbox row) as one statement of data-modifying CTEs: one round trip where applying the
/// effects one by one takes seven (BEGIN, five statements, COMMIT), which held each
/// connection long enough to cap ingest. The SQL is `webhooks::record`'s, statement for
/// statement; any other delivery goes that way.
pub(super) async fn record_delivery(
    pool: &Pool,
    delivery: &Delivery,
    effects: &[DeliveryEffect],
) -> Result<DeliveryRecord, StoreError> {
    let [
        DeliveryEffect::UpsertInstallation(installation),
        DeliveryEffect::UpsertRepository(repo),
        DeliveryEffect::RecordPullRequestHead {
            full_name,
            pr_number,
            head_sha,
        },
        DeliveryEffect::Outbox(message),
    ] = effects
    else {
        return super::webhooks::record(pool, delivery, effects).await;
    };
    if *full_name != repo.full_name {
        return super::webhooks::record(pool, delivery, effects).await;
    }
    let sql = if repo.github_id.is_some() {
        &PULL_REQUEST_BY_GITHUB_ID
    } else {
        &PULL_REQUEST_BY_NAME
    };
    let row = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
        .bind(&delivery.delivery_id)
        .bind(&delivery.event)
        .bind(&delivery.action)
        .bind(now())
        .bind(&delivery.outcome)
        .bind(installation.id)
        .bind(&installation.account_login)
        .bind(repo.github_id)
        .bind(repo.installation_id)
        .bind(&repo.full_name)
        .bind(&repo.clone_url)
        .bind(pr_number)
        .bind(head_sha)
        .bind(&message.kind)
        .bind(&message.dedupe_key)
        .bind(Json(&message.payload))
        .bind(message.priority.0)
        .fetch_one(pool)
        .await?;
    let outbox: Option<OutboxId> = sqlx::Row::try_get(&row, "outbox_id")?;
    Ok(match outbox {
        None => DeliveryRecord::Duplicate,
        Some(id) => DeliveryRecord::Recorded {
            comparisons: Vec::new(),
            jobs: Vec::new(),
            cancelled_jobs: 0,
            outbox: vec![id],
        },
    })
}

/// The one statement of [`record_delivery`]; `conflict` and `same` pick how the repository is
/// known (by GitHub id, which survives renames, or by name).
fn pull_request_sql(conflict: &str, same: &str) -> String {
    format!(
        "WITH d AS (INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (delivery_id) DO NOTHING RETURNING 1 AS new), \
         i AS (INSERT INTO installations (id, account_login, created_at, updated_at) \
         SELECT $6, $7, $4, $4 FROM d WHERE NOT EXISTS (SELECT 1 FROM installations \
         WHERE id = $6 AND account_login = $7 AND removed_at IS NULL) \
         ON CONFLICT (id) DO UPDATE SET account_login = excluded.account_login, \
         updated_at = excluded.updated_at, removed_at = NULL), \
         r AS (INSERT INTO repositories (github_id, installation_id, full_name, clone_url, \
         created_at, updated_at) SELECT $8, $9, $10, $11, $4, $4 FROM d WHERE NOT EXISTS \
         (SELECT 1 FROM repositories WHERE {same} AND clone_url = $11 \
         AND ($9::BIGINT IS NULL OR installation_id = $9) AND removed_at IS NULL) \
         {conflict} \
         installation_id = COALESCE(excluded.installation_id, repositories.installation_id), \
         updated_at = excluded.updated_at, removed_at = NULL RETURNING id), \
         h AS (INSERT INTO pull_request_heads (repository_id, pr_number, head_sha, received_at) \
         SELECT x.id, $12, $13, $4 FROM d, (SELECT COALESCE((SELECT id FROM r), \
         (SELECT id FROM repositories WHERE full_name = $10)) AS id) x WHERE x.id IS NOT NULL \
         ON CONFLICT (repository_id, pr_number) DO UPDATE \
         SET head_sha = excluded.head_sha, received_at = excluded.received_at), \
         o AS (INSERT INTO outbox (kind, dedupe_key, payload, next_attempt_at, created_at, priority) \
         SELECT $14, $15, $16, $4, $4, $17 FROM d \
         ON CONFLICT (dedupe_key) WHERE done_at IS NULL DO UPDATE SET \
         kind = excluded.kind, payload = excluded.payload, priority = excluded.priority, \
         revision = outbox.revision + 1 RETURNING id) \
         SELECT (SELECT id FROM o) AS outbox_id"
    )
}

static PULL_REQUEST_BY_GITHUB_ID: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    pull_request_sql(
        "ON CONFLICT (github_id) DO UPDATE SET full_name = excluded.full_name, \
         clone_url = excluded.clone_url,",
        "github_id = $8 AND full_name = $10",
    )
});

static PULL_REQUEST_BY_NAME: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    pull_request_sql(
        "ON CONFLICT (full_name) DO UPDATE SET clone_url = excluded.clone_url,",
        "full_name = $10",
    )
});

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
               AND runner_label = ANY($5) \
               AND (pinned_runner_id IS NULL OR pinned_runner_id = $3) \
               ORDER BY ",
            CLAIM_ORDER,
            " LIMIT 1 FOR UPDATE SKIP LOCKED) \
             RETURNING ",
            JOB_COLUMNS
        ))
        .bind(token.as_str())
        .bind(expires)
        .bind(runner_id)
        .bind(now)
        .bind(labels)
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
               ORDER BY priority DESC, next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED) \
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
