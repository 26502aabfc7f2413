//! `/queue`: queued and running jobs with their runner, lease age and attempts.

use std::collections::HashMap;

use askama::Template;
use axum::extract::State;
use axum::response::Html;
use benchgate_store::{JobState, RepositoryId, RunnerId, Store};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::render;
use crate::{ApiError, AppState};
use benchgate_stats::words::{self, short_sha};

/// One queued or running job, as the page and `GET /api/v1/queue` show it.
#[derive(Debug, Clone, Serialize)]
pub struct QueueEntry {
    pub id: i64,
    pub kind: &'static str,
    pub state: &'static str,
    pub comparison_id: Option<i64>,
    pub repository: String,
    pub base_sha: String,
    pub head_sha: String,
    pub runner_label: String,
    /// The runner holding the lease (running jobs).
    pub runner: Option<String>,
    /// The only runner allowed to take it (calibration).
    pub pinned_runner: Option<String>,
    pub rounds: i64,
    pub priority: i64,
    pub attempts: i64,
    pub max_attempts: i64,
    pub cancel_requested: bool,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// Seconds since the job was queued (queued) or first claimed (running).
    pub age_seconds: i64,
    /// Seconds the current lease has left; negative once it expired (the reaper will requeue).
    pub lease_left_seconds: Option<i64>,
    #[serde(skip)]
    pub age: String,
    #[serde(skip)]
    pub lease_left: String,
}

impl QueueEntry {
    /// The shas as the page writes them: one for calibration (A/A), `base → head` otherwise.
    pub fn shas(&self) -> String {
        if self.base_sha == self.head_sha {
            format!("{} (A/A)", short_sha(&self.base_sha))
        } else {
            format!(
                "{} → {}",
                short_sha(&self.base_sha),
                short_sha(&self.head_sha)
            )
        }
    }
}

/// The queue as `GET /api/v1/queue` returns it.
#[derive(Debug, Clone, Serialize)]
pub struct QueueView {
    pub queued: i64,
    pub running: i64,
    pub jobs: Vec<QueueEntry>,
}

/// Queued and running jobs, running first, with names resolved for display.
pub async fn queue_view(store: &dyn Store, now: DateTime<Utc>) -> Result<QueueView, ApiError> {
    let jobs = store.active_jobs().await?;
    let runners: HashMap<RunnerId, String> = store
        .list_runners()
        .await?
        .into_iter()
        .map(|r| (r.id, r.name))
        .collect();
    let mut repositories: HashMap<RepositoryId, String> = HashMap::new();
    for job in &jobs {
        if let std::collections::hash_map::Entry::Vacant(slot) =
            repositories.entry(job.repository_id)
        {
            let name = store
                .repository(job.repository_id)
                .await?
                .map_or_else(|| job.repository_id.to_string(), |r| r.full_name);
            slot.insert(name);
        }
    }
    let runner_name = |id: Option<RunnerId>| id.and_then(|id| runners.get(&id).cloned());
    let entries: Vec<QueueEntry> = jobs
        .iter()
        .map(|j| {
            let since = match j.state {
                JobState::Running => j.started_at.unwrap_or(j.created_at),
                _ => j.created_at,
            };
            let age_seconds = (now - since).num_seconds().max(0);
            let lease_left_seconds = j.lease_expires_at.map(|t| (t - now).num_seconds());
            QueueEntry {
                id: j.id.0,
                kind: j.kind.as_str(),
                state: j.state.as_str(),
                comparison_id: j.comparison_id.map(|c| c.0),
                repository: repositories
                    .get(&j.repository_id)
                    .cloned()
                    .unwrap_or_default(),
                base_sha: j.base_sha.clone(),
                head_sha: j.head_sha.clone(),
                runner_label: j.runner_label.clone(),
                runner: runner_name(j.claimed_by),
                pinned_runner: runner_name(j.pinned_runner_id),
                rounds: j.rounds,
                priority: j.priority.0,
                attempts: j.attempts,
                max_attempts: j.max_attempts,
                cancel_requested: j.cancel_requested,
                created_at: j.created_at,
                started_at: j.started_at,
                lease_expires_at: j.lease_expires_at,
                age_seconds,
                lease_left_seconds,
                age: words::elapsed(age_seconds as f64),
                lease_left: match lease_left_seconds {
                    Some(s) if s >= 0 => format!("{} left", words::elapsed(s as f64)),
                    Some(s) => format!("expired {} ago", words::elapsed(-s as f64)),
                    None => "—".into(),
                },
            }
        })
        .collect();
    let count = |state: &str| entries.iter().filter(|e| e.state == state).count() as i64;
    Ok(QueueView {
        queued: count("queued"),
        running: count("running"),
        jobs: entries,
    })
}

#[derive(Template)]
#[template(path = "dashboard/queue.html")]
struct QueuePage {
    queue: QueueView,
}

/// The queue page.
pub async fn page(State(app): State<AppState>) -> Result<Html<String>, ApiError> {
    let queue = queue_view(app.store.as_ref(), Utc::now()).await?;
    render(&QueuePage { queue })
}
