//! `/github/setup`: creating benchgate's GitHub App with GitHub's manifest flow. An admin opens
//! the page, which posts the manifest to GitHub; GitHub sends the browser back to the callback
//! with a one-hour `code`, which is exchanged for the App's id, key and webhook secret. They are
//! stored in the database, where every replica (and a restarted server) finds them.

mod pages;

use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::response::{Html, Response};
use axum::routing::get;
use benchgate_github::app_manifest::{AppManifest, is_manifest_code};
use benchgate_github::client::{GitHubError, convert_manifest_code};
use benchgate_store::{GitHubAppCredentials, SetupStateCheck};
use serde::Deserialize;

use crate::AppState;
use pages::{SetupAdmin, SetupError};

/// GitHub gives the flow one hour; a state lives as long as the code it comes back with.
const STATE_TTL: Duration = Duration::from_secs(3600);

/// How long the code exchange may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// The setup page and GitHub's redirect back to it.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/github/setup", get(setup_page))
        .route("/github/setup/callback", get(callback))
}

#[derive(Deserialize)]
struct SetupQuery {
    /// Create the App in this organisation instead of the admin's personal account.
    org: Option<String>,
    /// The admin token, when the page was opened as `?token=` (kept for the organisation form).
    token: Option<String>,
}

async fn setup_page(
    State(app): State<AppState>,
    _admin: SetupAdmin,
    Query(query): Query<SetupQuery>,
) -> Result<Response, SetupError> {
    let org = query
        .org
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty());
    if let Some(org) = org.filter(|o| !is_account_login(o)) {
        return Err(SetupError::bad_request(format!(
            "{org:?} is not an organisation name (letters, digits and single hyphens)."
        )));
    }
    let github = &app.config.github;
    let web_url = github.web_url.clone();
    let manifest = AppManifest::for_server(&github.public_url);
    let state = app.store.create_setup_state(STATE_TTL).await?;
    let new_app_url = match org {
        Some(org) => format!("{web_url}/organizations/{org}/settings/apps/new"),
        None => format!("{web_url}/settings/apps/new"),
    };
    let page = pages::SetupPage {
        form_action: format!("{new_app_url}?state={}", state.expose()),
        org: org.map(str::to_owned),
        token: query.token,
        manifest: manifest.to_json(),
        manifest_shown: manifest.to_pretty_json(),
        stored: app.store.github_app_credentials().await?.map(|c| c.slug),
        overridden_by_flags: overridden_by_flags(&app),
        unreachable_public_url: is_local(&github.public_url).then(|| github.public_url.clone()),
    };
    Ok(pages::with_form_target(pages::render(&page)?, &web_url))
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
}

async fn callback(
    State(app): State<AppState>,
    Query(query): Query<CallbackQuery>,
) -> Result<Html<String>, SetupError> {
    let (Some(code), Some(state)) = (query.code, query.state) else {
        return Err(SetupError::bad_request(
            "This page is where GitHub returns after creating the App; the link lacks its code or state.",
        ));
    };
    if !is_manifest_code(&code) {
        return Err(SetupError::bad_request(
            "The code in this link is malformed.",
        ));
    }
    let refused = match app.store.consume_setup_state(&state).await? {
        SetupStateCheck::Accepted => None,
        SetupStateCheck::Unknown => Some("This setup link is unknown."),
        SetupStateCheck::Expired => Some("This setup link expired (it is valid for one hour)."),
        SetupStateCheck::Used => Some("This setup link was already used."),
    };
    if let Some(reason) = refused {
        tracing::warn!(reason, "GitHub setup callback refused");
        return Err(SetupError::bad_request(format!(
            "{reason} Start again at /github/setup."
        )));
    }
    let created = convert_manifest_code(&app.config.github.api_url, &code, EXCHANGE_TIMEOUT)
        .await
        .inspect_err(|_| app.metrics.github_api_error())
        .map_err(exchange_failed)?;
    let Some(webhook_secret) = created.webhook_secret.clone() else {
        return Err(SetupError::bad_gateway(
            "GitHub created the App without a webhook secret; delete it on GitHub and start again.",
        ));
    };
    app.store
        .save_github_app_credentials(&GitHubAppCredentials {
            app_id: i64::try_from(created.id)
                .map_err(|_| SetupError::bad_gateway("GitHub returned an App id out of range."))?,
            slug: created.slug.clone(),
            html_url: created.html_url.clone(),
            owner_login: created.owner.as_ref().map(|o| o.login.clone()),
            webhook_secret,
            private_key_pem: created.pem.clone(),
            created_at: chrono::Utc::now(),
        })
        .await?;
    tracing::info!(app_id = created.id, slug = %created.slug, "GitHub App created; its credentials are stored");
    // This replica uses it at once; the others within a few seconds.
    if let Err(e) = app.github_credentials.reload().await {
        tracing::warn!(error = %e, "stored the App but could not read it back yet");
    }
    pages::render(&pages::CreatedPage {
        slug: created.slug.clone(),
        html_url: created.html_url.clone(),
        install_url: created.install_url(),
        overridden_by_flags: overridden_by_flags(&app),
    })
}

/// A refused code is the user's to retry; anything else is GitHub's or the network's.
fn exchange_failed(e: GitHubError) -> SetupError {
    tracing::warn!(error = %e, "GitHub manifest code exchange failed");
    match e {
        GitHubError::Status {
            status: 404 | 422, ..
        } => SetupError::bad_request(
            "GitHub refused the code: it is valid once, for one hour. Start again at /github/setup.",
        ),
        other => SetupError::bad_gateway(format!(
            "Could not complete the setup with GitHub ({other}). Start again at /github/setup."
        )),
    }
}

/// Which stored credentials the flags replace, for the pages to say so.
fn overridden_by_flags(app: &AppState) -> Vec<&'static str> {
    let github = &app.config.github;
    let mut overridden = Vec::new();
    if github.has_credentials() {
        overridden.push("the App id and key (BENCHGATE_GITHUB_APP_ID / BENCHGATE_GITHUB_TOKEN)");
    }
    if app.github_credentials.has_flag_secret() {
        overridden.push("the webhook secret (BENCHGATE_WEBHOOK_SECRET)");
    }
    overridden
}

/// Whether GitHub cannot reach `url` (the default `http://localhost:8080`, a loopback address).
fn is_local(url: &str) -> bool {
    let host = url.split("://").nth(1).unwrap_or(url);
    ["localhost", "127.", "[::1]"]
        .iter()
        .any(|local| host.starts_with(local))
}

/// GitHub account names: letters, digits and single hyphens, not at either end, at most 39.
fn is_account_login(login: &str) -> bool {
    login.len() <= 39
        && !login.starts_with('-')
        && !login.ends_with('-')
        && !login.contains("--")
        && login
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_loopback_public_url_is_flagged() {
        assert!(super::is_local("http://localhost:8080"));
        assert!(super::is_local("http://127.0.0.1:8080/"));
        assert!(!super::is_local("https://bench.example"));
    }

    #[test]
    fn organisation_names_are_checked_before_they_reach_a_url() {
        for ok in ["acme", "Acme-Corp", "a1"] {
            assert!(super::is_account_login(ok), "{ok}");
        }
        for bad in [
            "-acme",
            "acme-",
            "a--b",
            "a/b",
            "a b",
            "../x",
            &"a".repeat(40),
        ] {
            assert!(!super::is_account_login(bad), "{bad}");
        }
    }
}
