//! The Postgres store: a connection pool; claimers skip rows another transaction has locked
//! (`FOR UPDATE SKIP LOCKED`), so they never wait on or take each other's job.

use crate::StoreError;
use crate::model::*;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use std::str::FromStr;
use std::time::Duration;

mod dialect;

type Db = sqlx::Postgres;
type Pool = sqlx::Pool<Db>;
type Conn = sqlx::PgConnection;

const BACKEND: &str = "postgres";
/// Connections idle this long are pinged before use.
const PING_WHEN_IDLE: Duration = Duration::from_secs(1);
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// Serialises refreshes of one comparison's state (see `comparisons::refresh_state`).
/// Orders a schedule with the webhook that records a newer head (see `comparisons::create`).
const LOCK_PULL_REQUEST_HEAD: &str = "SELECT head_sha FROM pull_request_heads WHERE repository_id = $1 AND pr_number = $2 FOR UPDATE";
const LOCK_COMPARISON: &str =
    "SELECT state, pr_number, branch FROM comparisons WHERE id = $1 FOR UPDATE";

/// Starts a transaction (READ COMMITTED; row locks do the rest).
async fn begin(pool: &Pool) -> Result<sqlx::Transaction<'static, Db>, sqlx::Error> {
    pool.begin().await
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
/// A stored result's verdict as text (JSONB).
macro_rules! result_verdict {
    () => {
        "cr.result->>'verdict'"
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

crate::shared::impl_store::impl_store!(PostgresStore);
