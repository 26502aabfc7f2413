//! The GitHub App setup: single-use states and the stored App credentials; compiled into each
//! backend.

use super::Backend;
use crate::StoreError;
use crate::model::*;
use sqlx::Row as _;

/// How long an expired state is kept, so its callback is told "expired", not "unknown".
const KEEP_EXPIRED: chrono::TimeDelta = chrono::TimeDelta::days(1);

// The trait's methods, each opening what it needs (pool, connection or transaction).
#[async_trait::async_trait]
impl crate::GitHubAppStore for Backend {
    async fn create_setup_state(&self, ttl: std::time::Duration) -> Result<SetupState, StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        sqlx::query("DELETE FROM github_setup_states WHERE expires_at < $1")
            .bind(now - KEEP_EXPIRED)
            .execute(pool)
            .await?;
        let state = SetupState(crate::token::generate().expose().to_owned());
        sqlx::query(
            "INSERT INTO github_setup_states (state_hash, created_at, expires_at) \
             VALUES ($1, $2, $3)",
        )
        .bind(crate::token::hash(state.expose()))
        .bind(now)
        .bind(crate::shared::after(now, ttl))
        .execute(pool)
        .await?;
        Ok(state)
    }
    async fn consume_setup_state(&self, state: &str) -> Result<SetupStateCheck, StoreError> {
        let pool = &self.pool;
        let now = crate::shared::now();
        let hash = crate::token::hash(state);
        // One conditional UPDATE, so two callbacks racing on any replicas accept it once.
        let taken = sqlx::query(
            "UPDATE github_setup_states SET used_at = $2 \
             WHERE state_hash = $1 AND used_at IS NULL AND expires_at > $2",
        )
        .bind(&hash)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected();
        if taken == 1 {
            return Ok(SetupStateCheck::Accepted);
        }
        let row = sqlx::query("SELECT used_at FROM github_setup_states WHERE state_hash = $1")
            .bind(&hash)
            .fetch_optional(pool)
            .await?;
        Ok(match row {
            None => SetupStateCheck::Unknown,
            Some(row) => {
                let used: Option<chrono::DateTime<chrono::Utc>> = row.try_get("used_at")?;
                if used.is_some() {
                    SetupStateCheck::Used
                } else {
                    SetupStateCheck::Expired
                }
            }
        })
    }
    async fn save_github_app_credentials(
        &self,
        credentials: &GitHubAppCredentials,
    ) -> Result<(), StoreError> {
        let pool = &self.pool;
        let c = credentials;
        sqlx::query(
            "INSERT INTO github_app_credentials (id, app_id, slug, html_url, owner_login, \
             webhook_secret, private_key_pem, created_at) \
             VALUES (1, $1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (id) DO UPDATE SET app_id = excluded.app_id, slug = excluded.slug, \
             html_url = excluded.html_url, owner_login = excluded.owner_login, \
             webhook_secret = excluded.webhook_secret, \
             private_key_pem = excluded.private_key_pem, created_at = excluded.created_at",
        )
        .bind(c.app_id)
        .bind(&c.slug)
        .bind(&c.html_url)
        .bind(&c.owner_login)
        .bind(&c.webhook_secret)
        .bind(&c.private_key_pem)
        .bind(c.created_at)
        .execute(pool)
        .await?;
        Ok(())
    }
    async fn github_app_credentials(&self) -> Result<Option<GitHubAppCredentials>, StoreError> {
        let pool = &self.pool;
        let row = sqlx::query(
            "SELECT app_id, slug, html_url, owner_login, webhook_secret, private_key_pem, \
             created_at FROM github_app_credentials WHERE id = 1",
        )
        .fetch_optional(pool)
        .await?;
        row.map(|row| {
            Ok(GitHubAppCredentials {
                app_id: row.try_get("app_id")?,
                slug: row.try_get("slug")?,
                html_url: row.try_get("html_url")?,
                owner_login: row.try_get("owner_login")?,
                webhook_secret: row.try_get("webhook_secret")?,
                private_key_pem: row.try_get("private_key_pem")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .transpose()
    }
}
