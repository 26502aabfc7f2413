//! Uploading finished rounds in the background while the next round runs. Rounds wait in memory
//! until the server has stored them; while it is unreachable they are retried with backoff, and
//! a re-sent round stores nothing twice (uploads are idempotent).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use benchgate_api::agent::RoundUpload;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::client::{Backoff, Client, ClientError};
use crate::heartbeat::JobSignals;

/// The sending side: hand finished rounds to [`Uploader::send`], then [`Uploader::finish`].
#[derive(Debug)]
pub struct Uploader {
    tx: mpsc::UnboundedSender<RoundUpload>,
    task: JoinHandle<Result<u32, ClientError>>,
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
        let task = tokio::spawn(drain(client, job_id, rx, signals, max_backoff));
        Uploader { tx, task }
    }

    /// Queues a finished round for upload.
    pub fn send(&self, round: RoundUpload) {
        // The task only ends early when the lease is lost; the round is then worthless.
        let _ = self.tx.send(round);
    }

    /// Waits until every queued round is stored; the number stored, or why the rest is not.
    pub async fn finish(self) -> Result<u32, ClientError> {
        drop(self.tx);
        self.task
            .await
            .unwrap_or_else(|e| Err(ClientError::Unavailable(format!("uploader task: {e}"))))
    }
}

async fn drain(
    client: Client,
    job_id: i64,
    mut rx: mpsc::UnboundedReceiver<RoundUpload>,
    signals: Arc<JobSignals>,
    max_backoff: Duration,
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
                        "round uploaded"
                    );
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
        stored += 1;
        signals.round_uploaded();
    }
}
