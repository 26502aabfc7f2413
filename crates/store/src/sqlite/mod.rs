//! The SQLite store: one file in WAL mode with foreign keys on. Writers serialise on SQLite's
//! single write lock, which is what makes its one-statement claim exclusive.

use crate::StoreError;
use crate::shared::dialect::Dialect;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::time::Duration;

mod dialect;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");

impl Dialect for SqliteStore {
    type Db = sqlx::Sqlite;
    const BACKEND: &str = "sqlite";
    // SQLite transactions already run one at a time (`begin` takes the write lock), so
    // reading the row is enough.
    const LOCK_PULL_REQUEST_HEAD: &str =
        "SELECT head_sha FROM pull_request_heads WHERE repository_id = $1 AND pr_number = $2";
    const LOCK_COMPARISON: &str = "SELECT state, pr_number, branch FROM comparisons WHERE id = $1";
    const RESULT_VERDICT: &str = "json_extract(cr.result, '$.verdict')";
    const JSON_TEXT_ELEMENTS: &str = "SELECT value FROM json_each(";

    fn migrator() -> &'static sqlx::migrate::Migrator {
        &MIGRATOR
    }

    /// Starts a transaction holding the write lock from the start: a deferred transaction that
    /// reads first and writes later fails with SQLITE_BUSY instead of waiting its turn.
    async fn begin(pool: &Pool) -> Result<sqlx::Transaction<'static, Db>, sqlx::Error> {
        pool.begin_with("BEGIN IMMEDIATE").await
    }
}

// The names the shared query files take from `super::` (see `shared::dialect`).
type Db = <Backend as Dialect>::Db;
type Pool = sqlx::Pool<Db>;
type Conn = sqlx::SqliteConnection;

// The queries both dialects agree on, written once in `src/queries/`.
#[path = "../queries/acceptances.rs"]
mod acceptances;
#[path = "../queries/audit.rs"]
mod audit;
#[path = "../queries/bisections.rs"]
mod bisections;
#[path = "../queries/comparison_writes.rs"]
mod comparison_writes;
#[path = "../queries/comparisons.rs"]
mod comparisons;
#[path = "../queries/creation.rs"]
mod creation;
#[path = "../queries/floors.rs"]
mod floors;
#[path = "../queries/github_app.rs"]
mod github_app;
#[path = "../queries/main_history.rs"]
mod main_history;
#[path = "../queries/outbox.rs"]
mod outbox;
#[path = "../queries/profiles.rs"]
mod profiles;
#[path = "../queries/pull_requests.rs"]
mod pull_requests;
#[path = "../queries/queue.rs"]
mod queue;
#[path = "../queries/repositories.rs"]
mod repositories;
#[path = "../queries/results.rs"]
mod results;
#[path = "../queries/rows.rs"]
mod rows;
#[path = "../queries/runners.rs"]
mod runners;
#[path = "../queries/samples.rs"]
mod samples;
#[path = "../queries/webhooks.rs"]
mod webhooks;

/// The store on a SQLite file.
pub struct SqliteStore {
    pool: Pool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database file named by a `sqlite:` URL.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| crate::url::connect_error(url, e))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL with NORMAL is durable across process crashes; only power loss may lose the
            // last transactions.
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        // An in-memory database exists once per connection, so it gets exactly one.
        let max = if url.contains(":memory:") { 1 } else { 8 };
        let pool = SqlitePoolOptions::new()
            .max_connections(max)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options)
            .await
            .map_err(|e| crate::url::connect_error(url, e))?;
        Ok(SqliteStore { pool })
    }
}

/// The store type by one name in both backends, so the shared query files implement the `Store` traits once.
type Backend = SqliteStore;

#[path = "../queries/schema.rs"]
mod schema;
