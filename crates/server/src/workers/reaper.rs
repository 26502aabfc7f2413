//! The reaper: requeues jobs whose lease expired (their agent died or lost the network), and
//! fails those out of attempts, so no job waits forever on a dead machine.

use std::time::Duration;

use benchgate_store::JobState;
use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::Domain;

/// How often to look for expired leases: a quarter of the lease, between 250 ms and 5 s.
pub fn period(lease: Duration) -> Duration {
    (lease / 4).clamp(Duration::from_millis(250), Duration::from_secs(5))
}

/// Background loop: reaps expired leases until `cancel` fires.
pub async fn run(app: Domain, cancel: CancellationToken) {
    let period = period(app.config.lease);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
        match app.store.reap_expired_leases(Utc::now()).await {
            Ok(reaped) => {
                for job in reaped {
                    app.metrics.lease_expired(job.state);
                    let (id, attempts) = (job.id, job.attempts);
                    match job.state {
                        JobState::Queued => {
                            tracing::warn!(job = %id, attempts, "lease expired; requeued")
                        }
                        JobState::Failed => {
                            tracing::warn!(job = %id, attempts, "lease expired; out of attempts, failed")
                        }
                        state => {
                            tracing::info!(job = %id, attempts, state = state.as_str(), "lease expired")
                        }
                    }
                }
            }
            Err(e) => tracing::error!(error = ?e, "reaping expired leases failed"),
        }
    }
}
