//! The optional dashboard token. A middleware rather than an extractor because it must also
//! answer with a cookie, so a link opened once with `?token=` keeps working on every page.

use axum::extract::{Query, Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::{ApiError, AppState};

/// The cookie that carries the token after it was given once as `?token=`.
pub const COOKIE_NAME: &str = "benchgate_dashboard_token";

#[derive(serde::Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

/// Lets a request through when no dashboard token is configured, or when it carries the token
/// as `Authorization: Bearer`, `?token=` or the cookie; otherwise answers 401.
pub async fn require_dashboard_token(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = app
        .config
        .dashboard_token
        .as_deref()
        .filter(|t| !t.is_empty())
    else {
        return next.run(request).await;
    };
    let from_query = Query::<TokenQuery>::try_from_uri(request.uri())
        .ok()
        .and_then(|q| q.0.token);
    let headers = request.headers();
    let given = bearer(headers)
        .or(from_query.as_deref())
        .or_else(|| cookie(headers));
    if !given.is_some_and(|g| same(expected, g)) {
        return ApiError::Unauthorized.into_response();
    }
    let remember = from_query.is_some_and(|q| same(expected, &q));
    let mut response = next.run(request).await;
    if remember {
        // Behind https the cookie must never travel in clear text.
        let secure = if app.config.github.public_url.starts_with("https://") {
            "; Secure"
        } else {
            ""
        };
        let value = format!("{COOKIE_NAME}={expected}; Path=/; HttpOnly; SameSite=Strict{secure}");
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().append(SET_COOKIE, value);
        }
    }
    response
}

/// Constant-time, so the time to answer 401 says nothing about how much of a guess was right.
fn same(expected: &str, given: &str) -> bool {
    bool::from(expected.as_bytes().ct_eq(given.as_bytes()))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE_NAME)?.strip_prefix('='))
}
