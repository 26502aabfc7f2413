//! The outbox runner: claims due rows, hands each to a [`Perform`]er, and records it as
//! delivered, to retry (exponential backoff, never sooner than the error's own `Retry-After`), or
//! given up (a permanent error, logged with its reason). Rows live in the database, so a restart
//! loses nothing. The runner knows nothing of what rows do: that is the tasks'
//! (`tasks/`), which implement [`Perform`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use benchgate_store::Store;
use benchgate_store::model::{OutboxId, OutboxMessage};
use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::metrics::{Metrics, OutboxResult};

/// Rows claimed per poll.
const BATCH: i64 = 8;
/// How long a claimed row stays ours; a worker that dies lets it go after this.
const LEASE: Duration = Duration::from_secs(120);
/// Pause between polls when nothing was due.
const IDLE: Duration = Duration::from_millis(250);
/// Failed attempts before a row is given up.
pub const MAX_ATTEMPTS: i64 = 12;
/// The longest backoff between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

/// Why a row did not finish, as the runner needs to know it.
pub trait RowError: std::fmt::Display {
    /// Worth another attempt.
    fn is_retryable(&self) -> bool;
    /// The earliest the other side wants to be asked again.
    fn retry_after(&self) -> Option<Duration>;
}

/// Carries out one claimed row. `row` keys work that must happen once however often the row
/// runs (a retry after a lost answer, a second replica).
pub trait Perform: Send + Sync {
    type Error: RowError + Send;
    fn perform(
        &self,
        kind: &str,
        payload: &serde_json::Value,
        row: OutboxId,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// The runner: the store its rows live in, the first retry delay, what carries rows out, and
/// where attempts are timed.
pub struct Runner<P> {
    pub store: Arc<dyn Store>,
    /// First retry delay; doubles per attempt.
    pub backoff: Duration,
    pub perform: P,
    pub metrics: Arc<Metrics>,
}

/// Runs until `cancel` fires; a row in flight is finished first.
pub async fn run<P: Perform>(worker: Runner<P>, cancel: CancellationToken) {
    while !cancel.is_cancelled() {
        let claimed = match worker.store.claim_outbox(BATCH, LEASE).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "outbox: cannot claim rows");
                Vec::new()
            }
        };
        let idle = claimed.is_empty();
        worker
            .deliver_batch(claimed, std::time::Instant::now(), &cancel)
            .await;
        if idle {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(IDLE) => {}
            }
        }
    }
}

impl<P: Perform> Runner<P> {
    /// Carries out claimed rows in order until `cancel` fires; the rows not started then are
    /// released at once, so a restarted server sends them without waiting out the lease. Rows
    /// are started only in the first half of their lease: a row whose lease ran out may be
    /// claimed by another server, and two servers writing one check from different reads can
    /// send GitHub a stale state; the rest are released and claimed afresh.
    async fn deliver_batch(
        &self,
        rows: Vec<OutboxMessage>,
        claimed_at: std::time::Instant,
        cancel: &CancellationToken,
    ) {
        let mut rows = rows.into_iter();
        while let Some(row) = rows.next() {
            let late = claimed_at.elapsed() > LEASE / 2;
            if cancel.is_cancelled() || late {
                let unstarted: Vec<_> = std::iter::once(row).chain(rows).collect();
                if late {
                    tracing::info!(
                        rows = unstarted.len(),
                        "outbox: half the lease gone; the rest released to be claimed afresh"
                    );
                }
                self.release(&unstarted).await;
                return;
            }
            self.process(row).await;
        }
    }

    /// Gives rows of one claim back; on failure they come back when their lease expires.
    async fn release(&self, rows: &[OutboxMessage]) {
        let Some(lease) = rows.first().map(|r| &r.lease) else {
            return;
        };
        let ids: Vec<_> = rows.iter().map(|r| r.id).collect();
        match self.store.release_outbox(&ids, lease).await {
            Ok(released) => tracing::info!(released, "outbox: unsent rows released"),
            Err(e) => {
                tracing::warn!(error = %e, "outbox: cannot release rows; they return when their lease expires")
            }
        }
    }

    #[tracing::instrument(skip_all, fields(outbox = %row.id, kind = %row.kind, attempts = row.attempts))]
    async fn process(&self, row: OutboxMessage) {
        let started = std::time::Instant::now();
        let outcome = self.perform.perform(&row.kind, &row.payload, row.id).await;
        let took = started.elapsed();
        let report = match outcome {
            Ok(()) => {
                self.metrics.outbox_attempt(
                    &row.kind,
                    OutboxResult::Delivered,
                    took,
                    row.created_at,
                );
                self.store.outbox_delivered(row.id, &row.lease).await
            }
            Err(e) => {
                let attempts = row.attempts + 1;
                let retry_at = (e.is_retryable() && attempts < MAX_ATTEMPTS).then(|| {
                    let wait =
                        backoff(self.backoff, attempts).max(e.retry_after().unwrap_or_default());
                    Utc::now() + wait
                });
                let result = match retry_at {
                    Some(at) => {
                        tracing::info!(error = %e, retry_at = %at, "outbox row failed; will retry");
                        OutboxResult::Retry
                    }
                    None => {
                        tracing::warn!(error = %e, attempts, "outbox row given up");
                        OutboxResult::GivenUp
                    }
                };
                self.metrics
                    .outbox_attempt(&row.kind, result, took, row.created_at);
                let message = e.to_string();
                self.store
                    .outbox_failed(row.id, &row.lease, &message, retry_at)
                    .await
            }
        };
        if let Err(e) = report {
            // Lease lost: another worker has the row now; it will send it again, harmlessly.
            tracing::warn!(error = %e, "outbox: could not record the result");
        }
    }
}

