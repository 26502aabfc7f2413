//! Creating a comparison with its jobs: folding the queued steps a new history step continues,
//! refusing a head older than the PR's newest, superseding the PR's other heads; compiled into
//! each backend. Lock order as in `comparisons.rs`: jobs before comparisons.

use super::comparison_writes::{insert_jobs, report_state_change};
use super::{Backend, Conn, outbox};
use crate::StoreError;
use crate::model::*;
use crate::shared::dialect::Dialect;
use sqlx::Row as _;
use sqlx::types::Json;
pub(super) async fn create(
    conn: &mut Conn,
    new: &NewComparison,
) -> Result<CreatedComparison, StoreError> {
    let now = crate::shared::now();
    if let Some(pr) = new.pr_number {
        refuse_stale_head(conn, new, pr).await?;
    }
    let superseded = match new.pr_number {
        Some(pr) => supersede(conn, new, pr, now).await?,
        None => Vec::new(),
    };
    let mut base_sha = new.base_sha.clone();
    let mut main = new.main.clone();
    let mut folded = Vec::new();
    if let Some(info) = main.as_mut().filter(|m| m.kind == MainKind::Step) {
        let earlier = fold_steps(conn, new, info, now).await?;
        let mut commits = Vec::new();
        for (id, base, their_commits) in earlier {
            if folded.is_empty() {
                base_sha = base;
            }
            folded.push(id);
            commits.extend(their_commits);
        }
        for c in std::mem::take(&mut info.commits) {
            if !commits.contains(&c) {
                commits.push(c);
            }
        }
        info.commits = commits;
    }
    let main_commits = match &main {
        Some(m) => Some(
            serde_json::to_string(&m.commits).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        ),
        None => None,
    };
    let id: ComparisonId = sqlx::query(
        "INSERT INTO comparisons (repository_id, pr_number, base_sha, head_sha, \
         runner_label, config, planned_rounds, state, created_at, updated_at, \
         branch, main_kind, main_suite, main_commits, pinned_runner_id, kind) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $8, $9, $10, $11, $12, $13, $14) \
         RETURNING id",
    )
    .bind(new.repository_id)
    .bind(new.pr_number)
    .bind(&base_sha)
    .bind(&new.head_sha)
    .bind(&new.runner_label)
    .bind(Json(&new.config))
    .bind(new.planned_rounds)
    .bind(now)
    .bind(main.as_ref().map(|m| m.branch.as_str()))
    .bind(main.as_ref().map(|m| m.kind.as_str()))
    .bind(main.as_ref().map(|m| m.suite.as_str()))
    .bind(main_commits)
    // A canary measures one runner: its jobs go to that runner only.
    .bind(new.config.canary.as_ref().map(|c| c.runner_id))
    .bind(new.kind().as_str())
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| match e {
        sqlx::Error::Database(d) if d.is_unique_violation() => {
            StoreError::Conflict("the same anchor comparison is already queued or running".into())
        }
        e => e.into(),
    })?
    .try_get("id")?;
    let jobs = insert_jobs(conn, id, &new.jobs).await?;
    for message in &new.notify {
        let message = NewOutboxMessage {
            kind: message.kind.clone(),
            dedupe_key: message
                .dedupe_key
                .clone()
                .or_else(|| Some(comparison_key(&message.kind, id))),
            payload: crate::shared::with_comparison_id(&message.payload, id),
            priority: message.priority,
        };
        outbox::insert(conn, &message).await?;
    }
    Ok(CreatedComparison {
        id,
        jobs,
        superseded,
        folded,
    })
}

