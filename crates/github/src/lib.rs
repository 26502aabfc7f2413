//! benchgate-github: webhook signature checks and event parsing, the `/rebench` command parser,
//! the `.benchgate.toml` parser, the App manifest, and the GitHub API client.
//!
//! Everything except [`client`] is pure (no I/O), so the webhook handler can verify and parse
//! a delivery inside the request and leave every GitHub call to the outbox worker.

pub mod app_manifest;
pub mod client;
pub mod commands;
pub mod events;
pub mod repo_config;
pub mod signature;

pub use commands::{Command, CommandError, parse_command};
pub use events::{EventParseError, WebhookEvent, parse_event};
pub use repo_config::{ConfigError, RepoConfig, parse_repo_config};
pub use signature::{SignatureError, WebhookSecrets};
