//! The GitHub App manifest benchgate registers itself with (the manifest flow), and the
//! credentials GitHub returns for the flow's `code`.
//!
//! The manifest exists only here, filled with the server's public URL; `/github/setup` posts it
//! and shows it, so no copy on disk can drift from what the server registers.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The events the App subscribes to. `installation` is not listed: GitHub sends it to every
/// App and refuses a manifest that asks for it ("Default events unsupported"). `push` keeps the
/// default branch's history; `merge_group` gates the merge queue.
pub const DEFAULT_EVENTS: [&str; 6] = [
    "pull_request",
    "issue_comment",
    "check_run",
    "check_suite",
    "push",
    "merge_group",
];

/// A GitHub App manifest, as `POST {web}/settings/apps/new` takes it in its `manifest` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppManifest {
    pub name: String,
    /// The App's homepage: the dashboard.
    pub url: String,
    pub description: String,
    pub hook_attributes: HookAttributes,
    /// Where GitHub sends the browser with `code` and `state` once the App is created.
    pub redirect_url: String,
    pub public: bool,
    pub default_permissions: Permissions,
    pub default_events: Vec<String>,
}

/// Where GitHub delivers webhooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookAttributes {
    pub url: String,
    pub active: bool,
}

/// The repository permissions benchgate needs, and no more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions {
    /// Check runs (the gate).
    pub checks: String,
    /// Reading pull requests and their files.
    pub pull_requests: String,
    /// The PR comment and reactions (PR comments are issue comments).
    pub issues: String,
    /// `.benchgate.toml` from the base branch.
    pub contents: String,
    pub metadata: String,
    /// GitHub delivers `merge_group` only to Apps with "Merge queues" access.
    pub merge_queues: String,
}

impl AppManifest {
    /// The manifest for a server reachable at `public_url` (e.g. `https://bench.example.com`).
    pub fn for_server(public_url: &str) -> Self {
        let base = public_url.trim_end_matches('/');
        let access = |level: &str| level.to_owned();
        AppManifest {
            name: "benchgate".into(),
            url: base.to_owned(),
            description: "Gates pull requests on benchmark claims: interleaved runs, \
                          per-runner noise floors, anytime-valid intervals."
                .into(),
            hook_attributes: HookAttributes {
                url: format!("{base}/webhooks/github"),
                active: true,
            },
            redirect_url: format!("{base}/github/setup/callback"),
            public: false,
            default_permissions: Permissions {
                checks: access("write"),
                pull_requests: access("write"),
                issues: access("write"),
                contents: access("read"),
                metadata: access("read"),
                merge_queues: access("read"),
            },
            default_events: DEFAULT_EVENTS.iter().map(|e| e.to_string()).collect(),
        }
    }

    /// One line of JSON, as the setup form posts it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a manifest always serialises")
    }

    /// Indented JSON, as the setup page shows it.
    pub fn to_pretty_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a manifest always serialises")
    }
}

/// Whether `code` can be a manifest code: GitHub's are short and alphanumeric, and it goes into
/// a URL path, so anything else is refused before a request is made.
pub fn is_manifest_code(code: &str) -> bool {
    (1..=100).contains(&code.len())
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What `POST /app-manifests/{code}/conversions` answers (201), with the fields benchgate keeps.
/// The OAuth client secret is not read: benchgate never acts as the user. `Debug` masks secrets.
#[derive(Clone, Deserialize)]
pub struct ManifestConversion {
    /// The App id.
    pub id: u64,
    pub slug: String,
    /// The App's page, e.g. `https://github.com/apps/octoapp`.
    pub html_url: String,
    pub owner: Option<AppOwner>,
    /// Null only for an App without a webhook; benchgate's manifest always has one.
    pub webhook_secret: Option<String>,
    /// The App's private key (PEM).
    pub pem: String,
}

/// The account that owns a new App.
#[derive(Debug, Clone, Deserialize)]
pub struct AppOwner {
    pub login: String,
}

impl ManifestConversion {
    /// Where the App is installed on repositories.
    pub fn install_url(&self) -> String {
        format!("{}/installations/new", self.html_url.trim_end_matches('/'))
    }
}

impl fmt::Debug for ManifestConversion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManifestConversion")
            .field("id", &self.id)
            .field("slug", &self.slug)
            .field("html_url", &self.html_url)
            .field("owner", &self.owner)
            .field(
                "webhook_secret",
                &self.webhook_secret.as_ref().map(|_| "***"),
            )
            .field("pem", &"***")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merge_queue_event_comes_with_the_permission_github_requires_for_it() {
        let m = AppManifest::for_server("https://x.example");
        assert!(m.default_events.iter().any(|e| e == "merge_group"));
        assert_eq!(m.default_permissions.merge_queues, "read");
        // The names GitHub reads, as the setup form posts them.
        let posted: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
        assert_eq!(posted["default_permissions"]["merge_queues"], "read");
        assert!(
            posted["default_events"]
                .as_array()
                .unwrap()
                .contains(&"merge_group".into())
        );
    }

    #[test]
    fn installation_is_never_a_default_event() {
        let m = AppManifest::for_server("https://x.example/");
        assert!(!m.default_events.iter().any(|e| e == "installation"));
        assert!(m.default_events.iter().any(|e| e == "check_suite"));
        assert!(m.default_events.iter().any(|e| e == "push"));
        assert_eq!(m.hook_attributes.url, "https://x.example/webhooks/github");
        assert_eq!(m.redirect_url, "https://x.example/github/setup/callback");
        assert_eq!(m.url, "https://x.example");
    }

    #[test]
    fn manifest_codes_are_refused_unless_plain() {
        for ok in ["a180b1a3d263c81bc6441d7b990bae27d4c10679", "abc_DEF-1"] {
            assert!(is_manifest_code(ok), "{ok}");
        }
        for bad in ["", "../app", "a/b", "a b", "a%2F", "ü", &"a".repeat(101)] {
            assert!(!is_manifest_code(bad), "{bad}");
        }
    }
}
