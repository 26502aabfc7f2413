//! SQL both dialects agree on, written once.
//!
//! sqlx's query API reads the same for SQLite and Postgres, but its types do not abstract over
//! the database without pages of trait bounds. So each macro here expands the same code inside
//! a backend module (`sqlite`, `postgres`), where `super::Db`, `super::Pool`, `super::Conn` and
//! `super::begin` name that backend's types and transaction start. Where the dialects differ
//! (claiming with `SKIP LOCKED` vs one `UPDATE … RETURNING`), each backend has its own
//! `dialect.rs`.
//!
//! Timestamps are always bound from Rust (never `now()` in SQL): SQLite keeps them as RFC 3339
//! text, which sorts correctly only when every value is written the same way.

pub(crate) mod acceptances;
pub(crate) mod columns;
pub(crate) mod comparisons;
pub(crate) mod floors;
pub(crate) mod github_app;
pub(crate) mod impl_store;
pub(crate) mod main_history;
pub(crate) mod outbox;
pub(crate) mod queue;
pub(crate) mod repositories;
pub(crate) mod rows;
pub(crate) mod runners;
pub(crate) mod samples;
pub(crate) mod webhooks;

use chrono::{DateTime, SubsecRound, Utc};
use std::time::Duration;

/// The current time at the precision Postgres keeps (microseconds), so values read back
/// compare equal to what was written.
pub(crate) fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// `now + d`, saturating instead of panicking on absurd durations.
pub(crate) fn after(now: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    chrono::TimeDelta::from_std(d)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
        .trunc_subsecs(6)
}

/// `payload` with `comparison_id` set, when it is a JSON object (outbox rows of a new comparison).
pub(crate) fn with_comparison_id(
    payload: &serde_json::Value,
    id: crate::model::ComparisonId,
) -> serde_json::Value {
    let mut payload = payload.clone();
    if let Some(obj) = payload.as_object_mut() {
        obj.insert("comparison_id".into(), id.0.into());
    }
    payload
}