/// `base · 2^(attempts−1)`, capped.
fn backoff(first: Duration, attempts: i64) -> Duration {
    let exp = u32::try_from(attempts.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
    first.saturating_mul(1u32 << exp).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub answering a reaction, and the server being asked to stop meanwhile.
    struct StopWhileSending(CancellationToken);

    impl wiremock::Respond for StopWhileSending {
        fn respond(&self, _: &wiremock::Request) -> wiremock::ResponseTemplate {
            self.0.cancel();
            wiremock::ResponseTemplate::new(201).set_body_json(serde_json::json!({"id": 1}))
        }
    }

    #[derive(clap::Parser)]
    struct Serve {
        #[command(flatten)]
        args: crate::ServeArgs,
    }

    /// A worker on a fresh SQLite store whose GitHub is `github`, with three reactions queued.
    async fn worker_with_three_rows(
        github: &wiremock::MockServer,
        dir: &std::path::Path,
    ) -> (Runner<crate::tasks::Context>, Arc<dyn Store>, Vec<OutboxId>) {
        use clap::Parser as _;
        let url = format!("sqlite://{}", dir.join("outbox.db").display());
        let store = benchgate_store::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        let mut serve = Serve::try_parse_from([
            "serve",
            "--database-url",
            url.as_str(),
            "--github-api-url",
            github.uri().as_str(),
        ])
        .unwrap();
        serve.args.github.github_token = Some("test-token".into());
        let app = crate::AppState::new(serve.args, store.clone());
        let worker = Runner {
            store: store.clone(),
            backoff: Duration::from_secs(2),
            metrics: app.metrics.clone(),
            perform: crate::tasks::Context {
                forges: crate::forge::Forges {
                    github: app.config.github.client().unwrap(),
                    gitlab: None,
                },
                github_config: Arc::new(app.config.github.clone()),
                domain: app.domain,
            },
        };
        let mut ids = Vec::new();
        for comment_id in [11, 12, 13] {
            let task = crate::tasks::Reaction {
                repo: crate::tasks::RepoName::github("acme/widgets", None),
                comment_id,
                pr: None,
            };
            ids.push(
                store
                    .enqueue_outbox(&crate::tasks::OutboxTask::message(&task))
                    .await
                    .unwrap(),
            );
        }
        (worker, store, ids)
    }

    #[tokio::test]
    async fn stopping_mid_batch_gives_unsent_rows_back_at_once() {
        let github = wiremock::MockServer::start().await;
        let cancel = CancellationToken::new();
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(StopWhileSending(cancel.clone()))
            .mount(&github)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let (worker, store, ids) = worker_with_three_rows(&github, dir.path()).await;

        // The first reaction is sent; the stop arrives while it is in flight.
        run(worker, cancel).await;

        let sent = github.received_requests().await.unwrap();
        assert_eq!(sent.len(), 1, "one row sent before stopping");
        assert!(sent[0].url.path().ends_with("/comments/11/reactions"));
        assert_eq!(store.outbox_backlog().await.unwrap(), 2);
        // A restarted worker finds the other two due now, not after the 120 s lease.
        let again = store.claim_outbox(BATCH, LEASE).await.unwrap();
        assert_eq!(
            again.iter().map(|m| m.id).collect::<Vec<_>>(),
            ids[1..].to_vec()
        );
        assert!(again.iter().all(|m| m.attempts == 0));
    }

    /// Rows claimed more than half a lease ago are not started: another server may claim them
    /// once the lease runs out, and two servers must not carry out one row. They are given
    /// back, due at once.
    #[tokio::test]
    async fn rows_of_a_claim_past_half_its_lease_are_given_back_not_sent() {
        let github = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(
                wiremock::ResponseTemplate::new(201).set_body_json(serde_json::json!({"id": 1})),
            )
            .mount(&github)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let (worker, store, ids) = worker_with_three_rows(&github, dir.path()).await;
        let rows = store.claim_outbox(BATCH, LEASE).await.unwrap();
        assert_eq!(rows.len(), 3);
        let long_ago = std::time::Instant::now()
            .checked_sub(LEASE / 2 + Duration::from_secs(1))
            .expect("the machine has been up longer than a minute");
        worker
            .deliver_batch(rows, long_ago, &CancellationToken::new())
            .await;
        assert!(
            github.received_requests().await.unwrap().is_empty(),
            "nothing sent"
        );
        let again = store.claim_outbox(BATCH, LEASE).await.unwrap();
        assert_eq!(again.iter().map(|m| m.id).collect::<Vec<_>>(), ids);
        // Claimed just now, the same rows are sent.
        worker
            .deliver_batch(again, std::time::Instant::now(), &CancellationToken::new())
            .await;
        assert_eq!(github.received_requests().await.unwrap().len(), 3);
        assert_eq!(store.outbox_backlog().await.unwrap(), 0);
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(Duration::from_secs(2), 1), Duration::from_secs(2));
        assert_eq!(backoff(Duration::from_secs(2), 3), Duration::from_secs(8));
        assert_eq!(backoff(Duration::from_secs(2), 30), MAX_BACKOFF);
    }
}
