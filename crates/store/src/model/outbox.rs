//! The outbox: GitHub writes recorded first, delivered later with retries.

use super::{LeaseToken, OutboxId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A GitHub write to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewOutboxMessage {
    /// What to do, e.g. `comment.upsert`, `check_run.update`, `reaction.add`.
    pub kind: String,
    /// While a row with this key is pending, a new message with the same key replaces its
    /// payload instead of adding a row (the latest comment text wins).
    pub dedupe_key: Option<String>,
    pub payload: serde_json::Value,
}

/// A claimed outbox row; `lease` fences `outbox_delivered` / `outbox_failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxMessage {
    pub id: OutboxId,
    pub kind: String,
    pub dedupe_key: Option<String>,
    pub payload: serde_json::Value,
    /// Failed deliveries so far.
    pub attempts: i64,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub lease: LeaseToken,
}