/// Folds into the new step the queued steps it continues: the one whose head is the
/// new base, the one before that, and so on, as long as no runner has started them.
/// Their jobs are cancelled and they are marked superseded. Returns (id, base,
/// commits) of each, oldest first; the new step starts from the first base.
async fn fold_steps(
    conn: &mut Conn,
    new: &NewComparison,
    info: &MainInfo,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<(ComparisonId, String, Vec<String>)>, StoreError> {
    let rows = sqlx::query(
        "SELECT id, base_sha, head_sha, main_commits FROM comparisons \
         WHERE repository_id = $1 AND branch = $2 AND main_kind = 'step' \
         AND main_suite = $3 AND runner_label = $4 AND state = 'queued' ORDER BY id DESC",
    )
    .bind(new.repository_id)
    .bind(&info.branch)
    .bind(&info.suite)
    .bind(&new.runner_label)
    .fetch_all(&mut *conn)
    .await?;
    let mut queued = Vec::with_capacity(rows.len());
    for row in &rows {
        let commits: Option<String> = row.try_get("main_commits")?;
        let commits: Vec<String> = serde_json::from_str(commits.as_deref().unwrap_or("[]"))
            .map_err(|e| StoreError::Corrupt(format!("main commits: {e}")))?;
        let id: ComparisonId = row.try_get("id")?;
        let base: String = row.try_get("base_sha")?;
        let head: String = row.try_get("head_sha")?;
        queued.push((id, base, head, commits));
    }
    let mut folded = Vec::new();
    let mut base = new.base_sha.clone();
    while let Some(i) = queued.iter().position(|(_, _, head, _)| *head == base) {
        let (id, their_base, _, commits) = queued.swap_remove(i);
        // Jobs first (the lock order). A job claimed meanwhile is no longer queued:
        // that step runs as it is, and the chain is folded no further back.
        let cancelled = sqlx::query(
            "UPDATE jobs SET state = 'cancelled', finished_at = $2, updated_at = $2 \
             WHERE comparison_id = $1 AND state = 'queued'",
        )
        .bind(id)
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected();
        if cancelled == 0 {
            break;
        }
        let superseded = sqlx::query(
            "UPDATE comparisons SET state = 'superseded', updated_at = $2 \
             WHERE id = $1 AND state = 'queued' AND NOT EXISTS (SELECT 1 FROM jobs \
             WHERE comparison_id = $1 AND state IN ('queued', 'running', 'done'))",
        )
        .bind(id)
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected();
        if superseded == 0 {
            break;
        }
        base = their_base.clone();
        folded.push((id, their_base, commits));
    }
    folded.reverse();
    Ok(folded)
}

/// A schedule of a head older than the PR's newest (recorded by its webhook) would
/// supersede the newer head's comparison; the row lock orders it with that webhook.
async fn refuse_stale_head(
    conn: &mut Conn,
    new: &NewComparison,
    pr: i64,
) -> Result<(), StoreError> {
    let newest: Option<String> = sqlx::query_scalar(Backend::LOCK_PULL_REQUEST_HEAD)
        .bind(new.repository_id)
        .bind(pr)
        .fetch_optional(&mut *conn)
        .await?;
    match newest {
        Some(newest) if newest != new.head_sha => Err(StoreError::StaleHead {
            head: new.head_sha.clone(),
            newest,
        }),
        _ => Ok(()),
    }
}

/// Stops the active comparisons of other heads (or another base, after the PR's base branch
/// changed) of the same PR and runner label.
async fn supersede(
    conn: &mut Conn,
    new: &NewComparison,
    pr: i64,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<ComparisonId>, StoreError> {
    sqlx::query(
        "UPDATE jobs SET state = 'cancelled', finished_at = $5, updated_at = $5 \
         WHERE state = 'queued' AND comparison_id IN (SELECT id FROM comparisons \
         WHERE repository_id = $1 AND pr_number = $2 AND runner_label = $3 \
         AND (head_sha <> $4 OR base_sha <> $6) AND state IN ('queued', 'running'))",
    )
    .bind(new.repository_id)
    .bind(pr)
    .bind(&new.runner_label)
    .bind(&new.head_sha)
    .bind(now)
    .bind(&new.base_sha)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE jobs SET cancel_requested = TRUE, updated_at = $5 \
         WHERE state = 'running' AND comparison_id IN (SELECT id FROM comparisons \
         WHERE repository_id = $1 AND pr_number = $2 AND runner_label = $3 \
         AND (head_sha <> $4 OR base_sha <> $6) AND state IN ('queued', 'running'))",
    )
    .bind(new.repository_id)
    .bind(pr)
    .bind(&new.runner_label)
    .bind(&new.head_sha)
    .bind(now)
    .bind(&new.base_sha)
    .execute(&mut *conn)
    .await?;
    let rows = sqlx::query(
        "UPDATE comparisons SET state = 'superseded', updated_at = $5 \
         WHERE repository_id = $1 AND pr_number = $2 AND runner_label = $3 \
         AND (head_sha <> $4 OR base_sha <> $6) AND state IN ('queued', 'running') RETURNING id",
    )
    .bind(new.repository_id)
    .bind(pr)
    .bind(&new.runner_label)
    .bind(&new.head_sha)
    .bind(now)
    .bind(&new.base_sha)
    .fetch_all(&mut *conn)
    .await?;
    let mut ids = Vec::with_capacity(rows.len());
    for row in &rows {
        let id = row.try_get("id")?;
        report_state_change(conn, id, ComparisonState::Superseded).await?;
        ids.push(id);
    }
    Ok(ids)
}
