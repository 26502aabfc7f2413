//! Runner machines and their tokens.

use super::RunnerId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A registered benchmark machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Runner {
    pub id: RunnerId,
    pub name: String,
    pub labels: Vec<String>,
    /// What the agent last reported about the machine (CPU, cores, kernel, governor…).
    pub fingerprint: Option<benchgate_api::MachineFingerprint>,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// The audit's flag counts A/A canaries scored since then (the last recalibration by
    /// hand); `None`: all of them.
    pub audit_since: Option<DateTime<Utc>>,
}

/// A runner's bearer token in plain text: exists only when the runner is added, never stored.
pub use benchgate_api::RunnerToken;

/// A runner just added, with its token shown this once.
#[derive(Debug, Clone)]
pub struct NewRunner {
    pub runner: Runner,
    pub token: RunnerToken,
}
