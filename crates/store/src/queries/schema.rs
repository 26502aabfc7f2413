//! The `Store` trait's own methods (backend, migrations, readiness), written once for both
//! backends; each area's methods are implemented in the file that holds its queries.

use super::Backend;
use crate::StoreError;
use crate::shared::dialect::Dialect;

#[async_trait::async_trait]
impl crate::Store for Backend {
    fn backend(&self) -> &'static str {
        Backend::BACKEND
    }
    async fn migrate(&self) -> Result<(), StoreError> {
        Backend::migrator().run(&self.pool).await?;
        Ok(())
    }
    async fn readiness(&self) -> crate::Readiness {
        let reachable = sqlx::query("SELECT 1").execute(&self.pool).await.is_ok();
        // A missing table (fresh database) reads as "not current", not as an error.
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
                .fetch_all(&self.pool)
                .await
                .unwrap_or_default();
        let migrations_current = reachable
            && Backend::migrator()
                .iter()
                .filter(|m| m.migration_type.is_up_migration())
                .all(|m| applied.contains(&m.version));
        crate::Readiness {
            reachable,
            migrations_current,
        }
    }
}
