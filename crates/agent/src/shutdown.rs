//! SIGTERM and SIGINT start a bounded drain: the current round may finish, pending uploads are
//! retried and the lease released, each only until its deadline ([`Drain`]); then the agent
//! exits 0. A second signal ends the drain at once. Without the bound, a server that went away
//! kept the agent retrying until the service manager sent SIGKILL.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// Whether and when a stop was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    /// A stop was asked for at `since`; `hurry` once a second one came.
    Stopping {
        since: Instant,
        hurry: bool,
    },
}

/// Whether a shutdown was asked for, and when; cheap to clone.
#[derive(Debug, Clone)]
pub struct Shutdown {
    rx: watch::Receiver<State>,
}

/// Asks a [`Shutdown::manual`] shutdown to start (for the demo and tests).
#[derive(Debug)]
pub struct ShutdownTrigger {
    tx: watch::Sender<State>,
}

impl ShutdownTrigger {
    /// Starts the drain (or, when it already started, ends it at once).
    pub fn request(&self) {
        request(&self.tx);
    }
}

fn request(tx: &watch::Sender<State>) {
    tx.send_modify(|state| {
        *state = match *state {
            State::Running => State::Stopping {
                since: Instant::now(),
                hurry: false,
            },
            State::Stopping { since, .. } => State::Stopping { since, hurry: true },
        }
    });
}

impl Shutdown {
    /// Starts listening for SIGTERM and SIGINT.
    pub fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let (tx, rx) = watch::channel(State::Running);
        tokio::spawn(async move {
            // The sender lives as long as this loop, so receivers never see a closed channel.
            loop {
                tokio::select! {
                    _ = term.recv() => {},
                    _ = int.recv() => {},
                }
                if *tx.borrow() == State::Running {
                    tracing::info!("shutdown requested; draining (a second signal stops at once)");
                } else {
                    tracing::warn!("second stop signal; ending the drain now");
                }
                request(&tx);
            }
        });
        Ok(Shutdown { rx })
    }

    /// A shutdown that is asked for through the returned trigger.
    pub fn manual() -> (ShutdownTrigger, Self) {
        let (tx, rx) = watch::channel(State::Running);
        (ShutdownTrigger { tx }, Shutdown { rx })
    }

    /// Whether a shutdown was asked for.
    pub fn requested(&self) -> bool {
        *self.rx.borrow() != State::Running
    }

    /// Resolves once a shutdown is asked for.
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|state| *state != State::Running).await;
    }

    /// Resolves `after` past the stop request (at once after a second request); never while
    /// no stop was asked for.
    pub async fn deadline(&self, after: Duration) {
        let mut rx = self.rx.clone();
        loop {
            let state = *rx.borrow_and_update();
            match state {
                State::Running => {}
                State::Stopping { hurry: true, .. } => return,
                State::Stopping { since, .. } => {
                    tokio::select! {
                        () = tokio::time::sleep_until(since + after) => return,
                        changed = rx.changed() => if changed.is_err() { return },
                    }
                    continue;
                }
            }
            if rx.changed().await.is_err() {
                // No sender left: no stop can be asked for any more.
                return std::future::pending().await;
            }
        }
    }
}

/// How a drain of `total` is spent: rounds and uploads until [`Drain::uploads`], the release
/// call until [`Drain::total`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drain {
    /// Time, from the stop request, until the current round and the uploads are given up.
    pub uploads: Duration,
    /// Time, from the stop request, until the job is left to its lease expiry.
    pub total: Duration,
}

impl Drain {
    /// Keeps a fifth of `total`, at most one second, for the release call: one call to a
    /// reachable server takes milliseconds, so the uploads get nearly all of it.
    pub fn new(total: Duration) -> Self {
        let release = (total / 5).min(Duration::from_secs(1));
        Drain {
            uploads: total - release,
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_keeps_a_fifth_of_the_drain_at_most_a_second() {
        let d = Drain::new(Duration::from_secs(5));
        assert_eq!(d.uploads, Duration::from_secs(4));
        let d = Drain::new(Duration::from_secs(30));
        assert_eq!(d.uploads, Duration::from_secs(29));
        let d = Drain::new(Duration::from_secs(2));
        assert_eq!(d.uploads, Duration::from_millis(1600));
        assert_eq!(Drain::new(Duration::ZERO).uploads, Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_counts_from_the_request_and_a_second_request_ends_it() {
        let (trigger, shutdown) = Shutdown::manual();
        let never = tokio::time::timeout(
            Duration::from_secs(100),
            shutdown.deadline(Duration::from_secs(1)),
        );
        assert!(never.await.is_err(), "no deadline before a stop request");

        trigger.request();
        let start = Instant::now();
        shutdown.deadline(Duration::from_secs(5)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(5));

        let waiting = {
            let shutdown = shutdown.clone();
            tokio::spawn(async move { shutdown.deadline(Duration::from_secs(60)).await })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.request();
        tokio::time::timeout(Duration::from_millis(10), waiting)
            .await
            .expect("a second request ends the drain at once")
            .unwrap();
    }
}
