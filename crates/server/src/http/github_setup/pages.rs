//! The setup pages, who may open them, and the page an error is answered with.

use askama::Template;
use axum::extract::{FromRequestParts, Query};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use benchgate_store::StoreError;
use subtle::ConstantTimeEq;

use crate::AppState;

/// An admin opening the setup page: `BENCHGATE_ADMIN_TOKEN` as `Authorization: Bearer` or, from
/// a browser, as `?token=` (request logs carry the path only).
pub struct SetupAdmin;

#[derive(serde::Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

impl FromRequestParts<AppState> for SetupAdmin {
    type Rejection = SetupError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, SetupError> {
        let Some(expected) = app.config.admin_token.as_deref().filter(|t| !t.is_empty()) else {
            return Err(SetupError::unauthorized(
                "The setup is for admins: start the server with BENCHGATE_ADMIN_TOKEN set.",
            ));
        };
        let bearer = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim().to_owned());
        let query = Query::<TokenQuery>::try_from_uri(&parts.uri)
            .ok()
            .and_then(|q| q.0.token);
        let given = bearer.or(query).unwrap_or_default();
        if bool::from(expected.as_bytes().ct_eq(given.as_bytes())) {
            Ok(SetupAdmin)
        } else {
            Err(SetupError::unauthorized(
                "The setup is for admins: open /github/setup?token=ADMIN_TOKEN (the value of BENCHGATE_ADMIN_TOKEN).",
            ))
        }
    }
}

/// The setup form: the manifest, posted to GitHub with a fresh single-use state.
#[derive(Template)]
#[template(path = "dashboard/github_setup.html")]
pub struct SetupPage {
    /// `{web}/settings/apps/new?state=…` or the organisation's.
    pub form_action: String,
    pub org: Option<String>,
    pub token: Option<String>,
    /// The manifest as posted (one line) and as shown (indented).
    pub manifest: String,
    pub manifest_shown: String,
    /// The slug of an App stored by an earlier setup (a new setup replaces it).
    pub stored: Option<String>,
    pub overridden_by_flags: Vec<&'static str>,
    /// `BENCHGATE_PUBLIC_URL` when GitHub cannot reach it (loopback).
    pub unreachable_public_url: Option<String>,
}

/// After the exchange: the App exists; it is installed next.
#[derive(Template)]
#[template(path = "dashboard/github_setup_done.html")]
pub struct CreatedPage {
    pub slug: String,
    pub html_url: String,
    pub install_url: String,
    pub overridden_by_flags: Vec<&'static str>,
}

#[derive(Template)]
#[template(path = "dashboard/github_setup_error.html")]
struct ErrorPage<'a> {
    title: &'a str,
    message: &'a str,
}

/// A setup that cannot go on, answered as a page (the user is in a browser).
#[derive(Debug)]
pub struct SetupError {
    status: StatusCode,
    message: String,
}

impl SetupError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }
    pub fn bad_gateway(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_GATEWAY, message)
    }
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    pub fn page(self) -> Response {
        let title = self.status.canonical_reason().unwrap_or("Error");
        match (ErrorPage {
            title,
            message: &self.message,
        })
        .render()
        {
            Ok(html) => (self.status, Html(html)).into_response(),
            Err(_) => (self.status, self.message).into_response(),
        }
    }
}

impl IntoResponse for SetupError {
    fn into_response(self) -> Response {
        self.page()
    }
}

impl From<StoreError> for SetupError {
    fn from(e: StoreError) -> Self {
        if e.is_unavailable() {
            tracing::error!(error = %e, "database unavailable");
            return Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "The database is not answering; try again.",
            );
        }
        tracing::error!(error = ?e, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal error.")
    }
}

/// Renders a page; a template error is answered like any internal error.
pub fn render(page: &impl Template) -> Result<Html<String>, SetupError> {
    page.render().map(Html).map_err(|e| {
        tracing::error!(error = %e, "rendering a setup page");
        SetupError::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal error.")
    })
}

/// The page may post its form to GitHub (the default policy allows only this server), and
/// holds a single-use state, so no cache keeps it.
pub fn with_form_target(page: Html<String>, web_url: &str) -> Response {
    let origin = origin_of(web_url);
    let policy = format!(
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
         form-action 'self' {origin}; frame-ancestors 'none'"
    );
    let mut response = page.into_response();
    let headers = response.headers_mut();
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert("content-security-policy", policy);
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `https://host[:port]` of a URL.
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_form_target_is_the_web_urls_origin() {
        assert_eq!(super::origin_of("https://github.com"), "https://github.com");
        assert_eq!(
            super::origin_of("https://ghe.example/path"),
            "https://ghe.example"
        );
        assert_eq!(
            super::origin_of("http://127.0.0.1:9/"),
            "http://127.0.0.1:9"
        );
    }
}
