//! The running configuration of `benchgate serve`: what the server, its workers and its tasks
//! read, in the units they use. It is made once from the flags (`flags.rs`, clap) when the
//! server starts; nothing here knows how it was given.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use benchgate_github::WebhookSecrets;
use benchgate_github::client::{Auth, ClientConfig, GitHubClient};

/// The server's configuration.
#[derive(Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// `sqlite://FILE` or `postgres://USER@HOST/DB`; printed only through `mask_url`.
    pub database_url: String,
    /// Connections to Postgres held at most (SQLite keeps its own 8).
    pub database_pool_size: u32,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// Webhook bodies this process may hold at once, in MiB.
    pub webhook_memory_mib: u32,
    /// How long a request may take before it is answered 408.
    pub request_timeout: Duration,
    /// The admin API's bearer token; `None`: the admin API answers 401.
    pub admin_token: Option<String>,
    /// How long a job's lease lasts without a heartbeat.
    pub lease: Duration,
    /// Claims a job may use before it fails.
    pub max_attempts: i64,
    /// How often each runner re-measures its A/A noise floor per repository.
    pub calibration_interval: Duration,
    /// Longest a job claim waits for work before answering 204.
    pub claim_wait: Duration,
    /// The dashboard's token; `None`: the dashboard is public and read-only.
    pub dashboard_token: Option<String>,
    /// Profiled runs per side after a PR comparison ends slower; 0: none unless asked.
    pub profile_runs: u32,
    /// Most rounds one probe of a culprit search runs; 0: no searches.
    pub bisect_max_rounds: u32,
    /// How often each idle runner runs a canary, per label.
    pub canary_every: crate::audit::CanaryEvery,
    /// Planted changes (percent more work) the canaries cycle through.
    pub canary_planted: Vec<f64>,
    /// Rounds of each canary.
    pub canary_rounds: u32,
    /// How often the canary pass looks for idle runners.
    pub canary_tick: Duration,
    pub github: GitHubConfig,
    pub gitlab: GitlabConfig,
}

/// How benchgate reaches a GitLab instance: its URL, the token it writes notes and statuses
/// with, and the secret token(s) its webhooks carry. Without a URL, GitLab is off.
#[derive(Clone, Default)]
pub struct GitlabConfig {
    pub url: Option<String>,
    pub token: Option<String>,
    /// Comma-separated (rotation).
    pub hook_token: Option<String>,
}

impl GitlabConfig {
    /// The instance benchgate acts on, or `None` when no URL (or no token) is configured.
    pub fn forge(&self) -> anyhow::Result<Option<crate::forge::GitlabForge>> {
        let (Some(url), Some(token)) = (&self.url, &self.token) else {
            return Ok(None);
        };
        let host = gitlab_host(url)
            .with_context(|| format!("--gitlab-url {url:?} names no host (https://HOST)"))?;
        let client = benchgate_gitlab::client::GitlabClient::new(url, token)
            .map_err(|e| anyhow::anyhow!("cannot build the GitLab client: {e}"))?;
        Ok(Some(crate::forge::GitlabForge::new(client, host)))
    }

    /// The hook tokens deliveries are checked against; `None` refuses every delivery.
    pub fn hook_tokens(&self) -> Option<benchgate_gitlab::token::HookTokens> {
        self.hook_token_list()
            .map(benchgate_gitlab::token::HookTokens::new)
    }

    /// The configured hook tokens, blanks left out; `None` when there are none.
    fn hook_token_list(&self) -> Option<Vec<&str>> {
        let tokens: Vec<&str> = self
            .hook_token
            .as_deref()?
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        (!tokens.is_empty()).then_some(tokens)
    }

    /// The secrets an external status check's request may be signed with: the hook tokens.
    pub fn signing_secrets(&self) -> Option<benchgate_gitlab::token::SigningSecrets> {
        self.hook_token_list()
            .map(benchgate_gitlab::token::SigningSecrets::new)
    }

    /// The host (and port) repositories on this instance are named under.
    pub fn host(&self) -> Option<String> {
        gitlab_host(self.url.as_deref()?)
    }
}

/// `gitlab.example:8443` of `https://gitlab.example:8443/` (or of `…/api/v4`).
fn gitlab_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split('/').next()?;
    (!host.is_empty()).then(|| host.to_owned())
}

impl fmt::Debug for GitlabConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| "***");
        f.debug_struct("GitlabConfig")
            .field("url", &self.url)
            .field("token", &masked(&self.token))
            .field("hook_token", &masked(&self.hook_token))
            .finish()
    }
}

