//! The state a running job's tasks share, and the background heartbeat that keeps its lease
//! alive and learns of cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use benchgate_api::agent::HeartbeatRequest;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::client::{Backoff, Client, ClientError};

/// What the heartbeat, the uploader and the round loop of one job tell each other.
#[derive(Debug, Default)]
pub struct JobSignals {
    cancelled: AtomicBool,
    lease_lost: AtomicBool,
    rounds_uploaded: AtomicU32,
    /// The server said the comparison's gate has its answer.
    decided: AtomicBool,
    /// The benchmarks the server last said are undecided (`None`: run them all).
    undecided: std::sync::Mutex<Option<Vec<String>>>,
    /// Woken when the lease is lost, so waits end at once.
    lost: Notify,
    /// Woken after each stored round.
    uploaded: Notify,
}

impl JobSignals {
    /// The server cancelled the job: stop after the current round.
    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Someone else holds the job now: stop at once and never complete it.
    pub fn lease_lost(&self) -> bool {
        self.lease_lost.load(Ordering::SeqCst)
    }

    /// Records that the lease is gone and wakes whoever waits for it.
    pub fn mark_lease_lost(&self) {
        self.lease_lost.store(true, Ordering::SeqCst);
        self.lost.notify_waiters();
    }

    /// Resolves once the lease is lost.
    pub async fn wait_lease_lost(&self) {
        let notified = self.lost.notified();
        if self.lease_lost() {
            return;
        }
        notified.await;
    }

    /// Counts one more round stored by the server (reported with heartbeats).
    pub fn round_uploaded(&self) {
        self.rounds_uploaded.fetch_add(1, Ordering::SeqCst);
        self.uploaded.notify_waiters();
    }

    /// Records that an upload's receipt said the gate has its answer.
    pub fn mark_decided(&self) {
        self.decided.store(true, Ordering::SeqCst);
    }

    /// Records the benchmarks the last receipt says are undecided.
    pub fn set_undecided(&self, names: Option<Vec<String>>) {
        *self
            .undecided
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = names;
    }

    /// The benchmarks the next round should run (`None`: all).
    pub fn undecided(&self) -> Option<Vec<String>> {
        self.undecided
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Whether the server said the gate has its answer.
    pub fn decided(&self) -> bool {
        self.decided.load(Ordering::SeqCst)
    }

    /// Waits until `rounds` rounds are stored, the lease is lost, or `limit` passes; whether
    /// they were stored.
    pub async fn wait_uploaded(&self, rounds: u32, limit: Duration) -> bool {
        let stored = async {
            loop {
                let woken = self.uploaded.notified();
                if self.rounds_uploaded() >= rounds || self.lease_lost() {
                    return;
                }
                tokio::select! {
                    () = woken => {}
                    () = self.wait_lease_lost() => {}
                }
            }
        };
        let _ = tokio::time::timeout(limit, stored).await;
        self.rounds_uploaded() >= rounds
    }

    /// Rounds stored by the server so far.
    pub fn rounds_uploaded(&self) -> u32 {
        self.rounds_uploaded.load(Ordering::SeqCst)
    }
}

/// Sends a heartbeat every `interval` until aborted or the lease is lost. A failed heartbeat
/// is retried sooner (with backoff under `interval`), so a short outage does not cost the lease.
pub fn spawn(
    client: Client,
    job_id: i64,
    lease_token: String,
    interval: Duration,
    signals: Arc<JobSignals>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut backoff = Backoff::new(interval);
        let mut delay = interval;
        loop {
            tokio::time::sleep(delay).await;
            let req = HeartbeatRequest {
                lease_token: lease_token.clone(),
                rounds_done: signals.rounds_uploaded(),
            };
            match client.heartbeat(job_id, &req).await {
                Ok(resp) => {
                    backoff = Backoff::new(interval);
                    delay = interval;
                    if resp.cancelled && !signals.cancelled.swap(true, Ordering::SeqCst) {
                        tracing::info!(
                            job = job_id,
                            "job cancelled by the server; stopping after this round"
                        );
                    }
                }
                Err(e @ (ClientError::LeaseLost | ClientError::Unauthorized)) => {
                    tracing::warn!(job = job_id, error = %e, "heartbeat refused; stopping the job");
                    signals.mark_lease_lost();
                    return;
                }
                Err(e) => {
                    delay = backoff.next_delay();
                    tracing::warn!(job = job_id, error = %e, retry_in_ms = delay.as_millis() as u64, "heartbeat failed");
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiting_for_a_lost_lease_ends_when_it_is_marked() {
        let signals = Arc::new(JobSignals::default());
        let waiter = {
            let signals = Arc::clone(&signals);
            tokio::spawn(async move { signals.wait_lease_lost().await })
        };
        tokio::task::yield_now().await;
        signals.mark_lease_lost();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .unwrap();
        // Already lost: returns at once.
        signals.wait_lease_lost().await;
    }

    #[tokio::test]
    async fn waiting_for_an_upload_ends_when_it_is_stored_or_at_the_limit() {
        let signals = Arc::new(JobSignals::default());
        let waiter = {
            let signals = Arc::clone(&signals);
            tokio::spawn(async move { signals.wait_uploaded(1, Duration::from_secs(30)).await })
        };
        tokio::task::yield_now().await;
        signals.round_uploaded();
        let stored = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .unwrap();
        assert!(stored);
        assert!(
            !signals.wait_uploaded(2, Duration::from_millis(10)).await,
            "round 2 was never stored"
        );
    }
}
