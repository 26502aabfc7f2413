//! benchgate-server: the axum app (webhooks, agent API, dashboard, JSON API, metrics), the
//! delivery planner and the scheduling tasks, the reaper, the outbox worker and report rendering.

// The layers: `http` answers requests (axum lives there and here only), `workers` are the
// loops beside it, and the rest is the domain, which neither imports.
pub mod audit;
pub mod calibration;
mod commit_check;
pub mod comparison_analysis;
pub mod config;
mod delivery_plan;
pub mod flags;
mod floor_modes;
pub mod forge;
pub mod github_credentials;
mod http;
mod job_lifecycle;
pub mod main_history;
pub mod metrics;
pub mod profile;
pub mod queue_wait;
pub mod report;
pub mod run_length;
pub mod runner_cli;
mod runner_status;
pub mod series_cache;
pub mod tasks;
mod workers;

use std::future::Future;
use std::sync::Arc;

use benchgate_store::Store;
use tokio::net::TcpListener;

pub use config::{GitHubConfig, GitlabConfig, ServerConfig};
pub use flags::{GitHubArgs, GitlabArgs, LogFormat, ServeArgs, refuse_secrets_on_command_line};
pub use http::error::ApiError;
pub use http::router;

/// What domain code and background work need: the store, the running configuration, this
/// process's metrics and the series cache. Cheap to clone. The web server's own parts
/// (credentials, the webhook memory budget, shutdown) stay in [`AppState`], so code that
/// takes a `&Domain` cannot reach them.
#[derive(Clone)]
pub struct Domain {
    pub store: Arc<dyn Store>,
    pub config: Arc<ServerConfig>,
    /// This process's counters and histograms, encoded by `/metrics`.
    pub metrics: Arc<metrics::Metrics>,
    /// The samples of recently analysed comparisons, so an upload's analysis reads only that
    /// upload (each replica keeps its own).
    pub series: Arc<series_cache::SeriesCache>,
}

/// Everything a request handler needs: the [`Domain`] and the web server's own parts; cheap
/// to clone. It dereferences to its [`Domain`], so a handler passes `&app` where domain code
/// takes `&Domain`.
#[derive(Clone)]
pub struct AppState {
    pub domain: Domain,
    /// Cancelled when the server begins to shut down, so long polls answer at once.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// The webhook secrets and App credentials in force: the flags', else those stored by
    /// `/github/setup`. [`start`] refuses a malformed secret list.
    pub github_credentials: Arc<github_credentials::GitHubCredentials>,
    /// The memory budget, deadline and slots webhook bodies share while unverified (limits of
    /// this process, not shared state: each replica guards its own memory).
    pub webhook_intake: http::webhook_body::WebhookIntake,
}

impl std::ops::Deref for AppState {
    type Target = Domain;

    fn deref(&self) -> &Domain {
        &self.domain
    }
}

impl AppState {
    /// The state of a server with `config` (or the flags it is made from) on `store`.
    pub fn new(config: impl Into<ServerConfig>, store: Arc<dyn Store>) -> Self {
        let config = config.into();
        Self {
            github_credentials: Arc::new(github_credentials::GitHubCredentials::new(
                store.clone(),
                config.github.webhook_secrets().ok().flatten(),
            )),
            webhook_intake: http::webhook_body::WebhookIntake::new(config.webhook_memory_mib),
            shutdown: tokio_util::sync::CancellationToken::new(),
            domain: Domain {
                store,
                config: Arc::new(config),
                metrics: Arc::new(metrics::Metrics::new()),
                series: Arc::new(series_cache::SeriesCache::default()),
            },
        }
    }
}

/// Connects the store, applies migrations, binds the listen address and starts the background
/// tasks and the HTTP server; the returned handle knows the bound address (port 0 works).
pub async fn start(
    config: impl Into<ServerConfig>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<RunningServer> {
    use anyhow::Context;
    let args = config.into();
    // A typo in the secret list would otherwise start a server that refuses every delivery.
    args.github
        .webhook_secrets()
        .context("refusing to start: the webhook secret list is malformed")?;
    let store =
        benchgate_store::connect_with_pool(&args.database_url, args.database_pool_size).await?;
    store.migrate().await.context("applying migrations")?;
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(
        addr = %addr,
        database = %benchgate_store::mask_url(&args.database_url),
        "benchgate listening"
    );
    let state = AppState::new(args, store);
    let background = workers::spawn(state.domain.clone(), state.github_credentials.clone());
    let task = tokio::spawn(serve(listener, state.clone(), shutdown));
    Ok(RunningServer {
        addr,
        state,
        task,
        background,
    })
}

/// A server started by [`start`].
pub struct RunningServer {
    pub addr: std::net::SocketAddr,
    /// The state its handlers share (the store, the configuration).
    pub state: AppState,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    background: workers::BackgroundTasks,
}

impl RunningServer {
    /// Waits until the HTTP server has shut down, then stops the background tasks.
    pub async fn wait(self) -> anyhow::Result<()> {
        let served = self.task.await;
        self.background.stop().await;
        served??;
        Ok(())
    }
}

/// Serves until `shutdown` resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let token = state.shutdown.clone();
    let app = router(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            token.cancel();
        })
        .await
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await
            }
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutdown requested; finishing in-flight requests");
}
