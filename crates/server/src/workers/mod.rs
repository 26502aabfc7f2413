//! Background work beside the HTTP server: the reaper, calibration, the default branch's
//! schedule, canaries, and, once GitHub credentials exist, the outbox worker and the report watcher.

mod calibration;
mod canaries;
mod main_history;
pub mod outbox;
mod reaper;
mod report_watch;

use benchgate_github::client::{Auth, GitHubClient};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use crate::Domain;
use crate::github_credentials::GitHubCredentials;

/// The running background tasks; stopped together at shutdown.
pub struct BackgroundTasks {
    cancel: CancellationToken,
    tasks: JoinSet<()>,
}

impl BackgroundTasks {
    /// Asks every task to stop and waits for them.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        while self.tasks.join_next().await.is_some() {}
    }
}

/// Starts every background task. Each task loops until `cancel` fires.
/// `credentials` are the GitHub credentials in force, which `/github/setup` may store later.
pub fn spawn(domain: Domain, credentials: Arc<GitHubCredentials>) -> BackgroundTasks {
    let cancel = CancellationToken::new();
    let mut tasks = JoinSet::new();
    tasks.spawn(reaper::run(domain.clone(), cancel.clone()));
    tasks.spawn(calibration::run(domain.clone(), cancel.clone()));
    tasks.spawn(main_history::run(domain.clone(), cancel.clone()));
    tasks.spawn(canaries::run(domain.clone(), cancel.clone()));
    spawn_github_workers(&domain, credentials, &cancel, &mut tasks);
    BackgroundTasks { cancel, tasks }
}

/// Starts the outbox worker and the report watcher with the flags' credentials, or once
/// `/github/setup` stored an App; until then the outbox keeps every write.
fn spawn_github_workers(
    domain: &Domain,
    credentials: Arc<GitHubCredentials>,
    cancel: &CancellationToken,
    tasks: &mut JoinSet<()>,
) {
    let config = &domain.config.github;
    let gitlab = match domain.config.gitlab.forge() {
        Ok(forge) => forge.map(Arc::new),
        Err(e) => {
            tracing::error!(error = %e, "cannot use the GitLab flags; GitLab writes wait in the outbox");
            None
        }
    };
    let gitlab_flags = &domain.config.gitlab;
    if let Some(forge) = &gitlab {
        tracing::info!(host = %forge.host, "gating GitLab merge requests");
    } else if gitlab_flags.url.is_some() {
        tracing::warn!(
            "--gitlab-url without a token (BENCHGATE_GITLAB_TOKEN or --gitlab-token-file); GitLab writes wait in the outbox"
        );
    }
    if gitlab_flags.url.is_some() && gitlab_flags.hook_tokens().is_none() {
        tracing::warn!(
            "--gitlab-url without a hook token (BENCHGATE_GITLAB_HOOK_TOKEN or --gitlab-hook-token-file); /webhooks/gitlab refuses every delivery"
        );
    }
    if !credentials.has_flag_secret() {
        tracing::info!(
            "no webhook secret flag; deliveries are verified with the App stored by /github/setup, if any"
        );
    }
    match config.client() {
        Ok(Some(github)) => spawn_github_tasks(domain, Some(github), gitlab, cancel, tasks),
        Ok(None) => {
            tracing::info!(
                "no GitHub App or token flags; GitHub writes wait in the outbox until /github/setup stores an App"
            );
            // GitLab's writes need not wait for GitHub's App: this worker carries them out,
            // and the one started with the App takes both.
            if gitlab.is_some() {
                spawn_github_tasks(domain, None, gitlab.clone(), cancel, tasks);
            }
            tasks.spawn(start_with_stored_app(
                domain.clone(),
                credentials,
                gitlab,
                cancel.clone(),
            ));
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot build the GitHub client; GitHub writes wait in the outbox");
        }
    }
}

/// Waits for an App stored by `/github/setup` (on any replica), then runs the GitHub tasks with
/// it; a later setup replaces the App, and the tasks restart with the new one.
async fn start_with_stored_app(
    domain: Domain,
    credentials: Arc<GitHubCredentials>,
    gitlab: Option<Arc<crate::forge::GitlabForge>>,
    cancel: CancellationToken,
) {
    let mut next = credentials.wait_for_app_other_than(None, &cancel).await;
    while let Some(stored) = next {
        let app = &stored.credentials;
        let auth = Auth::App {
            app_id: app.app_id as u64,
            private_key_pem: app.private_key_pem.clone().into(),
        };
        let run = cancel.child_token();
        let mut tasks = JoinSet::new();
        match domain.config.github.client_with(auth) {
            Ok(github) => {
                tracing::info!(app_id = app.app_id, slug = %app.slug, "using the GitHub App stored by /github/setup");
                spawn_github_tasks(&domain, Some(github), gitlab.clone(), &run, &mut tasks);
            }
            Err(e) => {
                tracing::error!(app_id = app.app_id, error = %e, "cannot use the stored GitHub App; run /github/setup again");
            }
        }
        next = credentials
            .wait_for_app_other_than(Some(app), &cancel)
            .await;
        run.cancel();
        while tasks.join_next().await.is_some() {}
    }
}

/// The outbox worker and the report watcher, writing to GitHub through `github` (`None`:
/// GitHub's rows wait) and to GitLab through `gitlab`.
fn spawn_github_tasks(
    domain: &Domain,
    github: Option<GitHubClient>,
    gitlab: Option<Arc<crate::forge::GitlabForge>>,
    cancel: &CancellationToken,
    tasks: &mut JoinSet<()>,
) {
    let config = &domain.config.github;
    let worker = outbox::Runner {
        store: domain.store.clone(),
        backoff: config.outbox_backoff,
        metrics: domain.metrics.clone(),
        perform: crate::tasks::Context {
            domain: domain.clone(),
            forges: crate::forge::Forges { github, gitlab },
            github_config: std::sync::Arc::new(config.clone()),
        },
    };
    tasks.spawn(outbox::run(worker, cancel.clone()));
    let every = config.comment_interval;
    tasks.spawn(report_watch::run(
        domain.store.clone(),
        every,
        cancel.clone(),
    ));
}
