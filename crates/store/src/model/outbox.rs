//! The outbox: GitHub writes recorded first, delivered later with retries.

use super::{ComparisonId, LeaseToken, OutboxId, Priority};
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
    /// Due rows are claimed higher first; a replaced payload takes the new priority.
    pub priority: Priority,
}

/// The kind of the row that writes a comparison's check run.
pub const REPORT_CHECK: &str = "report.check";
/// The kind of the row that writes a comparison's PR comment.
pub const REPORT_COMMENT: &str = "report.comment";
/// The row that judges a finished comparison of the default branch: its regressions' episodes
/// and GitHub issues.
pub const MAIN_REPORT: &str = "main.report";
/// The row that takes a culprit search's next step: written with the search, and when a
/// comparison it waits on ends.
pub const MAIN_BISECT: &str = "main.bisect";

impl NewOutboxMessage {
    /// The row that renders comparison `id` and writes its check run ([`REPORT_CHECK`]) or PR
    /// comment ([`REPORT_COMMENT`]) when sent. The store writes these itself in the transaction
    /// that changes a PR comparison's state, so no state change goes unreported; the key
    /// ([`comparison_key`], the server's too) makes every report of one comparison coalesce.
    pub fn comparison_report(kind: &str, priority: Priority, id: ComparisonId) -> Self {
        NewOutboxMessage {
            kind: kind.to_owned(),
            dedupe_key: Some(comparison_key(kind, id)),
            payload: serde_json::json!({ "comparison_id": id.0 }),
            priority,
        }
    }
}

impl NewOutboxMessage {
    /// The row that takes culprit search `id`'s next step ([`MAIN_BISECT`]); pending rows of
    /// one search coalesce.
    pub fn bisection_step(id: i64) -> Self {
        NewOutboxMessage {
            kind: MAIN_BISECT.to_owned(),
            dedupe_key: Some(format!("{MAIN_BISECT}:{id}")),
            payload: serde_json::json!({ "bisection_id": id }),
            priority: Priority::HISTORY,
        }
    }
}

/// The dedupe key of a row of `kind` about comparison `id`: `{kind}:{id}`.
pub fn comparison_key(kind: &str, id: ComparisonId) -> String {
    format!("{kind}:{id}")
}

impl NewOutboxMessage {
    /// A row written with a new comparison: the store sets `comparison_id` in the payload and,
    /// without a key of its own, the key [`comparison_key`].
    pub fn for_new_comparison(kind: &str, priority: Priority) -> Self {
        NewOutboxMessage {
            kind: kind.to_owned(),
            dedupe_key: None,
            payload: serde_json::json!({}),
            priority,
        }
    }
}

/// A claimed outbox row; `lease` fences `outbox_delivered` / `outbox_failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxMessage {
    pub id: OutboxId,
    pub kind: String,
    pub dedupe_key: Option<String>,
    pub payload: serde_json::Value,
    pub priority: Priority,
    /// Failed deliveries so far.
    pub attempts: i64,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub lease: LeaseToken,
}
