//! The store's one error type, and what `readiness` reports.

/// Errors from the store. Connection errors name the URL with its password masked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened; `url` has its password masked.
    #[error("cannot open database {url}: {reason}")]
    Connect { url: String, reason: String },
    /// The database answered with an error.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// Applying the embedded migrations failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The caller's lease on a job (or outbox row) is gone: expired and reaped, or the job ended.
    /// The HTTP layer answers 409 and the writer stops.
    #[error("lease lost: the job is no longer held under this lease")]
    LeaseLost,
    /// The named thing does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The write contradicts what is stored (a duplicate name, a cancelled comparison).
    #[error("conflict: {0}")]
    Conflict(String),
    /// A comparison of a PR head that is no longer the PR's newest (a schedule that outlived
    /// its lease): creating it would supersede the newer head's comparison.
    #[error("head {head} is stale; the PR's newest head is {newest}")]
    StaleHead { head: String, newest: String },
    /// A stored value cannot be read back as the domain type (an unknown state string).
    #[error("corrupt row: {0}")]
    Corrupt(String),
}

impl StoreError {
    /// The database did not answer (no connection in time, a broken socket): worth a retry,
    /// unlike an error the database answered with.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            StoreError::Database(
                sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)
            )
        )
    }

    /// The connection used broke (its socket closed, or the server ended the session:
    /// SQLSTATE class 57P, as on a restart or `pg_terminate_backend`); another connection
    /// may work.
    pub fn is_broken_connection(&self) -> bool {
        match self {
            StoreError::Database(sqlx::Error::Io(_)) => true,
            StoreError::Database(sqlx::Error::Database(e)) => {
                e.code().is_some_and(|c| c.starts_with("57P"))
            }
            _ => false,
        }
    }
}

/// Whether the database answers and its schema is current.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readiness {
    pub reachable: bool,
    pub migrations_current: bool,
}

impl Readiness {
    /// Ready to serve: reachable and fully migrated.
    pub fn is_ready(&self) -> bool {
        self.reachable && self.migrations_current
    }
}
