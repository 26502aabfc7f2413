//! SIGTERM and SIGINT: the agent finishes the round it is in, uploads it, releases the lease
//! and exits 0.

use tokio::sync::watch;

/// Whether a shutdown was asked for; cheap to clone.
#[derive(Debug, Clone)]
pub struct Shutdown {
    rx: watch::Receiver<bool>,
}

impl Shutdown {
    /// Starts listening for SIGTERM and SIGINT.
    pub fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let (tx, rx) = watch::channel(false);
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
            tracing::info!("shutdown requested; finishing the current round");
            let _ = tx.send(true);
            // Keep the sender alive so receivers never see a closed channel as a signal.
            std::future::pending::<()>().await;
        });
        Ok(Shutdown { rx })
    }

    /// A shutdown that is asked for by calling the returned sender (for tests).
    pub fn manual() -> (watch::Sender<bool>, Self) {
        let (tx, rx) = watch::channel(false);
        (tx, Shutdown { rx })
    }

    /// Whether a shutdown was asked for.
    pub fn requested(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves once a shutdown is asked for.
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|asked| *asked).await;
    }
}
