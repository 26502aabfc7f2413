//! The Postgres store: a connection pool; claimers skip rows another transaction has locked
//! (`FOR UPDATE SKIP LOCKED`), so they never wait on or take each other's job.

use crate::StoreError;
use crate::shared::dialect::Dialect;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use std::str::FromStr;
use std::time::Duration;

mod dialect;

/// Connections idle this long are pinged before use.
const PING_WHEN_IDLE: Duration = Duration::from_secs(1);

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

impl Dialect for PostgresStore {
    type Db = sqlx::Postgres;
    const BACKEND: &str = "postgres";
    // `FOR UPDATE` holds the row until the transaction ends.
    const LOCK_PULL_REQUEST_HEAD: &str = "SELECT head_sha FROM pull_request_heads WHERE repository_id = $1 AND pr_number = $2 FOR UPDATE";
    const LOCK_COMPARISON: &str =
        "SELECT state, pr_number, branch FROM comparisons WHERE id = $1 FOR UPDATE";
    const RESULT_VERDICT: &str = "cr.result->>'verdict'";
    const JSON_TEXT_ELEMENTS: &str = "SELECT jsonb_array_elements_text(";

    fn migrator() -> &'static sqlx::migrate::Migrator {
        &MIGRATOR
    }

    /// Starts a transaction (READ COMMITTED; row locks do the rest).
    async fn begin(pool: &Pool) -> Result<sqlx::Transaction<'static, Db>, sqlx::Error> {
        pool.begin().await
    }
}

// The names the shared query files take from `super::` (see `shared::dialect`).
type Db = <Backend as Dialect>::Db;
type Pool = sqlx::Pool<Db>;
type Conn = sqlx::PgConnection;

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

/// The store on a Postgres database.
pub struct PostgresStore {
    pool: Pool,
}

impl PostgresStore {
    /// Connects to the database named by a `postgres://` URL.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with_pool(url, crate::DEFAULT_POOL_SIZE).await
    }

    /// [`Self::connect`], holding at most `pool_size` connections.
    pub async fn connect_with_pool(url: &str, pool_size: u32) -> Result<Self, StoreError> {
        let options =
            PgConnectOptions::from_str(url).map_err(|e| crate::url::connect_error(url, e))?;
        // One direct attempt first: a pool would retry a refused connection until its
        // acquire timeout, and a server that is down should be reported at once.
        let probe = <sqlx::PgConnection as sqlx::Connection>::connect_with(&options)
            .await
            .map_err(|e| crate::url::connect_error(url, e))?;
        let _ = sqlx::Connection::close(probe).await;
        let pool = PgPoolOptions::new()
            .max_connections(pool_size.max(1))
            // A ping only for a connection that sat idle (one a database restart broke is
            // replaced); pinging on every acquire cost a busy server one round trip in eight.
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for < PING_WHEN_IDLE {
                        return Ok(true);
                    }
                    match sqlx::Connection::ping(conn).await {
                        Ok(()) => Ok(true),
                        Err(error) => {
                            tracing::info!(%error, "idle database connection is gone; opening another");
                            Ok(false)
                        }
                    }
                })
            })
            // Shorter than the HTTP budgets above it, so a hung database surfaces as an error.
            .acquire_timeout(Duration::from_secs(4))
            .connect_lazy_with(options);
        Ok(PostgresStore { pool })
    }
}

/// The store type by one name in both backends, so the shared query files implement the `Store` traits once.
type Backend = PostgresStore;

#[path = "../queries/schema.rs"]
mod schema;
