//! Installations and repositories: what is being benchmarked.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::RepositoryId;

/// A GitHub App installation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installation {
    /// GitHub's installation id.
    pub id: i64,
    pub account_login: String,
}

/// The forge a repository lives on, which answers its webhooks and takes its comments and gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Forge {
    #[default]
    GitHub,
    GitLab,
}

impl Forge {
    pub fn as_str(self) -> &'static str {
        match self {
            Forge::GitHub => "github",
            Forge::GitLab => "gitlab",
        }
    }

    /// The stored word; an unknown one is an error, never GitHub by default.
    pub fn parse(word: &str) -> Option<Forge> {
        match word {
            "github" => Some(Forge::GitHub),
            "gitlab" => Some(Forge::GitLab),
            _ => None,
        }
    }
}

/// A repository to upsert: from GitHub (with its ids) or given by URL/path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRepository {
    /// GitHub's repository id; `None` for a repository given by URL or local path.
    pub github_id: Option<i64>,
    pub installation_id: Option<i64>,
    /// `owner/name`, or the URL/path itself.
    pub full_name: String,
    pub clone_url: String,
    pub forge: Forge,
}

/// A stored repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repository {
    pub id: RepositoryId,
    pub github_id: Option<i64>,
    pub installation_id: Option<i64>,
    pub full_name: String,
    pub clone_url: String,
    #[serde(default)]
    pub forge: Forge,
    pub created_at: DateTime<Utc>,
    pub removed_at: Option<DateTime<Utc>>,
}
