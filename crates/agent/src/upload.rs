//! Uploading finished rounds in the background while the next round runs. Rounds wait in memory
//! until the server has stored them; while it is unreachable they are retried with backoff, and
//! a re-sent round stores nothing twice (uploads are idempotent). During a stop the wait is
//! bounded: [`Uploader::finish_until`] gives up at a deadline and names the rounds not stored.

use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use benchgate_api::agent::RoundUpload;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::client::{Backoff, Client, ClientError};
use crate::heartbeat::JobSignals;

/// The sending side: hand finished rounds to [`Uploader::send`], then [`Uploader::finish_until`].
#[derive(Debug)]
pub struct Uploader {
    tx: mpsc::UnboundedSender<RoundUpload>,
    task: JoinHandle<Result<u32, ClientError>>,
    /// Rounds handed over and not yet stored by the server, so a drain that gives up can
    /// name them.
    unsent: Arc<Mutex<BTreeSet<i64>>>,
}

/// How the uploads of a job ended.
#[derive(Debug)]
pub enum UploadsEnd {
    /// The server stored every round handed over; this many.
    Stored(u32),
    /// The server refused a round (lease lost, token revoked, a bad request).
    Refused(ClientError),
    /// The deadline came first; these rounds were not (or not knowingly) stored.
    GaveUp { unsent: Vec<i64> },
}

impl Uploader {
    /// Starts the background uploader of one job.
    pub fn spawn(
        client: Client,
        job_id: i64,
        signals: Arc<JobSignals>,
        max_backoff: Duration,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let unsent = Arc::new(Mutex::new(BTreeSet::new()));
        let task = tokio::spawn(upload_all(
            client,
            job_id,
            rx,
            signals,
            max_backoff,
            Arc::clone(&unsent),
        ));
        Uploader { tx, task, unsent }
    }

    /// Queues a finished round for upload.
    pub fn send(&self, round: RoundUpload) {
        lock(&self.unsent).insert(round.round);
        // The task only ends early when the lease is lost; the round is then worthless.
        let _ = self.tx.send(round);
    }

    /// Waits until every queued round is stored, the server refuses one, or `deadline`
    /// resolves (then the retries stop and the rounds not stored are named).
    pub async fn finish_until(self, deadline: impl Future<Output = ()>) -> UploadsEnd {
        drop(self.tx);
        let mut task = self.task;
        tokio::select! {
            joined = &mut task => match joined {
                Ok(Ok(stored)) => UploadsEnd::Stored(stored),
                Ok(Err(e)) => UploadsEnd::Refused(e),
                Err(e) => UploadsEnd::Refused(ClientError::Unavailable(format!("uploader task: {e}"))),
            },
            () = deadline => {
                // An upload in flight is dropped with its connection; the server may have
                // stored it, which the lease's next holder cannot mistake for its own data
                // (samples are keyed by attempt).
                task.abort();
                UploadsEnd::GaveUp { unsent: lock(&self.unsent).iter().copied().collect() }
            }
        }
    }
}

fn lock(unsent: &Mutex<BTreeSet<i64>>) -> std::sync::MutexGuard<'_, BTreeSet<i64>> {
    // A panic elsewhere cannot leave the set half-updated: each change is one call.
    unsent
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn upload_all(
    client: Client,
    job_id: i64,
    mut rx: mpsc::UnboundedReceiver<RoundUpload>,
    signals: Arc<JobSignals>,
    max_backoff: Duration,
    unsent: Arc<Mutex<BTreeSet<i64>>>,
) -> Result<u32, ClientError> {
    let mut pending: VecDeque<RoundUpload> = VecDeque::new();
    let mut stored = 0;
    loop {
        if pending.is_empty() {
            match rx.recv().await {
                Some(round) => pending.push_back(round),
                None => return Ok(stored),
            }
        }
        while let Ok(round) = rx.try_recv() {
            pending.push_back(round);
        }
        let round = pending.front().cloned().expect("not empty");
        let mut backoff = Backoff::new(max_backoff);
        loop {
            if signals.lease_lost() {
                return Err(ClientError::LeaseLost);
            }
            match client.upload_round(job_id, &round).await {
                Ok(receipt) => {
                    tracing::info!(
                        job = job_id,
                        round = round.round,
                        inserted = receipt.inserted,
                        duplicates = receipt.duplicates,
                        decided = receipt.decided,
                        "round uploaded"
                    );
                    if receipt.decided {
                        signals.mark_decided();
                    }
                    signals.set_undecided(receipt.undecided);
                    break;
                }
                Err(e) if e.is_transient() => {
                    let delay = backoff.next_delay();
                    tracing::warn!(
                        job = job_id,
                        round = round.round,
                        waiting = pending.len(),
                        error = %e,
                        retry_in_ms = delay.as_millis() as u64,
                        "upload failed; the round is kept and retried"
                    );
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = signals.wait_lease_lost() => {}
                    }
                    // Take in rounds finished meanwhile, so none waits in the channel unseen.
                    while let Ok(later) = rx.try_recv() {
                        pending.push_back(later);
                    }
                }
                Err(e) => {
                    if matches!(e, ClientError::LeaseLost | ClientError::Unauthorized) {
                        signals.mark_lease_lost();
                    }
                    tracing::warn!(job = job_id, round = round.round, error = %e, "upload refused; stopping the job");
                    return Err(e);
                }
            }
        }
        pending.pop_front();
        lock(&unsent).remove(&round.round);
        stored += 1;
        signals.round_uploaded();
    }
}
