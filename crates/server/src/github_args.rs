//! The GitHub flags of `benchgate serve`, and the [`GitHubClient`] and [`WebhookSecrets`] built
//! from them. Nothing here starts work: the workers that use them start in
//! `background.rs`.

use std::fmt;
use std::time::Duration;

use anyhow::Context;
use benchgate_github::WebhookSecrets;
use benchgate_github::client::{Auth, ClientConfig, DEFAULT_API_URL, GitHubClient};

/// GitHub flags of `benchgate serve`; each, when set, wins over the App stored by `/github/setup`.
/// With neither, `/webhooks/github` answers 401 and the outbox keeps every GitHub write.
#[derive(Clone, clap::Args)]
pub struct GitHubArgs {
    /// Webhook secret(s), comma-separated; any of them verifies a delivery (for rotation).
    #[arg(
        long = "webhook-secret",
        env = "BENCHGATE_WEBHOOK_SECRET",
        hide_env_values = true
    )]
    pub webhook_secret: Option<String>,

    /// GitHub App id (with --github-private-key-file).
    #[arg(
        long,
        env = "BENCHGATE_GITHUB_APP_ID",
        requires = "github_private_key_file"
    )]
    pub github_app_id: Option<u64>,

    /// PEM file of the GitHub App's private key.
    #[arg(
        long,
        env = "BENCHGATE_GITHUB_PRIVATE_KEY_FILE",
        requires = "github_app_id"
    )]
    pub github_private_key_file: Option<std::path::PathBuf>,

    /// A single token (personal or fine-grained) instead of App authentication.
    #[arg(
        long,
        env = "BENCHGATE_GITHUB_TOKEN",
        conflicts_with = "github_app_id",
        hide_env_values = true
    )]
    pub github_token: Option<String>,

    /// GitHub REST API base URL (GitHub Enterprise: `https://HOST/api/v3`).
    #[arg(long, env = "BENCHGATE_GITHUB_API_URL", default_value = DEFAULT_API_URL)]
    pub github_api_url: String,

    /// GitHub's web URL, where `/github/setup` creates the App; unset, derived from
    /// --github-api-url (`https://github.com`, or `https://HOST` for `https://HOST/api/v3`).
    #[arg(long, env = "BENCHGATE_GITHUB_WEB_URL")]
    pub github_web_url: Option<String>,

    /// This server's public base URL, for links to the dashboard in comments and check runs.
    #[arg(
        long,
        env = "BENCHGATE_PUBLIC_URL",
        default_value = "http://localhost:8080"
    )]
    pub public_url: String,

    /// Seconds between edits of a PR's comment while rounds land (edits are coalesced).
    #[arg(long, env = "BENCHGATE_COMMENT_INTERVAL", default_value_t = 5)]
    pub comment_interval_secs: u64,

    /// First retry delay of a failed GitHub write, in milliseconds; doubles per attempt.
    #[arg(long, env = "BENCHGATE_OUTBOX_BACKOFF_MS", default_value_t = 2000)]
    pub outbox_backoff_ms: u64,
}

impl fmt::Debug for GitHubArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| "<masked>");
        f.debug_struct("GitHubArgs")
            .field("webhook_secret", &masked(&self.webhook_secret))
            .field("github_app_id", &self.github_app_id)
            .field("github_private_key_file", &self.github_private_key_file)
            .field("github_token", &masked(&self.github_token))
            .field("github_api_url", &self.github_api_url)
            .field("github_web_url", &self.github_web_url)
            .field("public_url", &self.public_url)
            .field("comment_interval_secs", &self.comment_interval_secs)
            .field("outbox_backoff_ms", &self.outbox_backoff_ms)
            .finish()
    }
}

impl GitHubArgs {
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
        let auth = match (
            &self.github_app_id,
            &self.github_private_key_file,
            &self.github_token,
        ) {
            (Some(app_id), Some(key_file), _) => {
                let pem = std::fs::read_to_string(key_file).with_context(|| {
                    format!("reading the GitHub App private key {}", key_file.display())
                })?;
                Auth::App {
                    app_id: *app_id,
                    private_key_pem: pem.into(),
                }
            }
            (_, _, Some(token)) => Auth::Token(token.clone().into()),
            _ => return Ok(None),
        };
        self.client_with(auth).map(Some)
    }

    /// The GitHub client for `auth` (flags' or the App stored by `/github/setup`).
    pub fn client_with(&self, auth: Auth) -> anyhow::Result<GitHubClient> {
        let config = ClientConfig {
            api_url: self.github_api_url.clone(),
            auth,
            timeout: Duration::from_secs(30),
        };
        Ok(GitHubClient::new(config)?)
    }

    /// GitHub's web URL without a trailing slash: the flag, else derived from the API URL.
    pub fn web_url(&self) -> String {
        if let Some(url) = &self.github_web_url {
            return url.trim_end_matches('/').to_owned();
        }
        let api = self.github_api_url.trim_end_matches('/');
        if api == DEFAULT_API_URL {
            return "https://github.com".into();
        }
        api.strip_suffix("/api/v3").unwrap_or(api).to_owned()
    }

    /// The dashboard page of a comparison.
    pub fn comparison_url(&self, id: impl fmt::Display) -> String {
        format!("{}/comparisons/{id}", self.public_url.trim_end_matches('/'))
    }
}
