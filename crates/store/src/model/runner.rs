//! Runner machines and their tokens.

use super::RunnerId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

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
#[derive(Clone, PartialEq, Eq)]
pub struct RunnerToken(pub String);

impl RunnerToken {
    /// The token to show the operator once.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for RunnerToken {
    // Tokens must never reach a log line through `{:?}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RunnerToken(***)")
    }
}

/// A runner just added, with its token shown this once.
#[derive(Debug, Clone)]
pub struct NewRunner {
    pub runner: Runner,
    pub token: RunnerToken,
}
