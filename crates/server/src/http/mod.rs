//! The HTTP layer: every route and the middleware they share (request tracing, body limit,
//! timeout, compression). Handlers read and write through the domain modules; axum is used
//! here and nowhere else but `lib.rs`.

pub mod agent_api;
pub mod auth;
pub mod comparisons_api;
mod dashboard;
pub mod error;
pub mod github_setup;
mod gitlab_status_checks;
mod gitlab_webhooks;
mod health;
mod metrics;
mod profile;
pub mod webhook_body;
mod webhooks;

use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// The whole HTTP application, with its middleware.
pub fn router(state: crate::AppState) -> axum::Router {
    let body_limit = state.config.body_limit;
    let timeout = state.config.request_timeout;
    let routes = axum::Router::new()
        .merge(health::routes())
        // Axum caps JSON bodies at 2 MiB by default; a round of a large suite is bigger.
        .merge(agent_api::routes().layer(axum::extract::DefaultBodyLimit::max(body_limit)))
        .merge(comparisons_api::routes())
        .merge(dashboard::routes(state.clone()))
        .merge(metrics::routes())
        .merge(github_setup::routes())
        .merge(webhooks::routes())
        .merge(gitlab_webhooks::routes())
        .merge(gitlab_status_checks::routes());
    layered(routes.with_state(state), body_limit, timeout)
}

/// The dashboard's policy: its own inline styles and SVG, nothing fetched, nothing framed.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
    img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Every answer: `nosniff`, no referrer, the CSP on pages; and an error the framework wrote
/// as plain text (413 body limit, 408 timeout, 422 JSON rejection) becomes `{"error": …}` as
/// the API documents, keeping its status.
async fn json_errors_and_safe_headers(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let headers = &mut parts.headers;
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    // A page that posts to GitHub (the App setup) brings its own policy.
    if content_type.starts_with("text/html") && !headers.contains_key("content-security-policy") {
        headers.insert(
            "content-security-policy",
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        );
    }
    // Error pages written for a browser (the App setup's) stay pages.
    let framework_error = (parts.status.is_client_error() || parts.status.is_server_error())
        && !content_type.starts_with("application/json")
        && !content_type.starts_with("text/html");
    if !framework_error {
        return Response::from_parts(parts, body);
    }
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        parts
            .status
            .canonical_reason()
            .unwrap_or("error")
            .to_lowercase()
    } else {
        text
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let json = serde_json::json!({ "error": message }).to_string();
    Response::from_parts(parts, axum::body::Body::from(json))
}

/// Wraps the application in the middleware every route shares.
pub fn layered(app: Router, body_limit: usize, timeout: Duration) -> Router {
    app.layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(RequestBodyLimitLayer::new(body_limit))
        // The path only: a query string may carry the dashboard token.
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
                tracing::debug_span!("request", method = %req.method(), path = %req.uri().path())
            }),
        )
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            header::COOKIE,
        ]))
        .layer(CatchPanicLayer::new())
        // Outside every layer that writes an answer (413, 408, 500), inside compression so it
        // reads plain bodies.
        .layer(axum::middleware::map_response(json_errors_and_safe_headers))
        .layer(CompressionLayer::new())
}
