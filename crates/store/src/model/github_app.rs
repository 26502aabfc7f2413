//! The GitHub App created by the manifest flow (`/github/setup`): the single-use `state` of a
//! setup, and the credentials GitHub handed back.

use chrono::{DateTime, Utc};
use std::fmt;

/// A setup's `state` in plain text: handed to the admin's browser once; only its SHA-256 is kept.
#[derive(Clone, PartialEq, Eq)]
pub struct SetupState(pub String);

impl SetupState {
    /// The value to put in the form that goes to GitHub.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SetupState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SetupState(***)")
    }
}

/// What became of a `state` given back by GitHub's redirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupStateCheck {
    /// Known, unexpired and unused: now marked used.
    Accepted,
    /// Never handed out (or pruned long after it expired).
    Unknown,
    /// Handed out, but its hour is over.
    Expired,
    /// Already used by an earlier callback.
    Used,
}

/// The App's id, key and webhook secret, kept so every replica and a restarted server use them.
/// `Debug` masks the secret and the key.
#[derive(Clone, PartialEq, Eq)]
pub struct GitHubAppCredentials {
    pub app_id: i64,
    pub slug: String,
    /// The App's page, e.g. `https://github.com/apps/benchgate`.
    pub html_url: String,
    /// The user or organisation that owns the App.
    pub owner_login: Option<String>,
    pub webhook_secret: String,
    pub private_key_pem: String,
    pub created_at: DateTime<Utc>,
}

impl fmt::Debug for GitHubAppCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitHubAppCredentials")
            .field("app_id", &self.app_id)
            .field("slug", &self.slug)
            .field("html_url", &self.html_url)
            .field("owner_login", &self.owner_login)
            .field("webhook_secret", &"***")
            .field("private_key_pem", &"***")
            .field("created_at", &self.created_at)
            .finish()
    }
}