/// How benchgate reaches GitHub and links back to itself. Credentials set here win over the
/// App stored by `/github/setup`.
#[derive(Clone)]
pub struct GitHubConfig {
    /// Webhook secret(s), comma-separated (rotation).
    pub webhook_secret: Option<String>,
    /// A GitHub App's id and the PEM file of its private key.
    pub app: Option<(u64, PathBuf)>,
    /// A single token instead of App authentication.
    pub token: Option<String>,
    /// The REST API's base URL.
    pub api_url: String,
    /// GitHub's web URL without a trailing slash, where `/github/setup` creates the App.
    pub web_url: String,
    /// This server's public base URL, for links in comments and check runs.
    pub public_url: String,
    /// Time between edits of a PR's comment while rounds land.
    pub comment_interval: Duration,
    /// First retry delay of a failed GitHub write; doubles per attempt.
    pub outbox_backoff: Duration,
}

impl GitHubConfig {
    /// The webhook secrets, or `None` when none is configured (every delivery is then refused).
    pub fn webhook_secrets(&self) -> anyhow::Result<Option<WebhookSecrets>> {
        self.webhook_secret
            .as_deref()
            .map(WebhookSecrets::from_comma_separated)
            .transpose()
            .context("BENCHGATE_WEBHOOK_SECRET")
    }

    /// The GitHub client, or `None` when neither an App nor a token is configured.
    pub fn client(&self) -> anyhow::Result<Option<GitHubClient>> {
        let auth = match (&self.app, &self.token) {
            (Some((app_id, key_file)), _) => {
                let pem = std::fs::read_to_string(key_file).with_context(|| {
                    format!("reading the GitHub App private key {}", key_file.display())
                })?;
                Auth::App {
                    app_id: *app_id,
                    private_key_pem: pem.into(),
                }
            }
            (None, Some(token)) => Auth::Token(token.clone().into()),
            (None, None) => return Ok(None),
        };
        self.client_with(auth).map(Some)
    }

    /// The GitHub client for `auth` (these credentials, or the App stored by `/github/setup`).
    pub fn client_with(&self, auth: Auth) -> anyhow::Result<GitHubClient> {
        let config = ClientConfig {
            api_url: self.api_url.clone(),
            auth,
            timeout: Duration::from_secs(30),
        };
        Ok(GitHubClient::new(config)?)
    }

    /// Whether credentials were given here (they then win over a stored App).
    pub fn has_credentials(&self) -> bool {
        self.app.is_some() || self.token.is_some()
    }

    /// The dashboard page of a comparison.
    pub fn comparison_url(&self, id: impl fmt::Display) -> String {
        format!("{}/comparisons/{id}", self.public_url.trim_end_matches('/'))
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| "***");
        f.debug_struct("ServerConfig")
            .field("listen", &self.listen)
            .field(
                "database_url",
                &benchgate_store::mask_url(&self.database_url),
            )
            .field("database_pool_size", &self.database_pool_size)
            .field("body_limit", &self.body_limit)
            .field("webhook_memory_mib", &self.webhook_memory_mib)
            .field("request_timeout", &self.request_timeout)
            .field("admin_token", &masked(&self.admin_token))
            .field("lease", &self.lease)
            .field("max_attempts", &self.max_attempts)
            .field("calibration_interval", &self.calibration_interval)
            .field("claim_wait", &self.claim_wait)
            .field("dashboard_token", &masked(&self.dashboard_token))
            .field("profile_runs", &self.profile_runs)
            .field("bisect_max_rounds", &self.bisect_max_rounds)
            .field("canary_every", &self.canary_every.to_string())
            .field("canary_planted", &self.canary_planted)
            .field("canary_rounds", &self.canary_rounds)
            .field("canary_tick", &self.canary_tick)
            .field("github", &self.github)
            .field("gitlab", &self.gitlab)
            .finish()
    }
}

impl fmt::Debug for GitHubConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| "***");
        f.debug_struct("GitHubConfig")
            .field("webhook_secret", &masked(&self.webhook_secret))
            .field("app", &self.app)
            .field("token", &masked(&self.token))
            .field("api_url", &self.api_url)
            .field("web_url", &self.web_url)
            .field("public_url", &self.public_url)
            .field("comment_interval", &self.comment_interval)
            .field("outbox_backoff", &self.outbox_backoff)
            .finish()
    }
}
