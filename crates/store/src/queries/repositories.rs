//! Installations and repositories; compiled into each backend.

use super::{Backend, Conn, rows};
use crate::StoreError;
use crate::model::*;
use crate::shared::columns::REPOSITORY_COLUMNS;
use crate::shared::dialect::Dialect;
use const_format::concatcp;

/// Records the installation; an unchanged row is left alone, because rewriting it would
/// lock it until the delivery commits and so make every delivery of one installation
/// wait for the one before.
pub(super) async fn upsert_installation(
    conn: &mut Conn,
    installation: &Installation,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO installations (id, account_login, created_at, updated_at) \
         SELECT $1, $2, $3, $3 WHERE NOT EXISTS (SELECT 1 FROM installations \
         WHERE id = $1 AND account_login = $2 AND removed_at IS NULL) \
         ON CONFLICT (id) DO UPDATE SET account_login = excluded.account_login, \
         updated_at = excluded.updated_at, removed_at = NULL",
    )
    .bind(installation.id)
    .bind(&installation.account_login)
    .bind(crate::shared::now())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(super) async fn remove_installation(
    conn: &mut Conn,
    installation_id: i64,
) -> Result<(), StoreError> {
    let now = crate::shared::now();
    sqlx::query("UPDATE installations SET removed_at = $2, updated_at = $2 WHERE id = $1")
        .bind(installation_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "UPDATE repositories SET removed_at = $2, updated_at = $2 \
         WHERE installation_id = $1 AND removed_at IS NULL",
    )
    .bind(installation_id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records the repository; `None` when the stored row already says all this and was
/// left alone (rewriting it would lock it until the delivery commits, so deliveries
/// of one repository would wait for each other).
pub(super) async fn ensure(
    conn: &mut Conn,
    repo: &NewRepository,
) -> Result<Option<Repository>, StoreError> {
    // A GitHub repository keeps its id across renames; others are known by name only.
    let sql = if repo.github_id.is_some() {
        concatcp!(
            "INSERT INTO repositories (github_id, installation_id, full_name, clone_url, \
             forge, created_at, updated_at) SELECT $1, $2, $3, $4, $6, $5, $5 WHERE NOT EXISTS \
             (SELECT 1 FROM repositories WHERE github_id = $1 AND full_name = $3 \
             AND clone_url = $4 AND forge = $6 AND ($2 IS NULL OR installation_id = $2) \
             AND removed_at IS NULL) \
             ON CONFLICT (github_id) DO UPDATE SET full_name = excluded.full_name, \
             clone_url = excluded.clone_url, \
             installation_id = COALESCE(excluded.installation_id, repositories.installation_id), \
             updated_at = excluded.updated_at, removed_at = NULL RETURNING ",
            REPOSITORY_COLUMNS
        )
    } else {
        concatcp!(
            "INSERT INTO repositories (github_id, installation_id, full_name, clone_url, \
             forge, created_at, updated_at) SELECT $1, $2, $3, $4, $6, $5, $5 WHERE NOT EXISTS \
             (SELECT 1 FROM repositories WHERE full_name = $3 AND clone_url = $4 AND forge = $6 \
             AND ($2 IS NULL OR installation_id = $2) AND removed_at IS NULL) \
             ON CONFLICT (full_name) DO UPDATE SET clone_url = excluded.clone_url, \
             forge = excluded.forge, \
             installation_id = COALESCE(excluded.installation_id, repositories.installation_id), \
             updated_at = excluded.updated_at, removed_at = NULL RETURNING ",
            REPOSITORY_COLUMNS
        )
    };
    sqlx::query(sql)
        .bind(repo.github_id)
        .bind(repo.installation_id)
        .bind(&repo.full_name)
        .bind(&repo.clone_url)
        .bind(crate::shared::now())
        .bind(repo.forge.as_str())
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(rows::repository)
        .transpose()
}

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::RepositoryStore for Backend {
    async fn upsert_installation(&self, i: &Installation) -> Result<(), StoreError> {
        upsert_installation(&mut *self.pool.acquire().await?, i).await
    }
    async fn remove_installation(&self, id: i64) -> Result<(), StoreError> {
        let mut tx = Backend::begin(&self.pool).await?;
        remove_installation(&mut tx, id).await?;
        Ok(tx.commit().await?)
    }
    async fn upsert_repository(&self, r: &NewRepository) -> Result<Repository, StoreError> {
        let conn = &mut *self.pool.acquire().await?;
        let repo = r;
        if let Some(written) = ensure(&mut *conn, repo).await? {
            return Ok(written);
        }
        let query = match repo.github_id {
            Some(github_id) => sqlx::query(concatcp!(
                "SELECT ",
                REPOSITORY_COLUMNS,
                " FROM repositories WHERE github_id = $1"
            ))
            .bind(github_id),
            None => sqlx::query(concatcp!(
                "SELECT ",
                REPOSITORY_COLUMNS,
                " FROM repositories WHERE full_name = $1"
            ))
            .bind(&repo.full_name),
        };
        rows::repository(&query.fetch_one(&mut *conn).await?)
    }
    async fn repository(&self, id: RepositoryId) -> Result<Option<Repository>, StoreError> {
        let pool = &self.pool;
        sqlx::query(concatcp!(
            "SELECT ",
            REPOSITORY_COLUMNS,
            " FROM repositories WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(rows::repository)
        .transpose()
    }
    async fn repository_by_name(&self, n: &str) -> Result<Option<Repository>, StoreError> {
        let pool = &self.pool;
        let full_name = n;
        sqlx::query(concatcp!(
            "SELECT ",
            REPOSITORY_COLUMNS,
            " FROM repositories WHERE full_name = $1"
        ))
        .bind(full_name)
        .fetch_optional(pool)
        .await?
        .as_ref()
        .map(rows::repository)
        .transpose()
    }
}
