//! The GitHub credentials the running server uses: the flags when they are set, else what the
//! manifest flow stored in the database. The database is the truth; this keeps a short-lived
//! copy so a webhook does not cost a query, and reads the row again whenever a signature does
//! not match the copy (a setup may have finished moments ago on another replica).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use benchgate_github::WebhookSecrets;
use benchgate_github::signature::SignatureError;
use benchgate_store::{GitHubAppCredentials, Store, StoreError};
use tokio_util::sync::CancellationToken;

/// How long the stored row is trusted before it is read again (a replaced App's old secret
/// stops verifying within this).
const REFRESH: Duration = Duration::from_secs(30);

/// How often a server looks for an App stored (or replaced) by another replica's setup.
const POLL: Duration = Duration::from_secs(5);

/// Why a delivery was refused.
#[derive(Debug, thiserror::Error)]
pub enum WebhookRefusal {
    #[error("no webhook secret is configured or stored")]
    NoSecret,
    #[error(transparent)]
    BadSignature(#[from] SignatureError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An App stored by the manifest flow, with its webhook secret parsed once.
#[derive(Debug)]
pub struct StoredApp {
    pub credentials: GitHubAppCredentials,
    secrets: WebhookSecrets,
}

#[derive(Default)]
struct Cached {
    /// When the read that produced this copy began.
    loaded_at: Option<Instant>,
    app: Option<Arc<StoredApp>>,
}

/// The webhook secrets and App credentials in force; one per process, shared by every handler.
pub struct GitHubCredentials {
    store: Arc<dyn Store>,
    /// `BENCHGATE_WEBHOOK_SECRET` (or its file): when set, the stored secret is never used.
    flag_secrets: Option<WebhookSecrets>,
    cached: Mutex<Cached>,
    /// Held while the row is read, so concurrent deliveries share one query (and a flood of
    /// unsigned requests costs one query at a time).
    reading: tokio::sync::Mutex<()>,
    stored_changed: tokio::sync::Notify,
}

impl GitHubCredentials {
    pub fn new(store: Arc<dyn Store>, flag_secrets: Option<WebhookSecrets>) -> Self {
        Self {
            store,
            flag_secrets,
            cached: Mutex::new(Cached::default()),
            reading: tokio::sync::Mutex::new(()),
            stored_changed: tokio::sync::Notify::new(),
        }
    }

    /// Whether `BENCHGATE_WEBHOOK_SECRET` (or its file) is set (then the stored secret is ignored).
    pub fn has_flag_secret(&self) -> bool {
        self.flag_secrets.is_some()
    }

    /// Ok when a secret in force signed `body`: the flags' secrets, else the stored one.
    pub async fn verify_webhook(
        &self,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<(), WebhookRefusal> {
        if let Some(secrets) = &self.flag_secrets {
            return Ok(secrets.verify(signature, body)?);
        }
        let verify = |app: Option<Arc<StoredApp>>| match app {
            Some(app) => Ok(app.secrets.verify(signature, body)?),
            None => Err(WebhookRefusal::NoSecret),
        };
        let asked_at = Instant::now();
        if verify(self.stored_within(REFRESH).await?).is_ok() {
            return Ok(());
        }
        // GitHub does not redeliver on its own, so a delivery is refused only after a read
        // of the row that began after it arrived.
        verify(self.read_since(asked_at).await?)
    }

    /// The stored App, read again when the copy is older than [`REFRESH`].
    pub async fn stored_app(&self) -> Result<Option<Arc<StoredApp>>, StoreError> {
        self.stored_within(REFRESH).await
    }

    /// Reads the stored App now (after a setup, so this replica uses it at once) and wakes
    /// [`Self::wait_for_app_other_than`].
    pub async fn reload(&self) -> Result<Option<Arc<StoredApp>>, StoreError> {
        let started = Instant::now();
        let app = self.store.github_app_credentials().await?.and_then(|credentials| {
            match WebhookSecrets::new([credentials.webhook_secret.as_str()]) {
                Ok(secrets) => Some(Arc::new(StoredApp {
                    credentials,
                    secrets,
                })),
                Err(e) => {
                    tracing::error!(app_id = credentials.app_id, error = %e, "the stored webhook secret is unusable; run /github/setup again");
                    None
                }
            }
        });
        let mut cached = self.cached.lock().expect("credentials cache");
        let changed =
            cached.app.as_ref().map(|a| &a.credentials) != app.as_ref().map(|a| &a.credentials);
        // A slower read that began earlier must not replace a newer copy.
        if cached.loaded_at.is_none_or(|t| t <= started) {
            *cached = Cached {
                loaded_at: Some(started),
                app: app.clone(),
            };
        }
        drop(cached);
        // Only a change wakes the waiters: a waiter's own unchanged read must not wake it.
        if changed {
            self.stored_changed.notify_waiters();
        }
        Ok(app)
    }

    /// Waits until an App other than `current` is stored (by a setup on any replica); `None`
    /// when cancelled first.
    pub async fn wait_for_app_other_than(
        &self,
        current: Option<&GitHubAppCredentials>,
        cancel: &CancellationToken,
    ) -> Option<Arc<StoredApp>> {
        loop {
            let notified = self.stored_changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.reload().await {
                Ok(Some(app)) if Some(&app.credentials) != current => return Some(app),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "cannot read the stored GitHub App"),
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = cancel.cancelled() => return None,
            }
        }
    }

    /// The copy if it is younger than `max_age`, else a fresh read.
    async fn stored_within(&self, max_age: Duration) -> Result<Option<Arc<StoredApp>>, StoreError> {
        self.read_unless(|loaded_at| loaded_at.elapsed() < max_age)
            .await
    }

    /// A copy from a read that began at `since` or later.
    async fn read_since(&self, since: Instant) -> Result<Option<Arc<StoredApp>>, StoreError> {
        self.read_unless(|loaded_at| loaded_at >= since).await
    }

    /// The copy when `good_enough(loaded_at)`, else one read shared with concurrent callers.
    async fn read_unless(
        &self,
        good_enough: impl Fn(Instant) -> bool,
    ) -> Result<Option<Arc<StoredApp>>, StoreError> {
        let cached = || {
            let cached = self.cached.lock().expect("credentials cache");
            cached
                .loaded_at
                .is_some_and(&good_enough)
                .then(|| cached.app.clone())
        };
        if let Some(app) = cached() {
            return Ok(app);
        }
        let _reading = self.reading.lock().await;
        // The read another caller finished while this one waited may do.
        if let Some(app) = cached() {
            return Ok(app);
        }
        self.reload().await
    }
}
