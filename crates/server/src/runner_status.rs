//! Whether a runner can take work now: online, busy, offline or revoked, from when it was last
//! seen and the jobs running. The dashboard shows it and `/metrics` counts it.

use benchgate_store::{Job, JobState, Runner};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// A runner not seen for this long is offline: agents long-poll and heartbeat far more often.
pub const OFFLINE_AFTER_SECS: i64 = 120;

/// Whether a runner can take work now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunnerStatus {
    Online,
    Busy,
    Offline,
    Revoked,
}

impl RunnerStatus {
    /// Every status, in the order pages list them.
    pub const ALL: [RunnerStatus; 4] = [Self::Online, Self::Busy, Self::Offline, Self::Revoked];

    /// How a status is written on a page (also its CSS class).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Online => "online",
            Self::Busy => "busy",
            Self::Offline => "offline",
            Self::Revoked => "revoked",
        }
    }

    /// `runner`'s status at `now`, running `running_job` (see [`running_job`]).
    pub fn of(runner: &Runner, running_job: Option<i64>, now: DateTime<Utc>) -> Self {
        let recently_seen = runner
            .last_seen_at
            .is_some_and(|t| (now - t).num_seconds() < OFFLINE_AFTER_SECS);
        match (runner.revoked_at, recently_seen, running_job) {
            (Some(_), _, _) => Self::Revoked,
            (None, false, _) => Self::Offline,
            (None, true, Some(_)) => Self::Busy,
            (None, true, None) => Self::Online,
        }
    }
}

/// The job `runner` runs now among `active`, if any.
pub fn running_job(runner: &Runner, active: &[Job]) -> Option<i64> {
    active
        .iter()
        .find(|j| j.state == JobState::Running && j.claimed_by == Some(runner.id))
        .map(|j| j.id.0)
}
