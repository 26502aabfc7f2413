//! What both backends use beside their queries: column lists and the clock.
//!
//! Timestamps are always bound from Rust (never `now()` in SQL): SQLite keeps them as RFC 3339
//! text, which sorts correctly only when every value is written the same way.

pub(crate) mod columns;
pub(crate) mod dialect;

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
