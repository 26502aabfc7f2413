//! benchgate-store: the `Store` trait in the domain's words, with a Postgres and a SQLite
//! implementation (sqlx), chosen from the database URL; the job queue lives here too.
//!
//! Queue semantics, in short: a claim is a lease (token + expiry) and counts an attempt;
//! every write from the holder names the lease and fails with [`StoreError::LeaseLost`] once
//! it is gone; the reaper requeues expired leases until `max_attempts` claims were used.

// `src/queries/` is compiled into both backends on purpose: one SQL text, each backend's types.
#![allow(clippy::duplicate_mod)]

mod error;
pub mod model;
mod postgres;
mod shared;
mod sqlite;
mod store;
mod token;
mod url;

pub use error::{Readiness, StoreError};
pub use model::*;
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;
pub use store::{
    AcceptanceStore, AuditStore, BisectionStore, ClaimStore, ComparisonStore, FloorStore,
    GitHubAppStore, MainHistoryStore, OutboxStore, ProfileStore, PullRequestStore, QueueStore,
    RepositoryStore, ResultStore, RunnerStore, SampleStore, Store, WebhookStore,
};
pub use url::mask_url;

use std::sync::Arc;

/// Opens the store named by `url`: `sqlite://PATH` / `sqlite:PATH` (created if missing, WAL)
/// or `postgres://…`. Anything else, or a database that cannot be reached, is
/// [`StoreError::Connect`] naming the URL with its password masked. Does not migrate.
pub async fn connect(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    connect_with_pool(url, DEFAULT_POOL_SIZE).await
}

/// Connections a Postgres store holds at most unless told otherwise.
pub const DEFAULT_POOL_SIZE: u32 = 16;

/// [`connect`], holding at most `pool_size` connections to Postgres (SQLite ignores it).
pub async fn connect_with_pool(url: &str, pool_size: u32) -> Result<Arc<dyn Store>, StoreError> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::connect(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(
            PostgresStore::connect_with_pool(url, pool_size).await?,
        ))
    } else {
        Err(url::connect_error(
            url,
            "unsupported database URL: expected sqlite://PATH or postgres://USER@HOST/DB",
        ))
    }
}
