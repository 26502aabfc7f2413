//! The dialect contract: what a backend module (`sqlite/`, `postgres/`) gives the query files
//! in `src/queries/`, which are compiled once into each backend as its child modules.
//!
//! A shared query file reaches its backend only through these names, imported from `super::`:
//! - `Backend`, the store type, which implements [`Dialect`] (below) and every `Store` trait;
//! - `Pool` (`sqlx::Pool<Db>`), `Conn` (one connection) and `Db`, derived from `Dialect::Db`;
//! - sibling query modules (`rows`, `comparisons`, …) and the backend's own `dialect` module,
//!   which writes what the two databases cannot share (claims).
//!
//! SQL is written once when both databases accept it: `$n` placeholders, `ON CONFLICT`,
//! `RETURNING`; timestamps are bound from Rust (see `shared::now`). What differs is here.

use sqlx::migrate::Migrator;

/// One database's answers to what the shared queries cannot write once.
pub(crate) trait Dialect {
    /// sqlx's database type.
    type Db: sqlx::Database;
    /// The name `Store::backend` reports: `"sqlite"` or `"postgres"`.
    const BACKEND: &'static str;
    /// Reads a PR's recorded head and holds it until the transaction ends, so a schedule and
    /// the webhook that records a newer head are ordered (see `creation::create`).
    /// Binds `$1` repository id, `$2` PR number.
    const LOCK_PULL_REQUEST_HEAD: &'static str;
    /// Reads a comparison's `state, pr_number, branch` and holds the row, so refreshes of one
    /// comparison's state are serialised (see `comparisons::refresh_state`). Binds `$1` its id.
    const LOCK_COMPARISON: &'static str;
    /// A stored result's verdict as text, for `cr.result` (JSON text or JSONB).
    const RESULT_VERDICT: &'static str;
    /// Opens a subquery of the text elements of a bound JSON array: follow it with the
    /// parameter and `)`, as in `x IN (` JSON_TEXT_ELEMENTS `$1))`.
    const JSON_TEXT_ELEMENTS: &'static str;

    /// The migrations in `migrations/<backend>/`.
    fn migrator() -> &'static Migrator;

    /// Starts a transaction that may read and then write without failing for the lock.
    async fn begin(
        pool: &sqlx::Pool<Self::Db>,
    ) -> Result<sqlx::Transaction<'static, Self::Db>, sqlx::Error>;
}
