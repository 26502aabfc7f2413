//! The SQLite store: one file in WAL mode with foreign keys on. Writers serialise on SQLite's
//! single write lock, which is what makes its one-statement claim exclusive.

use crate::StoreError;
use crate::model::*;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::time::Duration;

mod dialect;

type Db = sqlx::Sqlite;
type Pool = sqlx::Pool<Db>;
type Conn = sqlx::SqliteConnection;

const BACKEND: &str = "sqlite";
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");

/// SQLite transactions already run one at a time, so reading the row is enough.
/// Orders a schedule with the webhook that records a newer head (see `comparisons::create`).
const LOCK_PULL_REQUEST_HEAD: &str =
    "SELECT head_sha FROM pull_request_heads WHERE repository_id = $1 AND pr_number = $2";
const LOCK_COMPARISON: &str = "SELECT state, pr_number, branch FROM comparisons WHERE id = $1";

/// Starts a transaction holding the write lock from the start: a deferred transaction that
/// reads first and writes later fails with SQLITE_BUSY instead of waiting its turn.
async fn begin(pool: &Pool) -> Result<sqlx::Transaction<'static, Db>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

mod rows {
    crate::shared::rows::rows_sql!();
}
mod runners {
    crate::shared::runners::runners_sql!();
}
mod repositories {
    crate::shared::repositories::repositories_sql!();
}
/// A stored result's verdict as text (JSON text).
macro_rules! result_verdict {
    () => {
        "json_extract(cr.result, '$.verdict')"
    };
}
mod comparisons {
    crate::shared::comparisons::comparisons_sql!();
}
mod queue {
    crate::shared::queue::queue_sql!();
}
mod samples {
    crate::shared::samples::samples_sql!();
}
mod floors {
    crate::shared::floors::floors_sql!();
}
mod webhooks {
    crate::shared::webhooks::webhooks_sql!();
}
mod outbox {
    crate::shared::outbox::outbox_sql!();
}
mod github_app {
    crate::shared::github_app::github_app_sql!();
}
mod acceptances {
    crate::shared::acceptances::acceptances_sql!();
}
mod main_history {
    crate::shared::main_history::main_history_sql!();
}

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

crate::shared::impl_store::impl_store!(SqliteStore);
