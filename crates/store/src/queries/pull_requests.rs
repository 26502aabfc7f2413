//! A pull request's side of its comparisons: its newest head, its comparisons by head, the
//! check run and comment recorded for them, and the context a description edit changes;
//! compiled into each backend.

use super::comparisons::by_id;
use super::{Backend, Conn, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::COMPARISON_COLUMNS;
use crate::shared::dialect::Dialect;
use const_format::concatcp;
use sqlx::Row as _;
use sqlx::types::Json;

/// Records a PR's newest head, in the transaction of the webhook that announced it.
pub(super) async fn record_head(
    conn: &mut Conn,
    full_name: &str,
    pr_number: i64,
    head_sha: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO pull_request_heads (repository_id, pr_number, head_sha, received_at) \
         SELECT id, $2, $3, $4 FROM repositories WHERE full_name = $1 \
         ON CONFLICT (repository_id, pr_number) DO UPDATE \
         SET head_sha = excluded.head_sha, received_at = excluded.received_at",
    )
    .bind(full_name)
    .bind(pr_number)
    .bind(head_sha)
    .bind(crate::shared::now())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Applies `edit` to the PR context stored with comparison `id`, under the row's lock: the
/// context after it, or `None` when the comparison has none or the edit changed nothing.
pub(super) async fn edit_pull_request_context(
    conn: &mut Conn,
    id: ComparisonId,
    edit: &PullRequestEdit,
) -> Result<Option<benchgate_api::agent::PullRequestContext>, StoreError> {
    if sqlx::query(Backend::LOCK_COMPARISON)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .is_none()
    {
        return Err(StoreError::NotFound(format!("comparison {id}")));
    }
    let Json(mut config): Json<benchgate_api::agent::StoredComparisonConfig> =
        sqlx::query_scalar("SELECT config FROM comparisons WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *conn)
            .await?;
    let Some(github) = config.github.as_mut() else {
        return Ok(None);
    };
    let changed = match edit {
        PullRequestEdit::Description(body) if github.body != *body => {
            github.body.clone_from(body);
            true
        }
        PullRequestEdit::Description(_) => false,
        PullRequestEdit::Claim(claim) => github.add_claim(claim.clone()),
    };
    if !changed {
        return Ok(None);
    }
    let context = github.clone();
    sqlx::query("UPDATE comparisons SET config = $2 WHERE id = $1")
        .bind(id)
        .bind(Json(&config))
        .execute(&mut *conn)
        .await?;
    Ok(Some(context))
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::PullRequestStore for Backend {
    async fn pull_request_comparisons(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            COMPARISON_COLUMNS,
            " FROM comparisons c JOIN repositories r ON r.id = c.repository_id \
             WHERE c.repository_id = $1 AND c.pr_number = $2 \
             ORDER BY c.created_at DESC, c.id DESC"
        ))
        .bind(repository_id)
        .bind(pr_number)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::comparison)
        .collect()
    }
    async fn record_check_run(
        &self,
        id: ComparisonId,
        run: CheckRunRecord,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        // A slower writer of an older generation leaves the newer run in place. `updated_at` stays:
        // it marks the comparison's progress, and the report watcher re-reports on every move of it.
        let done = sqlx::query(
            "UPDATE comparisons SET check_run_id = $2, check_run_generation = $3, \
             check_run_completed = $4 \
             WHERE id = $1 AND check_run_generation <= $3",
        )
        .bind(id)
        .bind(run.check_run_id)
        .bind(run.generation)
        .bind(run.completed)
        .execute(pool)
        .await?;
        if done.rows_affected() == 0 && by_id(pool, id).await?.is_none() {
            return Err(StoreError::NotFound(format!("comparison {id}")));
        }
        Ok(())
    }
    async fn edit_pull_request_context(
        &self,
        id: ComparisonId,
        edit: &PullRequestEdit,
    ) -> Result<Option<benchgate_api::agent::PullRequestContext>, StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        let context = edit_pull_request_context(&mut tx, id, edit).await?;
        tx.commit().await?;
        Ok(context)
    }
    async fn head_comparisons(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
    ) -> Result<Vec<Comparison>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            COMPARISON_COLUMNS,
            " FROM comparisons c JOIN repositories r ON r.id = c.repository_id \
             WHERE c.repository_id = $1 AND c.head_sha = $2 \
             ORDER BY c.created_at DESC, c.id DESC"
        ))
        .bind(repository_id)
        .bind(head_sha)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::comparison)
        .collect()
    }
    async fn pull_request_head(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<Option<PullRequestHead>, StoreError> {
        let pool = &self.pool;
        sqlx::query(
            "SELECT head_sha, received_at FROM pull_request_heads \
             WHERE repository_id = $1 AND pr_number = $2",
        )
        .bind(repository_id)
        .bind(pr_number)
        .fetch_optional(pool)
        .await?
        .map(|row| {
            Ok(PullRequestHead {
                head_sha: row.try_get("head_sha")?,
                received_at: row.try_get("received_at")?,
            })
        })
        .transpose()
    }
    async fn pull_request_comment_id(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
        runner_label: &str,
    ) -> Result<Option<i64>, StoreError> {
        let pool = &self.pool;
        Ok(sqlx::query_scalar(
            "SELECT comment_id FROM pull_request_comments \
             WHERE repository_id = $1 AND pr_number = $2 AND runner_label = $3",
        )
        .bind(repository_id)
        .bind(pr_number)
        .bind(runner_label)
        .fetch_optional(pool)
        .await?)
    }
    async fn set_pull_request_comment_id(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
        runner_label: &str,
        comment_id: i64,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        sqlx::query(
            "INSERT INTO pull_request_comments \
             (repository_id, pr_number, runner_label, comment_id, updated_at) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (repository_id, pr_number, runner_label) DO UPDATE \
             SET comment_id = excluded.comment_id, updated_at = excluded.updated_at",
        )
        .bind(repository_id)
        .bind(pr_number)
        .bind(runner_label)
        .bind(comment_id)
        .bind(crate::shared::now())
        .execute(pool)
        .await?;
        Ok(())
    }
}
